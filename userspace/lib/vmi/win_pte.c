// SPDX-License-Identifier: GPL-2.0
#include "lib/vmi/win_pte.h"
#include "lib/vmi/vmi_error.h"

/* ProtoAddress value meaning "look in the VAD" (MiProtoAddressForKernelVad). */
#define WIN_PROTO_ADDRESS_VAD 0xffffffff0000ULL

static int decode(const struct svmtrace_vmi *vmi, int follow_prototype, int level, uint64_t entry,
		  uint64_t va, uint64_t *frame, struct svmtrace_vmi_translation *out,
		  struct svmtrace_error *err);

static int not_present_leaf_only(const void *ctx, int level, uint64_t entry, uint64_t va,
				 uint64_t *frame, struct svmtrace_vmi_translation *out,
				 struct svmtrace_error *err)
{
	return decode(ctx, 0, level, entry, va, frame, out, err);
}

static int not_present(const void *ctx, int level, uint64_t entry, uint64_t va, uint64_t *frame,
		       struct svmtrace_vmi_translation *out, struct svmtrace_error *err)
{
	return decode(ctx, 1, level, entry, va, frame, out, err);
}

struct x86_decoder win_pte_decoder(const struct svmtrace_vmi *vmi)
{
	return (struct x86_decoder){ not_present, vmi };
}

static int in_transition(const struct win_pte_layout *l, uint64_t e)
{
	return win_bits_get(l->transition, e) && !win_bits_get(l->prototype, e);
}

static uint64_t transition_frame(const struct win_pte_layout *l, uint64_t e)
{
	return win_bits_get(l->trans_pfn, e) << 12;
}

/* Why a software PTE that is neither transition nor prototype has no page. */
static int absent(struct svmtrace_error *err, const struct win_pte_layout *l, uint64_t va,
		  const char *what, uint64_t e)
{
	if (win_bits_get(l->pagefile_high, e))
		return vmi_fail(err, SVMTRACE_E_NOT_RESIDENT,
				"VA 0x%llx is paged out to the page file (%s 0x%llx)",
				(unsigned long long)va, what, (unsigned long long)e);
	return vmi_fail(err, SVMTRACE_E_NOT_RESIDENT,
			"VA 0x%llx has no page yet: demand-zero or never touched (%s 0x%llx)",
			(unsigned long long)va, what, (unsigned long long)e);
}

/* Follow a prototype PTE entry to the page it describes. */
static int prototype(const struct svmtrace_vmi *vmi, uint64_t entry, uint64_t va, uint64_t *frame,
		     struct svmtrace_vmi_translation *out, struct svmtrace_error *err)
{
	const struct win_pte_layout *l = &vmi->profile->pte;
	uint64_t raw = win_bits_get(l->proto_address, entry);
	unsigned int shift = 64 - l->proto_address.len;
	uint64_t proto_va = (uint64_t)((int64_t)(raw << shift) >> shift);
	struct x86_decoder dec = { not_present_leaf_only, vmi };
	struct svmtrace_vmi_translation where;
	uint64_t pp;
	int rc;

	if (raw == WIN_PROTO_ADDRESS_VAD)
		return vmi_fail(err, SVMTRACE_E_NOT_RESIDENT,
				"VA 0x%llx is a mapped-file page not faulted in yet (its PTE "
				"0x%llx refers to the VAD)",
				(unsigned long long)va, (unsigned long long)entry);
	rc = x86_translate(vmi->mem, vmi->kernel.dtb, (int)vmi->kernel.paging_levels, proto_va,
			   &dec, &where, err);
	if (!rc)
		rc = svmtrace_vmi_mem_read(vmi->mem, where.gpa, &pp, sizeof(pp), err);
	if (rc)
		return vmi_prefix(err, rc, "VA 0x%llx: prototype PTE at VA 0x%llx",
				  (unsigned long long)va, (unsigned long long)proto_va);
	out->prototype_va = proto_va;
	out->pte = pp;
	if (win_bits_get(l->valid, pp)) {
		out->state = SVMTRACE_VMI_PAGE_PROTOTYPE;
		*frame = pp & X86_PTE_ADDR;
		return 0;
	}
	if (in_transition(l, pp)) {
		out->state = SVMTRACE_VMI_PAGE_PROTOTYPE_TRANSITION;
		*frame = transition_frame(l, pp);
		return 0;
	}
	if (win_bits_get(l->prototype, pp))
		return vmi_fail(err, SVMTRACE_E_NOT_RESIDENT,
				"VA 0x%llx is a file-backed page not read from the file yet "
				"(prototype PTE 0x%llx at VA 0x%llx refers to a subsection)",
				(unsigned long long)va, (unsigned long long)pp,
				(unsigned long long)proto_va);
	return absent(err, l, va, "prototype PTE", pp);
}

static int decode(const struct svmtrace_vmi *vmi, int follow_prototype, int level, uint64_t entry,
		  uint64_t va, uint64_t *frame, struct svmtrace_vmi_translation *out,
		  struct svmtrace_error *err)
{
	const struct win_pte_layout *l = &vmi->profile->pte;

	if (!entry)
		return vmi_fail(err, SVMTRACE_E_NOT_RESIDENT,
				"VA 0x%llx is not mapped or never touched (%s is zero)",
				(unsigned long long)va, x86_level_name(level));
	if (in_transition(l, entry)) {
		*frame = transition_frame(l, entry);
		if (level == X86_PTE) {
			out->state = SVMTRACE_VMI_PAGE_TRANSITION;
			out->pte = entry;
		}
		return 0;
	}
	if (win_bits_get(l->prototype, entry)) {
		if (level != X86_PTE || !follow_prototype)
			return vmi_fail(err, SVMTRACE_E_NOT_RESIDENT,
					"VA 0x%llx: %s 0x%llx is a prototype entry where none "
					"can be followed",
					(unsigned long long)va, x86_level_name(level),
					(unsigned long long)entry);
		return prototype(vmi, entry, va, frame, out, err);
	}
	return absent(err, l, va, x86_level_name(level), entry);
}
