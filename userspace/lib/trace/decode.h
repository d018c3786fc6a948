/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Record decoder: the bytes of one decoded frame in, typed records out.
 * The mirror of encode.c; no I/O here (reader.c owns files and frames).
 */
#ifndef SVMTRACE_DECODE_H
#define SVMTRACE_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include <svmtrace/trace.h>

#include "lib/trace/predict.h"

struct decoder {
	struct svmtrace_state state;
	struct svmtrace_record rec; /* rec.state points at state */
	bool have_state;	    /* state can be a delta base in this frame */
	bool frame_state;	    /* this frame set a state a session end reports */
	bool have_seq;		    /* any record seen: sequence must increase */
	bool xstate;		    /* the last full record carried YMM state */
	bool ymm_clear;		    /* state.ymm and xstate_bv are all 0 */
	bool delta_fields;	    /* rec's kind, reason, TSC... are a delta's */
	struct predict_table predict;
	char why[160]; /* what was wrong, when decoder_next fails */
};

int decoder_init(struct decoder *d, uint32_t cpu);
void decoder_free(struct decoder *d);
void decoder_frame_start(struct decoder *d);
/*
 * Decode the record at @p (frame bytes end at @end) into d->rec.  Returns the
 * first byte after it, or NULL with d->why set.
 */
const uint8_t *decoder_next(struct decoder *d, const uint8_t *p, const uint8_t *end);

#endif
