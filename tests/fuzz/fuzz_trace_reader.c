// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the v5 reader on arbitrary bytes.  Every input must end
 * in a clean end of file or an error with a message — never a crash, a hang,
 * an over-read (ASan) or undefined behaviour (UBSan) — and the summary must
 * agree with the records delivered; memory accesses are at most 16 per
 * instruction, and every byte of their values can be read.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <svmtrace/trace.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile unsigned int value_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct svmtrace_reader *r;
	struct svmtrace_error err;
	const struct svmtrace_record *rec;
	uint64_t n = 0, last = 0;
	int ret;

	if (svmtrace_reader_open_memory(data, size, "fuzz", &r, &err)) {
		if (!err.message[0])
			abort();
		return 0;
	}
	while ((ret = svmtrace_reader_next(r, &rec)) > 0) {

		if (n && rec->sequence <= last)
			abort(); /* the reader promises increasing sequences */
		if (rec->nr_mem > SVMTRACE_MEM_MAX_ACCESSES ||
		    (rec->nr_mem && rec->kind == SVMTRACE_SLOT_SESSION_END))
			abort(); /* at most 16 accesses, and a session end has none */
		for (uint32_t k = 0; k < rec->nr_mem; k++) {
			const struct svmtrace_mem_access *a = &rec->mem[k];

			if (a->kind != SVMTRACE_MEM_UNRECORDED && a->size > SVMTRACE_MEM_MAX_VALUE)
				abort();
			for (uint32_t i = 0; a->kind && i < a->size; i++) /* ASan: every value byte */
				value_sink += a->read_value[i] + a->write_value[i];
		}
		last = rec->sequence;
		n++;
	}
	if (ret < 0 && !svmtrace_reader_error(r)->message[0])
		abort();
	if (svmtrace_reader_summary(r)->records != n)
		abort();
	if (svmtrace_reader_summary(r)->file_bytes > size)
		abort();
	svmtrace_reader_close(r);
	return 0;
}
