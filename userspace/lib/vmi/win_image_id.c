// SPDX-License-Identifier: GPL-2.0
/* A mapped image's identity: PE timestamp, size and CodeView record. */
#include "lib/vmi/win_pe_reader.h"

#include <string.h>

int svmtrace_vmi_image_id(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t base,
			  struct svmtrace_vmi_image_id *out, struct svmtrace_error *err)
{
	struct win_pe_ctx ctx = { .vmi = vmi, .dtb = dtb, .base = base };
	struct pe_reader r = win_pe_reader(&ctx);
	struct svmtrace_error cv_err;
	struct pe_codeview cv;
	struct pe_image img;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = pe_parse(&r, &img, err);
	if (rc)
		return rc;
	out->time_date_stamp = img.time_date_stamp;
	out->size_of_image = img.size_of_image;
	/* The debug record may sit on a page that is not resident: optional. */
	if (!pe_codeview(&r, &img, &cv, &cv_err)) {
		out->has_codeview = true;
		out->age = cv.age;
		memcpy(out->pdb_name, cv.pdb_name, sizeof(out->pdb_name));
		memcpy(out->id, cv.id, sizeof(out->id));
	}
	return 0;
}
