/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decoding one frame's LZ4 block under the LZ4 block format's rules, which
 * docs/format.md ("Compression") lists: what liblz4 accepts is not enough
 * (it takes a match offset of 0, which the format calls invalid).
 */
#ifndef SVMTRACE_LZ4_BLOCK_H
#define SVMTRACE_LZ4_BLOCK_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decode the LZ4 block @src (@stored bytes) into @dst, which must come to
 * exactly @decoded bytes.  0, or -1 with the rule the block breaks in @why,
 * naming the byte of the block where that shows.
 */
int lz4_block_decode(const uint8_t *src, uint32_t stored, uint8_t *dst, uint32_t decoded, char *why,
		     size_t why_size);

#endif
