// SPDX-License-Identifier: GPL-2.0
/*
 * vmi-live-target: svmtraced's target resolution (userspace/svmtraced/
 * target.c, unchanged) over the live memory driver (mem_live.c,
 * unchanged), where the two kernel calls read a generated memory image
 * instead of a VM:
 *
 *   vmi-live-target --memory CORE --profiles P (--pid N | --name IMAGE [--newest])
 *                   [--resolve-timeout S] [--rename OLD=NEW --switch-after R] [--follow]
 *
 * --rename makes the guest change while it is read: after R reads (counted
 * from the end of kernel discovery) the image serves a copy in which the
 * process named OLD is named NEW, as if the guest wrote it mid-walk.
 * Prints one line per resolved process, then the reads it took.
 * --follow resolves as svmtraced --from first --follow does (its refusals).
 *
 * --codemap DIR runs svmtraced's code map (codemap.c, unchanged) over the
 * first process as if its trace were drained: the module list of the
 * session start is cut to the image alone, then slots enter the entry page
 * (sequence 10), a page of the loader list's second module (11: outside
 * every known module, so the loader list is walked again and the module
 * added with its exports), and, after the entry page's first two bytes
 * changed in guest memory and 0.3 s passed, the entry page again (40: a
 * second version).  DIR gets code.bin and capture.json.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli.h"
#include "svmtraced/svmtraced.h"

static struct {
	const struct svmtrace_vmi_mem *image;
	uint64_t reads, switch_at;
	uint64_t patch_gpa; /* 0 = no change */
	char patch[16];
	size_t patch_len;
} g;

static int image_read(void *ctx, uint64_t gpa, void *buf, size_t len)
{
	struct svmtrace_error err;

	g.reads++;
	if (svmtrace_vmi_mem_read(g.image, gpa, buf, len, &err))
		return -ENXIO;
	if (g.patch_gpa && g.reads > g.switch_at && g.patch_gpa >= gpa &&
	    g.patch_gpa + g.patch_len <= gpa + len)
		memcpy((uint8_t *)buf + (g.patch_gpa - gpa), g.patch, g.patch_len);
	return 0;
}

static int image_vcpu(void *ctx, unsigned int index, struct svmtrace_vmi_vcpu *out)
{
	const struct svmtrace_vmi_vcpu *v = svmtrace_vmi_mem_vcpu(g.image, index);

	if (!v)
		return -EINVAL;
	*out = *v;
	return 0;
}

/* Where the one ASCII copy of @name\0 (EPROCESS.ImageFileName) lies. */
static uint64_t find_name(const char *name)
{
	uint64_t gpa, size, at;
	unsigned int r;
	static uint8_t page[4096];
	uint64_t found = 0;
	size_t n = strlen(name) + 1;
	struct svmtrace_error err;

	for (r = 0; r < svmtrace_vmi_mem_range_count(g.image); r++) {
		svmtrace_vmi_mem_range(g.image, r, &gpa, &size);
		for (at = gpa; at + sizeof(page) <= gpa + size; at += 4096) {
			void *hit;

			if (svmtrace_vmi_mem_read(g.image, at, page, sizeof(page), &err))
				continue;
			hit = memmem(page, sizeof(page), name, n); /* names do not cross pages */
			if (!hit)
				continue;
			if (found && found != at + (uint64_t)((uint8_t *)hit - page))
				die("--rename: '%s' is in memory more than once", name);
			found = at + (uint64_t)((uint8_t *)hit - page);
		}
	}
	if (!found)
		die("--rename: '%s' is not in memory", name);
	return found;
}

/* The GPA of the 4 KiB PTE that maps @pid's entry point (tables all present). */
static uint64_t entry_pte_gpa(const struct svmtrace_vmi *vmi, uint64_t pid)
{
	struct svmtrace_vmi_entry e;
	struct svmtrace_error err;
	uint64_t table, at = 0, entry;
	int level;

	if (svmtrace_vmi_resolve(vmi, pid, &e, &err) != SVMTRACE_E_NOT_RESIDENT || !e.entry_va)
		die("--make-resident: PID %llu's entry is not a missing page: %s",
		    (unsigned long long)pid, err.message);
	table = e.process.dtb & 0x000ffffffffff000ULL;
	for (level = 4; level >= 1; level--) {
		at = table + 8 * ((e.entry_va >> (12 + 9 * (level - 1))) & 0x1ff);
		if (svmtrace_vmi_mem_read(g.image, at, &entry, 8, &err))
			die("%s", err.message);
		if (level > 1 && !(entry & 1))
			die("--make-resident: the %d-level table entry is not present", level);
		table = entry & 0x000ffffffffff000ULL;
	}
	return at;
}

static void slot(struct codemap *cm, uint64_t seq, uint64_t rip, uint64_t cr3)
{
	struct svmtrace_slot s = { .seq = seq, .rip = rip, .cr3 = cr3,
				   .kind = SVMTRACE_SLOT_INSTRUCTION };

	codemap_observe(cm, 0, &s, 1, sizeof(s));
}

/*
 * What the code map adds to the drain loop per slot, once its pages are
 * known: slots that stay on one page (a compare), and slots that alternate
 * between two known pages (a clock read and a hash lookup each).
 */
static void observe_cost(struct codemap *cm, uint64_t a, uint64_t b, uint64_t cr3)
{
	enum { N = 1 << 16, ROUNDS = 64 };
	static struct svmtrace_slot same[N], flip[N];
	double t0, t1, t2;
	int i;

	for (i = 0; i < N; i++) {
		same[i] = (struct svmtrace_slot){ .seq = 100 + (uint64_t)i, .rip = a + (i & 0xff),
						  .cr3 = cr3, .kind = SVMTRACE_SLOT_INSTRUCTION };
		flip[i] = same[i];
		flip[i].rip = (i & 1) ? b : a;
	}
	t0 = now_seconds();
	for (i = 0; i < ROUNDS; i++)
		codemap_observe(cm, 1, same, N, sizeof(same[0]));
	t1 = now_seconds();
	for (i = 0; i < ROUNDS; i++)
		codemap_observe(cm, 2, flip, N, sizeof(flip[0]));
	t2 = now_seconds();
	printf("observe ns/slot: same page %.1f, page change %.1f\n",
	       (t1 - t0) * 1e9 / (N * ROUNDS), (t2 - t1) * 1e9 / (N * ROUNDS));
}

static void run_codemap(const char *dir, struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *live,
			struct target_info *t)
{
	const struct svmtrace_vmi_entry *e = &t->procs[0].entry;
	uint64_t cr3 = e->process.user_dtb ? e->process.user_dtb : e->process.dtb, dll;
	struct daemon_options o = { 0 };
	struct vm_info vm = { .name = "image" };
	struct codemap *cm;
	struct meta m;

	target_modules(vmi, live, &t->procs[0]);
	if (t->procs[0].nr_modules < 2)
		die("--codemap: the process has %zu modules, expected its image and a DLL",
		    t->procs[0].nr_modules);
	dll = t->procs[0].modules[1].base + 0x1000;
	t->procs[0].nr_modules = 1; /* the DLL "loads" while tracing */
	mkdir(dir, 0755);
	cm = codemap_open(dir, vmi, live, t);
	slot(cm, 10, e->entry_va, cr3);
	slot(cm, 11, dll, cr3);
	g.patch_gpa = e->where.gpa & ~0xfffULL;
	memcpy(g.patch, "\xcc\xcc", 2);
	g.patch_len = 2;
	g.switch_at = g.reads;
	usleep(300000);
	slot(cm, 40, e->entry_va, cr3);
	observe_cost(cm, e->entry_va, dll, cr3);
	codemap_close(cm);
	m = (struct meta){ .vm = &vm, .opt = &o, .target = t, .state = "ended" };
	if (!meta_write(dir, &m))
		die("%s: capture.json not written", dir);
	printf("code pages=%llu versions=%llu changed=%llu walks=%llu added=%llu unreadable=%llu "
	       "entry_page=0x%llx dll_page=0x%llx\n",
	       (unsigned long long)t->code.pages, (unsigned long long)t->code.versions,
	       (unsigned long long)t->code.changed, (unsigned long long)t->code.module_walks,
	       (unsigned long long)t->code.modules_added, (unsigned long long)t->code.unreadable,
	       (unsigned long long)(e->entry_va & ~0xfffULL), (unsigned long long)dll);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { { "memory", required_argument, NULL, 'm' },
						  { "profiles", required_argument, NULL, 'P' },
						  { "pid", required_argument, NULL, 'p' },
						  { "name", required_argument, NULL, 'n' },
						  { "newest", no_argument, NULL, 'N' },
						  { "resolve-timeout", required_argument, NULL,
						    'T' },
						  { "rename", required_argument, NULL, 'r' },
						  { "switch-after", required_argument, NULL, 's' },
						  { "make-resident", required_argument, NULL, 'R' },
						  { "codemap", required_argument, NULL, 'C' },
						  { "follow", no_argument, NULL, 'F' },
						  { 0 } };
	struct svmtrace_vmi_live_ops ops = { .read = image_read,
					     .vcpu = image_vcpu,
					     .max_read = SVMTRACE_MAX_READ };
	struct daemon_options o = { .resolve_timeout = 60, .quiet = true };
	struct svmtrace_vmi_mem *image, *live;
	struct svmtrace_error err;
	struct svmtrace_vmi *vmi;
	struct target_info t;
	const char *memory = NULL, *rename = NULL, *codemap_dir = NULL;
	uint64_t resident_pte = 0;
	uint64_t base;
	unsigned int i;
	int c;

	cli_progname = "vmi-live-target";
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			memory = optarg;
			break;
		case 'P':
			o.profiles = optarg;
			break;
		case 'p':
			o.pid = parse_u64(optarg, "--pid");
			break;
		case 'n':
			o.name = optarg;
			break;
		case 'N':
			o.newest = true;
			break;
		case 'T':
			o.resolve_timeout = strtod(optarg, NULL);
			break;
		case 'r':
			rename = optarg;
			break;
		case 's':
			g.switch_at = parse_u64(optarg, "--switch-after");
			break;
		case 'R':
			resident_pte = parse_u64(optarg, "--make-resident");
			break;
		case 'C':
			codemap_dir = optarg;
			break;
		case 'F': /* --from first --follow */
			o.from = FROM_FIRST;
			o.follow = true;
			break;
		default:
			return 2;
		}
	}
	if (!memory || !o.profiles || (!o.pid && !o.name))
		die("--memory, --profiles and --pid or --name are required");
	if (svmtrace_vmi_mem_open(memory, &image, &err))
		die("%s", err.message);
	g.image = image;
	if (svmtrace_vmi_mem_open_live_ops(&ops, "live image", &live, &err))
		die("%s", err.message);
	vmi = target_open_mem(live, &o);
	if (rename) {
		const char *eq = strchr(rename, '=');

		if (!eq || (size_t)(eq - rename) >= sizeof(g.patch) ||
		    strlen(eq + 1) != (size_t)(eq - rename))
			die("--rename OLD=NEW: names of the same length");
		g.patch_len = (size_t)(eq - rename);
		memcpy(g.patch, eq + 1, g.patch_len);
		{
			char old[16];

			memcpy(old, rename, g.patch_len);
			old[g.patch_len] = '\0';
			g.patch_gpa = find_name(old);
		}
		g.switch_at += g.reads;
	}
	if (resident_pte) {
		memcpy(g.patch, &resident_pte, 8);
		g.patch_len = 8;
		g.patch_gpa = entry_pte_gpa(vmi, o.pid);
		g.switch_at += g.reads;
	}
	memset(&t, 0, sizeof(t));
	base = g.reads;
	target_resolve(vmi, live, &o, NULL, &t);
	for (i = 0; i < t.nr_procs; i++) {
		const struct svmtrace_vmi_entry *e = &t.procs[i].entry;

		char gate[TARGET_GATE_TEXT];

		target_gate_text(&t.procs[i], gate);
		printf("pid=%llu name=%s dtb=0x%llx user_dtb=0x%llx entry=0x%llx gate=%s\n",
		       (unsigned long long)e->process.pid, e->process.name,
		       (unsigned long long)e->process.dtb, (unsigned long long)e->process.user_dtb,
		       (unsigned long long)e->entry_va, gate);
	}
	printf("reads=%llu\n", (unsigned long long)(g.reads - base));
	if (codemap_dir)
		run_codemap(codemap_dir, vmi, live, &t);
	svmtrace_vmi_close(vmi);
	svmtrace_vmi_mem_close(live);
	svmtrace_vmi_mem_close(image);
	return 0;
}
