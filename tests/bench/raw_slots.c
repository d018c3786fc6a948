// SPDX-License-Identifier: GPL-2.0
#include "raw_slots.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <svmtrace/trace.h>

#include "common/cli.h"

struct svmtrace_slot *load_raw_slots(const char *path, size_t spare, size_t *n)
{
	struct svmtrace_raw_record r;
	struct svmtrace_slot *slots;
	struct stat st;
	FILE *f = fopen(path, "rb");

	if (!f || fstat(fileno(f), &st) < 0)
		die("%s: %s", path, strerror(errno));
	*n = (size_t)st.st_size / sizeof(r);
	if (!*n)
		die("%s: no 168-byte records", path);
	slots = calloc(*n + spare, sizeof(*slots));
	if (!slots)
		die("out of memory for %zu slots", *n + spare);
	for (size_t i = 0; i < *n; i++) {
		if (fread(&r, sizeof(r), 1, f) != 1)
			die("%s: short read at record %zu", path, i);
		svmtrace_slot_from_raw(&r, SVMTRACE_SLOT_INSTRUCTION, &slots[i]);
	}
	fclose(f);
	return slots;
}
