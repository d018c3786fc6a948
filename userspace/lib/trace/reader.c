// SPDX-License-Identifier: GPL-2.0
/*
 * v5 reader: validates the file header, then frame after frame checks the
 * sizes, decodes the LZ4 block (or takes the raw payload in place) and hands
 * the decoder one frame at a time.  Input comes through a fixed buffer, so
 * memory does not grow with the file; the same code reads from memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/trace/decode.h"
#include "lib/trace/error.h"
#include "lib/trace/lz4_block.h"
#include "lib/trace/mem.h"
#include "lib/trace/wire.h"

#define INPUT_BUFFER (1u << 20)

struct svmtrace_reader {
	char *name;
	int fd;		   /* -1 when reading from memory */
	uint8_t *buffer;   /* file input; NULL for memory */
	const uint8_t *in; /* input window */
	size_t in_len;
	size_t in_pos;
	uint64_t offset;    /* file offset of in[in_pos] */
	const uint8_t *cur; /* next record in the current frame */
	const uint8_t *end; /* end of the current frame */
	uint64_t frame_offset;
	uint32_t frame_size;
	int status; /* 0 while reading, 1 at the end, or an error */
	struct decoder dec;
	bool has_mem;	      /* the header's memory-operand flag */
	struct mem_coder mem; /* with has_mem */
	struct svmtrace_summary sum;
	struct svmtrace_error err;
	uint8_t frame[SVMTRACE_FRAME_MAX];
};

/* Make @n bytes available at in[in_pos] if the input has them; returns how many are. */
static size_t fill(struct svmtrace_reader *r, size_t n)
{
	size_t have = r->in_len - r->in_pos;

	if (have >= n || !r->buffer)
		return have;
	memmove(r->buffer, r->in + r->in_pos, have);
	r->in_pos = 0;
	r->in_len = have;
	while (r->in_len < n) {
		ssize_t got = read(r->fd, r->buffer + r->in_len, INPUT_BUFFER - r->in_len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r->status =
				trace_error(&r->err, SVMTRACE_E_IO, r->name, r->offset + r->in_len,
					    "read failed: %s", strerror(errno));
			break;
		}
		if (got == 0)
			break;
		r->in_len += (size_t)got;
	}
	return r->in_len;
}

static void consume(struct svmtrace_reader *r, size_t n)
{
	r->in_pos += n;
	r->offset += n;
	r->sum.file_bytes = r->offset;
}

static int check_header(struct svmtrace_reader *r)
{
	size_t have = fill(r, WIRE_HEADER_SIZE);
	const uint8_t *h = r->in + r->in_pos;
	uint32_t version, flags;

	if (r->status)
		return r->status;
	if (have < WIRE_HEADER_SIZE)
		return trace_error(&r->err, SVMTRACE_E_FORMAT, r->name, 0,
				   "file is %zu bytes, shorter than the 16-byte v5 header", have);
	if (memcmp(h, WIRE_MAGIC, 4))
		return trace_error(&r->err, SVMTRACE_E_FORMAT, r->name, 0,
				   "bad magic %02x %02x %02x %02x (expected \"FTRC\")", h[0], h[1],
				   h[2], h[3]);
	version = le32(h + 4);
	if (version != SVMTRACE_FORMAT_VERSION)
		return trace_error(&r->err, SVMTRACE_E_FORMAT, r->name, 4,
				   "format version %u (this reader reads version 5)", version);
	flags = le32(h + 12);
	if (!(flags & WIRE_FLAG_FRAMED))
		return trace_error(&r->err, SVMTRACE_E_FORMAT, r->name, 12,
				   "flags 0x%x: the framed-body bit 0x1 is clear", flags);
	if (flags & ~WIRE_FLAGS_KNOWN)
		return trace_error(&r->err, SVMTRACE_E_FORMAT, r->name, 12,
				   "flags 0x%x: unknown bits 0x%x set", flags,
				   flags & ~WIRE_FLAGS_KNOWN);
	r->has_mem = flags & WIRE_FLAG_MEM;
	if (r->has_mem && mem_init(&r->mem) < 0)
		return trace_error_noloc(&r->err, SVMTRACE_E_NOMEM, r->name, "out of memory");
	r->sum.has_mem = r->has_mem;
	r->sum.cpu = le32(h + 8);
	consume(r, WIRE_HEADER_SIZE);
	return 0;
}

static int truncated(struct svmtrace_reader *r, const char *what, size_t have, size_t want)
{
	r->sum.truncated = true;
	r->sum.truncated_at = r->offset;
	return trace_error(&r->err, SVMTRACE_E_TRUNCATED, r->name, r->offset,
			   "truncated at offset %llu: %s has %zu of %zu bytes",
			   (unsigned long long)r->offset, what, have, want);
}

/* Load the next frame: 1 when one is ready, 0 at a clean end, or an error. */
static int next_frame(struct svmtrace_reader *r)
{
	size_t have = fill(r, WIRE_FRAME_HEADER_SIZE);
	const uint8_t *p = r->in + r->in_pos;
	uint32_t decoded, stored;

	if (r->status)
		return r->status;
	if (have == 0)
		return 0;
	if (have < WIRE_FRAME_HEADER_SIZE)
		return truncated(r, "the frame header", have, WIRE_FRAME_HEADER_SIZE);
	decoded = le32(p);
	stored = le32(p + 4);
	if (decoded == 0 || decoded > SVMTRACE_FRAME_MAX)
		return trace_error(&r->err, SVMTRACE_E_FORMAT, r->name, r->offset,
				   "frame decoded size %u is outside 1..65536", decoded);
	if (stored == 0 || stored > decoded)
		return trace_error(&r->err, SVMTRACE_E_FORMAT, r->name, r->offset,
				   "frame stored size %u is outside 1..%u (its decoded size)",
				   stored, decoded);
	have = fill(r, WIRE_FRAME_HEADER_SIZE + stored);
	if (r->status)
		return r->status;
	if (have < WIRE_FRAME_HEADER_SIZE + stored)
		return truncated(r, "the frame", have, WIRE_FRAME_HEADER_SIZE + stored);
	p = r->in + r->in_pos + WIRE_FRAME_HEADER_SIZE;
	if (stored == decoded) {
		r->cur = p; /* raw: decode in place */
		r->sum.frames_raw++;
	} else {
		char why[160];

		if (lz4_block_decode(p, stored, r->frame, decoded, why, sizeof(why)))
			return trace_error(&r->err, SVMTRACE_E_FORMAT, r->name, r->offset, "%s",
					   why);
		r->cur = r->frame;
		r->sum.frames_lz4++;
	}
	r->end = r->cur + decoded;
	r->frame_offset = r->offset;
	r->dec.rec.frame_offset = r->offset; /* the same for all of the frame's records */
	r->frame_size = decoded;
	r->sum.decoded_bytes += decoded;
	consume(r, WIRE_FRAME_HEADER_SIZE + stored);
	decoder_frame_start(&r->dec);
	if (r->has_mem)
		mem_frame_start(&r->mem);
	return 1;
}

/* The summary's counts for a record other than a delta that follows its predecessor. */
static __attribute__((noinline)) void count_other(struct svmtrace_summary *s,
						  const struct svmtrace_record *rec)
{
	if (s->records++ == 0) {
		s->first_sequence = rec->sequence;
	} else if (rec->sequence != s->last_sequence + 1) {
		s->sequence_jumps++;
		s->sequence_skipped += rec->sequence - s->last_sequence - 1;
	}
	s->last_sequence = rec->sequence;
	switch (rec->kind) {
	case SVMTRACE_SLOT_INSTRUCTION:
		s->instructions++;
		s->anchors += rec->anchor;
		break;
	case SVMTRACE_SLOT_SESSION_START:
		s->session_starts++;
		break;
	case SVMTRACE_SLOT_SESSION_END:
		s->session_ends++;
		s->states_unknown += !rec->state_known;
		break;
	}
	if (rec->has_tsc) {
		if (!s->has_tsc)
			s->first_tsc = rec->tsc;
		s->has_tsc = true;
		s->last_tsc = rec->tsc;
	}
	if (rec->dropped) {
		s->gaps++;
		s->dropped += rec->dropped;
	}
}

/*
 * Most records are deltas numbered one past the last record: an instruction
 * without TSC (so neither an anchor nor after a gap) that only advances the
 * counts.  Every other record takes the full accounting.  A delta is never
 * the first record (it needs a full record before it in its frame).
 */
static inline void count(struct svmtrace_summary *s, const struct svmtrace_record *rec)
{
	if (__builtin_expect(rec->kind == SVMTRACE_SLOT_INSTRUCTION && !rec->has_tsc &&
				     rec->sequence == s->last_sequence + 1,
			     1)) {
		s->records++;
		s->instructions++;
		s->last_sequence = rec->sequence;
		return;
	}
	count_other(s, rec);
}

/* Load frames until one has bytes: 1, or 0 at the end, or an error. */
static __attribute__((noinline)) int advance(struct svmtrace_reader *r)
{
	int ret;

	while (r->cur == r->end) {
		if (r->status)
			return r->status > 0 ? 0 : r->status;
		ret = next_frame(r);
		if (ret <= 0) {
			r->status = ret ? ret : 1;
			return ret;
		}
	}
	return 1;
}

static __attribute__((noinline)) int decode_failed(struct svmtrace_reader *r)
{
	r->status = trace_error(
		&r->err, SVMTRACE_E_FORMAT, r->name, r->frame_offset, "frame byte %zu of %u: %s",
		(size_t)(r->cur - (r->end - r->frame_size)), r->frame_size, r->dec.why);
	r->cur = r->end;
	return r->status;
}

/*
 * The memory part that follows a step's record (anything but a session end)
 * at @p (files with memory operands); @from is the RIP before it, @predicted as decoder_next()
 * said.  NULL with the decoder's why set, r->cur at the part.
 */
static __attribute__((noinline)) const uint8_t *
mem_part(struct svmtrace_reader *r, const uint8_t *p, uint64_t from, bool predicted)
{
	struct svmtrace_record *rec = &r->dec.rec;
	const uint8_t *next;

	rec->nr_mem = 0;
	if (!predicted && rec->kind == SVMTRACE_SLOT_SESSION_END)
		return p;
	next = mem_decode(&r->mem, !rec->anchor, from, &r->dec.state, p, r->end, r->dec.why,
			  sizeof(r->dec.why));
	if (!next) {
		r->cur = p;
		return NULL;
	}
	rec->nr_mem = r->mem.n;
	rec->mem = r->mem.acc;
	r->sum.mem_accesses += r->mem.n;
	for (unsigned int k = 0; k < r->mem.n; k++)
		r->sum.mem_unrecorded += r->mem.acc[k].kind == SVMTRACE_MEM_UNRECORDED;
	return next;
}

/* svmtrace_reader_next(), inlined into svmtrace_read()'s loop. */
static inline __attribute__((always_inline)) int next_record(struct svmtrace_reader *r,
							     const struct svmtrace_record **record)
{
	const uint8_t *next;
	uint64_t from;
	bool predicted;
	int ret;

	if (__builtin_expect(r->cur == r->end, 0) && (ret = advance(r)) <= 0)
		return ret;
	from = r->dec.state.rip;
	next = decoder_next(&r->dec, r->cur, r->end, &predicted);
	if (__builtin_expect(!next, 0))
		return decode_failed(r);
	if (__builtin_expect(r->has_mem, 0) && !(next = mem_part(r, next, from, predicted)))
		return decode_failed(r);
	r->cur = next;
	if (predicted) { /* count()'s common case, known without asking the record */
		r->sum.records++;
		r->sum.instructions++;
		r->sum.last_sequence = r->dec.rec.sequence;
	} else {
		count(&r->sum, &r->dec.rec);
	}
	*record = &r->dec.rec;
	return 1;
}

int svmtrace_reader_next(struct svmtrace_reader *r, const struct svmtrace_record **record)
{
	return next_record(r, record);
}

static int reader_new(const char *name, struct svmtrace_reader **reader, struct svmtrace_error *err)
{
	struct svmtrace_reader *r = calloc(1, sizeof(*r));

	*reader = NULL;
	if (r)
		r->fd = -1; /* before anything can fail: close must not close fd 0 */
	if (!r || !(r->name = strdup(name)) || decoder_init(&r->dec, 0) < 0) {
		svmtrace_reader_close(r);
		return trace_error_noloc(err, SVMTRACE_E_NOMEM, name, "out of memory");
	}
	*reader = r;
	return 0;
}

static int reader_start(struct svmtrace_reader **reader, struct svmtrace_error *err)
{
	struct svmtrace_reader *r = *reader;
	int ret = check_header(r);

	if (ret) {
		if (err)
			*err = r->err;
		svmtrace_reader_close(r);
		*reader = NULL;
		return ret;
	}
	r->dec.rec.cpu = r->sum.cpu;
	return 0;
}

int svmtrace_reader_open(const char *path, struct svmtrace_reader **reader,
			 struct svmtrace_error *err)
{
	struct svmtrace_reader *r;
	int ret = reader_new(path, reader, err);

	if (ret)
		return ret;
	r = *reader;
	r->buffer = malloc(INPUT_BUFFER);
	r->in = r->buffer;
	if (!r->buffer) {
		svmtrace_reader_close(r);
		*reader = NULL;
		return trace_error_noloc(err, SVMTRACE_E_NOMEM, path, "out of memory");
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		ret = trace_error_noloc(err, SVMTRACE_E_IO, path, "cannot open: %s",
					strerror(errno));
		svmtrace_reader_close(r);
		*reader = NULL;
		return ret;
	}
	posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return reader_start(reader, err);
}

int svmtrace_reader_open_memory(const void *data, size_t size, const char *name,
				struct svmtrace_reader **reader, struct svmtrace_error *err)
{
	int ret = reader_new(name, reader, err);

	if (ret)
		return ret;
	(*reader)->in = data;
	(*reader)->in_len = size;
	return reader_start(reader, err);
}

const struct svmtrace_summary *svmtrace_reader_summary(const struct svmtrace_reader *r)
{
	return &r->sum;
}

const struct svmtrace_error *svmtrace_reader_error(const struct svmtrace_reader *r)
{
	return &r->err;
}

uint32_t svmtrace_reader_cpu(const struct svmtrace_reader *r)
{
	return r->sum.cpu;
}

void svmtrace_reader_close(struct svmtrace_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	decoder_free(&r->dec);
	mem_free(&r->mem);
	free(r->buffer);
	free(r->name);
	free(r);
}

int svmtrace_read(const char *path, svmtrace_visit_fn visit, void *ctx,
		  struct svmtrace_summary *summary, struct svmtrace_error *err)
{
	struct svmtrace_reader *r;
	const struct svmtrace_record *rec = NULL;
	int ret = svmtrace_reader_open(path, &r, err);

	if (ret)
		return ret;
	while ((ret = next_record(r, &rec)) > 0)
		if (visit && !visit(rec, ctx))
			break;
	if (ret < 0 && err)
		*err = r->err;
	if (summary)
		*summary = r->sum;
	svmtrace_reader_close(r);
	return ret < 0 ? ret : 0;
}
