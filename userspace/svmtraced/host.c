// SPDX-License-Identifier: GPL-2.0
/*
 * Refusals about this host, each one line naming what to do: no AMD SVM,
 * no /dev/svmtrace (or a kvm-amd that is not ours), a module built for
 * another ABI or another kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/cli.h"
#include "svmtraced/svmtraced.h"

/* SVMTRACED_CPUINFO replaces /proc/cpuinfo (tests of the refusals only). */
static const char *cpuinfo_path(void)
{
	const char *p = getenv("SVMTRACED_CPUINFO");

	return p && *p ? p : "/proc/cpuinfo";
}

void host_check_svm(void)
{
	const char *path = cpuinfo_path();
	char line[8192];
	bool svm = false;
	FILE *f = fopen(path, "r");

	if (!f)
		die("%s: %s", path, strerror(errno));
	while (!svm && fgets(line, sizeof(line), f)) {
		char *p;

		if (strncmp(line, "flags", 5))
			continue;
		for (p = strtok(line + 5, " \t\n:"); p; p = strtok(NULL, " \t\n"))
			if (!strcmp(p, "svm"))
				svm = true;
	}
	fclose(f);
	if (!svm)
		die("not an AMD SVM host: %s has no svm flag (svmtrace needs an AMD CPU with "
		    "SVM enabled in the firmware, and kvm-amd)",
		    path);
}

const char *host_version_problem(const struct svmtrace_version *v, const char *release, char *buf,
				 size_t size)
{
	if (v->abi_version != SVMTRACE_ABI_VERSION) {
		snprintf(buf, size,
			 "the loaded svmtrace module speaks ABI %u, this svmtraced ABI %d: install "
			 "matching versions (make kmod KVER=$(uname -r), make install; docs/install.md)",
			 v->abi_version, SVMTRACE_ABI_VERSION);
		return buf;
	}
	if (strncmp(v->release, release, sizeof(v->release))) {
		snprintf(buf, size,
			 "the loaded svmtrace module was built for kernel %.64s but %.64s runs: "
			 "rebuild it for this kernel (make kmod KVER=%.64s; docs/install.md)",
			 v->release, release, release);
		return buf;
	}
	return NULL;
}

static void check_version(int ctl)
{
	struct svmtrace_version v;
	struct utsname u;
	char msg[512];

	memset(&v, 0, sizeof(v));
	if (ioctl(ctl, SVMTRACE_VERSION, &v)) {
		if (errno == ENOTTY)
			die("%s answers no SVMTRACE_VERSION: the loaded module predates ABI %d; "
			    "install the current one (docs/install.md)",
			    SVMTRACE_DEVICE, SVMTRACE_ABI_VERSION);
		die("%s: SVMTRACE_VERSION: %s", SVMTRACE_DEVICE, strerror(errno));
	}
	v.release[sizeof(v.release) - 1] = '\0';
	if (uname(&u))
		die("uname: %s", strerror(errno));
	if (host_version_problem(&v, u.release, msg, sizeof(msg)))
		die("%s", msg);
}

int host_open_control(void)
{
	struct stat st;
	int fd;

	host_check_svm();
	if (stat(SVMTRACE_DEVICE, &st)) {
		if (!stat("/sys/module/kvm_amd", &st))
			die("%s is missing: the loaded kvm-amd is not svmtrace's; load svmtrace's "
			    "kvm.ko and kvm-amd.ko (docs/install.md)",
			    SVMTRACE_DEVICE);
		die("%s is missing: kvm-amd is not loaded; load svmtrace's kvm.ko and "
		    "kvm-amd.ko (docs/install.md)",
		    SVMTRACE_DEVICE);
	}
	fd = control_open();
	check_version(fd);
	return fd;
}
