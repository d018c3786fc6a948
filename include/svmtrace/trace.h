/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsvmtrace: v5 trace files.
 *
 * A v5 file holds one vCPU's stream of post-instruction CPU states.  The
 * writer turns raw ring slots (struct svmtrace_slot from abi.h) into anchors,
 * deltas and LZ4 frames; the reader validates every byte and hands back typed
 * records one at a time, in constant memory.  docs/format.md specifies the
 * bytes.
 *
 * Errors: the library's one convention (svmtrace/status.h): every call that
 * can fail returns 0 or a negative enum svmtrace_status and fills a
 * struct svmtrace_error whose message names the file, the byte offset and
 * what was expected there.
 */
#ifndef SVMTRACE_TRACE_H
#define SVMTRACE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <svmtrace/abi.h>
#include <svmtrace/status.h>

#define SVMTRACE_FORMAT_VERSION		 5
#define SVMTRACE_FRAME_MAX		 65536 /* largest decoded frame */
#define SVMTRACE_DEFAULT_ANCHOR_INTERVAL 256
#define SVMTRACE_DEFAULT_LZ4_LEVEL	 0 /* fast LZ4: see docs/format.md */

/* The architectural state after one instruction. */
struct svmtrace_state {
	uint64_t rip;
	uint64_t rflags;
	uint64_t cr3;
	uint64_t gpr[SVMTRACE_NR_GPRS]; /* enum svmtrace_gpr order */
	uint64_t xstate_bv;		/* valid when the record has_ymm */
	uint64_t ymm[16][4];
};

/*
 * Memory operands (files written with svmtrace_writer_options.mem): each
 * record of a step (instruction or session start) carries the accesses its
 * instruction made, in the order it made them (docs/format.md, "Memory
 * operands").
 */
struct svmtrace_mem_access {
	uint64_t addr; /* guest-virtual, segment base included */
	/* bytes: 1..32 when recorded; when unrecorded any value, 0 = unknown */
	uint32_t size;
	uint8_t kind; /* enum svmtrace_mem_kind */
	uint8_t why;  /* enum svmtrace_mem_why when unrecorded, else 0 */
	uint8_t reserved[2];
	uint8_t read_value[SVMTRACE_MEM_MAX_VALUE];  /* READ, RMW: the bytes read, memory order */
	uint8_t write_value[SVMTRACE_MEM_MAX_VALUE]; /* WRITE, RMW: the bytes written */
};

/* One decoded record; the pointers stay valid until the next call. */
struct svmtrace_record {
	enum svmtrace_slot_kind kind;
	uint32_t cpu;	 /* the stream's vCPU (file header) */
	uint32_t reason; /* gate id (session start), end reason (end), 0 */
	bool has_tsc;	 /* anchors, session starts and ends carry TSC */
	bool has_ymm;	 /* the session captures YMM state */
	bool anchor;	 /* decoded from a full-state record */
	/*
	 * false only for a session end whose RFLAGS, CR3, GPRs and YMM no
	 * record of its frame holds (see docs/format.md, "Session end"):
	 * then only rip of the state is meaningful, the rest reads 0.
	 */
	bool state_known;
	uint64_t sequence;
	uint64_t tsc;
	uint64_t dropped;      /* records lost right before this one */
	uint64_t frame_offset; /* file offset of the frame holding it */
	const struct svmtrace_state *state;
	/* a step's record (not a session end) of a file with memory operands: its accesses */
	uint32_t nr_mem;
	const struct svmtrace_mem_access *mem;
};

/* What a reader saw; complete once the reader reached the end. */
struct svmtrace_summary {
	uint32_t cpu;
	uint64_t file_bytes; /* bytes consumed, header included */
	uint64_t frames_raw;
	uint64_t frames_lz4;
	uint64_t decoded_bytes; /* sum of decoded frame sizes */
	uint64_t records;	/* all kinds */
	uint64_t instructions;	/* instruction records (anchors + deltas) */
	uint64_t anchors;	/* full-state instruction records */
	uint64_t session_starts;
	uint64_t session_ends;
	uint64_t first_sequence; /* valid when records > 0 */
	uint64_t last_sequence;
	uint64_t sequence_jumps;   /* places where sequence advanced by > 1 */
	uint64_t sequence_skipped; /* numbers skipped at those places */
	uint64_t gaps;		   /* records marked as following a loss */
	uint64_t dropped;	   /* records lost, as the producer counted */
	uint64_t states_unknown;   /* session ends with state_known false */
	bool has_tsc;
	uint64_t first_tsc;
	uint64_t last_tsc;
	bool truncated;	       /* ended inside a frame */
	uint64_t truncated_at; /* offset of the incomplete frame */
	bool has_mem;	       /* the file carries memory operands */
	uint64_t mem_accesses; /* all kinds */
	uint64_t mem_unrecorded;
};

/* ---- reader ---- */

struct svmtrace_reader;

int svmtrace_reader_open(const char *path, struct svmtrace_reader **reader,
			 struct svmtrace_error *err);
/* Read from memory (fuzzing, tests); @name appears in messages. */
int svmtrace_reader_open_memory(const void *data, size_t size, const char *name,
				struct svmtrace_reader **reader, struct svmtrace_error *err);
/*
 * Decode the next record: 1 with *record set, 0 at a clean end of file, or a
 * negative status (the error is kept in the reader; see _error()).  After
 * SVMTRACE_E_TRUNCATED every complete frame has been returned.
 */
int svmtrace_reader_next(struct svmtrace_reader *reader, const struct svmtrace_record **record);
const struct svmtrace_summary *svmtrace_reader_summary(const struct svmtrace_reader *reader);
const struct svmtrace_error *svmtrace_reader_error(const struct svmtrace_reader *reader);
uint32_t svmtrace_reader_cpu(const struct svmtrace_reader *reader);
/* Accepts NULL. */
void svmtrace_reader_close(struct svmtrace_reader *reader);

/* Return false to stop early (svmtrace_read then returns 0). */
typedef bool (*svmtrace_visit_fn)(const struct svmtrace_record *record, void *ctx);

/*
 * Open @path, visit every record in order (@visit may be NULL to only
 * validate and count), fill @summary (may be NULL) and close: the one-call
 * form of the reader.  Returns 0, or the first error (SVMTRACE_E_TRUNCATED
 * after every complete frame was visited).
 */
int svmtrace_read(const char *path, svmtrace_visit_fn visit, void *ctx,
		  struct svmtrace_summary *summary, struct svmtrace_error *err);

/* ---- writer ---- */

struct svmtrace_writer_options {
	uint32_t cpu;		  /* written into the file header */
	uint32_t anchor_interval; /* records between full anchors, >= 1 */
	bool raw_frames;	  /* never compress */
	int lz4_level;		  /* 0 = fast LZ4 (default); 1..12 = LZ4HC level */
	bool mem;		  /* instruction records carry memory operands */
};

void svmtrace_writer_options_init(struct svmtrace_writer_options *options);

struct svmtrace_writer_stats {
	uint64_t records;
	uint64_t anchors;
	uint64_t frames_raw;
	uint64_t frames_lz4;
	uint64_t decoded_bytes;
	uint64_t file_bytes;   /* header and frame headers included */
	uint64_t lost_records; /* in frames a failed write cut off (not in records) */
};

struct svmtrace_writer;

/*
 * Create @path.  Frames go to "@path.partial" as they fill; close renames it
 * to @path, so a file under the final name is always complete.  A crashed
 * writer leaves the .partial file, decodable up to its last whole frame.
 * When a frame write fails (ENOSPC), the torn frame is cut off, its records
 * are counted in lost_records, every later append and flush fails, and
 * close keeps the file as it is: complete up to the frame before.
 */
int svmtrace_writer_open(const char *path, const struct svmtrace_writer_options *options,
			 struct svmtrace_writer **writer, struct svmtrace_error *err);
/*
 * Append one slot.  The first slot after open, after a session end or after
 * a loss (SVMTRACE_SLOT_F_GAP) is written as a full anchor; so is every
 * anchor_interval-th record.  Slots must come in increasing sequence order.
 */
int svmtrace_writer_append(struct svmtrace_writer *writer, const struct svmtrace_slot *slot,
			   struct svmtrace_error *err);
/* Append a slot with its YMM state (SVMTRACE_SLOT_F_XSTATE). */
int svmtrace_writer_append_xstate(struct svmtrace_writer *writer,
				  const struct svmtrace_slot_xstate *slot,
				  struct svmtrace_error *err);
/*
 * Append a slot (and its YMM tail @x, or NULL) with the @nr memory accesses
 * its instruction made; only in a writer opened with options.mem, where
 * svmtrace_writer_append() and _append_xstate() write steps with no access.
 * @nr 0..SVMTRACE_MEM_MAX_ACCESSES; a session end has none.
 */
int svmtrace_writer_append_mem(struct svmtrace_writer *writer, const struct svmtrace_slot *slot,
			       const struct svmtrace_slot_xstate *x,
			       const struct svmtrace_mem_access *mem, unsigned int nr,
			       struct svmtrace_error *err);
/* Write the frame being filled (a reader sees every record appended so far). */
int svmtrace_writer_flush(struct svmtrace_writer *writer, struct svmtrace_error *err);
const struct svmtrace_writer_stats *svmtrace_writer_stats(const struct svmtrace_writer *writer);
/* Flush, sync and rename into place.  Frees the writer even on error; NULL: 0. */
int svmtrace_writer_close(struct svmtrace_writer *writer, struct svmtrace_error *err);
/* Give up: close and delete the .partial file.  Accepts NULL. */
void svmtrace_writer_discard(struct svmtrace_writer *writer);

/* ---- raw state records ---- */

/*
 * The flat 168-byte little-endian record that `svmtrace-dump pack` reads and
 * svmtrace-steprec writes: states captured elsewhere, imported as a trace.
 */
struct svmtrace_raw_record {
	uint64_t seq;
	uint64_t tsc;
	uint64_t rip;
	uint64_t rflags;
	uint64_t cr3;
	uint64_t gpr[SVMTRACE_NR_GPRS];
};
_Static_assert(sizeof(struct svmtrace_raw_record) == 168, "raw record is 168 bytes");

/*
 * The flat 88-byte little-endian access record that `svmtrace-dump pack
 * --mem` reads beside the raw records: one access of the instruction record
 * whose sequence it names, in sequence order, in the instruction's order.
 */
struct svmtrace_raw_mem {
	uint64_t seq;
	uint64_t addr;
	uint32_t size;
	uint8_t kind; /* enum svmtrace_mem_kind */
	uint8_t why;  /* enum svmtrace_mem_why of an unrecorded access, else 0 */
	uint16_t reserved;
	uint8_t read_value[SVMTRACE_MEM_MAX_VALUE];
	uint8_t write_value[SVMTRACE_MEM_MAX_VALUE];
};
_Static_assert(sizeof(struct svmtrace_raw_mem) == 88, "raw access record is 88 bytes");

/* A slot of @kind holding @raw's state (flags, reason and loss counts zero). */
void svmtrace_slot_from_raw(const struct svmtrace_raw_record *raw, enum svmtrace_slot_kind kind,
			    struct svmtrace_slot *slot);

/* ---- names ---- */

const char *svmtrace_kind_name(enum svmtrace_slot_kind kind);  /* "instruction", ... */
const char *svmtrace_end_reason_name(uint32_t reason);	       /* "stop", "cr3", ... */
extern const char *const svmtrace_gpr_names[SVMTRACE_NR_GPRS]; /* "rax", ... */
const char *svmtrace_mem_kind_name(unsigned int kind); /* "read", "write", "rmw", "unrecorded" */
const char *svmtrace_mem_why_name(unsigned int why);   /* "fault", ... */

#endif /* SVMTRACE_TRACE_H */
