// SPDX-License-Identifier: GPL-2.0
#include "lib/vmi/vmi_file.h"
#include "lib/vmi/vmi_error.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int vmi_map_file(const char *path, const uint8_t **map, size_t *len, int *fd,
		 struct svmtrace_error *err)
{
	struct stat st;
	void *m;
	int rc;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return vmi_fail(err, SVMTRACE_E_IO, "%s: %s", path, strerror(errno));
	if (fstat(*fd, &st) < 0)
		rc = vmi_fail(err, SVMTRACE_E_IO, "%s: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode) || st.st_size == 0)
		rc = vmi_fail(err, SVMTRACE_E_FORMAT, "%s: %s", path,
			      S_ISREG(st.st_mode) ? "empty file" : "not a regular file");
	else if ((m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, *fd, 0)) == MAP_FAILED)
		rc = vmi_fail(err, SVMTRACE_E_IO, "%s: mmap: %s", path, strerror(errno));
	else {
		*map = m;
		*len = (size_t)st.st_size;
		return 0;
	}
	close(*fd);
	*fd = -1;
	return rc;
}
