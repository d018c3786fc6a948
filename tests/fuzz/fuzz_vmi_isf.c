// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: ISF profiles.  The input is an ISF file (JSON, or xz
 * when it starts with the xz magic); the indexing scanner, the lazy entry
 * parser and the profile resolution must reject anything malformed cleanly.
 */
#include "lib/vmi/isf.h"
#include "lib/vmi/win_profile.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct svmtrace_vmi_profile *p = malloc(sizeof(*p));
	struct svmtrace_error err;
	struct isf_field f;
	struct isf *isf;
	uint64_t v;

	if (p && !isf_load_buffer(data, size, "fuzz.json", &isf, &err)) {
		win_profile_from_isf(isf, "fuzz.json", p, &err);
		isf_symbol(isf, "PsActiveProcessHead", &v, &err);
		isf_type_size(isf, "_EPROCESS", &v, &err);
		isf_field(isf, "_MMPTE_PROTOTYPE", "ProtoAddress", &f, &err);
		isf_field(isf, "_EPROCESS", "ImageFileName", &f, &err);
		isf_free(isf);
	}
	free(p);
	return 0;
}
