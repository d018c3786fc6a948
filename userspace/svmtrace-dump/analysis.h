/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the analysis commands know beside the traces: the symbol table
 * (capture.json, found next to the first trace file, plus ISF files given
 * with --symbols DIR) and the code bytes (code.bin) decoded with Capstone.
 * Both are cached per address, since traces run the same code millions of
 * times.
 */
#ifndef SVMTRACE_DUMP_ANALYSIS_H
#define SVMTRACE_DUMP_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>

#include <svmtrace/analysis.h>

enum { SYMBOLS_AUTO = -1, SYMBOLS_OFF = 0, SYMBOLS_ON = 1 };

struct analysis_options {
	int symbols;	     /* SYMBOLS_*: auto = when capture.json is beside the trace */
	const char *isf_dir; /* --symbols DIR */
	const char *capture; /* --capture FILE, else DIR-OF-TRACE/capture.json */
	bool code;	     /* needs code.bin (--disasm, call detection) */
	const char *code_path; /* --code FILE, else DIR-OF-TRACE/code.bin */
	bool code_optional;    /* no warning when there is none */
	int threads;	       /* SYMBOLS_*: which thread each record ran in (capture.json);
				  auto = when capture.json is beside the trace */
};

/* The getopt_long entries and handling every analysis command shares. */
enum {
	OPT_SYMBOLS = 0x200,
	OPT_NO_SYMBOLS,
	OPT_CAPTURE,
	OPT_CODE,
};
#define ANALYSIS_LONGOPTS                                                                          \
	{ "symbols", optional_argument, NULL, OPT_SYMBOLS },                                       \
		{ "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS },                               \
		{ "capture", required_argument, NULL, OPT_CAPTURE },                               \
	{                                                                                          \
		"code", required_argument, NULL, OPT_CODE                                          \
	}
/*
 * Apply option @c; false when it is not one of them.  "--symbols DIR"
 * takes the next argument when it is a directory (a trace is never one).
 */
bool analysis_opt(int c, int argc, char **argv, struct analysis_options *o);

enum insn_kind { INSN_MISSING, INSN_BAD, INSN_OTHER, INSN_CALL, INSN_RET };

struct insn {
	enum insn_kind kind;
	uint8_t size; /* 0 when missing or undecodable */
	const char *text; /* Intel syntax, or why there is none */
};

struct analysis {
	struct svmtrace_symbols *syms; /* NULL: no symbols */
	struct svmtrace_threads *threads; /* NULL: not asked for, or no capture.json */
	struct svmtrace_code *code;    /* NULL: no code.bin */
	const char *capture_path;
	const char *code_path;
};

/* Load what @o asks for, beside @trace; dies when asked-for files are bad. */
void analysis_open(struct analysis *a, const struct analysis_options *o, const char *trace);
void analysis_close(struct analysis *a);

/*
 * "module!function+0x12" etc. at @p for @va in the address space @cr3
 * (nothing outside every module); returns the end.
 */
char *analysis_put_symbol(struct analysis *a, char *p, uint64_t cr3, uint64_t va);
/* The instruction at @va in @cr3 as it was at @sequence (cached). */
const struct insn *analysis_insn(struct analysis *a, uint64_t cr3, uint64_t va, uint64_t sequence);

/* The thread @r ran in (svmtrace_threads_at()), NULL when unknown. */
const struct svmtrace_thread_info *analysis_thread(const struct analysis *a,
						   const struct svmtrace_record *r);

/* Module index of @va in @cr3 and function start (or module base), -1 outside. */
int analysis_function(struct analysis *a, uint64_t cr3, uint64_t va, uint64_t *function_va,
		      const char **module, const char **function);
/*
 * A function as one counting key: module index (processes may have
 * different modules at one VA) and start, and back to its name
 * ("module!function+0x12", "module (no function known)").
 */
uint64_t analysis_function_key(int module, uint64_t function_va);
void analysis_function_name(struct analysis *a, uint64_t key, char *buf, size_t size);

#endif
