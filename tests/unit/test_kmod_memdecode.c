// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel capture's instruction decoder (kmod/src/memdecode.c), built
 * here as it is in kvm.ko: instruction bytes written by hand from the
 * Intel SDM / AMD APM opcode maps, each with the length and the accesses
 * (kind, address form, size, address parts) the manuals give it, in the
 * order the capture records them (reads and read-modify-writes, the stack
 * slot popped, writes, the stack slot pushed).  Forms outside the decoder's
 * table must come out unrecorded, never guessed.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../kmod/src/memdecode.c"
#include "support.h"

#define U     SVMTRACE_MEM_UNRECORDED
#define NONE  SVMTRACE_REG_NONE
#define DEF   SVMTRACE_SEG_DEFAULT
#define MODRM SVMTRACE_FORM_MODRM
#define RSI   SVMTRACE_FORM_RSI
#define RDI   SVMTRACE_FORM_RDI
#define POP   SVMTRACE_FORM_POP
#define PUSH  SVMTRACE_FORM_PUSH
#define ENTER SVMTRACE_FORM_ENTER
#define NOADDR SVMTRACE_FORM_NONE
#define UND   SVMTRACE_MEM_WHY_UNDECODED
#define BIG   SVMTRACE_MEM_WHY_TOO_LARGE
/* The address parts of [rax] and [rbx]. */
#define AT_RAX 0, NONE, 1, 0
#define AT_RBX 3, NONE, 1, 0

struct want_op {
	u8 kind, form;
	u32 size;
	u8 why;
};

struct vec {
	const char *name;
	const char *hex;
	bool long64;
	bool ok;
	u8 len, nr;
	struct want_op ops[3];
	/* ModRM address parts, checked when ops[0] (or ops[1]) is MODRM */
	u8 base, index, scale;
	s64 disp;
	bool riprel;
	u8 seg;
	bool rep, addr32, addr16;
};

/* The table leaves the fields a vector does not check at zero. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
/* One vector a line. */
/* clang-format off */
static const struct vec vecs[] = {
	{ "mov rax,[rsp+8]", "488b442408", 1, 1, 5, 1, { { R, MODRM, 8 } }, 4, NONE, 1, 8 },
	{ "mov [rbx+rcx*4],eax", "89048b", 1, 1, 3, 1, { { W, MODRM, 4 } }, 3, 1, 4, 0 },
	{ "mov rax,[rip+0x10]", "488b0510000000", 1, 1, 7, 1, { { R, MODRM, 8 } }, NONE, NONE, 1,
	  0x10, true },
	{ "mov rax,fs:[0x30]", "64488b042530000000", 1, 1, 9, 1, { { R, MODRM, 8 } }, NONE, NONE,
	  1, 0x30, false, 4 },
	{ "mov rax,gs:[0x60]", "65488b042560000000", 1, 1, 9, 1, { { R, MODRM, 8 } }, NONE, NONE,
	  1, 0x60, false, 5 },
	{ "mov eax,[rbp-8]", "8b45f8", 1, 1, 3, 1, { { R, MODRM, 4 } }, 5, NONE, 1, -8 },
	{ "mov r8,[r12+r13*8+0x100]", "4f8b84ec00010000", 1, 1, 8, 1, { { R, MODRM, 8 } }, 12, 13,
	  8, 0x100 },
	{ "rep movsb", "f3a4", 1, 1, 2, 2, { { R, RSI, 1 }, { W, RDI, 1 } }, 0, 0, 0, 0, 0, DEF,
	  true },
	{ "movsq", "48a5", 1, 1, 2, 2, { { R, RSI, 8 }, { W, RDI, 8 } }, 0, 0, 0, 0, 0, DEF },
	{ "rep stosq", "f348ab", 1, 1, 3, 1, { { W, RDI, 8 } }, 0, 0, 0, 0, 0, DEF, true },
	{ "repne scasb", "f2ae", 1, 1, 2, 1, { { R, RDI, 1 } }, 0, 0, 0, 0, 0, DEF, true },
	{ "cmpsb", "a6", 1, 1, 1, 2, { { R, RSI, 1 }, { R, RDI, 1 } }, 0, 0, 0, 0, 0, DEF },
	{ "lodsd", "ad", 1, 1, 1, 1, { { R, RSI, 4 } }, 0, 0, 0, 0, 0, DEF },
	{ "push rax", "50", 1, 1, 1, 1, { { W, PUSH, 8 } } },
	{ "push ax", "6650", 1, 1, 2, 1, { { W, PUSH, 2 } } },
	{ "pop r15", "415f", 1, 1, 2, 1, { { R, POP, 8 } } },
	{ "push 1", "6a01", 1, 1, 2, 1, { { W, PUSH, 8 } } },
	{ "push 0x100", "6800010000", 1, 1, 5, 1, { { W, PUSH, 8 } } },
	{ "pushfq", "9c", 1, 1, 1, 1, { { W, PUSH, 8 } } },
	{ "popfq", "9d", 1, 1, 1, 1, { { R, POP, 8 } } },
	{ "push qword [rip+0x1000]", "ff3500100000", 1, 1, 6, 2,
	  { { R, MODRM, 8 }, { W, PUSH, 8 } }, NONE, NONE, 1, 0x1000, true },
	{ "pop qword [rsp+8]", "8f442408", 1, 1, 4, 2, { { R, POP, 8 }, { W, MODRM, 8 } }, 4, NONE,
	  1, 8 },
	{ "call rel32", "e800000000", 1, 1, 5, 1, { { W, PUSH, 8 } } },
	{ "call [rip]", "ff1500000000", 1, 1, 6, 2, { { R, MODRM, 8 }, { W, PUSH, 8 } }, NONE,
	  NONE, 1, 0, true },
	{ "call rax", "ffd0", 1, 1, 2, 1, { { W, PUSH, 8 } } },
	{ "ret", "c3", 1, 1, 1, 1, { { R, POP, 8 } } },
	{ "ret 16", "c21000", 1, 1, 3, 1, { { R, POP, 8 } } },
	{ "jmp rax", "ffe0", 1, 1, 2, 0 },
	{ "jmp [rax]", "ff20", 1, 1, 2, 1, { { R, MODRM, 8 } }, 0, NONE, 1, 0 },
	{ "leave", "c9", 1, 1, 1, 1, { { R, SVMTRACE_FORM_LEAVE, 8 } } },
	{ "xlat", "d7", 1, 1, 1, 1, { { R, SVMTRACE_FORM_XLAT, 1 } } },
	{ "lock cmpxchg [rbx],rcx", "f0480fb10b", 1, 1, 5, 1, { { RMW, MODRM, 8 } }, 3, NONE, 1,
	  0 },
	{ "xchg [rbx],rax", "488703", 1, 1, 3, 1, { { RMW, MODRM, 8 } }, 3, NONE, 1, 0 },
	{ "lock xadd [rdx],eax", "f00fc102", 1, 1, 4, 1, { { RMW, MODRM, 4 } }, 2, NONE, 1, 0 },
	{ "cmpxchg16b [rdi]", "480fc70f", 1, 1, 4, 1, { { RMW, MODRM, 16 } }, 7, NONE, 1, 0 },
	{ "cmp byte [rax],0", "803800", 1, 1, 3, 1, { { R, MODRM, 1 } }, 0, NONE, 1, 0 },
	{ "add dword [rax],1", "830001", 1, 1, 3, 1, { { RMW, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "add qword [rax+8],0x100", "4881400800010000", 1, 1, 8, 1, { { RMW, MODRM, 8 } }, 0,
	  NONE, 1, 8 },
	{ "test byte [rax],1", "f60001", 1, 1, 3, 1, { { R, MODRM, 1 } }, 0, NONE, 1, 0 },
	{ "neg dword [rax]", "f718", 1, 1, 2, 1, { { RMW, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "test dword [rax],1", "f70001000000", 1, 1, 6, 1, { { R, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "shl qword [rax],4", "48c12004", 1, 1, 4, 1, { { RMW, MODRM, 8 } }, 0, NONE, 1, 0 },
	{ "inc byte [rax]", "fe00", 1, 1, 2, 1, { { RMW, MODRM, 1 } }, 0, NONE, 1, 0 },
	{ "mov dword [rax],1", "c70001000000", 1, 1, 6, 1, { { W, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "mov qword [rax+16],-1", "48c74010ffffffff", 1, 1, 8, 1, { { W, MODRM, 8 } }, 0, NONE, 1,
	  16 },
	{ "mov byte [rax],0x41", "c60041", 1, 1, 3, 1, { { W, MODRM, 1 } }, 0, NONE, 1, 0 },
	{ "mov word [rax],0x1234", "66c7003412", 1, 1, 5, 1, { { W, MODRM, 2 } }, 0, NONE, 1, 0 },
	{ "lea rax,[rax+rcx]", "488d0408", 1, 1, 4, 0 },
	{ "movzx ecx,byte [rax]", "0fb608", 1, 1, 3, 1, { { R, MODRM, 1 } }, 0, NONE, 1, 0 },
	{ "movsx rcx,word [rax]", "480fbf08", 1, 1, 4, 1, { { R, MODRM, 2 } }, 0, NONE, 1, 0 },
	{ "movsxd rcx,dword [rax]", "486308", 1, 1, 3, 1, { { R, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "movups xmm0,[rax]", "0f1000", 1, 1, 3, 1, { { R, MODRM, 16 } }, 0, NONE, 1, 0 },
	{ "movss xmm0,[rax]", "f30f1000", 1, 1, 4, 1, { { R, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "movsd [rax],xmm0", "f20f1100", 1, 1, 4, 1, { { W, MODRM, 8 } }, 0, NONE, 1, 0 },
	{ "movdqa [rax],xmm0", "660f7f00", 1, 1, 4, 1, { { W, MODRM, 16 } }, 0, NONE, 1, 0 },
	{ "movdqu xmm0,[rax]", "f30f6f00", 1, 1, 4, 1, { { R, MODRM, 16 } }, 0, NONE, 1, 0 },
	{ "movq [rax],xmm0", "660fd600", 1, 1, 4, 1, { { W, MODRM, 8 } }, 0, NONE, 1, 0 },
	{ "movq xmm0,rax", "66480f6ec0", 1, 1, 5, 0 },
	{ "pxor xmm1,[rax]", "660fef08", 1, 1, 4, 1, { { R, MODRM, 16 } }, 0, NONE, 1, 0 },
	{ "vmovdqu ymm0,[rax]", "c5fe6f00", 1, 1, 4, 1, { { R, MODRM, 32 } }, 0, NONE, 1, 0 },
	{ "vmovdqu [rax],ymm1", "c5fe7f08", 1, 1, 4, 1, { { W, MODRM, 32 } }, 0, NONE, 1, 0 },
	{ "vmovss xmm0,[rax]", "c5fa1000", 1, 1, 4, 1, { { R, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "vmovdqa xmm0,[rax]", "c5f96f00", 1, 1, 4, 1, { { R, MODRM, 16 } }, 0, NONE, 1, 0 },
	{ "vmovdqu ymm0,[r8]", "c4c17e6f00", 1, 1, 5, 1, { { R, MODRM, 32 } }, 8, NONE, 1, 0 },
	{ "fxsave [rax]", "0fae00", 1, 1, 3, 1, { { U, MODRM, 512, SVMTRACE_MEM_WHY_TOO_LARGE } },
	  0, NONE, 1, 0 },
	{ "stmxcsr [rax]", "0fae18", 1, 1, 3, 1, { { W, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "syscall", "0f05", 1, 1, 2, 0 },
	{ "cpuid", "0fa2", 1, 1, 2, 0 },
	{ "bt [rax],rcx", "480fa308", 1, 1, 4, 1, { { R, MODRM, 8 } }, 0, NONE, 1, 0 },
	{ "bts dword [rax],5", "0fba2805", 1, 1, 4, 1, { { RMW, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "cmove ecx,[rax]", "0f4408", 1, 1, 3, 1, { { R, MODRM, 4 } }, 0, NONE, 1, 0 },
	{ "sete byte [rax]", "0f9400", 1, 1, 3, 1, { { W, MODRM, 1 } }, 0, NONE, 1, 0 },
	{ "mov eax,[ebx]", "678b03", 1, 1, 3, 1, { { R, MODRM, 4 } }, 3, NONE, 1, 0, 0, DEF, 0,
	  true },
	{ "mov eax,[moffs64]", "a18877665544332211", 1, 1, 9, 1, { { R, MODRM, 4 } }, NONE, NONE,
	  1, 0x1122334455667788 },
	{ "mov rax,imm64", "48b88877665544332211", 1, 1, 10, 0 },
	{ "test al,1", "a801", 1, 1, 2, 0 },
	{ "jmp rel32", "e900000000", 1, 1, 5, 0 },
	{ "jne rel32", "0f8500000000", 1, 1, 6, 0 },
	{ "nop dword [rax+rax]", "0f1f440000", 1, 1, 5, 0 },
	{ "endbr64", "f30f1efa", 1, 1, 4, 0 },
	/* 32-bit code (a WoW64 thread) */
	{ "32: mov eax,[esp+4]", "8b442404", 0, 1, 4, 1, { { R, MODRM, 4 } }, 4, NONE, 1, 4, 0,
	  DEF, 0, true },
	{ "32: push eax", "50", 0, 1, 1, 1, { { W, PUSH, 4 } }, 0, 0, 0, 0, 0, DEF, 0, true },
	{ "32: inc eax", "40", 0, 1, 1, 0, {}, 0, 0, 0, 0, 0, DEF, 0, true },
	{ "32: mov eax,fs:[0x18]", "64a118000000", 0, 1, 6, 1, { { R, MODRM, 4 } }, NONE, NONE, 1,
	  0x18, false, 4, 0, true },
	{ "32: mov eax,[0x1000] (no RIP-relative)", "8b0500100000", 0, 1, 6, 1,
	  { { R, MODRM, 4 } }, NONE, NONE, 1, 0x1000, false, DEF, 0, true },
	{ "32: call rel32", "e800000000", 0, 1, 5, 1, { { W, PUSH, 4 } }, 0, 0, 0, 0, 0, DEF, 0,
	  true },
	/* not decoded: one unrecorded access, no address */
	{ "evex vmovdqu64 zmm0,[rax]", "62f1fe486f00", 1, 0, 0, 1,
	  { { U, SVMTRACE_FORM_NONE, 0, 3 } } },
	{ "truncated mov", "488b", 1, 0, 0, 1, { { U, SVMTRACE_FORM_NONE, 0, 3 } } },
	{ "pusha (not in 64-bit mode)", "60", 1, 0, 0, 1, { { U, NOADDR, 0, 3 } } },
	{ "lcall rax (no register form)", "ffd8", 1, 0, 0, 1, { { U, NOADDR, 0, 3 } } },
	{ "x87 D9 /1 memory (#UD)", "d908", 1, 0, 0, 1, { { U, NOADDR, 0, 3 } } },
	{ "VEX map 4", "c4e47d0000", 1, 0, 0, 1, { { U, NOADDR, 0, 3 } } },
	{ "32: EVEX (62, register ModRM byte)", "62f1fe486f00", 0, 0, 0, 1,
	  { { U, NOADDR, 0, 3 } } },
	{ "enter truncated", "c81000", 1, 0, 0, 1, { { U, NOADDR, 0, 3 } } },

	/* ENTER size, level: level - 1 frame pointers read below rBP, level + 1 slots pushed */
	{ "enter 16,0", "c8100000", 1, 1, 4, 1, { { W, PUSH, 8 } } },
	{ "enter 16,1", "c8100001", 1, 1, 4, 1, { { W, PUSH, 16 } } },
	{ "enter 8,3", "c8080003", 1, 1, 4, 2, { { R, ENTER, 16 }, { W, PUSH, 32 } } },
	{ "enter 0,5 (pushes 48 bytes)", "c8000005", 1, 1, 4, 2,
	  { { R, ENTER, 32 }, { U, PUSH, 48, BIG } } },
	{ "enter 0,33 (level modulo 32)", "c8000021", 1, 1, 4, 1, { { W, PUSH, 16 } } },
	{ "66 enter 16,2 (2-byte slots)", "66c8100002", 1, 1, 5, 2,
	  { { R, ENTER, 2 }, { W, PUSH, 6 } } },
	{ "32: enter 8,2", "c8080002", 0, 1, 4, 2, { { R, ENTER, 4 }, { W, PUSH, 12 } }, 0, 0, 0,
	  0, 0, DEF, 0, true },
	/* far returns, IRET, far CALL/JMP through memory */
	{ "iretq (40 bytes)", "48cf", 1, 1, 2, 1, { { U, POP, 40, BIG } } },
	{ "iretd in 64-bit mode (5 dwords)", "cf", 1, 1, 1, 1, { { R, POP, 20 } } },
	{ "32: iretd (same privilege)", "cf", 0, 1, 1, 1, { { R, POP, 12 } }, 0, 0, 0, 0, 0, DEF,
	  0, true },
	{ "retf", "cb", 1, 1, 1, 1, { { R, POP, 8 } } },
	{ "retfq", "48cb", 1, 1, 2, 1, { { R, POP, 16 } } },
	{ "retf 8", "ca0800", 1, 1, 3, 1, { { R, POP, 8 } } },
	{ "ljmp [rax] (m16:32)", "ff28", 1, 1, 2, 1, { { R, MODRM, 6 } }, AT_RAX },
	{ "lcall [rbx+8] (m16:32)", "ff5b08", 1, 1, 3, 2, { { R, MODRM, 6 }, { W, PUSH, 8 } }, 3,
	  NONE, 1, 8 },
	{ "66 ljmp [rax] (m16:16)", "66ff28", 1, 1, 3, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "rex.w ljmp [rax] (vendor-dependent)", "48ff28", 1, 1, 3, 1, { { U, MODRM, 0, UND } },
	  AT_RAX },
	{ "rex.w lcall [rax]", "48ff18", 1, 1, 3, 2, { { U, MODRM, 0, UND }, { U, PUSH, 0, UND } },
	  AT_RAX },
	{ "lss eax,[rbx]", "0fb203", 1, 1, 3, 1, { { R, MODRM, 6 } }, AT_RBX },
	{ "rex.w lfs rax,[rbx]", "480fb403", 1, 1, 4, 1, { { U, MODRM, 0, UND } }, AT_RBX },
	/* 32-bit code only */
	{ "32: lds eax,[ebx]", "c503", 0, 1, 2, 1, { { R, MODRM, 6 } }, AT_RBX, 0, DEF, 0, true },
	{ "32: les ax,[ebx]", "66c403", 0, 1, 3, 1, { { R, MODRM, 4 } }, AT_RBX, 0, DEF, 0, true },
	{ "32: vmovdqa xmm0,[eax] (C5, register-form byte)", "c5f96f00", 0, 1, 4, 1,
	  { { R, MODRM, 16 } }, AT_RAX, 0, DEF, 0, true },
	{ "32: bound eax,[ebx]", "6203", 0, 1, 2, 1, { { R, MODRM, 8 } }, AT_RBX, 0, DEF, 0, true },
	{ "32: pusha", "60", 0, 1, 1, 1, { { W, PUSH, 32 } }, 0, 0, 0, 0, 0, DEF, 0, true },
	{ "32: popa", "61", 0, 1, 1, 1, { { R, POP, 32 } }, 0, 0, 0, 0, 0, DEF, 0, true },
	{ "32: push es", "06", 0, 1, 1, 1, { { W, PUSH, 4 } }, 0, 0, 0, 0, 0, DEF, 0, true },
	{ "32: pop ds", "1f", 0, 1, 1, 1, { { R, POP, 4 } }, 0, 0, 0, 0, 0, DEF, 0, true },
	{ "32: call 0x33:0x12345678", "9a785634123300", 0, 1, 7, 1, { { W, PUSH, 8 } }, 0, 0, 0, 0,
	  0, DEF, 0, true },
	{ "32: aam 10", "d40a", 0, 1, 2, 0, {}, 0, 0, 0, 0, 0, DEF, 0, true },
	/* 16-bit addressing: 67 in 32-bit code */
	{ "32: mov eax,[bx+si]", "678b00", 0, 1, 3, 1, { { R, MODRM, 4 } }, 3, 6, 1, 0, 0, DEF, 0,
	  0, true },
	{ "32: mov ax,[bp+8]", "66678b4608", 0, 1, 5, 1, { { R, MODRM, 2 } }, 5, NONE, 1, 8, 0,
	  DEF, 0, 0, true },
	{ "32: mov eax,[0x1234]", "678b063412", 0, 1, 5, 1, { { R, MODRM, 4 } }, NONE, NONE, 1,
	  0x1234, 0, DEF, 0, 0, true },
	{ "32: mov eax,[si-2]", "678b44fe", 0, 1, 4, 1, { { R, MODRM, 4 } }, 6, NONE, 1, -2, 0,
	  DEF, 0, 0, true },
	{ "32: mov eax,[bp+di+0x1000]", "678b830010", 0, 1, 5, 1, { { R, MODRM, 4 } }, 5, 7, 1,
	  0x1000, 0, DEF, 0, 0, true },
	{ "32: mov al,[moffs16]", "67a03412", 0, 1, 4, 1, { { R, MODRM, 1 } }, NONE, NONE, 1,
	  0x1234, 0, DEF, 0, 0, true },
	{ "32: a16 lodsb", "67ac", 0, 1, 2, 1, { { R, RSI, 1 } }, 0, 0, 0, 0, 0, DEF, 0, 0, true },
	{ "32: a16 rep stosd", "67f3ab", 0, 1, 3, 1, { { W, RDI, 4 } }, 0, 0, 0, 0, 0, DEF, true,
	  0, true },
	/* string instructions: 32-bit addresses in 64-bit code, segment overrides */
	{ "a32 rep movsb", "67f3a4", 1, 1, 3, 2, { { R, RSI, 1 }, { W, RDI, 1 } }, 0, 0, 0, 0, 0,
	  DEF, true, true },
	{ "a32 lodsb", "67ac", 1, 1, 2, 1, { { R, RSI, 1 } }, 0, 0, 0, 0, 0, DEF, 0, true },
	{ "fs lodsq", "6448ad", 1, 1, 3, 1, { { R, RSI, 8 } }, 0, 0, 0, 0, 0, 4 },
	{ "gs movsb", "65a4", 1, 1, 2, 2, { { R, RSI, 1 }, { W, RDI, 1 } }, 0, 0, 0, 0, 0, 5 },
	/* 0F: system forms, loads of selectors, state images */
	{ "sgdt [rax]", "0f0100", 1, 1, 3, 1, { { W, MODRM, 10 } }, AT_RAX },
	{ "sidt [rax]", "0f0108", 1, 1, 3, 1, { { W, MODRM, 10 } }, AT_RAX },
	{ "32: sgdt [eax]", "0f0100", 0, 1, 3, 1, { { W, MODRM, 6 } }, AT_RAX, 0, DEF, 0, true },
	{ "lgdt [rax]", "0f0110", 1, 1, 3, 1, { { R, MODRM, 10 } }, AT_RAX },
	{ "lidt [rax]", "0f0118", 1, 1, 3, 1, { { R, MODRM, 10 } }, AT_RAX },
	{ "smsw [rax]", "0f0120", 1, 1, 3, 1, { { W, MODRM, 2 } }, AT_RAX },
	{ "lmsw [rax]", "0f0130", 1, 1, 3, 1, { { R, MODRM, 2 } }, AT_RAX },
	{ "invlpg [rax] (no data access)", "0f0138", 1, 1, 3, 0 },
	{ "swapgs", "0f01f8", 1, 1, 3, 0 },
	{ "rdtscp", "0f01f9", 1, 1, 3, 0 },
	{ "clzero (64 bytes at rAX)", "0f01fc", 1, 1, 3, 1, { { U, NOADDR, 64, BIG } } },
	{ "sldt [rax]", "0f0000", 1, 1, 3, 1, { { W, MODRM, 2 } }, AT_RAX },
	{ "str [rax]", "0f0008", 1, 1, 3, 1, { { W, MODRM, 2 } }, AT_RAX },
	{ "lldt [rax]", "0f0010", 1, 1, 3, 1, { { R, MODRM, 2 } }, AT_RAX },
	{ "verr [rax]", "0f0020", 1, 1, 3, 1, { { R, MODRM, 2 } }, AT_RAX },
	{ "verw [rbx]", "0f002b", 1, 1, 3, 1, { { R, MODRM, 2 } }, AT_RBX },
	{ "lar eax,[rbx]", "0f0203", 1, 1, 3, 1, { { R, MODRM, 2 } }, AT_RBX },
	{ "lsl rax,[rbx]", "480f0303", 1, 1, 4, 1, { { R, MODRM, 2 } }, AT_RBX },
	{ "xsave [rax] (by XCR0)", "0fae20", 1, 1, 3, 1, { { U, MODRM, 0, BIG } }, AT_RAX },
	{ "xrstor [rax]", "0fae28", 1, 1, 3, 1, { { U, MODRM, 0, BIG } }, AT_RAX },
	{ "xsaveopt [rax]", "0fae30", 1, 1, 3, 1, { { U, MODRM, 0, BIG } }, AT_RAX },
	{ "xsave64 [rax]", "480fae20", 1, 1, 4, 1, { { U, MODRM, 0, BIG } }, AT_RAX },
	{ "xsavec [rax]", "0fc720", 1, 1, 3, 1, { { U, MODRM, 0, BIG } }, AT_RAX },
	{ "xsaves [rax]", "0fc728", 1, 1, 3, 1, { { U, MODRM, 0, BIG } }, AT_RAX },
	{ "xrstors [rax]", "0fc718", 1, 1, 3, 1, { { U, MODRM, 0, BIG } }, AT_RAX },
	{ "fxrstor [rax]", "0fae08", 1, 1, 3, 1, { { U, MODRM, 512, BIG } }, AT_RAX },
	{ "clwb [rax]", "660fae30", 1, 1, 4, 0 },
	{ "clflush [rax]", "0fae38", 1, 1, 3, 0 },
	{ "clflushopt [rax]", "660fae38", 1, 1, 4, 0 },
	{ "prefetchw [rax]", "0f0d08", 1, 1, 3, 0 },
	{ "prefetcht0 [rax]", "0f1808", 1, 1, 3, 0 },
	{ "prefetchnta [rax+0x40]", "0f184040", 1, 1, 4, 0 },
	{ "rdrand eax", "0fc7f0", 1, 1, 3, 0 },
	{ "cmpxchg8b [rdi]", "0fc70f", 1, 1, 3, 1, { { RMW, MODRM, 8 } }, 7, NONE, 1, 0 },
	{ "maskmovdqu xmm1,xmm2 (DS:rDI, masked)", "660ff7ca", 1, 1, 4, 1, { { U, RDI, 16, UND } } },
	{ "maskmovq mm1,mm2", "0ff7ca", 1, 1, 3, 1, { { U, RDI, 8, UND } } },
	{ "setne [rax]", "0f9500", 1, 1, 3, 1, { { W, MODRM, 1 } }, AT_RAX },
	{ "cmovne rcx,[rax] (read whatever the condition)", "480f4508", 1, 1, 4, 1,
	  { { R, MODRM, 8 } }, AT_RAX },
	{ "bswap eax (no memory form)", "0fc8", 1, 1, 2, 0 },
	{ "movnti [rax],ecx", "0fc308", 1, 1, 3, 1, { { W, MODRM, 4 } }, AT_RAX },
	{ "movnti [rax],rcx", "480fc308", 1, 1, 4, 1, { { W, MODRM, 8 } }, AT_RAX },
	{ "lddqu xmm0,[rax]", "f20ff000", 1, 1, 4, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "pfadd mm0,[rax] (3DNow!)", "0f0f009e", 1, 1, 4, 1, { { R, MODRM, 8 } }, AT_RAX },
	/* x87 */
	{ "fld dword [rax]", "d900", 1, 1, 2, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "fld qword [rax]", "dd00", 1, 1, 2, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "fld tword [rax]", "db28", 1, 1, 2, 1, { { R, MODRM, 10 } }, AT_RAX },
	{ "fild word [rax]", "df00", 1, 1, 2, 1, { { R, MODRM, 2 } }, AT_RAX },
	{ "fild dword [rax]", "db00", 1, 1, 2, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "fild qword [rax]", "df28", 1, 1, 2, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "fbld [rax]", "df20", 1, 1, 2, 1, { { R, MODRM, 10 } }, AT_RAX },
	{ "fbstp [rax]", "df30", 1, 1, 2, 1, { { W, MODRM, 10 } }, AT_RAX },
	{ "fst dword [rax]", "d910", 1, 1, 2, 1, { { W, MODRM, 4 } }, AT_RAX },
	{ "fstp dword [rax]", "d918", 1, 1, 2, 1, { { W, MODRM, 4 } }, AT_RAX },
	{ "fst qword [rax]", "dd10", 1, 1, 2, 1, { { W, MODRM, 8 } }, AT_RAX },
	{ "fstp qword [rax]", "dd18", 1, 1, 2, 1, { { W, MODRM, 8 } }, AT_RAX },
	{ "fstp tword [rax]", "db38", 1, 1, 2, 1, { { W, MODRM, 10 } }, AT_RAX },
	{ "fist word [rax]", "df10", 1, 1, 2, 1, { { W, MODRM, 2 } }, AT_RAX },
	{ "fistp word [rax]", "df18", 1, 1, 2, 1, { { W, MODRM, 2 } }, AT_RAX },
	{ "fist dword [rax]", "db10", 1, 1, 2, 1, { { W, MODRM, 4 } }, AT_RAX },
	{ "fistp dword [rax]", "db18", 1, 1, 2, 1, { { W, MODRM, 4 } }, AT_RAX },
	{ "fistp qword [rax]", "df38", 1, 1, 2, 1, { { W, MODRM, 8 } }, AT_RAX },
	{ "fisttp word [rax]", "df08", 1, 1, 2, 1, { { W, MODRM, 2 } }, AT_RAX },
	{ "fisttp dword [rax]", "db08", 1, 1, 2, 1, { { W, MODRM, 4 } }, AT_RAX },
	{ "fisttp qword [rax]", "dd08", 1, 1, 2, 1, { { W, MODRM, 8 } }, AT_RAX },
	{ "fadd dword [rax]", "d800", 1, 1, 2, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "fmul qword [rax]", "dc08", 1, 1, 2, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "fiadd word [rax]", "de00", 1, 1, 2, 1, { { R, MODRM, 2 } }, AT_RAX },
	{ "ficom dword [rax]", "da10", 1, 1, 2, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "fldcw [rax]", "d928", 1, 1, 2, 1, { { R, MODRM, 2 } }, AT_RAX },
	{ "fnstcw [rax]", "d938", 1, 1, 2, 1, { { W, MODRM, 2 } }, AT_RAX },
	{ "fnstsw [rax]", "dd38", 1, 1, 2, 1, { { W, MODRM, 2 } }, AT_RAX },
	{ "fnstsw ax", "dfe0", 1, 1, 2, 0 },
	{ "fadd st,st(1)", "d8c1", 1, 1, 2, 0 },
	{ "fldenv [rax] (28 bytes)", "d920", 1, 1, 2, 1, { { R, MODRM, 28 } }, AT_RAX },
	{ "fnstenv [rax]", "d930", 1, 1, 2, 1, { { W, MODRM, 28 } }, AT_RAX },
	{ "66 fnstenv [rax] (14 bytes)", "66d930", 1, 1, 3, 1, { { W, MODRM, 14 } }, AT_RAX },
	{ "frstor [rax] (108 bytes)", "dd20", 1, 1, 2, 1, { { U, MODRM, 108, BIG } }, AT_RAX },
	{ "fnsave [rax]", "dd30", 1, 1, 2, 1, { { U, MODRM, 108, BIG } }, AT_RAX },
	{ "66 fnsave [rax] (94 bytes)", "66dd30", 1, 1, 3, 1, { { U, MODRM, 94, BIG } }, AT_RAX },
	/* 0F 38 */
	{ "pshufb mm0,[rax]", "0f380000", 1, 1, 4, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "pshufb xmm0,[rax]", "660f380000", 1, 1, 5, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "pabsd xmm0,[rax]", "660f381e00", 1, 1, 5, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "pmovzxbw xmm0,[rax] (8 bytes)", "660f383000", 1, 1, 5, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "pmovzxbd xmm0,[rax] (4)", "660f383100", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "pmovzxbq xmm0,[rax] (2)", "660f383200", 1, 1, 5, 1, { { R, MODRM, 2 } }, AT_RAX },
	{ "pmovzxwd xmm0,[rax] (8)", "660f383300", 1, 1, 5, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "pmovzxwq xmm0,[rax] (4)", "660f383400", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "pmovzxdq xmm0,[rax] (8)", "660f383500", 1, 1, 5, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "pmovsxbq xmm0,[rax] (2)", "660f382200", 1, 1, 5, 1, { { R, MODRM, 2 } }, AT_RAX },
	{ "pmovsxwq xmm0,[rax] (4)", "660f382400", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "0f 38 30 without 66 (no such form)", "0f383000", 1, 1, 4, 1, { { U, MODRM, 0, UND } },
	  AT_RAX },
	{ "ptest xmm0,[rax]", "660f381700", 1, 1, 5, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "pblendvb xmm0,[rax]", "660f381000", 1, 1, 5, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "blendvpd xmm0,[rax]", "660f381500", 1, 1, 5, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "movntdqa xmm0,[rax]", "660f382a00", 1, 1, 5, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "pminud xmm0,[rax]", "660f383f00", 1, 1, 5, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "phminposuw xmm0,[rax]", "660f384100", 1, 1, 5, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "aesenc xmm0,[rax]", "660f38dc00", 1, 1, 5, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "aesimc xmm0,[rax]", "660f38db00", 1, 1, 5, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "sha256rnds2 xmm0,[rax]", "0f38cb00", 1, 1, 4, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "sha1msg1 xmm0,[rax]", "0f38c900", 1, 1, 4, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "movbe eax,[rax]", "0f38f000", 1, 1, 4, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "movbe ax,[rax]", "660f38f000", 1, 1, 5, 1, { { R, MODRM, 2 } }, AT_RAX },
	{ "movbe [rax],rcx", "480f38f108", 1, 1, 5, 1, { { W, MODRM, 8 } }, AT_RAX },
	{ "crc32 eax,byte [rax]", "f20f38f000", 1, 1, 5, 1, { { R, MODRM, 1 } }, AT_RAX },
	{ "crc32 eax,word [rax]", "66f20f38f100", 1, 1, 6, 1, { { R, MODRM, 2 } }, AT_RAX },
	{ "crc32 eax,dword [rax]", "f20f38f100", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "crc32 rax,qword [rax]", "f2480f38f100", 1, 1, 6, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "crc32 rax,byte [rax]", "f2480f38f000", 1, 1, 6, 1, { { R, MODRM, 1 } }, AT_RAX },
	{ "adcx eax,[rax]", "660f38f600", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "adox rax,[rax]", "f3480f38f600", 1, 1, 6, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "movdiri [rax],ecx", "0f38f908", 1, 1, 4, 1, { { W, MODRM, 4 } }, AT_RAX },
	/* 0F 3A */
	{ "palignr xmm0,[rax],8", "660f3a0f0008", 1, 1, 6, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "palignr mm0,[rax],8", "0f3a0f0008", 1, 1, 5, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "pextrb [rax],xmm0,1", "660f3a140001", 1, 1, 6, 1, { { W, MODRM, 1 } }, AT_RAX },
	{ "pextrw [rax],xmm0,1", "660f3a150001", 1, 1, 6, 1, { { W, MODRM, 2 } }, AT_RAX },
	{ "pextrd [rax],xmm0,1", "660f3a160001", 1, 1, 6, 1, { { W, MODRM, 4 } }, AT_RAX },
	{ "pextrq [rax],xmm0,1", "66480f3a160001", 1, 1, 7, 1, { { W, MODRM, 8 } }, AT_RAX },
	{ "extractps [rax],xmm0,1", "660f3a170001", 1, 1, 6, 1, { { W, MODRM, 4 } }, AT_RAX },
	{ "pinsrb xmm0,[rax],1", "660f3a200001", 1, 1, 6, 1, { { R, MODRM, 1 } }, AT_RAX },
	{ "insertps xmm0,[rax],0x10", "660f3a210010", 1, 1, 6, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "pinsrd xmm0,[rax],1", "660f3a220001", 1, 1, 6, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "pinsrq xmm0,[rax],1", "66480f3a220001", 1, 1, 7, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "pinsrw xmm0,[rax],1 (0F C4)", "660fc40001", 1, 1, 5, 1, { { R, MODRM, 2 } }, AT_RAX },
	{ "roundps xmm0,[rax],1", "660f3a080001", 1, 1, 6, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "roundss xmm0,[rax],1", "660f3a0a0001", 1, 1, 6, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "roundsd xmm0,[rax],1", "660f3a0b0001", 1, 1, 6, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "pcmpistri xmm0,[rax],12", "660f3a63000c", 1, 1, 6, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "pcmpestrm xmm0,[rax],0", "660f3a600000", 1, 1, 6, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "pclmulqdq xmm0,[rax],0x11", "660f3a440011", 1, 1, 6, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "aeskeygenassist xmm0,[rax],1", "660f3adf0001", 1, 1, 6, 1, { { R, MODRM, 16 } },
	  AT_RAX },
	{ "sha1rnds4 xmm0,[rax],1", "0f3acc0001", 1, 1, 5, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "0f 3a 63 without 66 (no such form)", "0f3a63000c", 1, 1, 5, 1,
	  { { U, MODRM, 0, UND } }, AT_RAX },
	{ "pshufb xmm0,xmm1 (register)", "660f3800c1", 1, 1, 5, 0 },
	/* VEX map 2 */
	{ "vpbroadcastd ymm0,[rax]", "c4e27d5800", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "vpbroadcastb xmm0,[rax]", "c4e2797800", 1, 1, 5, 1, { { R, MODRM, 1 } }, AT_RAX },
	{ "vpbroadcastw ymm0,[rax]", "c4e27d7900", 1, 1, 5, 1, { { R, MODRM, 2 } }, AT_RAX },
	{ "vpbroadcastq ymm0,[rax]", "c4e27d5900", 1, 1, 5, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "vbroadcasti128 ymm0,[rax]", "c4e27d5a00", 1, 1, 5, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "vbroadcastss ymm0,[rax]", "c4e27d1800", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "vpmovzxbw ymm0,[rax] (16 bytes)", "c4e27d3000", 1, 1, 5, 1, { { R, MODRM, 16 } },
	  AT_RAX },
	{ "vpmovzxbq ymm0,[rax] (4)", "c4e27d3200", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "vpmovzxbq xmm0,[rax] (2)", "c4e2793200", 1, 1, 5, 1, { { R, MODRM, 2 } }, AT_RAX },
	{ "vpshufb ymm0,ymm0,[rax]", "c4e27d0000", 1, 1, 5, 1, { { R, MODRM, 32 } }, AT_RAX },
	{ "vpermd ymm0,ymm0,[rax]", "c4e27d3600", 1, 1, 5, 1, { { R, MODRM, 32 } }, AT_RAX },
	{ "vptest ymm0,[rax]", "c4e27d1700", 1, 1, 5, 1, { { R, MODRM, 32 } }, AT_RAX },
	{ "vpmaskmovd ymm0,ymm0,[rax] (masked)", "c4e27d8c00", 1, 1, 5, 1,
	  { { U, MODRM, 0, UND } }, AT_RAX },
	{ "vmaskmovps [rax],ymm0,ymm0 (masked)", "c4e27d2e00", 1, 1, 5, 1,
	  { { U, MODRM, 0, UND } }, AT_RAX },
	{ "vpgatherdd xmm0,[rax+xmm1*4],xmm2 (VSIB)", "c4e269900488", 1, 1, 6, 1,
	  { { U, NOADDR, 0, UND } } },
	{ "vfmadd231ss xmm0,xmm0,[rax]", "c4e279b900", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "vfmadd231sd xmm0,xmm0,[rax]", "c4e2f9b900", 1, 1, 5, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "vfmadd231ps ymm0,ymm0,[rax]", "c4e27db800", 1, 1, 5, 1, { { R, MODRM, 32 } }, AT_RAX },
	{ "vaesenc xmm0,xmm0,[rax]", "c4e279dc00", 1, 1, 5, 1, { { R, MODRM, 16 } }, AT_RAX },
	{ "andn eax,eax,[rax]", "c4e278f200", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "andn rax,rax,[rax]", "c4e2f8f200", 1, 1, 5, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "bextr eax,[rax],eax", "c4e278f700", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "shlx eax,[rax],eax", "c4e279f700", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "sarx rax,[rax],rax", "c4e2faf700", 1, 1, 5, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "shrx eax,[rax],eax", "c4e27bf700", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "pdep eax,eax,[rax]", "c4e27bf500", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "pext rax,rax,[rax]", "c4e2faf500", 1, 1, 5, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "bzhi eax,[rax],eax", "c4e278f500", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "mulx rax,rax,[rax]", "c4e2fbf600", 1, 1, 5, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "mulx eax,eax,[rax]", "c4e27bf600", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "blsr eax,[rax]", "c4e278f308", 1, 1, 5, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "blsi rax,[rax]", "c4e2f8f318", 1, 1, 5, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "VEX 0f38 f3 /0 (no such form)", "c4e278f300", 1, 1, 5, 1, { { U, MODRM, 0, UND } },
	  AT_RAX },
	{ "movbe as VEX (no such form)", "c4e278f000", 1, 1, 5, 1, { { U, MODRM, 0, UND } },
	  AT_RAX },
	{ "32: andn eax,eax,[eax] (VEX.W ignored)", "c4e2f8f200", 0, 1, 5, 1, { { R, MODRM, 4 } },
	  AT_RAX, 0, DEF, 0, true },
	/* VEX map 3 */
	{ "vpermq ymm0,[rax],1", "c4e3fd000001", 1, 1, 6, 1, { { R, MODRM, 32 } }, AT_RAX },
	{ "vinserti128 ymm0,ymm0,[rax],1", "c4e37d380001", 1, 1, 6, 1, { { R, MODRM, 16 } },
	  AT_RAX },
	{ "vextracti128 [rax],ymm0,1", "c4e37d390001", 1, 1, 6, 1, { { W, MODRM, 16 } }, AT_RAX },
	{ "vpblendvb ymm0,ymm0,[rax],ymm0", "c4e37d4c0000", 1, 1, 6, 1, { { R, MODRM, 32 } },
	  AT_RAX },
	{ "vpextrq [rax],xmm0,1", "c4e3f9160001", 1, 1, 6, 1, { { W, MODRM, 8 } }, AT_RAX },
	{ "vpinsrd xmm0,xmm0,[rax],1", "c4e379220001", 1, 1, 6, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "vperm2i128 ymm0,ymm0,[rax],1", "c4e37d460001", 1, 1, 6, 1, { { R, MODRM, 32 } },
	  AT_RAX },
	{ "vcvtps2ph [rax],ymm0,0", "c4e37d1d0000", 1, 1, 6, 1, { { W, MODRM, 16 } }, AT_RAX },
	{ "vroundsd xmm0,xmm0,[rax],1", "c4e3790b0001", 1, 1, 6, 1, { { R, MODRM, 8 } }, AT_RAX },
	{ "rorx eax,[rax],1", "c4e37bf00001", 1, 1, 6, 1, { { R, MODRM, 4 } }, AT_RAX },
	{ "VEX map 3 ff (no such form)", "c4e37dff0001", 1, 1, 6, 1, { { U, MODRM, 0, UND } },
	  AT_RAX },
};
/* clang-format on */

static unsigned int unhex(const char *hex, u8 *out)
{
	unsigned int n = 0, v;

	for (; hex[0] && hex[1]; hex += 2) {
		ck_assert(sscanf(hex, "%2x", &v) == 1);
		out[n++] = (u8)v;
	}
	return n;
}

START_TEST(decodes_the_vector)
{
	const struct vec *v = &vecs[_i];
	struct svmtrace_memdecode d;
	u8 code[16];
	unsigned int n = unhex(v->hex, code), k;
	bool modrm = false;

	svmtrace_memdecode(code, n, v->long64, &d);
	ck_assert_msg(d.ok == v->ok, "%s: ok %d", v->name, d.ok);
	if (v->ok)
		ck_assert_msg(d.len == v->len, "%s: length %u, expected %u", v->name, d.len,
			      v->len);
	ck_assert_msg(d.nr == v->nr, "%s: %u accesses, expected %u", v->name, d.nr, v->nr);
	for (k = 0; k < v->nr; k++) {
		ck_assert_msg(d.ops[k].kind == v->ops[k].kind, "%s: access %u kind %u, expected %u",
			      v->name, k, d.ops[k].kind, v->ops[k].kind);
		ck_assert_msg(d.ops[k].form == v->ops[k].form, "%s: access %u form %u, expected %u",
			      v->name, k, d.ops[k].form, v->ops[k].form);
		ck_assert_msg(d.ops[k].size == v->ops[k].size, "%s: access %u size %u, expected %u",
			      v->name, k, d.ops[k].size, v->ops[k].size);
		ck_assert_msg(d.ops[k].why == v->ops[k].why, "%s: access %u why %u", v->name, k,
			      d.ops[k].why);
		modrm |= v->ops[k].form == MODRM;
	}
	if (v->ok) {
		ck_assert_msg(d.rep == v->rep, "%s: rep %d", v->name, d.rep);
		ck_assert_msg(d.addr32 == v->addr32, "%s: addr32 %d", v->name, d.addr32);
		ck_assert_msg(d.addr16 == v->addr16, "%s: addr16 %d", v->name, d.addr16);
		ck_assert_msg(d.seg == (v->seg ? v->seg : DEF), "%s: segment %u", v->name, d.seg);
	}
	if (!modrm)
		return;
	ck_assert_msg(d.base == v->base, "%s: base %u, expected %u", v->name, d.base, v->base);
	ck_assert_msg(d.index == v->index, "%s: index %u, expected %u", v->name, d.index, v->index);
	ck_assert_msg(d.scale == v->scale, "%s: scale %u, expected %u", v->name, d.scale, v->scale);
	ck_assert_msg(d.disp == v->disp, "%s: disp %lld, expected %lld", v->name, (long long)d.disp,
		      (long long)v->disp);
	ck_assert_msg(d.riprel == v->riprel, "%s: riprel %d", v->name, d.riprel);
}
END_TEST

/* POP m with rSP as base computes its address after the pop; BT's offset register. */
START_TEST(address_quirks)
{
	struct svmtrace_memdecode d;
	u8 code[16];

	svmtrace_memdecode(code, unhex("8f442408", code), true, &d);
	ck_assert(d.pop_rsp);
	svmtrace_memdecode(code, unhex("8f4008", code), true, &d);
	ck_assert(!d.pop_rsp);
	svmtrace_memdecode(code, unhex("480fa308", code), true, &d);
	ck_assert_uint_eq(d.bt_reg, 1);				     /* rcx */
	svmtrace_memdecode(code, unhex("4c0fab00", code), true, &d); /* bts [rax], r8 */
	ck_assert_uint_eq(d.bt_reg, 8);
	ck_assert_uint_eq(d.ops[0].kind, RMW);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kmod-memdecode");
	TCase *tc = tcase_create("decoder");

	tcase_add_loop_test(tc, decodes_the_vector, 0, sizeof(vecs) / sizeof(vecs[0]));
	tcase_add_test(tc, address_quirks);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
