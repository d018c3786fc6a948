// SPDX-License-Identifier: GPL-2.0
/*
 * code.bin: a 16-byte header, then page versions, each a 48-byte entry
 * header and its bytes (docs/analysis.md).  The writer appends and writes
 * each entry through at once; the reader loads the whole file, checks every
 * entry and sorts the versions by VA and first sequence.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <svmtrace/analysis.h>

#define CODE_CR3_MASK 0x000ffffffffff000ull /* an address space, PCID and flags left out */

#include "lib/trace/error.h"

struct svmtrace_code_writer {
	int fd;
	char *path;
	uint64_t offset;
};

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4); /* x86-64 hosts: little-endian */
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static int write_all(struct svmtrace_code_writer *w, const void *buf, size_t len,
		     struct svmtrace_error *err)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(w->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return trace_error(err, SVMTRACE_E_IO, w->path, w->offset, "write: %s",
					   strerror(errno));
		p += n;
		len -= (size_t)n;
		w->offset += (uint64_t)n;
	}
	return 0;
}

int svmtrace_code_writer_open(const char *path, struct svmtrace_code_writer **out,
			      struct svmtrace_error *err)
{
	struct svmtrace_code_writer *w = calloc(1, sizeof(*w));
	uint8_t h[SVMTRACE_CODE_HEADER_SIZE] = SVMTRACE_CODE_MAGIC;
	int rc;

	*out = NULL;
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return trace_error_noloc(err, SVMTRACE_E_NOMEM, path, "out of memory");
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		rc = trace_error_noloc(err, SVMTRACE_E_IO, path, "cannot create: %s",
				       strerror(errno));
		free(w->path);
		free(w);
		return rc;
	}
	put32(h + 8, SVMTRACE_CODE_VERSION);
	put32(h + 12, SVMTRACE_CODE_HEADER_SIZE);
	rc = write_all(w, h, sizeof(h), err);
	if (rc) {
		close(w->fd);
		free(w->path);
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

int svmtrace_code_writer_add(struct svmtrace_code_writer *w, const struct svmtrace_code_page *page,
			     struct svmtrace_error *err)
{
	uint8_t e[SVMTRACE_CODE_ENTRY_HEADER + SVMTRACE_CODE_PAGE] = { 0 };

	if (page->va & (SVMTRACE_CODE_PAGE - 1))
		return trace_error_noloc(err, SVMTRACE_E_INVALID, w->path,
					 "page VA 0x%llx is not 4 KiB aligned",
					 (unsigned long long)page->va);
	put32(e, SVMTRACE_CODE_PAGE_MAGIC);
	put32(e + 4, SVMTRACE_CODE_PAGE);
	put64(e + 8, page->va);
	put64(e + 16, page->gpa);
	put64(e + 24, page->cr3);
	put64(e + 32, page->first_sequence);
	put32(e + 40, page->flags);
	memcpy(e + SVMTRACE_CODE_ENTRY_HEADER, page->bytes, SVMTRACE_CODE_PAGE);
	return write_all(w, e, sizeof(e), err);
}

int svmtrace_code_writer_close(struct svmtrace_code_writer *w, struct svmtrace_error *err)
{
	int rc = 0;

	if (!w)
		return 0;
	if (fsync(w->fd) && errno != EINVAL)
		rc = trace_error_noloc(err, SVMTRACE_E_IO, w->path, "fsync: %s", strerror(errno));
	if (close(w->fd) && !rc)
		rc = trace_error_noloc(err, SVMTRACE_E_IO, w->path, "close: %s", strerror(errno));
	free(w->path);
	free(w);
	return rc;
}

struct svmtrace_code {
	uint8_t *data;
	struct svmtrace_code_page *pages;
	size_t count;
};

static int by_va_then_sequence(const void *a, const void *b)
{
	const struct svmtrace_code_page *x = a, *y = b;

	if (x->va != y->va)
		return x->va < y->va ? -1 : 1;
	return x->first_sequence < y->first_sequence ? -1 : x->first_sequence > y->first_sequence;
}

static int read_file(const char *path, uint8_t **data, size_t *size, struct svmtrace_error *err)
{
	struct stat st;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return trace_error_noloc(err, SVMTRACE_E_IO, path, "cannot open: %s",
					 strerror(errno));
	if (fstat(fd, &st)) {
		rc = trace_error_noloc(err, SVMTRACE_E_IO, path, "stat: %s", strerror(errno));
		goto out;
	}
	*size = (size_t)st.st_size;
	*data = malloc(*size ? *size : 1);
	if (!*data) {
		rc = trace_error_noloc(err, SVMTRACE_E_NOMEM, path, "out of memory");
		goto out;
	}
	while (got < *size) {
		ssize_t n = read(fd, *data + got, *size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = trace_error(err, SVMTRACE_E_IO, path, got, "read: %s",
					 n ? strerror(errno) : "file shrank");
			free(*data);
			goto out;
		}
		got += (size_t)n;
	}
out:
	close(fd);
	return rc;
}

int svmtrace_code_load(const char *path, struct svmtrace_code **out, struct svmtrace_error *err)
{
	const size_t entry = SVMTRACE_CODE_ENTRY_HEADER + SVMTRACE_CODE_PAGE;
	struct svmtrace_code *c = calloc(1, sizeof(*c));
	size_t size = 0, off, n;
	int rc;

	*out = NULL;
	if (!c)
		return trace_error_noloc(err, SVMTRACE_E_NOMEM, path, "out of memory");
	rc = read_file(path, &c->data, &size, err);
	if (rc) {
		free(c);
		return rc;
	}
	if (size < SVMTRACE_CODE_HEADER_SIZE || memcmp(c->data, SVMTRACE_CODE_MAGIC, 8)) {
		rc = trace_error(err, SVMTRACE_E_FORMAT, path, 0, "not a code.bin (magic %s)",
				 SVMTRACE_CODE_MAGIC);
		goto fail;
	}
	if (get32(c->data + 8) != SVMTRACE_CODE_VERSION ||
	    get32(c->data + 12) != SVMTRACE_CODE_HEADER_SIZE) {
		rc = trace_error(err, SVMTRACE_E_FORMAT, path, 8,
				 "version %u, header size %u: expected %u and %u",
				 get32(c->data + 8), get32(c->data + 12), SVMTRACE_CODE_VERSION,
				 SVMTRACE_CODE_HEADER_SIZE);
		goto fail;
	}
	n = (size - SVMTRACE_CODE_HEADER_SIZE) / entry;
	if ((size - SVMTRACE_CODE_HEADER_SIZE) % entry) {
		rc = trace_error(err, SVMTRACE_E_TRUNCATED, path,
				 SVMTRACE_CODE_HEADER_SIZE + n * entry,
				 "the last page entry is incomplete (%zu of %zu bytes)",
				 (size - SVMTRACE_CODE_HEADER_SIZE) % entry, entry);
		goto fail;
	}
	c->pages = calloc(n ? n : 1, sizeof(*c->pages));
	if (!c->pages) {
		rc = trace_error_noloc(err, SVMTRACE_E_NOMEM, path, "out of memory");
		goto fail;
	}
	for (off = SVMTRACE_CODE_HEADER_SIZE; c->count < n; off += entry) {
		const uint8_t *e = c->data + off;
		struct svmtrace_code_page *p = &c->pages[c->count];

		if (get32(e) != SVMTRACE_CODE_PAGE_MAGIC || get32(e + 4) != SVMTRACE_CODE_PAGE ||
		    (get64(e + 8) & (SVMTRACE_CODE_PAGE - 1))) {
			rc = trace_error(err, SVMTRACE_E_FORMAT, path, off,
					 "bad page entry (magic 0x%x, length %u, VA 0x%llx)",
					 get32(e), get32(e + 4), (unsigned long long)get64(e + 8));
			goto fail;
		}
		p->va = get64(e + 8);
		p->gpa = get64(e + 16);
		p->cr3 = get64(e + 24);
		p->first_sequence = get64(e + 32);
		p->flags = get32(e + 40);
		p->bytes = e + SVMTRACE_CODE_ENTRY_HEADER;
		c->count++;
	}
	qsort(c->pages, c->count, sizeof(*c->pages), by_va_then_sequence);
	*out = c;
	return 0;
fail:
	svmtrace_code_free(c);
	return rc;
}

void svmtrace_code_free(struct svmtrace_code *c)
{
	if (!c)
		return;
	free(c->pages);
	free(c->data);
	free(c);
}

size_t svmtrace_code_count(const struct svmtrace_code *c)
{
	return c ? c->count : 0;
}

const struct svmtrace_code_page *svmtrace_code_page_at(const struct svmtrace_code *c, size_t i)
{
	return c && i < c->count ? &c->pages[i] : NULL;
}

/*
 * The version of page @va for @sequence in the address space @cr3 (0: any),
 * or NULL: among the versions read through @cr3 -- or all of them when none
 * was (a file from before pages were kept per address space) -- the last
 * one whose first sequence is <= @sequence, else the earliest.
 */
static const struct svmtrace_code_page *version_of(const struct svmtrace_code *c, uint64_t cr3,
						   uint64_t va, uint64_t sequence)
{
	const struct svmtrace_code_page *best = NULL, *first = NULL;
	size_t lo = 0, hi = c->count, i;
	bool any = true;

	cr3 &= CODE_CR3_MASK;
	while (lo < hi) { /* the first entry with this VA */
		size_t mid = lo + (hi - lo) / 2;

		if (c->pages[mid].va < va)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; cr3 && i < c->count && c->pages[i].va == va; i++)
		if ((c->pages[i].cr3 & CODE_CR3_MASK) == cr3)
			any = false;
	for (i = lo; i < c->count && c->pages[i].va == va; i++) {
		const struct svmtrace_code_page *p = &c->pages[i];

		if (!any && (p->cr3 & CODE_CR3_MASK) != cr3)
			continue;
		if (!first)
			first = p;
		if (p->first_sequence <= sequence)
			best = p;
	}
	return best ? best : first;
}

size_t svmtrace_code_read(const struct svmtrace_code *c, uint64_t cr3, uint64_t va,
			  uint64_t sequence, uint8_t *buf, size_t len,
			  const struct svmtrace_code_page **version)
{
	const struct svmtrace_code_page *p;
	size_t got = 0;

	if (version)
		*version = NULL;
	while (c && got < len) {
		uint64_t at = va + got, page = at & ~(uint64_t)(SVMTRACE_CODE_PAGE - 1);
		size_t in = SVMTRACE_CODE_PAGE - (size_t)(at - page), n = len - got;

		p = version_of(c, cr3, page, sequence);
		if (!p)
			break;
		if (version && !got)
			*version = p;
		if (n > in)
			n = in;
		memcpy(buf + got, p->bytes + (at - page), n);
		got += n;
	}
	return got;
}
