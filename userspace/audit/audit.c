// SPDX-License-Identifier: GPL-2.0
/*
 * The exit audit's BPF side from userspace: check the kvm records' layout,
 * open the skeleton (exit_audit.bpf.c, built with clang -target bpf and
 * bpftool gen skeleton), set the VMM's pid, load, attach; read the per-vCPU
 * counters at the end.  libbpf's own messages go to stderr only when
 * loading fails, so a working audit prints nothing of libbpf's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "audit/audit.h"
#include "exit_audit.skel.h"

struct exit_audit {
	struct exit_audit_bpf *skel;
};

/* libbpf's diagnostics, kept for the error message of a failed load. */
static char libbpf_log[2048];

static int keep_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	size_t used = strlen(libbpf_log);

	if (level == LIBBPF_DEBUG || used + 1 >= sizeof(libbpf_log))
		return 0;
	return vsnprintf(libbpf_log + used, sizeof(libbpf_log) - used, fmt, ap);
}

static void last_line(char *dst, size_t size)
{
	char *end = libbpf_log + strlen(libbpf_log), *start;

	while (end > libbpf_log && end[-1] == '\n')
		*--end = 0;
	start = strrchr(libbpf_log, '\n');
	snprintf(dst, size, "%s", start ? start + 1 : libbpf_log);
}

struct exit_audit *exit_audit_start(pid_t vmm_pid, char *err, size_t err_size)
{
	struct exit_audit *a;
	char why[512];
	int r;

	if (audit_check_formats(NULL, err, err_size))
		return NULL;
	a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	libbpf_log[0] = 0;
	libbpf_set_print(keep_log);
	a->skel = exit_audit_bpf__open();
	if (!a->skel) {
		snprintf(err, err_size, "opening the BPF object: %s", strerror(errno));
		free(a);
		return NULL;
	}
	a->skel->rodata->vmm_tgid = (__u32)vmm_pid;
	r = exit_audit_bpf__load(a->skel);
	if (!r)
		r = exit_audit_bpf__attach(a->skel);
	if (r) {
		last_line(why, sizeof(why));
		snprintf(err, err_size, "loading the BPF program: %s%s%s", strerror(-r),
			 why[0] ? ": " : "", why);
		exit_audit_close(a);
		return NULL;
	}
	return a;
}

bool exit_audit_read(struct exit_audit *a, const uint32_t *ids, struct audit_vcpu *out, uint32_t n)
{
	int fd = bpf_map__fd(a->skel->maps.vcpus);
	uint32_t i;

	for (i = 0; i < n; i++)
		if (ids[i] >= AUDIT_MAX_VCPU_ID || bpf_map_lookup_elem(fd, &ids[i], &out[i]))
			return false;
	return true;
}

static bool listed(const uint32_t *ids, uint32_t n, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

uint64_t exit_audit_others(struct exit_audit *a, const uint32_t *ids, uint32_t n)
{
	int fd = bpf_map__fd(a->skel->maps.vcpus);
	struct audit_lost l = { 0 };
	struct audit_vcpu v;
	uint64_t sum = 0;
	uint32_t id, zero = 0;

	for (id = 0; id < AUDIT_MAX_VCPU_ID; id++)
		if (!listed(ids, n, id) && !bpf_map_lookup_elem(fd, &id, &v))
			sum += v.exits;
	bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.lost), &zero, &l);
	return sum + l.events;
}

void exit_audit_close(struct exit_audit *a)
{
	if (!a)
		return;
	exit_audit_bpf__destroy(a->skel);
	free(a);
}

int64_t audit_expected_db(const struct audit_line *l)
{
	return (int64_t)l->produced - (int64_t)l->emulated + (int64_t)l->unrecorded -
	       (int64_t)l->stepless_ends + (int64_t)l->foreign;
}
