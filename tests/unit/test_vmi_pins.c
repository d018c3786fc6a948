// SPDX-License-Identifier: GPL-2.0
/*
 * libsvmtrace's profile loader against the values pinned in
 * tests/data/profile-pins.txt, which tests/vmi/profile_pins.py checks with a
 * reader that shares no code with the library (Python's json).  Run from
 * the repository root (make check-unit does).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <svmtrace/vmi.h>

#include "lib/vmi/win_profile.h"
#include "support.h"

#define PINS	 "tests/data/profile-pins.txt"
#define PROFILES "tests/data/profiles"

/* What the library loaded for pin @name; false for a name it does not know. */
static bool loaded(const struct svmtrace_vmi_profile *p, const char *name, uint64_t *v)
{
	const struct {
		const char *name;
		uint64_t value;
	} known[] = {
		{ "_EPROCESS.UniqueProcessId", p->eprocess.pid },
		{ "_EPROCESS.ActiveProcessLinks", p->eprocess.links },
		{ "_EPROCESS.Peb", p->eprocess.peb },
		{ "_EPROCESS.ImageFileName", p->eprocess.name },
		{ "_EPROCESS.InheritedFromUniqueProcessId", p->eprocess.ppid },
		{ "_EPROCESS.Pcb", p->eprocess.pcb },
		{ "_KPROCESS.DirectoryTableBase", p->kprocess.dtb },
		{ "_KPROCESS.UserDirectoryTableBase", p->kprocess.user_dtb },
		{ "_PEB.ImageBaseAddress", p->peb.image_base },
		{ "_PEB.Ldr", p->peb.ldr },
		{ "_MMPTE_HARDWARE.Valid:bit_position", p->pte.valid.pos },
		{ "_MMPTE_HARDWARE.Valid:bit_length", p->pte.valid.len },
		{ "_MMPTE_TRANSITION.Transition:bit_position", p->pte.transition.pos },
		{ "_MMPTE_TRANSITION.PageFrameNumber:bit_position", p->pte.trans_pfn.pos },
		{ "_MMPTE_TRANSITION.PageFrameNumber:bit_length", p->pte.trans_pfn.len },
		{ "_MMPTE_PROTOTYPE.Prototype:bit_position", p->pte.prototype.pos },
		{ "_MMPTE_PROTOTYPE.ProtoAddress:bit_position", p->pte.proto_address.pos },
		{ "_MMPTE_PROTOTYPE.ProtoAddress:bit_length", p->pte.proto_address.len },
		{ "_MMPTE_SOFTWARE.PageFileHigh:bit_position", p->pte.pagefile_high.pos },
		{ "_MMPTE_SOFTWARE.PageFileHigh:bit_length", p->pte.pagefile_high.len },
		{ "symbol:PsActiveProcessHead", p->sym.ps_active_process_head },
		{ "symbol:KiSystemCall64", p->sym.ki_system_call64.rva },
		{ "symbol:KiSystemCall64Shadow", p->sym.ki_system_call64_shadow.rva },
		{ "symbol:KiDivideErrorFault", p->sym.ki_divide_error_fault.rva },
		{ "symbol:PsInitialSystemProcess", p->sym.ps_initial_system_process.rva },
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (!strcmp(known[i].name, name)) {
			*v = known[i].value;
			return true;
		}
	}
	return false;
}

START_TEST(library_reads_the_pinned_values)
{
	struct svmtrace_vmi_profile *p = NULL;
	char line[256], id[64] = "", name[96], path[256];
	unsigned long long want;
	unsigned int pins = 0, profiles = 0;
	struct svmtrace_error err;
	FILE *f = fopen(PINS, "r");

	ck_assert_msg(f != NULL, "%s: cannot open (run from the repository root)", PINS);
	while (fgets(line, sizeof(line), f)) {
		char pid[64];
		uint64_t got;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		ck_assert_msg(sscanf(line, "%63s %95s %lli", pid, name, &want) == 3,
			      "%s: bad line %s", PINS, line);
		if (strcmp(pid, id)) {
			svmtrace_vmi_profile_free(p);
			snprintf(path, sizeof(path), PROFILES "/ntkrnlmp-%s.json.xz", pid);
			ck_assert_msg(svmtrace_vmi_profile_load(path, &p, &err) == 0, "%s",
				      err.message);
			ck_assert_str_eq(svmtrace_vmi_profile_id(p), pid);
			snprintf(id, sizeof(id), "%s", pid);
			profiles++;
		}
		ck_assert_msg(loaded(p, name, &got), "%s: the library has no field for pin %s",
			      PINS, name);
		ck_assert_msg(got == want, "%s: %s is 0x%llx in the library, pinned 0x%llx", id,
			      name, (unsigned long long)got, want);
		pins++;
	}
	fclose(f);
	svmtrace_vmi_profile_free(p);
	ck_assert_uint_eq(profiles, 2);
	ck_assert_uint_ge(pins, 50);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmi_pins");
	TCase *tc = tcase_create("profiles");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, library_reads_the_pinned_values);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
