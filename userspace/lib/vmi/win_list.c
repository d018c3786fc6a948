// SPDX-License-Identifier: GPL-2.0
/*
 * Walking Windows' circular doubly linked lists (LIST_ENTRY) defensively:
 * guest memory may be mid-update, corrupted or hostile, so every link is
 * checked (canonical, readable, Blink points back), a visited set catches
 * cycles that never return to the head, and a bound caps the walk.
 */
#include "lib/vmi/win_session.h"
#include "lib/vmi/vmi_error.h"
#include "lib/vmi/x86_walk.h"

#include <stdlib.h>

struct visited {
	uint64_t *slots; /* 0 = empty; list entries are never at VA 0 */
	size_t cap, used;
};

static int visited_add(struct visited *v, uint64_t va)
{
	size_t i;

	if ((v->used + 1) * 2 > v->cap) {
		struct visited bigger = { NULL, v->cap ? v->cap * 2 : 256, 0 };

		bigger.slots = calloc(bigger.cap, sizeof(uint64_t));
		if (!bigger.slots)
			return -1;
		for (i = 0; i < v->cap; i++)
			if (v->slots[i])
				visited_add(&bigger, v->slots[i]);
		free(v->slots);
		*v = bigger;
	}
	for (i = (va * 0x9e3779b97f4a7c15ULL) >> 40 & (v->cap - 1);; i = (i + 1) & (v->cap - 1)) {
		if (v->slots[i] == va)
			return 1;
		if (!v->slots[i]) {
			v->slots[i] = va;
			v->used++;
			return 0;
		}
	}
}

static int bad_pointer(const struct svmtrace_vmi *vmi, uint64_t va)
{
	return !va || !x86_canonical(va, (int)vmi->kernel.paging_levels) || (va & 7);
}

/* Read @link's Flink and Blink. */
static int read_links(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t link, uint64_t *flink,
		      uint64_t *blink, struct svmtrace_error *err)
{
	int rc = win_read_u64(vmi, dtb, link + vmi->profile->list.flink, flink, err);

	return rc ? rc : win_read_u64(vmi, dtb, link + vmi->profile->list.blink, blink, err);
}

int win_list_walk(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t head, size_t max,
		  const char *what, win_list_visit visit, void *ctx, struct svmtrace_error *err)
{
	struct visited seen = { 0 };
	uint64_t prev = head, cur, flink, blink, head_blink;
	size_t n = 0;
	int rc;

	rc = read_links(vmi, dtb, head, &cur, &head_blink, err);
	if (rc)
		return vmi_prefix(err, SVMTRACE_E_CORRUPT, "%s: list head at VA 0x%llx", what,
				  (unsigned long long)head);
	while (cur != head) {
		if (bad_pointer(vmi, cur)) {
			rc = vmi_fail(err, SVMTRACE_E_CORRUPT,
				      "%s is corrupt: entry %zu at VA 0x%llx has Flink 0x%llx, not "
				      "a kernel list pointer",
				      what, n, (unsigned long long)prev, (unsigned long long)cur);
			break;
		}
		if (n == max) {
			rc = vmi_fail(err, SVMTRACE_E_CORRUPT,
				      "%s has more than %zu entries without returning to its head "
				      "at VA 0x%llx",
				      what, max, (unsigned long long)head);
			break;
		}
		rc = visited_add(&seen, cur);
		if (rc) {
			rc = rc < 0 ? vmi_fail(err, SVMTRACE_E_NOMEM, "%s: out of memory", what)
				    : vmi_fail(err, SVMTRACE_E_CORRUPT,
					       "%s has a cycle: entry at VA 0x%llx is reached "
					       "again (from 0x%llx) without returning to the head "
					       "at VA 0x%llx",
					       what, (unsigned long long)cur,
					       (unsigned long long)prev, (unsigned long long)head);
			break;
		}
		rc = read_links(vmi, dtb, cur, &flink, &blink, err);
		if (rc) {
			rc = vmi_prefix(err, SVMTRACE_E_CORRUPT,
					"%s is corrupt: entry %zu at VA 0x%llx (Flink of 0x%llx) "
					"cannot be read",
					what, n, (unsigned long long)cur, (unsigned long long)prev);
			break;
		}
		if (blink != prev) {
			rc = vmi_fail(err, SVMTRACE_E_CORRUPT,
				      "%s is corrupt: entry %zu at VA 0x%llx has Blink 0x%llx, "
				      "but was reached from 0x%llx",
				      what, n, (unsigned long long)cur, (unsigned long long)blink,
				      (unsigned long long)prev);
			break;
		}
		rc = visit(ctx, cur, err);
		if (rc)
			break;
		prev = cur;
		cur = flink;
		n++;
	}
	free(seen.slots);
	if (rc)
		return rc < 0 ? rc : 0;
	if (head_blink != prev)
		return vmi_fail(err, SVMTRACE_E_CORRUPT,
				"%s is corrupt: the head's Blink is 0x%llx, but its last entry is "
				"0x%llx",
				what, (unsigned long long)head_blink, (unsigned long long)prev);
	return 0;
}
