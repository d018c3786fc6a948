// SPDX-License-Identifier: GPL-2.0
#include "svmtrace-dump/files.h"

#include "common/cli.h"

struct svmtrace_reader *open_trace(const char *path)
{
	struct svmtrace_reader *r;
	struct svmtrace_error err;

	if (svmtrace_reader_open(path, &r, &err))
		die("%s", err.message);
	return r;
}

int finish_trace(struct svmtrace_reader *r, int ret, bool allow_truncated)
{
	const struct svmtrace_error *err = svmtrace_reader_error(r);

	if (ret >= 0)
		return 0;
	if (ret == SVMTRACE_E_TRUNCATED) {
		warn("%s; every complete frame before it was read%s", err->message,
		     allow_truncated ? "" : " (--allow-truncated accepts this)");
		return allow_truncated ? 0 : 1;
	}
	warn("%s", err->message);
	return 1;
}
