/* SPDX-License-Identifier: GPL-2.0 */
/* The Windows side of the generator: kernel, processes, loader lists. */
#ifndef SVMTRACE_VMI_GEN_WIN_H
#define SVMTRACE_VMI_GEN_WIN_H

#include "gen.h"

#include <stdio.h>

struct isf;

enum gen_mapping { MAP_4K, MAP_2M, MAP_1G };

/* How the entry page's PTE looks (all but VALID only with MAP_4K). */
enum gen_entry {
	ENTRY_VALID,
	ENTRY_TRANSITION,	/* page on the standby list */
	ENTRY_PROTOTYPE,	/* PTE -> prototype PTE (valid) */
	ENTRY_PROTO_TRANSITION, /* PTE -> prototype PTE (transition) */
	ENTRY_SUBSECTION,	/* PTE -> prototype PTE -> file (not resident) */
	ENTRY_VAD,		/* PTE says "see the VAD" (not resident) */
	ENTRY_PAGEFILE,		/* paged out (not resident) */
	ENTRY_DEMAND_ZERO,	/* never touched (not resident) */
};

struct gen_proc {
	uint64_t pid, ppid;
	const char *name;
	enum gen_mapping map;
	enum gen_entry entry;
	bool system; /* the System process: kernel tables, no PEB */
	bool kva_shadow;
	bool no_ldr;	  /* PEB.Ldr still NULL (just created) */
	bool share_image; /* map the image pages of the previous process */
	const struct gen_pe *pe; /* its image; NULL: gen_win.exe */
};

/* Where one image is mapped, in every process that maps it (Windows
 * randomizes an image's base once per boot, not per process). */
struct gen_image_base {
	const struct gen_pe *pe;
	enum gen_mapping map;
	uint64_t base;
};

/* A thread of the last process made (gen_win_thread). */
struct gen_thread {
	uint64_t pid, tid, teb;
	uint64_t start_address, win32_start_address; /* ETHREAD's */
	bool unlinked; /* not in the thread list yet (created at run time) */
};

struct gen_win {
	struct gen_phys *m;
	struct isf *isf;
	FILE *expect;
	uint64_t seed; /* placement, as KASLR and ASLR would pick it */
	uint64_t rng;
	struct gen_space *kernel;
	uint64_t kbase, head, tail, kpcr, idt;
	uint64_t dll_base;  /* the DLL's base in every process */
	uint64_t dll2_base; /* the second DLL's (dll2_name) */
	struct gen_image_base images[64];
	int nr_images;
	bool idt_shadow; /* IDT[0] -> KiDivideErrorFaultShadow */
	uint64_t pool, proto_slots;
	struct gen_pe exe, dll, dll2;
	const char *dll_name; /* in every loader list; NULL: "helper.dll" */
	const char *dll2_name; /* a second DLL after it (dll2); NULL: none */
	bool relocate;	       /* map images relocated to their base, as Windows does */
	struct gen_space *spaces[1024];
	struct gen_space *shadows[1024];
	int nr_spaces;
	uint64_t links[1024]; /* ActiveProcessLinks of each process, in order */
	int nr_links;
	struct gen_space *last_user; /* for share_image */
	struct gen_vcpu vcpus[2];
	/* What gen_win_process() made last (for builders that run the processes). */
	struct gen_space *last_space, *last_shadow;
	uint64_t last_eprocess, last_links, last_image, last_entry, last_teb, last_peb;
	uint64_t last_thread_head, last_thread_links; /* of gen_win_thread()'s */
	int nr_vcpus;
};

/*
 * Lay out the kernel: ntoskrnl at a random 2 MiB-aligned base (as KASLR
 * does), KPCR, IDT, pools and the processor start block at random places;
 * g->seed chooses them (and g->m's own seed the physical frames).
 */
void gen_win_kernel(struct gen_win *g);

/* A random @align-aligned VA in [lo, hi) whose @pages pages @s has not mapped. */
uint64_t gen_win_place(struct gen_win *g, struct gen_space *s, uint64_t lo, uint64_t hi,
		       uint64_t pages, uint64_t align);
void gen_win_process(struct gen_win *g, const struct gen_proc *p);
/* The profile's offset of @type.@name (dies when the profile has none). */
uint64_t gen_win_field(struct gen_win *g, const char *type, const char *name);
/* An ETHREAD for the last process; returns its VA. */
uint64_t gen_win_thread(struct gen_win *g, const struct gen_thread *t);
/* Break the process list: "cycle", "blink", "unmapped" or "outside". */
void gen_win_corrupt(struct gen_win *g, const char *how);
/*
 * Share the kernel half with every process, give each address space its
 * self-map entry (Windows maps every PML4 into itself at a random
 * kernel-half slot); set up the vCPUs.
 */
void gen_win_finish(struct gen_win *g);

#endif
