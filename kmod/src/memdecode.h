/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svmtrace: which memory a user-mode x86 instruction accesses, from its
 * bytes alone (memdecode.c).  No kernel state: the capture (memops.c) adds
 * the registers, and the unit tests build the same file in userspace.
 */
#ifndef ARCH_X86_KVM_SVMTRACE_MEMDECODE_H
#define ARCH_X86_KVM_SVMTRACE_MEMDECODE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stdint.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;
typedef int64_t s64;
#endif

/* Where an operand's address comes from. */
enum svmtrace_memform {
	SVMTRACE_FORM_MODRM,	/* ModRM/SIB (or a moffs): base + index * scale + disp */
	SVMTRACE_FORM_RSI,	/* a string source: rSI */
	SVMTRACE_FORM_RDI,	/* a string destination: rDI (ES) */
	SVMTRACE_FORM_POP,	/* the stack slot a POP, RET or POPF reads: rSP */
	SVMTRACE_FORM_PUSH,	/* the stack slot a PUSH or CALL writes: rSP - size */
	SVMTRACE_FORM_LEAVE,	/* the slot LEAVE pops: rBP */
	SVMTRACE_FORM_XLAT,	/* rBX + AL */
	SVMTRACE_FORM_ENTER,	/* the frame pointers ENTER copies: rBP - size */
	SVMTRACE_FORM_NONE,	/* no address known (not decoded, or a VSIB gather) */
};

#define SVMTRACE_REG_NONE 0xff
#define SVMTRACE_SEG_DEFAULT 0xff	/* no segment override */

/* One access of the instruction, in the order the accesses are recorded. */
struct svmtrace_memop {
	u8 kind;	/* enum svmtrace_mem_kind (abi.h) */
	u8 why;		/* UNRECORDED: enum svmtrace_mem_why */
	u8 form;	/* enum svmtrace_memform */
	u32 size;	/* bytes; 0 when unknown */
};

#define SVMTRACE_MEMOPS_MAX 4	/* accesses one decoded instruction makes at most */

struct svmtrace_memdecode {
	u8 len;		/* instruction length (valid when nr > 0 or ok) */
	bool ok;	/* decoded: ops[] is the whole story */
	bool addr32;	/* 32-bit addressing (a 67 prefix in 64-bit mode, or 32-bit code) */
	bool addr16;	/* 16-bit addressing (a 67 prefix in 32-bit code) */
	bool rep;	/* a string instruction with REP/REPNE: rCX counts */
	bool pop_rsp;	/* POP m with rSP as base: its address uses rSP after the pop */
	u8 seg;		/* segment override (0-5: ES CS SS DS FS GS) or SVMTRACE_SEG_DEFAULT */
	/* SVMTRACE_FORM_MODRM: */
	bool riprel;	/* disp from the next instruction's RIP */
	u8 base;	/* GPR number (x86 encoding) or SVMTRACE_REG_NONE */
	u8 index;	/* ... */
	u8 scale;	/* 1, 2, 4, 8 */
	s64 disp;
	u8 bt_reg;	/* BT/BTS/BTR/BTC m, r: the bit offset register (else NONE) */
	u8 nr;
	struct svmtrace_memop ops[SVMTRACE_MEMOPS_MAX];
};

/* @n bytes at @code (n <= 15) of @long64 (else 32-bit) code. */
void svmtrace_memdecode(const u8 *code, unsigned int n, bool long64, struct svmtrace_memdecode *d);

#endif
