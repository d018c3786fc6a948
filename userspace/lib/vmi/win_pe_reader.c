// SPDX-License-Identifier: GPL-2.0
#include "lib/vmi/win_pe_reader.h"

static int read_image(const void *opaque, uint32_t rva, void *buf, size_t len,
		      struct svmtrace_error *err)
{
	const struct win_pe_ctx *ctx = opaque;

	return svmtrace_vmi_read_va(ctx->vmi, ctx->dtb, ctx->base + rva, buf, len, err);
}

struct pe_reader win_pe_reader(const struct win_pe_ctx *ctx)
{
	return (struct pe_reader){ read_image, ctx };
}
