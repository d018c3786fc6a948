/* SPDX-License-Identifier: GPL-2.0 */
/* Mapping an input file (memory image, profile) whole, read-only. */
#ifndef SVMTRACE_VMI_FILE_H
#define SVMTRACE_VMI_FILE_H

#include <svmtrace/vmi.h>

/*
 * Open @path and map all of it.  The descriptor stays open in *fd for the
 * caller (who closes it, and munmaps *map).  A missing, empty or non-regular
 * file is an error naming @path.
 */
int vmi_map_file(const char *path, const uint8_t **map, size_t *len, int *fd,
		 struct svmtrace_error *err);

#endif
