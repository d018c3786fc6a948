// SPDX-License-Identifier: GPL-2.0
/*
 * vmi-bench MEMORY PID PROFILE...: time what svmtraced does before arming.
 *
 *   profile load   svmtrace_vmi_profile_load() per profile, against a
 *                  baseline measured in the same run: decompressing the
 *                  same file and parsing it whole into a json-c tree (what
 *                  a straightforward loader would do);
 *   resolve        with the profile loaded: open the memory file, find the
 *                  kernel, walk the process list to PID and resolve its
 *                  entry page -- the whole path from a PID to its gate.
 *
 * Prints medians (and min/max) of repeated runs; no pass/fail.
 */
#include <svmtrace/vmi.h>
#include "lib/vmi/isf_text.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS_LOAD    5
#define RUNS_RESOLVE 25

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), by_value);
	printf("%-44s median %8.2f ms  (min %.2f, max %.2f, %d runs)\n", what, t[n / 2], t[0],
	       t[n - 1], n);
}

static void die(const char *msg, const struct svmtrace_error *err)
{
	fprintf(stderr, "vmi-bench: %s: %s\n", msg, err ? err->message : "");
	exit(1);
}

/* The baseline: xz decode + a full json-c parse of the same file. */
static double baseline_load(const char *path)
{
	struct svmtrace_error err;
	double t0 = now_ms();
	json_tokener *tok;
	json_object *obj;
	size_t len;
	char *text;

	if (isf_text_read(path, &text, &len, &err))
		die(path, &err);
	tok = json_tokener_new();
	obj = json_tokener_parse_ex(tok, text, (int)len);
	if (!obj)
		die("json-c cannot parse the profile", NULL);
	json_object_put(obj);
	json_tokener_free(tok);
	free(text);
	return now_ms() - t0;
}

static void bench_profile(const char *path)
{
	double ours[RUNS_LOAD], base[RUNS_LOAD];
	struct svmtrace_vmi_profile *p;
	struct svmtrace_error err;
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char label[96];
	int i;

	for (i = 0; i < RUNS_LOAD; i++) {
		double t0 = now_ms();

		if (svmtrace_vmi_profile_load(path, &p, &err))
			die(path, &err);
		ours[i] = now_ms() - t0;
		svmtrace_vmi_profile_free(p);
		base[i] = baseline_load(path);
	}
	snprintf(label, sizeof(label), "profile load %.30s", name);
	report(label, ours, RUNS_LOAD);
	snprintf(label, sizeof(label), "  baseline: xz + full json-c parse");
	report(label, base, RUNS_LOAD);
	printf("  ratio baseline/ours: %.1fx\n", base[RUNS_LOAD / 2] / ours[RUNS_LOAD / 2]);
}

static void bench_resolve(const char *memory, uint64_t pid, const char *profile_path)
{
	struct svmtrace_vmi_profile *profile;
	struct svmtrace_error err;
	struct svmtrace_vmi_entry e;
	double t[RUNS_RESOLVE];
	char label[96];
	int i;

	if (svmtrace_vmi_profile_load(profile_path, &profile, &err))
		die(profile_path, &err);
	for (i = 0; i < RUNS_RESOLVE; i++) {
		struct svmtrace_vmi_mem *mem;
		struct svmtrace_vmi *vmi;
		double t0 = now_ms();

		if (svmtrace_vmi_mem_open(memory, &mem, &err) ||
		    svmtrace_vmi_open_profile(mem, profile, &vmi, &err) ||
		    svmtrace_vmi_resolve(vmi, pid, &e, &err))
			die(memory, &err);
		t[i] = now_ms() - t0;
		svmtrace_vmi_close(vmi);
		svmtrace_vmi_mem_close(mem);
	}
	snprintf(label, sizeof(label), "resolve PID %llu (%s)", (unsigned long long)pid,
		 strrchr(memory, '.') ? strrchr(memory, '.') + 1 : memory);
	report(label, t, RUNS_RESOLVE);
	printf("  entry GPA 0x%llx, %s\n", (unsigned long long)e.where.gpa,
	       svmtrace_vmi_page_state_name(e.where.state));
	svmtrace_vmi_profile_free(profile);
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 4) {
		fprintf(stderr, "usage: vmi-bench MEMORY[,MEMORY...] PID PROFILE...\n");
		return 2;
	}
	for (i = 3; i < argc; i++)
		bench_profile(argv[i]);
	for (char *m = strtok(argv[1], ","); m; m = strtok(NULL, ","))
		bench_resolve(m, strtoull(argv[2], NULL, 0), argv[3]);
	return 0;
}
