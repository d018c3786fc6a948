// SPDX-License-Identifier: GPL-2.0
/*
 * The exit audit's layout check (userspace/audit/audit_format.c): the kvm
 * records of Debian's 6.1 and 6.12 (format files as tracefs shows them, in
 * tests/data/tracefs-6.1 and -6.12) pass; a record whose field moved, a field that is
 * gone, and a tracefs without kvm events are refused, each saying why.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit/audit.h"
#include "support.h"

#define GOOD "tests/data/tracefs-6.1"

/* A copy of GOOD's tree with @event's format passed through sed @script. */
static const char *edited(const char *event, const char *script)
{
	static char dir[PATH_MAX];
	char cmd[3 * PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", scratch_path("tracefs.XXXXXX"));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "cp -r " GOOD "/events %s/ && sed -i '%s' %s/events/kvm/%s/format", dir, script,
		 dir, event);
	ck_assert_int_eq(system(cmd), 0);
	return dir;
}

START_TEST(debian_61_layout_passes)
{
	char err[512] = "";

	ck_assert_msg(audit_check_formats(GOOD, err, sizeof(err)) == 0, "%s", err);
}
END_TEST

START_TEST(debian_612_layout_passes)
{
	char err[512] = "";

	ck_assert_msg(audit_check_formats("tests/data/tracefs-6.12", err, sizeof(err)) == 0, "%s",
		      err);
}
END_TEST

START_TEST(moved_field_refused)
{
	const char *root = edited("kvm_exit", "s/vcpu_id;\\toffset:56/vcpu_id;\\toffset:60/");
	char err[512] = "";

	ck_assert_int_eq(audit_check_formats(root, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err,
			     "vcpu_id is at offset 60 size 4, the audit program reads offset 56 "
			     "size 4"),
		      "%s", err);
	ck_assert_msg(strstr(err, "refusing to load"), "%s", err);
}
END_TEST

START_TEST(missing_field_refused)
{
	const char *root = edited("kvm_entry", "/vcpu_id/d");
	char err[512] = "";

	ck_assert_int_eq(audit_check_formats(root, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "has no field vcpu_id"), "%s", err);
}
END_TEST

START_TEST(no_kvm_events_refused)
{
	char err[512] = "";

	ck_assert_int_eq(audit_check_formats("/nonexistent", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "tracefs not mounted"), "%s", err);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("audit_format");
	TCase *tc = tcase_create("formats");

	tcase_add_test(tc, debian_61_layout_passes);
	tcase_add_test(tc, debian_612_layout_passes);
	tcase_add_test(tc, moved_field_refused);
	tcase_add_test(tc, missing_field_refused);
	tcase_add_test(tc, no_kvm_events_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
