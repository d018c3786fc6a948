// SPDX-License-Identifier: GPL-2.0
/*
 * insncount: a QEMU TCG plugin for the step profile (tests/e2e/step-profile.sh).
 * It counts the instructions L1 executes at each kernel address (>= 2^47)
 * and, in total, everywhere (L1 user mode and L2 included), and appends a
 * snapshot of the counts to its output file each time the guest executes
 * the marker instruction (movabs $SVMTRACE_MARKER, %rax: marker.S) and when
 * QEMU exits.  Two markers around a measured run give what it executed.
 *
 *   qemu-system-x86_64 -plugin insncount.so,out=FILE ...
 *
 * QEMU 7.2 (Debian 12) has the plugin API but ships no qemu-plugin.h; the
 * declarations below are the API version 1 functions this plugin calls.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb)(qemu_plugin_id_t id, void *userdata);
typedef void (*vcpu_udata_cb)(unsigned int vcpu_index, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
						enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, vcpu_udata_cb cb,
					    enum qemu_plugin_cb_flags flags, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define KERNEL_START 0xffff800000000000ull
#define TABLE_BITS   21 /* room for 2 M kernel instruction addresses */
#define TABLE_SIZE   (1u << TABLE_BITS)

struct counter {
	uint64_t vaddr;
	uint64_t count;
};

/* Counters live at fixed places: translated code adds into them. */
static struct counter *table;
static uint64_t total, outside_kernel;
static const char *out_path;
static unsigned int snapshots;
static int full;

/* movabs $0x5356544d5241524b, %rax ("KRARMTVS": SVMTRACE marker). */
static const uint8_t marker[] = { 0x48, 0xb8, 0x4b, 0x52, 0x41, 0x52, 0x4d, 0x54, 0x56, 0x53 };

static uint64_t *counter_of(uint64_t vaddr)
{
	uint64_t h = (vaddr * 0x9e3779b97f4a7c15ull) >> (64 - TABLE_BITS);
	uint32_t n;

	for (n = 0; n < TABLE_SIZE; n++, h = (h + 1) & (TABLE_SIZE - 1)) {
		if (table[h].vaddr == vaddr)
			return &table[h].count;
		if (!table[h].vaddr) {
			table[h].vaddr = vaddr;
			return &table[h].count;
		}
	}
	full = 1;
	return &outside_kernel; /* counted, but no longer per address */
}

static void snapshot(const char *why)
{
	FILE *f = fopen(out_path, "a");
	uint32_t i;

	if (!f) {
		perror(out_path);
		return;
	}
	fprintf(f, "snapshot %u %s total %llu outside_kernel %llu%s\n", snapshots++, why,
		(unsigned long long)total, (unsigned long long)outside_kernel,
		full ? " table_full" : "");
	for (i = 0; i < TABLE_SIZE; i++)
		if (table[i].count)
			fprintf(f, "%llx %llu\n", (unsigned long long)table[i].vaddr,
				(unsigned long long)table[i].count);
	fprintf(f, "end\n");
	fclose(f);
}

static void on_marker(unsigned int vcpu_index, void *userdata)
{
	snapshot("marker");
}

static void on_qemu_exit(qemu_plugin_id_t id, void *userdata)
{
	snapshot("exit");
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;

	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &total, n);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t vaddr = qemu_plugin_insn_vaddr(insn);

		if (vaddr >= KERNEL_START) {
			qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
								   counter_of(vaddr), 1);
			continue;
		}
		qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
							   &outside_kernel, 1);
		if (qemu_plugin_insn_size(insn) == sizeof(marker) &&
		    !memcmp(qemu_plugin_insn_data(insn), marker, sizeof(marker)))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
}

__attribute__((visibility("default"))) int
qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
	if (!out_path) {
		fprintf(stderr, "insncount: out=FILE is required\n");
		return -1;
	}
	table = calloc(TABLE_SIZE, sizeof(*table));
	if (!table)
		return -1;
	remove(out_path);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
