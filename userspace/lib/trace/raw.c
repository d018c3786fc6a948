// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include <svmtrace/trace.h>

void svmtrace_slot_from_raw(const struct svmtrace_raw_record *raw, enum svmtrace_slot_kind kind,
			    struct svmtrace_slot *slot)
{
	memset(slot, 0, sizeof(*slot));
	slot->kind = (uint16_t)kind;
	slot->seq = raw->seq;
	slot->tsc = raw->tsc;
	slot->rip = raw->rip;
	slot->rflags = raw->rflags;
	slot->cr3 = raw->cr3;
	memcpy(slot->gpr, raw->gpr, sizeof(raw->gpr));
}
