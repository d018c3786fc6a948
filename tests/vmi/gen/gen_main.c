// SPDX-License-Identifier: GPL-2.0
/*
 * vmi-genimage --profile ISF --exe EXE --dll DLL --out PREFIX [options]
 *
 * Writes PREFIX.raw (raw physical image), PREFIX.elf (QEMU-style ELF core)
 * and PREFIX.expect (what svmtrace-vmi must report), for one scenario:
 *
 *   full   System and one process per case: 4K, 2 MiB and 1 GiB pages;
 *          entry page valid, in transition, behind a valid or transition
 *          prototype PTE, file-backed (subsection, VAD), paged out or
 *          demand-zero; KVA shadow; a truncated name; no loader list yet
 *   small  System, a 4K process, transition, prototype, KVA shadow: for
 *          fuzzing seeds (use with a small --mem-size)
 *
 * --la57 builds five-level page tables (a PML5 on top) and records
 * CR4.LA57 in the ELF core's vCPU notes.  --seed N (default 1) places the
 * kernel, its data, images, the DLL, PEBs and physical frames (gen_win.c).
 * --user-vcpu-only writes the ELF core with one vCPU, the one in user mode
 * of the KVA-shadow process (GS base = its TEB, KERNEL_GS_BASE = KPCR, CR3
 * = its user DTB), as a dump taken at that moment.
 */
#include "gen_win.h"
#include "lib/vmi/isf.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const struct gen_proc full[] = {
	{ .pid = 4, .name = "System", .system = true },
	{ .pid = 1200, .ppid = 4, .name = "plain.exe" },
	{ .pid = 1204, .ppid = 1200, .name = "large2m.exe", .map = MAP_2M },
	{ .pid = 1208, .ppid = 1200, .name = "large1g.exe", .map = MAP_1G },
	{ .pid = 1212, .ppid = 1200, .name = "transition.exe", .entry = ENTRY_TRANSITION },
	{ .pid = 1216, .ppid = 1200, .name = "prototype.exe", .entry = ENTRY_PROTOTYPE },
	{ .pid = 1220, .ppid = 1200, .name = "prototrans.exe", .entry = ENTRY_PROTO_TRANSITION },
	{ .pid = 1224, .ppid = 1200, .name = "subsection.exe", .entry = ENTRY_SUBSECTION },
	{ .pid = 1228, .ppid = 1200, .name = "vadproto.exe", .entry = ENTRY_VAD },
	{ .pid = 1232, .ppid = 1200, .name = "paged.exe", .entry = ENTRY_PAGEFILE },
	{ .pid = 1236, .ppid = 1200, .name = "demandzero.exe", .entry = ENTRY_DEMAND_ZERO },
	{ .pid = 1240, .ppid = 1200, .name = "kvashadow.exe", .kva_shadow = true },
	{ .pid = 1244, .ppid = 1200, .name = "averylongprocessname.exe" },
	{ .pid = 1248, .ppid = 1200, .name = "fresh.exe", .no_ldr = true },
};

static const struct gen_proc small[] = {
	{ .pid = 4, .name = "System", .system = true },
	{ .pid = 1200, .ppid = 4, .name = "plain.exe" },
	{ .pid = 1212, .ppid = 1200, .name = "transition.exe", .entry = ENTRY_TRANSITION },
	{ .pid = 1216, .ppid = 1200, .name = "prototype.exe", .entry = ENTRY_PROTOTYPE },
	{ .pid = 1240, .ppid = 1200, .name = "kvashadow.exe", .kva_shadow = true },
};

static const char usage[] =
	"usage: vmi-genimage --profile ISF --exe EXE --dll DLL --out PREFIX\n"
	"       [--scenario full|small] [--mem-size BYTES] [--decoys N]\n"
	"       [--corrupt cycle|blink|unmapped|outside] [--idt-shadow] [--old-qemu-notes]\n"
	"       [--la57] [--seed N] [--user-vcpu-only]\n";

static char *out_name(const char *prefix, const char *ext)
{
	char *s = malloc(strlen(prefix) + strlen(ext) + 1);

	if (!s)
		gen_die("out of memory");
	return strcat(strcpy(s, prefix), ext);
}

/*
 * Two threads of the first user process: its first one (started at the entry
 * point) and one it created at another start address; "thread PID TID TEB
 * START WIN32START" lines in the expect file.
 */
static void first_threads(struct gen_win *g, uint64_t pid)
{
	const struct gen_thread t[2] = {
		{ .pid = pid, .tid = 2000, .teb = 0x000000a1b2c3d000ULL,
		  .start_address = 0x00007ffb10001010ULL, .win32_start_address = g->last_entry },
		{ .pid = pid, .tid = 2004, .teb = 0x000000a1b2c3f000ULL,
		  .start_address = 0x00007ffb10001010ULL,
		  .win32_start_address = g->last_entry + 0x40 },
	};
	size_t i;

	for (i = 0; i < 2; i++) {
		gen_win_thread(g, &t[i]);
		fprintf(g->expect, "thread %llu %llu 0x%016llx 0x%016llx 0x%016llx\n",
			(unsigned long long)t[i].pid, (unsigned long long)t[i].tid,
			(unsigned long long)t[i].teb, (unsigned long long)t[i].start_address,
			(unsigned long long)t[i].win32_start_address);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "exe", required_argument, NULL, 'e' },
		{ "dll", required_argument, NULL, 'd' },
		{ "out", required_argument, NULL, 'o' },
		{ "scenario", required_argument, NULL, 's' },
		{ "mem-size", required_argument, NULL, 'm' },
		{ "decoys", required_argument, NULL, 'n' },
		{ "corrupt", required_argument, NULL, 'c' },
		{ "idt-shadow", no_argument, NULL, 'i' },
		{ "old-qemu-notes", no_argument, NULL, 'q' },
		{ "la57", no_argument, NULL, 'l' },
		{ "seed", required_argument, NULL, 'S' },
		{ "user-vcpu-only", no_argument, NULL, 'u' },
		{ NULL, 0, NULL, 0 },
	};
	const char *profile = NULL, *exe = NULL, *dll = NULL, *out = NULL, *corrupt = NULL;
	const struct gen_proc *procs = full;
	size_t nr = sizeof(full) / sizeof(full[0]), i;
	uint64_t mem_size = 4ULL << 30, decoys = 0, seed = 1;
	bool old_notes = false, la57 = false, user_only = false;
	struct svmtrace_error err;
	struct gen_win g = { 0 };
	char *path;
	int opt;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			profile = optarg;
			break;
		case 'e':
			exe = optarg;
			break;
		case 'd':
			dll = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'm':
			mem_size = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			decoys = strtoull(optarg, NULL, 0);
			break;
		case 'c':
			corrupt = optarg;
			break;
		case 'i':
			g.idt_shadow = true;
			break;
		case 'q':
			old_notes = true;
			break;
		case 'l':
			la57 = true;
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'u':
			user_only = true;
			break;
		case 's':
			if (!strcmp(optarg, "small")) {
				procs = small;
				nr = sizeof(small) / sizeof(small[0]);
			} else if (strcmp(optarg, "full")) {
				gen_die("unknown scenario '%s'", optarg);
			}
			break;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!profile || !exe || !dll || !out) {
		fputs(usage, stderr);
		return 2;
	}
	if (isf_load_file(profile, &g.isf, &err))
		gen_die("%s", err.message);
	gen_pe_load(exe, &g.exe);
	gen_pe_load(dll, &g.dll);
	g.m = gen_phys_new(mem_size, (uint32_t)seed);
	g.seed = seed;
	if (la57)
		gen_phys_set_paging(g.m, 5);
	path = out_name(out, ".expect");
	g.expect = fopen(path, "w");
	if (!g.expect)
		gen_die("%s: cannot create", path);
	free(path);

	gen_win_kernel(&g);
	gen_win_process(&g, &procs[0]);
	for (i = 0; i < decoys; i++) {
		char name[32];
		struct gen_proc d = {
			.pid = 2000 + 4 * i, .ppid = 4, .name = name, .share_image = i > 0
		};

		snprintf(name, sizeof(name), "decoy%zu.exe", i % 100000);
		gen_win_process(&g, &d);
	}
	for (i = 1; i < nr; i++) {
		gen_win_process(&g, &procs[i]);
		if (i == 1)
			first_threads(&g, procs[i].pid);
	}
	if (corrupt)
		gen_win_corrupt(&g, corrupt);
	gen_win_finish(&g);

	path = out_name(out, ".raw");
	gen_write_raw(g.m, path);
	free(path);
	path = out_name(out, ".elf");
	if (user_only && g.nr_vcpus < 2)
		gen_die("--user-vcpu-only needs a KVA-shadow process in the scenario");
	gen_write_elf(g.m, g.vcpus + user_only, user_only ? 1 : g.nr_vcpus, old_notes, path);
	free(path);
	if (fclose(g.expect))
		gen_die("writing the expect file failed");
	isf_free(g.isf);
	gen_phys_free(g.m);
	return 0;
}
