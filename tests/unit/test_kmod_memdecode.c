// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel capture's instruction decoder (kmod/src/memdecode.c), built
 * here as it is in kvm.ko: instruction bytes written by hand from the
 * Intel SDM / AMD APM opcode maps, each with the length and the accesses
 * (kind, address form, size, address parts) the manuals give it, in the
 * order the capture records them (reads and read-modify-writes, the stack
 * slot popped, writes, the stack slot pushed).  Forms outside the decoder's
 * table must come out unrecorded, never guessed.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../kmod/src/memdecode.c"
#include "support.h"

#define U     SVMTRACE_MEM_UNRECORDED
#define NONE  SVMTRACE_REG_NONE
#define DEF   SVMTRACE_SEG_DEFAULT
#define MODRM SVMTRACE_FORM_MODRM
#define RSI   SVMTRACE_FORM_RSI
#define RDI   SVMTRACE_FORM_RDI
#define POP   SVMTRACE_FORM_POP
#define PUSH  SVMTRACE_FORM_PUSH

struct want_op {
	u8 kind, form;
	u32 size;
	u8 why;
};

struct vec {
	const char *name;
	const char *hex;
	bool long64;
	bool ok;
	u8 len, nr;
	struct want_op ops[3];
	/* ModRM address parts, checked when ops[0] (or ops[1]) is MODRM */
	u8 base, index, scale;
	s64 disp;
	bool riprel;
	u8 seg;
	bool rep, addr32;
};

/* The table leaves the fields a vector does not check at zero. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
/* One vector a line. */
/* clang-format off */
static const struct vec vecs[] = {
	{ "mov rax,[rsp+8]", "488b442408", 1, 1, 5, 1, { { R, MODRM, 8 } }, 4, NONE, 1, 8 },
	{ "mov [rbx+rcx*4],eax", "89048b", 1, 1, 3, 1, { { W, MODRM, 4 } }, 3, 1, 4, 0 },
	{ "mov rax,[rip+0x10]", "488b0510000000", 1, 1, 7, 1, { { R, MODRM, 8 } }, NONE, NONE, 1,
	  0x10, true },
	{ "mov rax,fs:[0x30]", "64488b042530000000", 1, 1, 9, 1, { { R, MODRM, 8 } }, NONE, NONE,
	  1, 0x30, false, 4 },
	{ "mov rax,gs:[0x60]", "65488b042560000000", 1, 1, 9, 1, { { R, MODRM, 8 } }, NONE, NONE,
	  1, 0x60, false, 5 },
	{ "mov eax,[rbp-8]", "8b45f8", 1, 1, 3, 1, { { R, MODRM, 4 } }, 5, NONE, 1, -8 },
	{ "mov r8,[r12+r13*8+0x100]", "4f8b84ec00010000", 1, 1, 8, 1, { { R, MODRM, 8 } }, 12, 13,
	  8, 0x100 },
	{ "rep movsb", "f3a4", 1, 1, 2, 2, { { R, RSI, 1 }, { W, RDI, 1 } }, 0, 0, 0, 0, 0, DEF,
	  true },
	{ "movsq", "48a5", 1, 1, 2, 2, { { R, RSI, 8 }, { W, RDI, 8 } }, 0, 0, 0, 0, 0, DEF },
	{ "rep stosq", "f348ab", 1, 1, 3, 1, { { W, RDI, 8 } }, 0, 0, 0, 0, 0, DEF, true },
	{ "repne scasb", "f2ae", 1, 1, 2, 1, { { R, RDI, 1 } }, 0, 0, 0, 0, 0, DEF, true },
	{ "cmpsb", "a6", 1, 1, 1, 2, { { R, RSI, 1 }, { R, RDI, 1 } }, 0, 0, 0, 0, 0, DEF },
	{ "lodsd", "ad", 1, 1, 1, 1, { { R, RSI, 4 } }, 0, 0, 0, 0, 0, DEF },
	{ "push rax", "50", 1, 1, 1, 1, { { W, PUSH, 8 } } },
	{ "push ax", "6650", 1, 1, 2, 1, { { W, PUSH, 2 } } },
	{ "pop r15", "415f", 1, 1, 2, 1, { { R, POP, 8 } } },
	{ "push 1", "6a01", 1, 1, 2, 1, { { W, PUSH, 8 } } },
	{ "push 0x100", "6800010000", 1, 1, 5, 1, { { W, PUSH, 8 } } },
	{ "pushfq", "9c", 1, 1, 1, 1, { { W, PUSH, 8 } } },
	{ "popfq", "9d", 1, 1, 1, 1, { { R, POP, 8 } } },
	{ "push qword [rip+0x1000]", "ff3500100000", 1, 1, 6, 2,
	  { { R, MODRM, 8 }, { W, PUSH, 8 } }, NONE, NONE, 1, 0x1000, true },
	{ "pop qword [rsp+8]", "8f442408", 1, 1, 4, 2, { { R, POP, 8 }, { W, MODRM, 8 } }, 4, NONE,
	  1, 8 },
	{ "call rel32", "e800000000", 1, 1, 5, 1, { { W, PUSH, 8 } } },
	{ "call [rip]", "ff1500000000", 1, 1, 6, 2, { { R, MODRM, 8 }, { W, PUSH, 8 } }, NONE,
	  NONE, 1, 0, true },
	{ "call rax", "ffd0", 1, 1, 2, 1, { { W, PUSH, 8 } } },
	{ "ret", "c3", 1, 1, 1, 1, { { R, POP, 8 } } },
	{ "ret 16", "c21000", 1, 1, 3, 1, { { R, POP, 8 } } },
	{ "jmp rax", "ffe0", 1, 1, 2, 0 },
	{ "jmp [rax]", "ff20", 1, 1, 2, 1, { { R, MODRM, 8 } }, 0, NONE, 1, 0 },
	{ "leave", "c9", 1, 1, 1, 1, { { R, SVMTRACE_FORM_LEAVE, 8 } } },
	{ "xlat", "d7", 1, 1, 1, 1, { { R, SVMTRACE_FORM_XLAT, 1 } } },
	{ "lock cmpxchg [rbx],rcx", "f0480fb10b", 1, 1, 5, 1, { { RMW, MODRM, 8 } }, 3, NONE, 1,
	  0 },
	{ "xchg [rbx],rax", "488703", 1, 1, 3, 1, { { RMW, MODRM, 8 } }, 3, NONE, 1, 0 },
	{ "lock xadd [rdx],eax", "f00fc102", 1, 1, 4, 1, { { RMW, MODRM, 4 } }, 2, NONE, 1, 0 },
	{ "cmpxchg16b [rdi]", "480fc70f", 1, 1, 4, 1, { { RMW, MODRM, 16 } }, 7, NONE, 1, 0 },
	{ "cmp byte [rax],0", "803800", 1, 1, 3, 1, { { R, MODRM, 1 } }, 0, NONE, 1, 0 },
	{ "add dword [rax],1", "830001", 1, 1, 3, 1, { { RMW, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "add qword [rax+8],0x100", "4881400800010000", 1, 1, 8, 1, { { RMW, MODRM, 8 } }, 0,
	  NONE, 1, 8 },
	{ "test byte [rax],1", "f60001", 1, 1, 3, 1, { { R, MODRM, 1 } }, 0, NONE, 1, 0 },
	{ "neg dword [rax]", "f718", 1, 1, 2, 1, { { RMW, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "test dword [rax],1", "f70001000000", 1, 1, 6, 1, { { R, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "shl qword [rax],4", "48c12004", 1, 1, 4, 1, { { RMW, MODRM, 8 } }, 0, NONE, 1, 0 },
	{ "inc byte [rax]", "fe00", 1, 1, 2, 1, { { RMW, MODRM, 1 } }, 0, NONE, 1, 0 },
	{ "mov dword [rax],1", "c70001000000", 1, 1, 6, 1, { { W, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "mov qword [rax+16],-1", "48c74010ffffffff", 1, 1, 8, 1, { { W, MODRM, 8 } }, 0, NONE, 1,
	  16 },
	{ "mov byte [rax],0x41", "c60041", 1, 1, 3, 1, { { W, MODRM, 1 } }, 0, NONE, 1, 0 },
	{ "mov word [rax],0x1234", "66c7003412", 1, 1, 5, 1, { { W, MODRM, 2 } }, 0, NONE, 1, 0 },
	{ "lea rax,[rax+rcx]", "488d0408", 1, 1, 4, 0 },
	{ "movzx ecx,byte [rax]", "0fb608", 1, 1, 3, 1, { { R, MODRM, 1 } }, 0, NONE, 1, 0 },
	{ "movsx rcx,word [rax]", "480fbf08", 1, 1, 4, 1, { { R, MODRM, 2 } }, 0, NONE, 1, 0 },
	{ "movsxd rcx,dword [rax]", "486308", 1, 1, 3, 1, { { R, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "movups xmm0,[rax]", "0f1000", 1, 1, 3, 1, { { R, MODRM, 16 } }, 0, NONE, 1, 0 },
	{ "movss xmm0,[rax]", "f30f1000", 1, 1, 4, 1, { { R, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "movsd [rax],xmm0", "f20f1100", 1, 1, 4, 1, { { W, MODRM, 8 } }, 0, NONE, 1, 0 },
	{ "movdqa [rax],xmm0", "660f7f00", 1, 1, 4, 1, { { W, MODRM, 16 } }, 0, NONE, 1, 0 },
	{ "movdqu xmm0,[rax]", "f30f6f00", 1, 1, 4, 1, { { R, MODRM, 16 } }, 0, NONE, 1, 0 },
	{ "movq [rax],xmm0", "660fd600", 1, 1, 4, 1, { { W, MODRM, 8 } }, 0, NONE, 1, 0 },
	{ "movq xmm0,rax", "66480f6ec0", 1, 1, 5, 0 },
	{ "pxor xmm1,[rax]", "660fef08", 1, 1, 4, 1, { { R, MODRM, 16 } }, 0, NONE, 1, 0 },
	{ "vmovdqu ymm0,[rax]", "c5fe6f00", 1, 1, 4, 1, { { R, MODRM, 32 } }, 0, NONE, 1, 0 },
	{ "vmovdqu [rax],ymm1", "c5fe7f08", 1, 1, 4, 1, { { W, MODRM, 32 } }, 0, NONE, 1, 0 },
	{ "vmovss xmm0,[rax]", "c5fa1000", 1, 1, 4, 1, { { R, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "vmovdqa xmm0,[rax]", "c5f96f00", 1, 1, 4, 1, { { R, MODRM, 16 } }, 0, NONE, 1, 0 },
	{ "vmovdqu ymm0,[r8]", "c4c17e6f00", 1, 1, 5, 1, { { R, MODRM, 32 } }, 8, NONE, 1, 0 },
	{ "fxsave [rax]", "0fae00", 1, 1, 3, 1, { { U, MODRM, 512, SVMTRACE_MEM_WHY_TOO_LARGE } },
	  0, NONE, 1, 0 },
	{ "stmxcsr [rax]", "0fae18", 1, 1, 3, 1, { { W, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "syscall", "0f05", 1, 1, 2, 0 },
	{ "cpuid", "0fa2", 1, 1, 2, 0 },
	{ "bt [rax],rcx", "480fa308", 1, 1, 4, 1, { { R, MODRM, 8 } }, 0, NONE, 1, 0 },
	{ "bts dword [rax],5", "0fba2805", 1, 1, 4, 1, { { RMW, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "cmove ecx,[rax]", "0f4408", 1, 1, 3, 1, { { R, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "sete byte [rax]", "0f9400", 1, 1, 3, 1, { { W, MODRM, 1 } }, 0, NONE, 1, 0 },
	{ "fld dword [rax]", "d900", 1, 1, 2, 1, { { U, MODRM, 0, SVMTRACE_MEM_WHY_UNDECODED } }, 0,
	  NONE, 1, 0 },
	{ "pshufb mm0,[rax]", "0f380000", 1, 1, 4, 1,
	  { { U, MODRM, 0, SVMTRACE_MEM_WHY_UNDECODED } }, 0, NONE, 1, 0 },
	{ "palignr xmm0,[rax],8", "660f3a0f0008", 1, 1, 6, 1,
	  { { U, MODRM, 0, SVMTRACE_MEM_WHY_UNDECODED } }, 0, NONE, 1, 0 },
	{ "mov eax,[ebx]", "678b03", 1, 1, 3, 1, { { R, MODRM, 4 } }, 3, NONE, 1, 0, 0, DEF, 0,
	  true },
	{ "mov eax,[moffs64]", "a18877665544332211", 1, 1, 9, 1, { { R, MODRM, 4 } }, NONE, NONE,
	  1, 0x1122334455667788 },
	{ "mov rax,imm64", "48b88877665544332211", 1, 1, 10, 0 },
	{ "test al,1", "a801", 1, 1, 2, 0 },
	{ "jmp rel32", "e900000000", 1, 1, 5, 0 },
	{ "jne rel32", "0f8500000000", 1, 1, 6, 0 },
	{ "nop dword [rax+rax]", "0f1f440000", 1, 1, 5, 0 },
	{ "endbr64", "f30f1efa", 1, 1, 4, 0 },
	/* 32-bit code (a WoW64 thread) */
	{ "32: mov eax,[esp+4]", "8b442404", 0, 1, 4, 1, { { R, MODRM, 4 } }, 4, NONE, 1, 4, 0,
	  DEF, 0, true },
	{ "32: push eax", "50", 0, 1, 1, 1, { { W, PUSH, 4 } }, 0, 0, 0, 0, 0, DEF, 0, true },
	{ "32: inc eax", "40", 0, 1, 1, 0, {}, 0, 0, 0, 0, 0, DEF, 0, true },
	{ "32: mov eax,fs:[0x18]", "64a118000000", 0, 1, 6, 1, { { R, MODRM, 4 } }, NONE, NONE, 1,
	  0x18, false, 4, 0, true },
	{ "32: mov eax,[0x1000] (no RIP-relative)", "8b0500100000", 0, 1, 6, 1,
	  { { R, MODRM, 4 } }, NONE, NONE, 1, 0x1000, false, DEF, 0, true },
	{ "32: call rel32", "e800000000", 0, 1, 5, 1, { { W, PUSH, 4 } }, 0, 0, 0, 0, 0, DEF, 0,
	  true },
	/* not decoded: one unrecorded access, no address */
	{ "enter", "c8100000", 1, 0, 0, 1, { { U, SVMTRACE_FORM_NONE, 0, 3 } } },
	{ "evex vmovdqu64 zmm0,[rax]", "62f1fe486f00", 1, 0, 0, 1,
	  { { U, SVMTRACE_FORM_NONE, 0, 3 } } },
	{ "iretq", "48cf", 1, 0, 0, 1, { { U, SVMTRACE_FORM_NONE, 0, 3 } } },
	{ "truncated mov", "488b", 1, 0, 0, 1, { { U, SVMTRACE_FORM_NONE, 0, 3 } } },
	{ "32: 16-bit addressing", "678b07", 0, 0, 0, 1, { { U, SVMTRACE_FORM_NONE, 0, 3 } } },
};
/* clang-format on */

static unsigned int unhex(const char *hex, u8 *out)
{
	unsigned int n = 0, v;

	for (; hex[0] && hex[1]; hex += 2) {
		ck_assert(sscanf(hex, "%2x", &v) == 1);
		out[n++] = (u8)v;
	}
	return n;
}

START_TEST(decodes_the_vector)
{
	const struct vec *v = &vecs[_i];
	struct svmtrace_memdecode d;
	u8 code[16];
	unsigned int n = unhex(v->hex, code), k;
	bool modrm = false;

	svmtrace_memdecode(code, n, v->long64, &d);
	ck_assert_msg(d.ok == v->ok, "%s: ok %d", v->name, d.ok);
	if (v->ok)
		ck_assert_msg(d.len == v->len, "%s: length %u, expected %u", v->name, d.len,
			      v->len);
	ck_assert_msg(d.nr == v->nr, "%s: %u accesses, expected %u", v->name, d.nr, v->nr);
	for (k = 0; k < v->nr; k++) {
		ck_assert_msg(d.ops[k].kind == v->ops[k].kind, "%s: access %u kind %u, expected %u",
			      v->name, k, d.ops[k].kind, v->ops[k].kind);
		ck_assert_msg(d.ops[k].form == v->ops[k].form, "%s: access %u form %u, expected %u",
			      v->name, k, d.ops[k].form, v->ops[k].form);
		ck_assert_msg(d.ops[k].size == v->ops[k].size, "%s: access %u size %u, expected %u",
			      v->name, k, d.ops[k].size, v->ops[k].size);
		ck_assert_msg(d.ops[k].why == v->ops[k].why, "%s: access %u why %u", v->name, k,
			      d.ops[k].why);
		modrm |= v->ops[k].form == MODRM;
	}
	if (v->ok) {
		ck_assert_msg(d.rep == v->rep, "%s: rep %d", v->name, d.rep);
		ck_assert_msg(d.addr32 == v->addr32, "%s: addr32 %d", v->name, d.addr32);
		ck_assert_msg(d.seg == (v->seg ? v->seg : DEF), "%s: segment %u", v->name, d.seg);
	}
	if (!modrm)
		return;
	ck_assert_msg(d.base == v->base, "%s: base %u, expected %u", v->name, d.base, v->base);
	ck_assert_msg(d.index == v->index, "%s: index %u, expected %u", v->name, d.index, v->index);
	ck_assert_msg(d.scale == v->scale, "%s: scale %u, expected %u", v->name, d.scale, v->scale);
	ck_assert_msg(d.disp == v->disp, "%s: disp %lld, expected %lld", v->name, (long long)d.disp,
		      (long long)v->disp);
	ck_assert_msg(d.riprel == v->riprel, "%s: riprel %d", v->name, d.riprel);
}
END_TEST

/* POP m with rSP as base computes its address after the pop; BT's offset register. */
START_TEST(address_quirks)
{
	struct svmtrace_memdecode d;
	u8 code[16];

	svmtrace_memdecode(code, unhex("8f442408", code), true, &d);
	ck_assert(d.pop_rsp);
	svmtrace_memdecode(code, unhex("8f4008", code), true, &d);
	ck_assert(!d.pop_rsp);
	svmtrace_memdecode(code, unhex("480fa308", code), true, &d);
	ck_assert_uint_eq(d.bt_reg, 1);				     /* rcx */
	svmtrace_memdecode(code, unhex("4c0fab00", code), true, &d); /* bts [rax], r8 */
	ck_assert_uint_eq(d.bt_reg, 8);
	ck_assert_uint_eq(d.ops[0].kind, RMW);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kmod-memdecode");
	TCase *tc = tcase_create("decoder");

	tcase_add_loop_test(tc, decodes_the_vector, 0, sizeof(vecs) / sizeof(vecs[0]));
	tcase_add_test(tc, address_quirks);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
