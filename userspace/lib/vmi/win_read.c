// SPDX-License-Identifier: GPL-2.0
/* Guest-virtual reads as Windows' memory manager resolves them. */
#include "lib/vmi/win_pte.h"
#include "lib/vmi/vmi_error.h"

#include <string.h>

uint64_t win_dtb_mask(uint64_t cr3)
{
	return cr3 & X86_CR3_ADDR;
}

int svmtrace_vmi_translate(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t va,
			   struct svmtrace_vmi_translation *out, struct svmtrace_error *err)
{
	struct x86_decoder dec = win_pte_decoder(vmi);

	/* Without a profile (kernel discovery) only hardware-valid pages count. */
	return x86_translate(vmi->mem, dtb, (int)vmi->kernel.paging_levels, va,
			     vmi->profile ? &dec : NULL, out, err);
}

int svmtrace_vmi_read_va(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t va, void *buf,
			 size_t len, struct svmtrace_error *err)
{
	uint8_t *dst = buf;

	while (len) {
		struct svmtrace_vmi_translation t;
		size_t n = X86_PAGE_SIZE - (va & (X86_PAGE_SIZE - 1));
		int rc;

		if (n > len)
			n = len;
		rc = svmtrace_vmi_translate(vmi, dtb, va, &t, err);
		if (!rc)
			rc = svmtrace_vmi_mem_read(vmi->mem, t.gpa, dst, n, err);
		if (rc)
			return rc;
		dst += n;
		va += n;
		len -= n;
	}
	return 0;
}

int win_read_u64(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t va, uint64_t *v,
		 struct svmtrace_error *err)
{
	return svmtrace_vmi_read_va(vmi, dtb, va, v, sizeof(*v), err);
}

int win_read_u32(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t va, uint32_t *v,
		 struct svmtrace_error *err)
{
	return svmtrace_vmi_read_va(vmi, dtb, va, v, sizeof(*v), err);
}

int win_read_u16(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t va, uint16_t *v,
		 struct svmtrace_error *err)
{
	return svmtrace_vmi_read_va(vmi, dtb, va, v, sizeof(*v), err);
}

/* Append code point @c as UTF-8 if it fits (with the NUL) in out[size]. */
static size_t put_utf8(char *out, size_t at, size_t size, uint32_t c)
{
	char b[4];
	size_t n, i;

	if (c < 0x80) {
		b[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	if (at + n >= size)
		return at;
	for (i = 0; i < n; i++)
		out[at + i] = b[i];
	return at + n;
}

int win_read_unicode(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t va, char *out,
		     size_t size, struct svmtrace_error *err)
{
	const struct svmtrace_vmi_profile *p = vmi->profile;
	uint16_t units[512], length;
	uint64_t buffer;
	size_t n, i, at = 0;
	int rc;

	out[0] = '\0';
	rc = win_read_u16(vmi, dtb, va + p->ustr.length, &length, err);
	if (!rc)
		rc = win_read_u64(vmi, dtb, va + p->ustr.buffer, &buffer, err);
	if (rc)
		return rc;
	n = length / 2;
	if (n > sizeof(units) / 2)
		n = sizeof(units) / 2;
	if (!n)
		return 0;
	rc = svmtrace_vmi_read_va(vmi, dtb, buffer, units, n * 2, err);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		uint32_t c = units[i];

		if (c >= 0xd800 && c < 0xdc00 && i + 1 < n && units[i + 1] >= 0xdc00 &&
		    units[i + 1] < 0xe000)
			c = 0x10000 + ((c - 0xd800) << 10) + (units[++i] - 0xdc00);
		else if (c >= 0xd800 && c < 0xe000)
			c = 0xfffd; /* unpaired surrogate */
		if (!c)
			break;
		at = put_utf8(out, at, size, c);
	}
	out[at] = '\0';
	return 0;
}
