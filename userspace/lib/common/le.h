/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Little-endian loads and stores at any alignment: the one set every part of
 * libsvmtrace uses (trace format, ELF cores, PE headers).  memcpy plus the
 * byte-order conversion compiles to one move on x86-64.
 */
#ifndef SVMTRACE_LE_H
#define SVMTRACE_LE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t le16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return le16toh(v);
}

static inline uint32_t le32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static inline uint64_t le64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

/* Store @v at @p; return the byte after it. */
static inline uint8_t *put_le16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, 2);
	return p + 2;
}

static inline uint8_t *put_le32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
	return p + 4;
}

static inline uint8_t *put_le64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
	return p + 8;
}

#endif
