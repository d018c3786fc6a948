/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading an ISF file's bytes: plain JSON or xz-compressed, into one
 * NUL-terminated buffer.  Decompression is capped so a hostile file cannot
 * exhaust memory.
 */
#ifndef SVMTRACE_VMI_ISF_TEXT_H
#define SVMTRACE_VMI_ISF_TEXT_H

#include <svmtrace/vmi.h>

#define ISF_TEXT_MAX (256u << 20) /* largest decompressed ISF accepted */

/* Decompress @len bytes of .xz data (or copy plain text) into *text. */
int isf_text_decode(const uint8_t *data, size_t len, const char *name, char **text,
		    size_t *text_len, struct svmtrace_error *err);

/* Read @path and decode it as above. */
int isf_text_read(const char *path, char **text, size_t *text_len, struct svmtrace_error *err);

#endif
