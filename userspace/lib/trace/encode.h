/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Record encoder: raw slots in, v5 record bytes out.  No I/O here; the
 * writer owns frames and files.
 */
#ifndef SVMTRACE_ENCODE_H
#define SVMTRACE_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <svmtrace/trace.h>

#include "lib/trace/predict.h"

struct encoder {
	struct svmtrace_state prev; /* the last state written */
	uint64_t prev_seq;
	bool have_state;       /* prev can be a delta base in this frame */
	bool frame_state;      /* this frame holds a state a session end may report */
	bool any_state;	       /* prev holds a real state (anything written yet) */
	bool xstate;	       /* prev carried YMM state */
	uint32_t since_anchor; /* records since the last full record, itself included */
	uint32_t anchor_interval;
	struct predict_table predict;
};

int encoder_init(struct encoder *e, uint32_t anchor_interval);
void encoder_free(struct encoder *e);
/* A new frame starts: nothing before it may be referenced. */
void encoder_frame_start(struct encoder *e);
/*
 * Encode @slot (and its YMM tail @x, or NULL) at @out, which has room for
 * WIRE_RECORD_MAX bytes.  Returns the bytes written; *full tells whether it
 * became a full-state record.  The caller has checked kind and sequence.
 */
size_t encoder_put(struct encoder *e, const struct svmtrace_slot *slot,
		   const struct svmtrace_slot_xstate *x, uint8_t *out, bool *full);

#endif
