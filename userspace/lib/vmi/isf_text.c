// SPDX-License-Identifier: GPL-2.0
#include "lib/vmi/isf_text.h"
#include "lib/vmi/vmi_error.h"
#include "lib/vmi/vmi_file.h"

#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const uint8_t xz_magic[6] = { 0xfd, '7', 'z', 'X', 'Z', 0 };

/* Make room for more output: double the buffer, up to ISF_TEXT_MAX. */
static int grow(char **buf, size_t *cap, const char *name, struct svmtrace_error *err)
{
	size_t want = *buf ? *cap * 2 : *cap;
	char *grown;

	if (*buf && *cap > ISF_TEXT_MAX)
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: decompresses to more than %u MiB, not an ISF file", name,
				ISF_TEXT_MAX >> 20);
	if (want > ISF_TEXT_MAX + 2ULL)
		want = ISF_TEXT_MAX + 2ULL;
	grown = realloc(*buf, want);
	if (!grown)
		return vmi_fail(err, SVMTRACE_E_NOMEM, "%s: out of memory", name);
	*buf = grown;
	*cap = want;
	return 0;
}

static int decode_xz(const uint8_t *data, size_t len, const char *name, char **text,
		     size_t *text_len, struct svmtrace_error *err)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = len * 12 + 4096, used = 0;
	char *buf = NULL;
	lzma_ret ret;
	int rc = 0;

	if (lzma_stream_decoder(&strm, UINT64_MAX, 0) != LZMA_OK)
		return vmi_fail(err, SVMTRACE_E_NOMEM, "%s: cannot start the xz decoder", name);
	strm.next_in = data;
	strm.avail_in = len;
	for (;;) {
		if (!buf || used + 1 == cap) {
			rc = grow(&buf, &cap, name, err);
			if (rc)
				break;
		}
		strm.next_out = (uint8_t *)buf + used;
		strm.avail_out = cap - 1 - used; /* one byte kept for the NUL */
		ret = lzma_code(&strm, LZMA_FINISH);
		used = cap - 1 - strm.avail_out;
		if (ret == LZMA_STREAM_END)
			break;
		if (ret == LZMA_OK || (ret == LZMA_BUF_ERROR && !strm.avail_out))
			continue;
		if (ret == LZMA_BUF_ERROR)
			rc = vmi_fail(err, SVMTRACE_E_FORMAT,
				      "%s: xz data ends early (truncated file?)", name);
		else
			rc = vmi_fail(err, SVMTRACE_E_FORMAT,
				      "%s: xz data is corrupt (lzma error %d at input byte %zu)",
				      name, (int)ret, len - strm.avail_in);
		break;
	}
	lzma_end(&strm);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[used] = '\0';
	*text = buf;
	*text_len = used;
	return 0;
}

int isf_text_decode(const uint8_t *data, size_t len, const char *name, char **text,
		    size_t *text_len, struct svmtrace_error *err)
{
	if (len >= sizeof(xz_magic) && !memcmp(data, xz_magic, sizeof(xz_magic)))
		return decode_xz(data, len, name, text, text_len, err);
	if (len > ISF_TEXT_MAX)
		return vmi_fail(err, SVMTRACE_E_FORMAT, "%s: larger than %u MiB, not an ISF", name,
				ISF_TEXT_MAX >> 20);
	*text = malloc(len + 1);
	if (!*text)
		return vmi_fail(err, SVMTRACE_E_NOMEM, "%s: out of memory", name);
	memcpy(*text, data, len);
	(*text)[len] = '\0';
	*text_len = len;
	return 0;
}

int isf_text_read(const char *path, char **text, size_t *text_len, struct svmtrace_error *err)
{
	const uint8_t *map;
	size_t len;
	int fd, rc;

	rc = vmi_map_file(path, &map, &len, &fd, err);
	if (rc)
		return rc;
	close(fd);
	rc = isf_text_decode(map, len, path, text, text_len, err);
	munmap((void *)map, len);
	return rc;
}
