// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace: the opcode of a guest instruction, past its prefixes, as the
 * CPU decodes it.  The tracer recognises a few instructions at their VM
 * exit or after their step (SYSCALL and SYSRET at their #UD, INT n at its
 * intercept, the INT n / INT3 / INTO / INT1 that took a TF away, a MOV to a
 * debug register for its source), and each
 * may carry prefixes the CPU ignores: `48 0F 05` is a SYSCALL, `2E CD 80`
 * an INT 0x80.  A decoder that took only the bare opcode left a prefixed
 * INT n to execute again and exit again, forever.
 *
 * The bytes are fetched with the rights of the CPL the instruction ran at
 * (access.c: a fetch, which protection keys do not govern).  Context: the
 * vCPU's thread, kvm->srcu held.
 */
#include <linux/kvm_host.h>

#include "kvm_cache_regs.h"
#include "svmtrace.h"
#include "x86.h"

/*
 * The instruction at @rip fetched at @cpl: legacy prefixes, then in 64-bit
 * mode a REX (it counts only right before the opcode: a REX followed by
 * another prefix is ignored), then the opcode; @in->op indexes its first
 * byte, and the byte after it is read too.  One read up to the end of
 * @rip's page, a second one only for an instruction that crosses it.
 * -EFAULT when the bytes cannot be fetched, -EINVAL when prefixes fill the
 * 15 bytes an instruction may have.
 */
int svmtrace_insn_fetch(struct kvm_vcpu *vcpu, int cpl, u64 rip, struct svmtrace_insn *in)
{
	unsigned int i, n = min_t(unsigned long, SVMTRACE_INSN_MAX, PAGE_SIZE - offset_in_page(rip));
	bool long64 = is_64_bit_mode(vcpu);
	u8 b;

	if (svmtrace_fetch_as(vcpu, cpl, rip, in->bytes, n))
		return -EFAULT;
	in->rex_w = false;
	in->rex_b = false;
	in->lock = false;
	for (i = 0; i + 1 < SVMTRACE_INSN_MAX; i++) {
		if (i + 1 >= n) {
			if (n == SVMTRACE_INSN_MAX ||
			    svmtrace_fetch_as(vcpu, cpl, rip + n, in->bytes + n, SVMTRACE_INSN_MAX - n))
				return -EFAULT;
			n = SVMTRACE_INSN_MAX;
		}
		b = in->bytes[i];
		if (long64 && (b & 0xf0) == 0x40) {
			in->rex_w = b & 8;
			in->rex_b = b & 1;
			continue;
		}
		if (b != 0x66 && !svmtrace_legacy_prefix(b)) {
			in->op = i;
			return 0;
		}
		in->rex_w = false;
		in->rex_b = false;
		in->lock |= b == 0xf0;
	}
	return -EINVAL;
}
