// SPDX-License-Identifier: GPL-2.0
#include "svmtrace-dump/memtext.h"

#include "svmtrace-dump/out.h"

bool mem_in_range(const struct svmtrace_mem_access *a, const struct mem_range *range)
{
	unsigned __int128 end = (unsigned __int128)a->addr + (a->size ? a->size : 1);

	return !range->set || (a->addr < range->hi && end > range->lo);
}

char *put_hex_bytes(char *p, const uint8_t *b, uint32_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (uint32_t i = 0; i < n; i++) {
		*p++ = digits[b[i] >> 4];
		*p++ = digits[b[i] & 15];
	}
	return p;
}

static bool has_read(const struct svmtrace_mem_access *a)
{
	return a->kind == SVMTRACE_MEM_READ || a->kind == SVMTRACE_MEM_RMW;
}

static bool has_write(const struct svmtrace_mem_access *a)
{
	return a->kind == SVMTRACE_MEM_WRITE || a->kind == SVMTRACE_MEM_RMW;
}

char *put_mem_text(char *p, const struct svmtrace_mem_access *a)
{
	static const char *const kind[] = { "u:", "r:", "w:", "rw:" };

	p = put_str(p, kind[a->kind & 3]);
	p = put_hex(p, a->addr);
	*p++ = ':';
	p = put_dec(p, a->size);
	*p++ = ':';
	if (a->kind == SVMTRACE_MEM_UNRECORDED)
		return put_str(p, svmtrace_mem_why_name(a->why));
	if (has_read(a))
		p = put_hex_bytes(p, a->read_value, a->size);
	if (a->kind == SVMTRACE_MEM_RMW)
		*p++ = ':';
	if (has_write(a))
		p = put_hex_bytes(p, a->write_value, a->size);
	return p;
}

char *put_mem_json(char *p, const struct svmtrace_mem_access *a)
{
	p = put_str(p, "{\"kind\":\"");
	p = put_str(p, svmtrace_mem_kind_name(a->kind));
	p = put_str(p, "\",\"addr\":\"");
	p = put_hex(p, a->addr);
	p = put_str(p, "\",\"size\":");
	p = put_dec(p, a->size);
	if (a->kind == SVMTRACE_MEM_UNRECORDED) {
		p = put_str(p, ",\"why\":\"");
		p = put_str(p, svmtrace_mem_why_name(a->why));
		return put_str(p, "\"}");
	}
	if (has_read(a)) {
		p = put_str(p, ",\"read\":\"");
		p = put_hex_bytes(p, a->read_value, a->size);
		*p++ = '"';
	}
	if (has_write(a)) {
		p = put_str(p, ",\"written\":\"");
		p = put_hex_bytes(p, a->write_value, a->size);
		*p++ = '"';
	}
	*p++ = '}';
	return p;
}
