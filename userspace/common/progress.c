// SPDX-License-Identifier: GPL-2.0
/*
 * The live progress line on a terminal: records, records/s over the last
 * half second, drops, MB written (flushed frames).
 * Redrawn at most twice a second, on stderr, only when stderr is a TTY.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "common/capture.h"

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void progress_init(struct progress *p, bool quiet)
{
	p->tty = !quiet && isatty(STDERR_FILENO);
	p->start = p->last = now_seconds();
	p->last_records = 0;
}

void progress_update(struct progress *p, const struct vcpu_stream *s, uint32_t n, bool final)
{
	struct svmtrace_ring_counts c;
	uint64_t records = 0, dropped = 0, bytes = 0;
	double t = now_seconds();
	uint32_t i;

	if (!p->tty || (!final && t - p->last < 0.5))
		return;
	for (i = 0; i < n; i++) {
		svmtrace_ring_counts(&s[i].ring, &c);
		records += s[i].written;
		dropped += c.dropped;
		bytes += stream_file_bytes(&s[i]);
	}
	fprintf(stderr, "\r%.1fs  %llu records  %.0f records/s  %llu dropped  %.2f MB written ",
		t - p->start, (unsigned long long)records,
		t > p->last ? (records - p->last_records) / (t - p->last) : 0.0,
		(unsigned long long)dropped, bytes / 1e6);
	if (final)
		fputc('\n', stderr);
	p->last = t;
	p->last_records = records;
}
