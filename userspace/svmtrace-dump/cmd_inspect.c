// SPDX-License-Identifier: GPL-2.0
/*
 * inspect: what a trace file holds — header, frames, records by kind,
 * sequence range and gaps, TSC range, sessions, and how well it packs.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "svmtrace-dump/commands.h"
#include "svmtrace-dump/files.h"

#define SESSIONS_SHOWN 20

static const char inspect_usage[] =
	"usage: svmtrace-dump inspect [--allow-truncated] FILE...\n"
	"Describe each trace file: header, frames (raw and LZ4), records by kind,\n"
	"sequence range and gaps, TSC range, sessions, bytes per record and\n"
	"compression ratio.\n";

struct session {
	uint64_t first_seq, last_seq;
	uint64_t records;
	uint32_t gate;
	bool started;	 /* opened by a session start record */
	const char *end; /* how it ended */
};

/* The first SESSIONS_SHOWN sessions of a file, and how many there were. */
struct sessions {
	struct session list[SESSIONS_SHOWN];
	uint64_t count;
};

static void close_session(struct sessions *ss, const struct session *s, const char *end)
{
	if (ss->count < SESSIONS_SHOWN) {
		ss->list[ss->count] = *s;
		ss->list[ss->count].end = end;
	}
	ss->count++;
}

/* Walk the records, collecting sessions; returns the reader's last result. */
static int walk_sessions(struct svmtrace_reader *r, struct sessions *ss)
{
	const struct svmtrace_record *rec;
	struct session s = { 0 };
	bool open = false;
	int ret;

	ss->count = 0;
	while ((ret = svmtrace_reader_next(r, &rec)) > 0) {
		if (rec->kind == SVMTRACE_SLOT_SESSION_START || !open) {
			if (open)
				close_session(ss, &s, "none (a new session started)");
			s = (struct session){ .first_seq = rec->sequence,
					      .gate = rec->reason,
					      .started = rec->kind == SVMTRACE_SLOT_SESSION_START };
			open = true;
		}
		s.last_seq = rec->sequence;
		s.records++;
		if (rec->kind == SVMTRACE_SLOT_SESSION_END) {
			close_session(ss, &s, svmtrace_end_reason_name(rec->reason));
			open = false;
		}
	}
	if (open)
		close_session(ss, &s, "none (the file ends inside the session)");
	return ret;
}

static void print_sessions(const struct sessions *ss)
{
	printf("  sessions:    %" PRIu64 "\n", ss->count);
	for (uint64_t i = 0; i < ss->count && i < SESSIONS_SHOWN; i++) {
		const struct session *s = &ss->list[i];

		printf("    #%" PRIu64 ": sequence %" PRIu64 "..%" PRIu64 ", %" PRIu64 " records, ",
		       i + 1, s->first_seq, s->last_seq, s->records);
		if (s->started)
			printf("gate %u, ", s->gate);
		else
			printf("no session start in this file, ");
		printf("end: %s\n", s->end);
	}
	if (ss->count > SESSIONS_SHOWN)
		printf("    ... and %" PRIu64 " more\n", ss->count - SESSIONS_SHOWN);
}

static void print_summary(const struct svmtrace_summary *s)
{
	uint64_t deltas = s->instructions - s->anchors;
	uint64_t stored = s->file_bytes;

	printf("  frames:      %" PRIu64 " (%" PRIu64 " LZ4, %" PRIu64 " raw), %" PRIu64
	       " bytes decoded\n",
	       s->frames_lz4 + s->frames_raw, s->frames_lz4, s->frames_raw, s->decoded_bytes);
	printf("  records:     %" PRIu64 ": %" PRIu64 " session_start, %" PRIu64
	       " instruction (%" PRIu64 " anchors, %" PRIu64 " deltas), %" PRIu64 " session_end\n",
	       s->records, s->session_starts, s->instructions, s->anchors, deltas, s->session_ends);
	if (s->records)
		printf("  sequence:    %" PRIu64 "..%" PRIu64 ", %" PRIu64
		       " jumps skipping %" PRIu64 " numbers\n",
		       s->first_sequence, s->last_sequence, s->sequence_jumps, s->sequence_skipped);
	if (s->gaps)
		printf("  gaps:        %" PRIu64 " (%" PRIu64 " records dropped by the producer)\n",
		       s->gaps, s->dropped);
	else
		printf("  gaps:        none\n");
	if (s->states_unknown)
		printf("  unknown:     %" PRIu64
		       " session ends whose RFLAGS, CR3 and GPRs no record "
		       "of their frame holds (printed empty)\n",
		       s->states_unknown);
	if (s->has_mem)
		printf("  memory:      %" PRIu64 " accesses, %" PRIu64 " of them unrecorded\n",
		       s->mem_accesses, s->mem_unrecorded);
	if (s->has_tsc)
		printf("  tsc:         0x%" PRIx64 "..0x%" PRIx64 " (%" PRIu64 " ticks)\n",
		       s->first_tsc, s->last_tsc, s->last_tsc - s->first_tsc);
	if (s->records)
		printf("  size:        %" PRIu64 " bytes, %.2f bytes/record, frames %.2f:1, "
		       "%.1fx smaller than 168-byte raw records\n",
		       stored, (double)stored / (double)s->records,
		       (double)s->decoded_bytes / (double)(stored ? stored : 1),
		       168.0 * (double)s->records / (double)(stored ? stored : 1));
	if (s->truncated)
		printf("  truncated:   at offset %" PRIu64 " (every complete frame was read)\n",
		       s->truncated_at);
}

int cmd_inspect(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "allow-truncated", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool allow_truncated = false;
	int c, status = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			allow_truncated = true;
			break;
		case 'h':
			fputs(inspect_usage, stdout);
			return 0;
		default:
			fputs(inspect_usage, stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fputs(inspect_usage, stderr);
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		struct svmtrace_reader *r = open_trace(argv[i]);
		struct sessions ss;
		int ret = walk_sessions(r, &ss);

		printf("%s:\n  header:      v5, cpu %u, framed%s\n", argv[i],
		       svmtrace_reader_cpu(r),
		       svmtrace_reader_summary(r)->has_mem ? ", memory operands" : "");
		print_summary(svmtrace_reader_summary(r));
		print_sessions(&ss);
		fflush(stdout);
		status |= finish_trace(r, ret, allow_truncated);
		svmtrace_reader_close(r);
	}
	return status;
}
