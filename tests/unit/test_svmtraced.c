// SPDX-License-Identifier: GPL-2.0
/*
 * svmtraced's pieces that need no VM: option parsing, the module version
 * check, capture.json (read back by a second parser, Python's json), the
 * status socket and its text.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <svmtrace/analysis.h>

#include "svmtraced/svmtraced.h"
#include "../ring/ring_producer.h"
#include "support.h"

static void parse(struct daemon_options *o, const char *const *args)
{
	char *argv[64];
	int argc = 0;

	argv[argc++] = "svmtraced";
	while (*args)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	options_parse(argc, argv, o);
}

START_TEST(options_full_command)
{
	static const char *const args[] = { "--domain",
					    "win11",
					    "--pid",
					    "1234",
					    "--out",
					    "traces",
					    "--policy",
					    "block",
					    "--kernel",
					    "--rip-range",
					    "0x1000-0x2000",
					    "--max-bytes",
					    "64M",
					    "--duration",
					    "2.5",
					    "--max-records",
					    "1000",
					    "--ring-slots",
					    "1024",
					    "--wake-batch",
					    "8",
					    "--anchor-interval",
					    "16",
					    "--profiles",
					    "/p",
					    "--socket",
					    "/tmp/s.sock",
					    NULL };
	struct daemon_options o;

	parse(&o, args);
	ck_assert_str_eq(o.domain, "win11");
	ck_assert_uint_eq(o.pid, 1234);
	ck_assert_int_eq(o.vm_fd, -1);
	ck_assert_str_eq(o.out_dir, "traces");
	ck_assert_uint_eq(o.target.policy, SVMTRACE_POLICY_BLOCK);
	ck_assert_uint_eq(o.target.flags, SVMTRACE_TARGET_F_KERNEL);
	ck_assert_uint_eq(o.target.nr_ranges, 1);
	ck_assert_uint_eq(o.target.ranges[0].start, 0x1000);
	ck_assert_uint_eq(o.target.ranges[0].end, 0x2000);
	ck_assert_uint_eq(o.lim.max_bytes, 64ULL << 20);
	ck_assert(o.lim.duration == 2.5);
	ck_assert_uint_eq(o.lim.max_records, 1000);
	ck_assert_uint_eq(o.target.ring_slots, 1024);
	ck_assert_uint_eq(o.target.wake_batch, 8);
	ck_assert_uint_eq(o.lim.anchor_interval, 16);
	ck_assert_str_eq(o.profiles, "/p");
	ck_assert_str_eq(o.socket, "/tmp/s.sock");
	ck_assert_int_eq(o.from, FROM_ENTRY);
	ck_assert(o.resolve_timeout == 60);
}
END_TEST

START_TEST(options_defaults_and_wait_name)
{
	static const char *const args[] = { "--vmm-pid", "42",	  "--wait-name", "sample.exe",
					    "--vm-fd",	 "7",	  "--max-bytes", "1g",
					    "--from",	 "entry", NULL };
	struct daemon_options o;

	parse(&o, args);
	ck_assert_int_eq(o.vmm_pid, 42);
	ck_assert_int_eq(o.vm_fd, 7);
	ck_assert_str_eq(o.wait_name, "sample.exe");
	ck_assert_ptr_null(o.out_dir);
	ck_assert_str_eq(o.profiles, SVMTRACED_PROFILES);
	ck_assert_uint_eq(o.lim.max_bytes, 1ULL << 30);
	ck_assert_uint_eq(o.lim.anchor_interval, 0); /* the writer's default */
	ck_assert_uint_eq(o.target.policy, SVMTRACE_POLICY_DROP);
}
END_TEST

START_TEST(options_hide_time)
{
	static const char *const plain[] = { "--vmm-pid", "42", "--pid", "4", "--hide-time", NULL };
	static const char *const costs[] = { "--vmm-pid",  "42",		"--pid", "4",
					     "--hide-time", "--time-costs", "0.75,36,1500", NULL };
	struct daemon_options o;

	parse(&o, plain);
	ck_assert_uint_eq(o.target.flags, SVMTRACE_TARGET_F_HIDE_TIME);
	/* 0: the kernel's defaults */
	ck_assert_uint_eq(o.target.time.insn_x256, 0);
	ck_assert_uint_eq(o.target.time.tsc_read, 0);
	ck_assert_uint_eq(o.target.time.exit, 0);
	parse(&o, costs);
	ck_assert_uint_eq(o.target.time.insn_x256, 192);
	ck_assert_uint_eq(o.target.time.tsc_read, 36);
	ck_assert_uint_eq(o.target.time.exit, 1500);
}
END_TEST

START_TEST(options_from_next)
{
	static const char *const args[] = { "--vmm-pid", "42", "--pid", "4", "--from", "next",
					    NULL };
	struct daemon_options o;

	parse(&o, args);
	ck_assert_int_eq(o.from, FROM_NEXT);
	ck_assert_uint_eq(o.target.flags & SVMTRACE_TARGET_F_FROM_NEXT,
			  SVMTRACE_TARGET_F_FROM_NEXT);
}
END_TEST

/* Each of these dies (exit status 1); the messages are checked by tests/cli. */
static const char *const bad[][8] = {
	{ "--pid", "4", NULL },
	{ "--domain", "a", "--vmm-pid", "1", "--pid", "4", NULL },
	{ "--vmm-pid", "1", NULL },
	{ "--vmm-pid", "1", "--name", "a.exe", "--wait-name", "b.exe", NULL },
	{ "--vmm-pid", "1", "--wait-name", "b.exe", "--from", "next", NULL },
	{ "--vmm-pid", "1", "--pid", "4", "--ring-slots", "1000", NULL },
	{ "--vmm-pid", "1", "--pid", "4", "--max-bytes", "0", NULL },
	{ "--vmm-pid", "1", "--pid", "4", "--rip-range", "5-4", NULL },
	{ "--vmm-pid", "1", "--pid", "4", "--anchor-interval", "0", NULL },
	{ "--vmm-pid", "1", "--pid", "4", "--time-costs", "1,40,1360", NULL },
	{ "--vmm-pid", "1", "--pid", "4", "--hide-time", "--time-costs", "1,40", NULL },
	{ "--vmm-pid", "1", "--pid", "4", "--hide-time", "--time-costs", "0,40,1360", NULL },
};

START_TEST(options_refused)
{
	struct daemon_options o;

	parse(&o, bad[_i]);
}
END_TEST

START_TEST(version_check)
{
	struct svmtrace_version v = { .abi_version = SVMTRACE_ABI_VERSION };
	char buf[512], want[64];

	strcpy(v.release, "6.1.0-57-amd64");
	ck_assert_ptr_null(host_version_problem(&v, "6.1.0-57-amd64", buf, sizeof(buf)));
	ck_assert_ptr_nonnull(host_version_problem(&v, "6.1.0-58-amd64", buf, sizeof(buf)));
	ck_assert_msg(strstr(buf, "built for kernel 6.1.0-57-amd64 but 6.1.0-58-amd64 runs"), "%s",
		      buf);
	v.abi_version = SVMTRACE_ABI_VERSION + 1;
	ck_assert_ptr_nonnull(host_version_problem(&v, "6.1.0-57-amd64", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "speaks ABI %d, this svmtraced ABI %d",
		 SVMTRACE_ABI_VERSION + 1, SVMTRACE_ABI_VERSION);
	ck_assert_msg(strstr(buf, want), "%s", buf);
}
END_TEST

static struct svmtrace_vmi_kernel kernel = {
	.base = 0xfffff80412600000ULL,
	.dtb = 0x1aa000,
	.size_of_image = 0x1046000,
	.pdb_name = "ntkrnlmp.pdb",
	.id = "84A84F4D2218BC053913B1204942618D-1",
	.method = SVMTRACE_VMI_METHOD_LSTAR,
};

static void fake_target(struct target_info *t, struct svmtrace_vmi_module *mods,
			struct svmtrace_vmi_image_id *ids)
{
	struct svmtrace_vmi_entry *e = &t->procs[0].entry;

	memset(t, 0, sizeof(*t));
	t->kernel = &kernel;
	t->profile = "/p/ntkrnlmp-84A84F4D2218BC053913B1204942618D-1.json.xz";
	t->nr_procs = 1;
	e->process.pid = 1234;
	e->process.ppid = 4;
	strcpy(e->process.name, "sample \"q\".exe");
	e->process.dtb = 0x7b4d000;
	e->process.user_dtb = 0x7b4e000;
	e->image_base = 0x7ff6a0000000ULL;
	e->entry_rva = 0x1400;
	e->entry_va = 0x7ff6a0001400ULL;
	strcpy(e->section, ".text");
	e->where.gpa = 0x3c5a400;
	e->entry_page = 0x3c5a000;
	memset(mods, 0, 2 * sizeof(*mods));
	memset(ids, 0, 2 * sizeof(*ids));
	strcpy(mods[0].name, "sample.exe");
	strcpy(mods[0].path, "C:\\Users\\lab\\sample.exe");
	mods[0].base = e->image_base;
	mods[0].size = 0x9000;
	ids[0] = (struct svmtrace_vmi_image_id){ .time_date_stamp = 0x65a1b2c3,
						 .size_of_image = 0x9000,
						 .has_codeview = true,
						 .age = 2,
						 .pdb_name = "sample.pdb",
						 .id = "00112233445566778899AABBCCDDEEFF-2" };
	strcpy(mods[1].name, "ntdll.dll");
	mods[1].base = 0x7ffb10000000ULL;
	mods[1].size = 0x1f8000;
	t->procs[0].modules = mods;
	t->procs[0].module_ids = ids;
	t->procs[0].nr_modules = 2;
}

START_TEST(capture_json_reads_back)
{
	struct svmtrace_vmi_module mods[2];
	struct svmtrace_vmi_image_id ids[2];
	struct meta_counts counts[2] = { { 0, 100, 2, 102, 0 }, { 1, 5, 0, 7, 2 } };
	struct vm_info vm = { .name = "win11",
			      .uuid = "c7a5fdbd-cdaf-9455-926a-d65c16db1809",
			      .vmm_pid = 4242 };
	static const char *const args[] = { "--domain",	   "win11",	"--pid", "1234",
					    "--rip-range", "0x10-0x20", NULL };
	struct daemon_options o;
	struct target_info t;
	struct meta m;
	char cmd[4096];
	const char *dir = scratch_path("meta");

	parse(&o, args);
	fake_target(&t, mods, ids);
	mkdir(dir, 0755);
	m = (struct meta){ .vm = &vm,
			   .opt = &o,
			   .target = &t,
			   .counts = counts,
			   .nr_counts = 2,
			   .state = "ended",
			   .end_reason = "SIGINT",
			   .started = 1.7e9,
			   .ended = 1.7e9 + 5 };
	ck_assert(meta_write(dir, &m));
	snprintf(cmd, sizeof(cmd),
		 "test ! -e %s/.capture.json.tmp && python3 -c '\n"
		 "import json, sys\n"
		 "d = json.load(open(sys.argv[1]))\n"
		 "assert d[\"format\"] == \"svmtrace-capture\" and d[\"version\"] == 1\n"
		 "assert d[\"domain\"] == {\"name\": \"win11\", \"uuid\": "
		 "\"c7a5fdbd-cdaf-9455-926a-d65c16db1809\", \"vmm_pid\": 4242}, d[\"domain\"]\n"
		 "k = d[\"kernel\"]\n"
		 "assert k[\"pdb_guid\"] == \"84A84F4D2218BC053913B1204942618D\" and "
		 "k[\"pdb_age\"] == 1 and k[\"base\"] == \"0xfffff80412600000\", k\n"
		 "p = d[\"process\"]\n"
		 "assert p[\"pid\"] == 1234 and p[\"name\"] == \"sample \\\"q\\\".exe\", p\n"
		 "assert p[\"dtb\"] == \"0x7b4d000\" and p[\"user_dtb\"] == \"0x7b4e000\", p\n"
		 "assert p[\"image_base\"] == \"0x7ff6a0000000\" and p[\"entry_va\"] == "
		 "\"0x7ff6a0001400\" and p[\"entry_gpa\"] == \"0x3c5a400\", p\n"
		 "assert d[\"target\"][\"cr3\"] == [\"0x7b4d000\", \"0x7b4e000\"] and "
		 "d[\"target\"][\"gates\"] == [\"0x3c5a000\"], d[\"target\"]\n"
		 "m = d[\"modules\"]\n"
		 "assert m[0][\"path\"] == \"C:\\\\Users\\\\lab\\\\sample.exe\" and "
		 "m[0][\"pe_timestamp\"] == \"0x65a1b2c3\" and m[0][\"pdb_age\"] == 2, m[0]\n"
		 "assert \"pdb_id\" not in m[1] and m[1][\"size\"] == 0x1f8000, m[1]\n"
		 "assert d[\"options\"][\"rip_ranges\"] == [[\"0x10\", \"0x20\"]]\n"
		 "assert d[\"options\"][\"policy\"] == \"drop\" and d[\"options\"][\"max_bytes\"] "
		 "is None\n"
		 "assert d[\"options\"][\"xstate\"] is False\n"
		 "assert d[\"vcpus\"][1] == {\"vcpu\": 1, \"written\": 5, \"dropped\": 0, "
		 "\"produced\": 7, \"discarded\": 2}, d[\"vcpus\"]\n"
		 "assert d[\"end_reason\"] == \"SIGINT\" and d[\"state\"] == \"ended\"\n"
		 "assert d[\"started\"] == \"2023-11-14T22:13:20Z\", d[\"started\"]\n"
		 "' %s/capture.json",
		 dir, dir);
	ck_assert_int_eq(system(cmd), 0);
	/* Rewriting replaces the file whole. */
	m.state = "recording";
	m.end_reason = NULL;
	ck_assert(meta_write(dir, &m));
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
		 "assert d[\"end_reason\"] is None and d[\"state\"] == \"recording\"' "
		 "%s/capture.json",
		 dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A non-resident entry page becomes a watched gate on its VA, in the kernel DTB. */
/*
 * --follow: the traced processes as a tree (each under its traced parent,
 * one whose parent is not traced at the top), the lost ones with their
 * reason, every process with its own modules.
 */
START_TEST(capture_json_process_tree)
{
	struct svmtrace_vmi_module mods[2];
	struct svmtrace_vmi_image_id ids[2];
	struct lost_proc lost = { .pid = 1232,
				  .name = "sixth.exe",
				  .reason = "--max-processes 4 reached" };
	struct vm_info vm = { .name = "win10", .vmm_pid = 1 };
	static const char *const args[] = { "--domain", "win10", "--wait-name", "late.exe",
					    "--from",	"first", "--follow",	NULL };
	static const struct {
		uint64_t pid, ppid;
		const char *name;
	} p[4] = {
		{ 1212, 1200, "late.exe" },
		{ 1216, 1212, "child.exe" },
		{ 1220, 1212, "hollow.exe" },
		{ 1224, 1216, "grandchild.exe" },
	};
	struct daemon_options o;
	struct target_info t;
	struct meta m;
	char cmd[4096];
	const char *dir = scratch_path("meta-tree");
	unsigned int i;

	parse(&o, args);
	fake_target(&t, mods, ids);
	for (i = 0; i < 4; i++) {
		t.procs[i].entry.process.pid = p[i].pid;
		t.procs[i].entry.process.ppid = p[i].ppid;
		snprintf(t.procs[i].entry.process.name, sizeof(t.procs[i].entry.process.name), "%s",
			 p[i].name);
		t.procs[i].entry.process.dtb = 0x100000 * (i + 1);
		t.procs[i].followed = i > 0;
	}
	t.nr_procs = 4;
	t.lost = &lost;
	t.nr_lost = 1;
	mkdir(dir, 0755);
	m = (struct meta){
		.vm = &vm, .opt = &o, .target = &t, .state = "ended", .syscalls_unrecorded = 3
	};
	ck_assert(meta_write(dir, &m));
	snprintf(cmd, sizeof(cmd),
		 "python3 -c '\n"
		 "import json, sys\n"
		 "d = json.load(open(sys.argv[1]))\n"
		 "def tree(n): return (n[\"pid\"], n[\"name\"], [tree(c) for c in "
		 "n[\"children\"]])\n"
		 "assert [tree(n) for n in d[\"process_tree\"]] == [(1212, \"late.exe\", [(1216, "
		 "\"child.exe\", [(1224, \"grandchild.exe\", [])]), (1220, \"hollow.exe\", [])])], "
		 "d[\"process_tree\"]\n"
		 "ps = d[\"processes\"]\n"
		 "assert [(x[\"pid\"], x[\"ppid\"], x[\"followed\"]) for x in ps] == [(1212, 1200, "
		 "False), (1216, 1212, True), (1220, 1212, True), (1224, 1216, True)], ps\n"
		 "assert [x[\"name\"] for x in ps[0][\"modules\"]] == [\"sample.exe\", "
		 "\"ntdll.dll\"]\n"
		 "assert ps[1][\"modules\"] == []\n"
		 "assert d[\"lost\"] == [{\"pid\": 1232, \"name\": \"sixth.exe\", \"reason\": "
		 "\"--max-processes 4 reached\"}], d[\"lost\"]\n"
		 "assert d[\"syscalls_unrecorded\"] == 3\n"
		 "assert d[\"options\"][\"from\"] == \"first\" and d[\"options\"][\"follow\"] is "
		 "True\n"
		 "' %s/capture.json",
		 dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(target_fill_watch)
{
	struct daemon_options o = { .from = FROM_ENTRY };
	struct svmtrace_target kt;
	struct target_info t;

	memset(&t, 0, sizeof(t));
	memset(&kt, 0, sizeof(kt));
	t.nr_procs = 2;
	t.procs[0].watch_entry = true;
	t.procs[0].entry.entry_va = 0x7ff6a0001400ULL;
	t.procs[0].entry.process.dtb = 0x7b4d000;
	t.procs[0].entry.process.user_dtb = 0x7b4e000;
	t.procs[1].entry.entry_page = 0x3c5a000;
	t.procs[1].entry.process.dtb = 0x5000;
	target_fill(&t, &o, &kt);
	ck_assert_uint_eq(kt.nr_cr3, 3);
	ck_assert_uint_eq(kt.nr_gates, 2);
	ck_assert_uint_eq(kt.gates[0].flags, SVMTRACE_GATE_F_WATCH);
	ck_assert_uint_eq(kt.gates[0].gpa, 0);
	ck_assert_uint_eq(kt.gates[0].va, 0x7ff6a0001000ULL);
	ck_assert_uint_eq(kt.gates[0].dtb, 0x7b4d000);
	ck_assert_uint_eq(kt.gates[1].flags, 0);
	ck_assert_uint_eq(kt.gates[1].gpa, 0x3c5a000);
	ck_assert_uint_eq(kt.gates[1].id, 1);
	ck_assert_uint_eq(kt.first_rip, 0);
}
END_TEST

/*
 * --from first: no gate, the target's CR3s and where threads begin; waiting
 * for a name (no process yet): the kernel asks about every new thread.
 */
START_TEST(target_fill_first)
{
	struct daemon_options o = { .from = FROM_FIRST };
	struct svmtrace_target kt;
	struct target_info t;

	memset(&t, 0, sizeof(t));
	memset(&kt, 0, sizeof(kt));
	t.has_thread_start = true;
	t.thread_start.ldr_initialize_thunk = 0x7ffb12341003ULL;
	t.nr_procs = 1;
	t.procs[0].entry.entry_page = 0x3c5a000;
	t.procs[0].entry.process.dtb = 0x7b4d000;
	t.procs[0].entry.process.user_dtb = 0x7b4e000;
	target_fill(&t, &o, &kt);
	ck_assert_uint_eq(kt.flags, SVMTRACE_TARGET_F_FIRST);
	ck_assert_uint_eq(kt.first_rip, 0x7ffb12341003ULL);
	ck_assert_uint_eq(kt.nr_cr3, 2);
	ck_assert_uint_eq(kt.nr_gates, 0);

	memset(&kt, 0, sizeof(kt));
	t.nr_procs = 0;
	t.waiting = true;
	target_fill(&t, &o, &kt);
	ck_assert_uint_eq(kt.flags, SVMTRACE_TARGET_F_FIRST | SVMTRACE_TARGET_F_ASK);
	ck_assert_uint_eq(kt.nr_cr3, 0);

	memset(&kt, 0, sizeof(kt));
	o.from = FROM_ENTRY;
	target_fill(&t, &o, &kt);
	ck_assert_uint_eq(kt.flags, SVMTRACE_TARGET_F_ASK);
	ck_assert_uint_eq(kt.first_rip, 0x7ffb12341003ULL);
}
END_TEST

/*
 * The module map svmtraced writes (exports at first sight, a module seen
 * later with its sequence, the code.bin numbers) is what libsvmtrace's
 * symbol table reads: a VA comes back as module!export+offset.
 */
START_TEST(capture_json_symbolizes)
{
	struct svmtrace_vmi_module mods[3];
	struct svmtrace_vmi_image_id ids[3];
	struct svmtrace_vmi_export ex0[2] = { { "Run", 1, 0x1400 }, { "", 9, 0x2000 } };
	struct svmtrace_vmi_export ex2[1] = { { "LateFn", 1, 0x10 } };
	struct module_extra extra[3] = { { .exports = ex0, .nr_exports = 2 },
					 { .exports_error = "PE has no export directory" },
					 { .exports = ex2, .nr_exports = 1, .later = true,
					   .first_sequence = 777 } };
	struct vm_info vm = { .name = "win11", .vmm_pid = 1 };
	static const char *const args[] = { "--domain", "win11", "--pid", "1234", NULL };
	const struct svmtrace_module_info *mi;
	struct svmtrace_symbols *sy = svmtrace_symbols_new();
	struct svmtrace_error err;
	struct daemon_options o;
	struct target_info t;
	struct meta m;
	char path[4096], buf[320], cmd[8192];
	const char *dir = scratch_path("meta-sym");
	size_t i;

	parse(&o, args);
	fake_target(&t, mods, ids);
	mods[2] = mods[1];
	ids[2] = ids[1];
	strcpy(mods[2].name, "late.dll");
	mods[2].base = 0x7ffc00000000ULL;
	mods[2].size = 0x3000;
	t.procs[0].nr_modules = 3;
	t.procs[0].module_extra = extra;
	t.code = (struct code_stats){ .enabled = true, .pages = 4, .versions = 5, .changed = 1 };
	mkdir(dir, 0755);
	m = (struct meta){ .vm = &vm, .opt = &o, .target = &t, .state = "ended" };
	ck_assert(meta_write(dir, &m));
	snprintf(path, sizeof(path), "%s/capture.json", dir);
	ck_assert_int_eq(svmtrace_symbols_load_capture(sy, path, &err), 0);
	/* three modules and the kernel, sorted by base */
	ck_assert_uint_eq(svmtrace_symbols_module_count(sy), 4);
	svmtrace_symbols_format(sy, 0, 0x7ff6a0001404ULL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "sample.exe!Run+0x4");
	svmtrace_symbols_format(sy, 0, 0x7ff6a0002000ULL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "sample.exe!#9");
	svmtrace_symbols_format(sy, 0, 0x7ff6a0000100ULL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "sample.exe+0x100");
	svmtrace_symbols_format(sy, 0, 0x7ffb10000010ULL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "ntdll.dll+0x10");
	ck_assert_uint_eq(svmtrace_symbols_format(sy, 0, 0x1000, buf, sizeof(buf)), 0);
	for (i = 0; i < svmtrace_symbols_module_count(sy); i++) {
		mi = svmtrace_symbols_module(sy, i);
		if (!strcmp(mi->name, "late.dll")) {
			ck_assert(mi->seen_later);
			ck_assert_uint_eq(mi->first_sequence, 777);
		} else {
			ck_assert(!mi->seen_later);
		}
	}
	svmtrace_symbols_format(sy, 0, 0x7ffc00000012ULL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "late.dll!LateFn+0x2");
	svmtrace_symbols_free(sy);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
		 "c=d[\"code\"]; m=d[\"modules\"]; "
		 "assert c[\"pages\"]==4 and c[\"versions\"]==5 and c[\"file\"]==\"code.bin\", c; "
		 "assert m[1][\"exports\"]==[] and m[1][\"exports_error\"], m[1]; "
		 "assert m[0][\"first_seen_sequence\"] is None, m[0]' %s",
		 path);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A client connected to the status socket at @path. */
static int status_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	strcpy(sa.sun_path, path);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* The daemon's answer on client @fd, as a string in @buf; closes @fd. */
static void read_answer(int fd, char *buf, size_t size)
{
	ssize_t n = read(fd, buf, size - 1);

	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	close(fd);
}

/* Send @req and hang up without reading: the daemon must survive it. */
static void ask_and_leave(const char *path, const char *req)
{
	int fd = status_connect(path);

	ck_assert_int_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	close(fd);
}

START_TEST(status_socket)
{
	struct svmtrace_vmi_module mods[2];
	struct svmtrace_vmi_image_id ids[2];
	struct target_info t;
	struct status_view v = { .ctl = -1, .phase = "waiting for the process" };
	const char *path = scratch_path("s.sock");
	struct statusd *sd = statusd_open(path);
	char buf[4096];
	struct stat st;
	int fd, wstatus;
	pid_t child;

	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	fake_target(&t, mods, ids);
	v.target = &t;

	/* "status" gets the text, "stop" asks to stop. */
	fd = status_connect(path);
	ck_assert_int_eq(write(fd, "status\n", 7), 7);
	ck_assert(!statusd_wait(sd, &v, 1000));
	read_answer(fd, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "state: idle\nphase: waiting for the process\n"), "%s", buf);
	ck_assert_msg(strstr(buf, "target: pid=1234 name=sample \"q\".exe "
				  "image=0x7ff6a0000000-0x7ff6a0009000 entry=0x7ff6a0001400 "
				  "gate=0x3c5a000 cr3=0x7b4d000 user_cr3=0x7b4e000"),
		      "%s", buf);
	/* A request that arrives in two pieces is one request. */
	fd = status_connect(path);
	ck_assert_int_eq(write(fd, "sta", 3), 3);
	child = fork();
	if (child == 0) {
		usleep(100000);
		_exit(write(fd, "tus\n", 4) == 4 ? 0 : 1);
	}
	ck_assert(!statusd_wait(sd, &v, 1000));
	read_answer(fd, buf, sizeof(buf));
	ck_assert_int_eq(waitpid(child, &wstatus, 0), child);
	ck_assert(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
	ck_assert_msg(strstr(buf, "state: idle\n"), "%s", buf);
	ask_and_leave(path, "stop\n");
	ck_assert(statusd_wait(sd, &v, 1000));
	statusd_close(sd);
	ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

/*
 * A ring in a memfd, as the kernel hands one out, with @n slots published:
 * random RIPs and GPRs (hardly compressible: frames fill fast), or with
 * @loop a loop of 20 instructions counting in RCX (thousands of records a
 * frame).
 */
static int ring_with_slots(uint32_t n, size_t *size, bool loop)
{
	struct ring_producer p;
	uint64_t x = 0x1234567;
	uint32_t i;
	void *mem;
	int fd;

	*size = ring_memory_init(NULL, 8192, 0);
	fd = memfd_create("ring", MFD_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)*size), 0);
	mem = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(mem, MAP_FAILED);
	ring_memory_init(mem, 8192, 0);
	ring_producer_init(&p, mem);
	for (i = 0; i < n; i++) {
		struct svmtrace_slot *sl = ring_producer_reserve(&p);
		int r;

		ck_assert_ptr_nonnull(sl);
		memset(sl, 0, sizeof(*sl));
		sl->kind = i ? SVMTRACE_SLOT_INSTRUCTION : SVMTRACE_SLOT_SESSION_START;
		sl->seq = i + 1;
		sl->cr3 = 0x1000;
		if (loop) {
			sl->rip = 0x400000 + 4 * (i % 20);
			sl->gpr[SVMTRACE_RCX] = i;
		} else {
			sl->rip = 0x400000 + test_rand(&x) % 4096;
			for (r = 0; r < SVMTRACE_NR_GPRS; r++)
				sl->gpr[r] = test_rand(&x);
		}
		ring_producer_publish(&p);
	}
	munmap(mem, *size);
	return fd;
}

/* --max-bytes at the stream: records past the cap are discarded, counted. */
START_TEST(stream_byte_cap)
{
	const char *dir = scratch_path("cap");
	struct svmtrace_summary sum;
	struct svmtrace_error err;
	struct vcpu_stream s;
	char path[4200];
	size_t size;
	int fd = ring_with_slots(6000, &size, false);

	mkdir(dir, 0755);
	stream_open(&s, 0, fd, size, dir, 0);
	ck_assert_uint_eq(stream_drain(&s, 0, 200000), 6000);
	ck_assert_uint_gt(s.discarded, 0);
	ck_assert_uint_eq(s.written + s.discarded, 6000);
	ck_assert_uint_le(stream_file_bytes(&s), 200000 + 70000); /* one frame past at most */
	ck_assert(stream_close(&s));
	snprintf(path, sizeof(path), "%s/svmtrace_trace_cpu0.bin", dir);
	ck_assert_int_eq(svmtrace_read(path, NULL, NULL, &sum, &err), 0);
	ck_assert_uint_eq(sum.records, s.written);
}
END_TEST

/* A disk that fills (EFBIG here, as ENOSPC): a complete file, honest counts. */
START_TEST(stream_disk_full)
{
	const char *dir = scratch_path("full");
	struct rlimit lim = { .rlim_cur = 100000, .rlim_max = RLIM_INFINITY };
	struct svmtrace_summary sum;
	struct svmtrace_error err;
	struct vcpu_stream s;
	char path[4200];
	size_t size;
	int fd = ring_with_slots(6000, &size, false);

	mkdir(dir, 0755);
	signal(SIGXFSZ, SIG_IGN);
	stream_open(&s, 0, fd, size, dir, 0);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	ck_assert_uint_eq(stream_drain(&s, 0, UINT64_MAX), 6000);
	ck_assert(s.failed);
	ck_assert_msg(strstr(s.error, "write failed"), "%s", s.error);
	ck_assert_uint_eq(s.written + s.discarded, 6000);
	ck_assert(stream_close(&s));
	snprintf(path, sizeof(path), "%s/svmtrace_trace_cpu0.bin", dir);
	ck_assert_int_eq(svmtrace_read(path, NULL, NULL, &sum, &err), 0);
	ck_assert_uint_eq(sum.records, s.written);
}
END_TEST

/* The longest run of deltas after a full record, and how many full records. */
struct anchor_runs {
	uint64_t run, longest, full;
};

static bool anchor_run(const struct svmtrace_record *r, void *ctx)
{
	struct anchor_runs *a = ctx;

	if (r->has_tsc) { /* an anchor or session start: a full record */
		a->full++;
		a->run = 0;
	}
	a->run++;
	a->longest = a->run > a->longest ? a->run : a->longest;
	return true;
}

/*
 * --anchor-interval reaches the files: a full record at least every N
 * records, and exactly N where no frame start puts one in earlier.
 */
START_TEST(stream_anchor_interval)
{
	static const uint32_t interval[] = { 0, 7, 1000 }; /* 0: the default */
	uint32_t want = interval[_i] ? interval[_i] : SVMTRACE_DEFAULT_ANCHOR_INTERVAL;
	const char *dir = scratch_path(_i == 0 ? "anchor0" : _i == 1 ? "anchor7" : "anchor1000");
	struct anchor_runs a = { 0 };
	struct svmtrace_summary sum;
	struct svmtrace_error err;
	struct vcpu_stream s;
	char path[4200];
	size_t size;
	int fd = ring_with_slots(5000, &size, true);

	mkdir(dir, 0755);
	stream_open(&s, 0, fd, size, dir, interval[_i]);
	ck_assert_uint_eq(stream_drain(&s, 0, UINT64_MAX), 5000);
	ck_assert(stream_close(&s));
	snprintf(path, sizeof(path), "%s/svmtrace_trace_cpu0.bin", dir);
	ck_assert_int_eq(svmtrace_read(path, anchor_run, &a, &sum, &err), 0);
	ck_assert_uint_eq(sum.records, 5000);
	ck_assert_uint_eq(a.longest, want < 5000 ? want : 5000);
	ck_assert_uint_ge(a.full, (5000 + want - 1) / want);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("svmtraced");
	TCase *tc = tcase_create("svmtraced");

	/* Two tests read capture.json back with python3, whose start-up alone
	 * can pass Check's 4 s default on a loaded 2-core machine. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, options_full_command);
	tcase_add_test(tc, options_defaults_and_wait_name);
	tcase_add_test(tc, options_from_next);
	tcase_add_test(tc, options_hide_time);
	tcase_add_loop_exit_test(tc, options_refused, 1, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, version_check);
	tcase_add_test(tc, capture_json_reads_back);
	tcase_add_test(tc, target_fill_watch);
	tcase_add_test(tc, target_fill_first);
	tcase_add_test(tc, capture_json_process_tree);
	tcase_add_test(tc, capture_json_symbolizes);
	tcase_add_test(tc, status_socket);
	tcase_add_test(tc, stream_byte_cap);
	tcase_add_test(tc, stream_disk_full);
	tcase_add_loop_test(tc, stream_anchor_interval, 0, 3);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
