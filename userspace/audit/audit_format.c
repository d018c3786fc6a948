// SPDX-License-Identifier: GPL-2.0
/*
 * The kvm records' layout, checked against the running kernel before the
 * audit program is loaded.  kvm.ko carries no BTF, so libbpf cannot
 * relocate the program's reads of kvm:kvm_exit and kvm:kvm_entry; a kernel
 * whose records differ from the layout in exit_audit.h (6.1's and 6.12's)
 * must be refused, not read at the wrong offsets.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "audit/audit.h"

struct want_field {
	const char *event;
	const char *name;
	unsigned int offset, size;
};

#define FIELD(rec, ev, f)                                                                          \
	{                                                                                          \
		ev, #f, offsetof(struct rec, f), sizeof(((struct rec *)0)->f)                      \
	}

static const struct want_field wanted[] = {
	FIELD(audit_kvm_exit_record, "kvm_exit", exit_reason),
	FIELD(audit_kvm_exit_record, "kvm_exit", vcpu_id),
	FIELD(audit_kvm_entry_record, "kvm_entry", vcpu_id),
	/* The program reads common_pid through vmlinux's BTF; its place still matters here. */
	{ "kvm_exit", "common_pid", 4, 4 },
};

/*
 * @tracefs, or where tracefs is mounted now, then the debugfs path of older
 * setups.
 */
static FILE *open_format(const char *tracefs, const char *event, char *path, size_t size)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	FILE *f = NULL;
	size_t i;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]) && !f; i++) {
		snprintf(path, size, "%s/events/kvm/%s/format", tracefs ? tracefs : roots[i],
			 event);
		f = fopen(path, "r");
	}
	return f;
}

/* "\tfield:unsigned int vcpu_id;\toffset:56;\tsize:4;\tsigned:0;" for @name. */
static int find_field(FILE *f, const char *name, unsigned int *offset, unsigned int *size)
{
	char line[512], *decl, *end, *p;
	size_t n = strlen(name);

	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		decl = strstr(line, "field:");
		end = decl ? strchr(decl, ';') : NULL;
		if (!end || (size_t)(end - decl) < n + 1)
			continue;
		p = end - n;
		if (strncmp(p, name, n) || (p[-1] != ' ' && p[-1] != '\t' && p[-1] != '*'))
			continue;
		/* A blank in a scanf format matches the tabs. */
		if (sscanf(end, "; offset:%u; size:%u;", offset, size) == 2)
			return 0;
	}
	return -1;
}

int audit_check_formats(const char *tracefs, char *err, size_t err_size)
{
	char path[256];
	unsigned int off, size;
	size_t i;
	FILE *f;

	for (i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
		const struct want_field *w = &wanted[i];

		f = open_format(tracefs, w->event, path, sizeof(path));
		if (!f) {
			snprintf(err, err_size,
				 "%s: %s (tracefs not mounted, or no kvm module loaded; "
				 "mount -t tracefs nodev /sys/kernel/tracing)",
				 path, strerror(errno));
			return -1;
		}
		if (find_field(f, w->name, &off, &size)) {
			snprintf(err, err_size,
				 "%s has no field %s: not the kvm:%s layout "
				 "the audit was built for (Debian's 6.1 and 6.12)",
				 path, w->name, w->event);
			fclose(f);
			return -1;
		}
		fclose(f);
		if (off != w->offset || size != w->size) {
			snprintf(
				err, err_size,
				"%s: %s is at offset %u size %u, the audit program reads offset %u "
				"size %u (built for Debian's 6.1 and 6.12): refusing to load it",
				path, w->name, off, size, w->offset, w->size);
			return -1;
		}
	}
	return 0;
}
