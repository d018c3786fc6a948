/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsvmtrace: what a reverse engineer needs next to the traces.
 *
 *   code.bin   the code pages a capture executed, as read from guest memory
 *              right after it entered them (docs/analysis.md gives the bytes);
 *              a page that changed while traced appears again, with the
 *              sequence from which the new bytes hold.
 *   symbols    the module map (capture.json: modules, their export tables
 *              and when each was first seen) and, optionally, volatility3 ISF
 *              symbol files for user modules: a VA becomes
 *              "module!function+0x12" or "module+0x1234".
 *
 * Errors follow trace.h: 0 or a negative enum svmtrace_status, with a
 * struct svmtrace_error naming the file and what was wrong.
 */
#ifndef SVMTRACE_ANALYSIS_H
#define SVMTRACE_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <svmtrace/trace.h>

/* ---- code.bin ---- */

#define SVMTRACE_CODE_MAGIC	   "SVMCODE" /* 8 bytes with the NUL */
#define SVMTRACE_CODE_VERSION	   1
#define SVMTRACE_CODE_PAGE_MAGIC   0x45474150u /* "PAGE" */
#define SVMTRACE_CODE_HEADER_SIZE  16
#define SVMTRACE_CODE_ENTRY_HEADER 48
#define SVMTRACE_CODE_PAGE	   4096

struct svmtrace_code_page {
	uint64_t va;		 /* page-aligned virtual address (cr3 tells whose) */
	uint64_t gpa;		 /* guest-physical page it was read from */
	uint64_t cr3;		 /* the address space it was read through */
	uint64_t first_sequence; /* these bytes hold from this sequence on */
	uint32_t flags;
	const uint8_t *bytes; /* SVMTRACE_CODE_PAGE bytes */
};

struct svmtrace_code_writer;

/* Create @path (truncating it) and write the file header. */
int svmtrace_code_writer_open(const char *path, struct svmtrace_code_writer **w,
			      struct svmtrace_error *err);
/* Append one page version (written through at once: a crash keeps it). */
int svmtrace_code_writer_add(struct svmtrace_code_writer *w, const struct svmtrace_code_page *page,
			     struct svmtrace_error *err);
int svmtrace_code_writer_close(struct svmtrace_code_writer *w, struct svmtrace_error *err);

struct svmtrace_code;

/* Load a whole code.bin (validated entry by entry). */
int svmtrace_code_load(const char *path, struct svmtrace_code **code, struct svmtrace_error *err);
void svmtrace_code_free(struct svmtrace_code *code);
size_t svmtrace_code_count(const struct svmtrace_code *code);
/* Page versions sorted by VA, then first sequence. */
const struct svmtrace_code_page *svmtrace_code_page_at(const struct svmtrace_code *code,
						       size_t index);
/*
 * The bytes at @va in the address space @cr3 as they were at @sequence: the
 * version of its page read through @cr3 (bits 51:12; processes may have
 * different code at one VA) with the highest first sequence <= @sequence,
 * else the earliest one -- of every version when none was read through
 * @cr3 or @cr3 is 0 -- and the next page's for what crosses the page end.
 * Copies up to @len bytes into @buf and returns how many were known (0: the
 * page was never saved).  *@version gets the page version used (may be
 * NULL).
 */
size_t svmtrace_code_read(const struct svmtrace_code *code, uint64_t cr3, uint64_t va,
			  uint64_t sequence, uint8_t *buf, size_t len,
			  const struct svmtrace_code_page **version);

/* ---- symbols ---- */

struct svmtrace_module_info {
	const char *name; /* "ntdll.dll" */
	const char *path;
	uint64_t base;
	uint32_t size;
	uint64_t entry;
	uint32_t timestamp;	   /* PE TimeDateStamp, 0 if unknown */
	const char *pdb_id;	   /* "GUID-AGE", NULL if unknown */
	bool seen_later;	   /* appeared while tracing ... */
	uint64_t first_sequence;   /* ... first seen at this sequence */
	size_t nr_functions;	   /* exports and ISF symbols it knows */
	const char *function_from; /* "exports", "isf:FILE", "exports+isf:FILE" or NULL */
	uint64_t cr3[2];	   /* the DTBs of its process (bits 51:12); 0 0: every process's */
};

struct svmtrace_symbol {
	int module;		/* index, -1: outside every module */
	const char *function;	/* NULL: no function known below the address */
	uint64_t function_va;	/* start of that function */
	uint64_t function_end;	/* the next function's start (or the module end) */
};

struct svmtrace_symbols;

/* An empty table (symbolizes nothing). */
struct svmtrace_symbols *svmtrace_symbols_new(void);
/*
 * The modules and exports of a capture.json (svmtraced(8)): every traced
 * process's ("processes"), each tagged with the process's DTBs, or the one
 * list "modules" of a capture.json without them.
 */
int svmtrace_symbols_load_capture(struct svmtrace_symbols *s, const char *path,
				  struct svmtrace_error *err);
/*
 * volatility3 ISF files in @dir (searched recursively, .json or .json.xz):
 * a module whose pdb_id is GUID-AGE takes the symbols of the file named
 * GUID-AGE.json[.xz] or NAME-GUID-AGE.json[.xz].  Returns how many modules
 * got symbols in *matched.
 */
int svmtrace_symbols_load_isf_dir(struct svmtrace_symbols *s, const char *dir, size_t *matched,
				  struct svmtrace_error *err);
void svmtrace_symbols_free(struct svmtrace_symbols *s);

size_t svmtrace_symbols_module_count(const struct svmtrace_symbols *s);
const struct svmtrace_module_info *svmtrace_symbols_module(const struct svmtrace_symbols *s,
							   size_t index);
/*
 * Where @va lies in the address space @cr3 (0: in any): the modules of the
 * process with that DTB and the untagged ones; false when outside every
 * module.
 */
bool svmtrace_symbols_lookup(const struct svmtrace_symbols *s, uint64_t cr3, uint64_t va,
			     struct svmtrace_symbol *out);
/*
 * "module!function+0x12", "module!function" (at its start), "module+0x1234"
 * (no function below), or "" (outside every module), NUL-terminated into
 * @buf; returns the length.  @size >= 320 always fits.
 */
size_t svmtrace_symbols_format(const struct svmtrace_symbols *s, uint64_t cr3, uint64_t va,
			       char *buf, size_t size);

/* ---- threads ---- */

/* A thread the records ran in (capture.json "threads"). */
struct svmtrace_thread_info {
	uint64_t teb;	     /* its user GS base (Windows x64: its TEB) */
	uint64_t cr3;	     /* the address space, bits 51:12 */
	uint64_t pid, tid;   /* 0: the capture could not tell */
	const char *process; /* image name, NULL when unknown */
	uint64_t start_address, win32_start_address;
	uint64_t first_sequence;
};

struct svmtrace_threads;

/*
 * The threads of a capture.json and which thread each vCPU ran from which
 * sequence on ("threads", "thread_switches"); a capture without them loads
 * as no threads.
 */
int svmtrace_threads_load(const char *path, struct svmtrace_threads **t,
			  struct svmtrace_error *err);
void svmtrace_threads_free(struct svmtrace_threads *t);
size_t svmtrace_threads_count(const struct svmtrace_threads *t);
const struct svmtrace_thread_info *svmtrace_threads_at(const struct svmtrace_threads *t,
						       size_t index);
/*
 * The index of the thread a user-mode record of @vcpu at @sequence under
 * @cr3 ran in, or -1 when the capture does not say.
 */
long svmtrace_threads_find(const struct svmtrace_threads *t, uint32_t vcpu, uint64_t sequence,
			   uint64_t cr3);

#endif /* SVMTRACE_ANALYSIS_H */
