// SPDX-License-Identifier: GPL-2.0
/*
 * Raw physical image: byte N of the file is guest-physical address N.  No
 * registers: kernel discovery uses the low-memory processor start block.
 */
#include "lib/vmi/mem_driver.h"
#include "lib/vmi/vmi_error.h"

#include <stdlib.h>

int mem_raw_parse(struct svmtrace_vmi_mem *mem, struct svmtrace_error *err)
{
	mem->ranges = calloc(1, sizeof(*mem->ranges));
	if (!mem->ranges)
		return vmi_fail(err, SVMTRACE_E_NOMEM, "%s: out of memory", mem->name);
	mem->nr_ranges = 1;
	mem->ranges[0].mem_size = mem->map_len;
	mem->ranges[0].file_size = mem->map_len;
	return mem_ranges_finish(mem, err);
}
