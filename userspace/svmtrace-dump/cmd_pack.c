// SPDX-License-Identifier: GPL-2.0
/*
 * pack IN OUT: encode a flat array of 168-byte raw records into a v5 file.
 * The first record becomes the session start; a session end follows the
 * last.  With --mem, a second flat array of 88-byte access records gives
 * the instructions' memory accesses.  On bad input nothing is left under OUT.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <svmtrace/trace.h>

#include "common/cli.h"
#include "svmtrace-dump/commands.h"

#define PACK_BATCH 4096

static const char pack_usage[] =
	"usage: svmtrace-dump pack [--cpu N] [--anchor-interval N] [--raw] [--lz4-level L]\n"
	"                          [--mem ACCESSES] IN OUT\n"
	"Encode IN, a flat array of 168-byte little-endian records (u64 sequence, tsc,\n"
	"rip, rflags, cr3, then rax rbx rcx rdx rsi rdi rbp rsp r8..r15), into the v5\n"
	"file OUT.  IN may be - for standard input.\n"
	"  --cpu N               vCPU number for the file header (default 0)\n"
	"  --anchor-interval N   records between full anchors (default 256)\n"
	"  --raw                 store frames uncompressed\n"
	"  --lz4-level L         0 = fast LZ4 (default), 1..12 = LZ4HC level\n"
	"  --mem ACCESSES        write memory operands: ACCESSES is a flat array of\n"
	"                        88-byte records (u64 sequence, u64 address, u32 size,\n"
	"                        u8 kind 0 unrecorded 1 read 2 write 3 rmw, u8 why,\n"
	"                        u16 0, 32 bytes read, 32 bytes written), in sequence\n"
	"                        order, each naming a record of IN\n";

struct pack {
	const char *in_name;
	int in_fd;
	uint64_t in_offset;
	struct svmtrace_writer *w;
	struct svmtrace_slot slot;
	uint64_t count;
	/* --mem: the access file, the next access not yet written, its index */
	FILE *mem;
	const char *mem_name;
	bool mem_next; /* next holds an access */
	struct svmtrace_raw_mem next;
	uint64_t mem_index;
};

__attribute__((noreturn, format(printf, 2, 3))) static void pack_fail(struct pack *pk,
								      const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pk->w)
		svmtrace_writer_discard(pk->w);
	die("%s", msg);
}

/* Fill @buf with whole records; returns how many (0 at the end of input). */
static size_t read_records(struct pack *pk, struct svmtrace_raw_record *buf, size_t max)
{
	size_t want = max * sizeof(*buf), have = 0;

	while (have < want) {
		ssize_t n = read(pk->in_fd, (char *)buf + have, want - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			pack_fail(pk, "%s: read failed at offset %llu: %s", pk->in_name,
				  (unsigned long long)(pk->in_offset + have), strerror(errno));
		if (n == 0)
			break;
		have += (size_t)n;
	}
	if (have % sizeof(*buf))
		pack_fail(pk,
			  "%s: offset %llu: input ends with %zu bytes, not a whole 168-byte "
			  "record",
			  pk->in_name,
			  (unsigned long long)(pk->in_offset + have - have % sizeof(*buf)),
			  have % sizeof(*buf));
	pk->in_offset += have;
	return have / sizeof(*buf);
}

/* Read the next access record into pk->next (pk->mem_next false at the end). */
static void next_access(struct pack *pk)
{
	size_t n = fread(&pk->next, 1, sizeof(pk->next), pk->mem);

	if (n && n < sizeof(pk->next))
		pack_fail(pk,
			  "%s: offset %llu: input ends with %zu bytes, not a whole 88-byte record",
			  pk->mem_name, (unsigned long long)(pk->mem_index * sizeof(pk->next)), n);
	if (!n && ferror(pk->mem))
		pack_fail(pk, "%s: read failed: %s", pk->mem_name, strerror(errno));
	pk->mem_next = n != 0;
	if (pk->mem_next)
		pk->mem_index++;
}

/* Where the access record before the next one was: for messages. */
static unsigned long long access_offset(const struct pack *pk)
{
	return (pk->mem_index - 1) * sizeof(pk->next);
}

/* The accesses of the record at pk->slot (none unless they name its sequence). */
static unsigned int take_accesses(struct pack *pk, struct svmtrace_mem_access *acc)
{
	unsigned int n = 0;

	if (pk->mem_next &&
	    (pk->next.seq < pk->slot.seq ||
	     (pk->next.seq == pk->slot.seq && pk->slot.kind == SVMTRACE_SLOT_SESSION_END)))
		pack_fail(pk, "%s: offset %llu: access of sequence %llu names no record of %s",
			  pk->mem_name, access_offset(pk), (unsigned long long)pk->next.seq,
			  pk->in_name);
	while (pk->mem_next && pk->next.seq == pk->slot.seq) {
		struct svmtrace_mem_access *a = &acc[n];

		if (n == SVMTRACE_MEM_MAX_ACCESSES)
			pack_fail(pk, "%s: offset %llu: sequence %llu has more than %u accesses",
				  pk->mem_name, access_offset(pk), (unsigned long long)pk->next.seq,
				  SVMTRACE_MEM_MAX_ACCESSES);
		if (pk->next.reserved)
			pack_fail(pk, "%s: offset %llu: reserved bytes 20..21 are not 0",
				  pk->mem_name, access_offset(pk));
		memset(a, 0, sizeof(*a));
		a->addr = pk->next.addr;
		a->size = pk->next.size;
		a->kind = pk->next.kind;
		a->why = pk->next.why;
		memcpy(a->read_value, pk->next.read_value, sizeof(a->read_value));
		memcpy(a->write_value, pk->next.write_value, sizeof(a->write_value));
		n++;
		next_access(pk);
	}
	return n;
}

static void put(struct pack *pk)
{
	struct svmtrace_mem_access acc[SVMTRACE_MEM_MAX_ACCESSES];
	struct svmtrace_error err;
	unsigned int n = pk->mem ? take_accesses(pk, acc) : 0;

	if (svmtrace_writer_append_mem(pk->w, &pk->slot, NULL, acc, n, &err))
		pack_fail(pk, "%s", err.message);
}

static void put_record(struct pack *pk, const struct svmtrace_raw_record *r)
{
	if (pk->count && r->seq <= pk->slot.seq)
		pack_fail(pk, "%s: offset %llu (record %llu): sequence %llu does not follow %llu",
			  pk->in_name, (unsigned long long)(pk->count * sizeof(*r)),
			  (unsigned long long)pk->count, (unsigned long long)r->seq,
			  (unsigned long long)pk->slot.seq);
	svmtrace_slot_from_raw(
		r, pk->count ? SVMTRACE_SLOT_INSTRUCTION : SVMTRACE_SLOT_SESSION_START, &pk->slot);
	put(pk);
	pk->count++;
}

int cmd_pack(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "anchor-interval", required_argument, NULL, 'a' },
		{ "raw", no_argument, NULL, 'r' },
		{ "lz4-level", required_argument, NULL, 'l' },
		{ "mem", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct svmtrace_raw_record batch[PACK_BATCH];
	struct svmtrace_writer_options o;
	struct svmtrace_error err;
	struct pack pk = { 0 };
	uint64_t v;
	size_t n;
	int c;

	svmtrace_writer_options_init(&o);
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			v = parse_u64(optarg, "--cpu");
			if (v > UINT32_MAX)
				die("--cpu: %llu does not fit in 32 bits", (unsigned long long)v);
			o.cpu = (uint32_t)v;
			break;
		case 'a':
			v = parse_u64(optarg, "--anchor-interval");
			if (v < 1 || v > UINT32_MAX)
				die("--anchor-interval: expected 1..4294967295, got %s", optarg);
			o.anchor_interval = (uint32_t)v;
			break;
		case 'r':
			o.raw_frames = true;
			break;
		case 'l':
			v = parse_u64(optarg, "--lz4-level");
			if (v > 12)
				die("--lz4-level: expected 0..12, got %s", optarg);
			o.lz4_level = (int)v;
			break;
		case 'm':
			pk.mem_name = optarg;
			o.mem = true;
			break;
		case 'h':
			fputs(pack_usage, stdout);
			return 0;
		default:
			fputs(pack_usage, stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		fputs(pack_usage, stderr);
		return 2;
	}
	pk.in_name = argv[optind];
	pk.in_fd = strcmp(pk.in_name, "-") ? open(pk.in_name, O_RDONLY | O_CLOEXEC) : 0;
	if (pk.in_fd < 0)
		die("%s: cannot open: %s", pk.in_name, strerror(errno));
	if (pk.mem_name && !(pk.mem = fopen(pk.mem_name, "rb")))
		die("%s: cannot open: %s", pk.mem_name, strerror(errno));
	if (svmtrace_writer_open(argv[optind + 1], &o, &pk.w, &err))
		die("%s", err.message);
	if (pk.mem)
		next_access(&pk);

	while ((n = read_records(&pk, batch, PACK_BATCH)) > 0)
		for (size_t i = 0; i < n; i++)
			put_record(&pk, &batch[i]);
	if (!pk.count)
		pack_fail(&pk, "%s: no records (expected 168-byte raw records)", pk.in_name);
	if (pk.slot.seq == UINT64_MAX)
		pack_fail(&pk, "%s: last sequence is 2^64-1, no number is left for the session end",
			  pk.in_name);
	pk.slot.kind = SVMTRACE_SLOT_SESSION_END;
	pk.slot.seq++;
	pk.slot.reason = SVMTRACE_END_STOP;
	put(&pk);
	if (pk.mem_next)
		pack_fail(&pk, "%s: offset %llu: access of sequence %llu names no record of %s",
			  pk.mem_name, access_offset(&pk), (unsigned long long)pk.next.seq,
			  pk.in_name);
	if (pk.mem)
		fclose(pk.mem);
	if (svmtrace_writer_close(pk.w, &err))
		die("%s", err.message);
	if (pk.in_fd)
		close(pk.in_fd);
	return 0;
}
