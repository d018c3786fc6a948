// SPDX-License-Identifier: GPL-2.0
#include <svmtrace/trace.h>

const char *const svmtrace_gpr_names[SVMTRACE_NR_GPRS] = {
	"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
	"r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15",
};

const char *svmtrace_kind_name(enum svmtrace_slot_kind kind)
{
	switch (kind) {
	case SVMTRACE_SLOT_INSTRUCTION:
		return "instruction";
	case SVMTRACE_SLOT_SESSION_START:
		return "session_start";
	case SVMTRACE_SLOT_SESSION_END:
		return "session_end";
	}
	return "unknown";
}

const char *svmtrace_end_reason_name(uint32_t reason)
{
	switch (reason) {
	case SVMTRACE_END_STOP:
		return "stop";
	case SVMTRACE_END_CR3:
		return "cr3";
	case SVMTRACE_END_VCPU_GONE:
		return "vcpu-gone";
	case SVMTRACE_END_LIMIT:
		return "limit";
	case SVMTRACE_END_ERROR:
		return "error";
	case SVMTRACE_END_INT:
		return "int";
	case SVMTRACE_END_EVENT:
		return "event";
	case SVMTRACE_END_TASK_SWITCH:
		return "task-switch";
	case SVMTRACE_END_ENTRY_FAILED:
		return "entry-failed";
	}
	return "unknown";
}

const char *svmtrace_mem_kind_name(unsigned int kind)
{
	switch (kind) {
	case SVMTRACE_MEM_UNRECORDED:
		return "unrecorded";
	case SVMTRACE_MEM_READ:
		return "read";
	case SVMTRACE_MEM_WRITE:
		return "write";
	case SVMTRACE_MEM_RMW:
		return "rmw";
	}
	return "unknown";
}

const char *svmtrace_mem_why_name(unsigned int why)
{
	switch (why) {
	case SVMTRACE_MEM_WHY_FAULT:
		return "fault";
	case SVMTRACE_MEM_WHY_TOO_LARGE:
		return "too-large";
	case SVMTRACE_MEM_WHY_UNDECODED:
		return "undecoded";
	case SVMTRACE_MEM_WHY_UNREADABLE:
		return "unreadable";
	}
	return "unknown";
}
