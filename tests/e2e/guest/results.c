// SPDX-License-Identifier: GPL-2.0
/* Report lines shared by the test VMM and the reference model (results.h). */
#include <stdio.h>
#include <string.h>

#include "layout.h"
#include "results.h"

static const char *const gpr_names[16] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
					  "r8",	 "r9",	"r10", "r11", "r12", "r13", "r14", "r15"};

void results_print_cpu(int cpu, uint32_t status, uint64_t rip, uint64_t rflags,
		       const uint64_t gpr[16])
{
	printf("cpu%d done status=0x%x rip=0x%llx rflags=0x%llx", cpu, status,
	       (unsigned long long)rip, (unsigned long long)rflags);
	for (int i = 0; i < 16; i++)
		printf(" %s=0x%llx", gpr_names[i], (unsigned long long)gpr[i]);
	printf("\n");
}

static unsigned long long kdata(const uint8_t *mem, uint64_t gpa)
{
	uint64_t v;

	memcpy(&v, mem + gpa, sizeof(v));
	return v;
}

void results_print_totals(const uint8_t *mem, uint64_t log_sum, uint64_t log_count,
			  uint64_t input_count)
{
	printf("result db_count=%llu db_rip_sum=0x%llx syscalls=%llu nmis=%llu nmi_frame_tf=0x%llx "
	       "frame_tf=0x%llx irqs=%llu log_sum=0x%llx log_count=%llu input_count=%llu\n",
	       kdata(mem, KDATA_DB_COUNT), kdata(mem, KDATA_DB_RIP_SUM), kdata(mem, KDATA_SYSCALLS),
	       kdata(mem, KDATA_NMIS), kdata(mem, KDATA_NMI_FRAME_TF), kdata(mem, KDATA_FRAME_TF), kdata(mem, KDATA_IRQS),
	       (unsigned long long)log_sum,
	       (unsigned long long)log_count, (unsigned long long)input_count);
}
