// SPDX-License-Identifier: GPL-2.0
/*
 * v5 writer: records from the encoder are packed into frames of at most
 * SVMTRACE_FRAME_MAX decoded bytes, each compressed as one LZ4 block (or
 * stored raw when LZ4 does not shrink it) and written with its 8-byte frame
 * header in a single write, so a crash can only cut the last frame.
 */
#include <errno.h>
#include <fcntl.h>
#include <lz4.h>
#include <lz4hc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/trace/encode.h"
#include "lib/trace/error.h"
#include "lib/trace/mem.h"
#include "lib/trace/wire.h"

struct svmtrace_writer {
	int fd;
	char *path;
	char *partial; /* path + ".partial" while writing */
	struct svmtrace_writer_options opt;
	struct encoder enc;
	struct mem_coder mem;		 /* with opt.mem */
	struct svmtrace_state mem_state; /* the record's RIP and GPRs, for mem_encode */
	size_t record_room;		 /* the most bytes one record (and its memory part) takes */
	bool started;			 /* at least one slot appended */
	uint64_t last_seq;
	size_t len;		/* bytes in frame[] */
	uint64_t frame_records; /* records in frame[] */
	bool failed;		/* a frame write failed: the file ends at the frame before */
	uint8_t frame[SVMTRACE_FRAME_MAX];
	uint8_t out[WIRE_FRAME_HEADER_SIZE + LZ4_COMPRESSBOUND(SVMTRACE_FRAME_MAX)];
	void *lz4_state;
	struct svmtrace_writer_stats stats;
};

void svmtrace_writer_options_init(struct svmtrace_writer_options *o)
{
	memset(o, 0, sizeof(*o));
	o->anchor_interval = SVMTRACE_DEFAULT_ANCHOR_INTERVAL;
	o->lz4_level = SVMTRACE_DEFAULT_LZ4_LEVEL;
}

static int write_all(struct svmtrace_writer *w, const uint8_t *buf, size_t len,
		     struct svmtrace_error *err)
{
	while (len) {
		ssize_t n = write(w->fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return trace_error(err, SVMTRACE_E_IO, w->partial, w->stats.file_bytes,
					   "write failed: %s", strerror(errno));
		buf += n;
		len -= (size_t)n;
		w->stats.file_bytes += (uint64_t)n;
	}
	return 0;
}

static size_t compress_frame(struct svmtrace_writer *w, uint8_t *dst, size_t cap)
{
	int n;

	if (w->opt.raw_frames)
		return 0;
	if (w->opt.lz4_level > 0)
		n = LZ4_compress_HC_extStateHC(w->lz4_state, (const char *)w->frame, (char *)dst,
					       (int)w->len, (int)cap, w->opt.lz4_level);
	else
		n = LZ4_compress_fast_extState(w->lz4_state, (const char *)w->frame, (char *)dst,
					       (int)w->len, (int)cap, 1);
	return n > 0 && (size_t)n < w->len ? (size_t)n : 0;
}

static int flush_frame(struct svmtrace_writer *w, struct svmtrace_error *err)
{
	uint8_t *payload = w->out + WIRE_FRAME_HEADER_SIZE;
	uint64_t at;
	size_t stored;
	int ret;

	if (w->failed)
		return trace_error_noloc(err, SVMTRACE_E_IO, w->partial,
					 "an earlier write failed: the file ends before it");
	if (!w->len)
		return 0;
	stored = compress_frame(w, payload, sizeof(w->out) - WIRE_FRAME_HEADER_SIZE);
	if (stored) {
		w->stats.frames_lz4++;
	} else {
		memcpy(payload, w->frame, w->len);
		stored = w->len;
		w->stats.frames_raw++;
	}
	put_le32(w->out, (uint32_t)w->len);
	put_le32(w->out + 4, (uint32_t)stored);
	at = w->stats.file_bytes;
	ret = write_all(w, w->out, WIRE_FRAME_HEADER_SIZE + stored, err);
	if (ret) {
		/*
		 * A full disk, say: cut the torn frame off so the file still ends
		 * with a complete one, and count its records as lost.
		 */
		if (ftruncate(w->fd, (off_t)at) == 0 && lseek(w->fd, (off_t)at, SEEK_SET) >= 0)
			w->stats.file_bytes = at;
		w->stats.records -= w->frame_records;
		w->stats.lost_records += w->frame_records;
		w->failed = true;
	} else {
		w->stats.decoded_bytes += w->len;
	}
	w->len = 0;
	w->frame_records = 0;
	return ret;
}

static int write_header(struct svmtrace_writer *w, struct svmtrace_error *err)
{
	uint8_t h[WIRE_HEADER_SIZE];

	memcpy(h, WIRE_MAGIC, 4);
	put_le32(h + 4, SVMTRACE_FORMAT_VERSION);
	put_le32(h + 8, w->opt.cpu);
	put_le32(h + 12, WIRE_FLAG_FRAMED | (w->opt.mem ? WIRE_FLAG_MEM : 0));
	return write_all(w, h, sizeof(h), err);
}

static void writer_free(struct svmtrace_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	encoder_free(&w->enc);
	mem_free(&w->mem);
	free(w->lz4_state);
	free(w->path);
	free(w->partial);
	free(w);
}

int svmtrace_writer_open(const char *path, const struct svmtrace_writer_options *options,
			 struct svmtrace_writer **writer, struct svmtrace_error *err)
{
	struct svmtrace_writer *w;
	int ret;

	*writer = NULL;
	if (options->anchor_interval < 1)
		return trace_error_noloc(err, SVMTRACE_E_INVALID, path,
					 "anchor interval must be at least 1");
	if (options->lz4_level < 0 || options->lz4_level > LZ4HC_CLEVEL_MAX)
		return trace_error_noloc(err, SVMTRACE_E_INVALID, path,
					 "LZ4 level %d is outside 0..%d", options->lz4_level,
					 LZ4HC_CLEVEL_MAX);
	w = calloc(1, sizeof(*w));
	if (!w)
		return trace_error_noloc(err, SVMTRACE_E_NOMEM, path, "out of memory");
	w->fd = -1;
	w->opt = *options;
	w->path = strdup(path);
	if (asprintf(&w->partial, "%s.partial", path) < 0)
		w->partial = NULL;
	w->lz4_state = malloc(options->lz4_level > 0 ? (size_t)LZ4_sizeofStateHC()
						     : (size_t)LZ4_sizeofState());
	w->record_room = WIRE_RECORD_MAX + (options->mem ? WIRE_MEM_MAX : 0);
	if (!w->path || !w->partial || !w->lz4_state ||
	    encoder_init(&w->enc, options->anchor_interval) < 0 ||
	    (options->mem && mem_init(&w->mem) < 0)) {
		writer_free(w);
		return trace_error_noloc(err, SVMTRACE_E_NOMEM, path, "out of memory");
	}
	w->fd = open(w->partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		ret = trace_error_noloc(err, SVMTRACE_E_IO, w->partial, "cannot create: %s",
					strerror(errno));
		writer_free(w);
		return ret;
	}
	ret = write_header(w, err);
	if (ret) {
		svmtrace_writer_discard(w);
		return ret;
	}
	*writer = w;
	return 0;
}

/*
 * Slots come in order from one array: a ring's contiguous batch (capture),
 * a file loaded whole (pack, the benchmarks).  Each takes three cache lines
 * that are rarely cached yet, and the encoding of one record keeps the core
 * busy long enough that the hardware's streaming prefetch falls behind: the
 * lines of the slot PREFETCH_AHEAD places on are asked for now, so that
 * their misses overlap this record's work.  A prefetch past the array's end
 * (or of a slot that is not there) reads nothing: it cannot fault nor change
 * a result.  YMM slots (twelve lines each) go without.
 */
#define PREFETCH_AHEAD 8

static inline void prefetch_ahead(const struct svmtrace_slot *s)
{
	const char *ahead = (const char *)(s + PREFETCH_AHEAD);

	for (size_t off = 0; off < sizeof(*s); off += 64)
		__builtin_prefetch(ahead + off);
}

/* Are @nr accesses @mem ones the file can hold, with slot @s? */
static int check_mem(struct svmtrace_writer *w, const struct svmtrace_slot *s,
		     const struct svmtrace_mem_access *mem, unsigned int nr,
		     struct svmtrace_error *err)
{
	const char *why;

	if (!nr)
		return 0;
	if (!w->opt.mem)
		return trace_error_noloc(err, SVMTRACE_E_INVALID, w->path,
					 "slot %llu has memory accesses, the file was opened "
					 "without memory operands",
					 (unsigned long long)s->seq);
	if (s->kind == SVMTRACE_SLOT_SESSION_END)
		return trace_error_noloc(err, SVMTRACE_E_INVALID, w->path,
					 "slot %llu is a session end: it has no memory accesses",
					 (unsigned long long)s->seq);
	if (nr > SVMTRACE_MEM_MAX_ACCESSES)
		return trace_error_noloc(err, SVMTRACE_E_INVALID, w->path,
					 "slot %llu has %u memory accesses (at most %u)",
					 (unsigned long long)s->seq, nr, SVMTRACE_MEM_MAX_ACCESSES);
	for (unsigned int k = 0; k < nr; k++)
		if ((why = mem_access_check(&mem[k])))
			return trace_error_noloc(err, SVMTRACE_E_INVALID, w->path,
						 "slot %llu memory access %u: %s",
						 (unsigned long long)s->seq, k, why);
	return 0;
}

/* The memory part after a step's record (files with memory operands). */
static void append_mem(struct svmtrace_writer *w, const struct svmtrace_slot *s, bool delta,
		       uint64_t from, const struct svmtrace_mem_access *mem, unsigned int nr)
{
	struct svmtrace_state *st = &w->mem_state;

	st->rip = s->rip;
	for (unsigned int i = 0; i < SVMTRACE_NR_GPRS; i++)
		st->gpr[i] = s->gpr[i];
	w->len += mem_encode(&w->mem, delta, from, st, mem, nr, w->frame + w->len);
}

static int append(struct svmtrace_writer *w, const struct svmtrace_slot *s,
		  const struct svmtrace_slot_xstate *x, const struct svmtrace_mem_access *mem,
		  unsigned int nr, struct svmtrace_error *err)
{
	uint64_t from = w->enc.prev.rip;
	bool full;
	int ret;

	if (!x)
		prefetch_ahead(s);
	if (w->failed)
		return trace_error_noloc(err, SVMTRACE_E_IO, w->partial,
					 "an earlier write failed: the file ends before it");
	if (s->kind < SVMTRACE_SLOT_INSTRUCTION || s->kind > SVMTRACE_SLOT_SESSION_END)
		return trace_error_noloc(err, SVMTRACE_E_INVALID, w->path,
					 "slot %llu has kind %u (expected 1..3)",
					 (unsigned long long)s->seq, s->kind);
	if (w->started && s->seq <= w->last_seq)
		return trace_error_noloc(
			err, SVMTRACE_E_INVALID, w->path, "slot sequence %llu does not follow %llu",
			(unsigned long long)s->seq, (unsigned long long)w->last_seq);
	ret = check_mem(w, s, mem, nr, err);
	if (ret)
		return ret;
	if (w->len + w->record_room > SVMTRACE_FRAME_MAX) {
		ret = flush_frame(w, err);
		if (ret)
			return ret;
	}
	if (!w->len) {
		encoder_frame_start(&w->enc);
		if (w->opt.mem)
			mem_frame_start(&w->mem);
	}
	w->len += encoder_put(&w->enc, s, x, w->frame + w->len, &full);
	if (w->opt.mem && s->kind != SVMTRACE_SLOT_SESSION_END)
		append_mem(w, s, !full, from, mem, nr);
	w->started = true;
	w->last_seq = s->seq;
	w->stats.records++;
	w->frame_records++;
	w->stats.anchors += full;
	return 0;
}

int svmtrace_writer_append(struct svmtrace_writer *w, const struct svmtrace_slot *slot,
			   struct svmtrace_error *err)
{
	return append(w, slot, NULL, NULL, 0, err);
}

int svmtrace_writer_append_xstate(struct svmtrace_writer *w,
				  const struct svmtrace_slot_xstate *slot,
				  struct svmtrace_error *err)
{
	return append(w, &slot->base, slot, NULL, 0, err);
}

int svmtrace_writer_append_mem(struct svmtrace_writer *w, const struct svmtrace_slot *slot,
			       const struct svmtrace_slot_xstate *x,
			       const struct svmtrace_mem_access *mem, unsigned int nr,
			       struct svmtrace_error *err)
{
	if (x && &x->base != slot)
		return trace_error_noloc(err, SVMTRACE_E_INVALID, w->path,
					 "slot %llu: the YMM tail is not the slot's own",
					 (unsigned long long)slot->seq);
	return append(w, slot, x, mem, nr, err);
}

int svmtrace_writer_flush(struct svmtrace_writer *w, struct svmtrace_error *err)
{
	return flush_frame(w, err);
}

const struct svmtrace_writer_stats *svmtrace_writer_stats(const struct svmtrace_writer *w)
{
	return &w->stats;
}

int svmtrace_writer_close(struct svmtrace_writer *w, struct svmtrace_error *err)
{
	/* After a failed write the file is complete up to its last frame: keep it. */
	int ret;

	if (!w)
		return 0;
	ret = w->failed ? 0 : flush_frame(w, err);
	if (!ret && fsync(w->fd) < 0)
		ret = trace_error_noloc(err, SVMTRACE_E_IO, w->partial, "fsync failed: %s",
					strerror(errno));
	if (close(w->fd) < 0 && !ret)
		ret = trace_error_noloc(err, SVMTRACE_E_IO, w->partial, "close failed: %s",
					strerror(errno));
	w->fd = -1;
	if (!ret && rename(w->partial, w->path) < 0)
		ret = trace_error_noloc(err, SVMTRACE_E_IO, w->path, "cannot rename %s: %s",
					w->partial, strerror(errno));
	writer_free(w);
	return ret;
}

void svmtrace_writer_discard(struct svmtrace_writer *w)
{
	if (!w)
		return;
	unlink(w->partial);
	writer_free(w);
}
