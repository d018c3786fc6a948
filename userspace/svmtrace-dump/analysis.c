// SPDX-License-Identifier: GPL-2.0
#include "svmtrace-dump/analysis.h"

#include <capstone/capstone.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli.h"
#include "svmtrace-dump/out.h"

#define INSN_CACHE 65536 /* direct-mapped by VA */
#define TEXT_MAX   224

struct insn_slot {
	uint64_t va;
	const struct svmtrace_code_page *version; /* NULL with va 0: empty */
	bool used;
	struct insn insn;
	char text[TEXT_MAX];
};

/* The last function a VA fell in: its address space, range and "module!function". */
static struct {
	bool valid;
	uint64_t cr3;
	uint64_t lo, hi, base; /* [lo, hi): same prefix; offsets from base */
	bool at_start_plain;   /* lo is a function start: print no +0x0 there */
	size_t len;
	char prefix[320];
} last_sym;

static struct insn_slot *insn_cache;
static csh cs;
static bool cs_ready;
static char capture_buf[PATH_MAX], code_buf[PATH_MAX];

static bool is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

bool analysis_opt(int c, int argc, char **argv, struct analysis_options *o)
{
	switch (c) {
	case OPT_SYMBOLS:
		o->symbols = SYMBOLS_ON;
		if (optarg)
			o->isf_dir = optarg;
		else if (optind < argc && is_dir(argv[optind]))
			o->isf_dir = argv[optind++];
		if (o->isf_dir && !is_dir(o->isf_dir))
			die("--symbols %s: not a directory of ISF files", o->isf_dir);
		return true;
	case OPT_NO_SYMBOLS:
		o->symbols = SYMBOLS_OFF;
		return true;
	case OPT_CAPTURE:
		o->capture = optarg;
		if (o->symbols == SYMBOLS_AUTO)
			o->symbols = SYMBOLS_ON;
		return true;
	case OPT_CODE:
		o->code_path = optarg;
		return true;
	}
	return false;
}

static void beside(char *buf, const char *trace, const char *name)
{
	const char *slash = strrchr(trace, '/');

	if (slash)
		snprintf(buf, PATH_MAX, "%.*s/%s", (int)(slash - trace), trace, name);
	else
		snprintf(buf, PATH_MAX, "%s", name);
}

void analysis_open(struct analysis *a, const struct analysis_options *o, const char *trace)
{
	struct svmtrace_error err;
	size_t matched;

	memset(a, 0, sizeof(*a));
	last_sym.valid = false;
	if (o->threads != SYMBOLS_OFF) {
		if (o->capture)
			snprintf(capture_buf, sizeof(capture_buf), "%s", o->capture);
		else
			beside(capture_buf, trace, "capture.json");
		if (access(capture_buf, F_OK) && o->threads == SYMBOLS_ON)
			die("%s: no capture.json there: it says which thread each record ran in "
			    "(--capture FILE names one)",
			    capture_buf);
		if (!access(capture_buf, F_OK) &&
		    svmtrace_threads_load(capture_buf, &a->threads, &err))
			die("%s", err.message);
		if (a->threads && !svmtrace_threads_count(a->threads) &&
		    o->threads == SYMBOLS_AUTO) {
			svmtrace_threads_free(a->threads); /* a capture.json without threads */
			a->threads = NULL;
		}
	}
	if (o->symbols != SYMBOLS_OFF) {
		if (o->capture)
			snprintf(capture_buf, sizeof(capture_buf), "%s", o->capture);
		else
			beside(capture_buf, trace, "capture.json");
		if (access(capture_buf, F_OK)) {
			if (o->symbols == SYMBOLS_ON)
				die("%s: no capture.json there (--capture FILE names one)",
				    capture_buf);
		} else {
			a->syms = svmtrace_symbols_new();
			if (!a->syms)
				die("out of memory");
			if (svmtrace_symbols_load_capture(a->syms, capture_buf, &err))
				die("%s", err.message);
			a->capture_path = capture_buf;
			if (o->isf_dir) {
				if (svmtrace_symbols_load_isf_dir(a->syms, o->isf_dir, &matched,
								  &err))
					die("%s", err.message);
			}
		}
	}
	if (o->code) {
		if (o->code_path)
			snprintf(code_buf, sizeof(code_buf), "%s", o->code_path);
		else
			beside(code_buf, trace, "code.bin");
		if (access(code_buf, F_OK) && o->code_optional && !o->code_path)
			; /* calls and sizes are then guessed from the registers */
		else if (access(code_buf, F_OK))
			warn("%s: no code.bin there: every instruction prints as missing (--code "
			     "FILE names one)",
			     code_buf);
		else if (svmtrace_code_load(code_buf, &a->code, &err))
			die("%s", err.message);
		a->code_path = code_buf;
		if (!insn_cache && !(insn_cache = calloc(INSN_CACHE, sizeof(*insn_cache))))
			die("out of memory");
		if (!cs_ready) {
			if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
				die("capstone: cannot open an x86-64 disassembler");
			cs_option(cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_INTEL);
			cs_ready = true;
		}
	}
}

const struct svmtrace_thread_info *analysis_thread(const struct analysis *a,
						   const struct svmtrace_record *r)
{
	long i;

	if (!a->threads || !r->state_known)
		return NULL;
	i = svmtrace_threads_find(a->threads, r->cpu, r->sequence, r->state->cr3);
	return i < 0 ? NULL : svmtrace_threads_at(a->threads, (size_t)i);
}

void analysis_close(struct analysis *a)
{
	svmtrace_threads_free(a->threads);
	svmtrace_symbols_free(a->syms);
	svmtrace_code_free(a->code);
	memset(a, 0, sizeof(*a));
	if (insn_cache)
		memset(insn_cache, 0, INSN_CACHE * sizeof(*insn_cache));
	last_sym.valid = false;
}

int analysis_function(struct analysis *a, uint64_t cr3, uint64_t va, uint64_t *function_va,
		      const char **module, const char **function)
{
	struct svmtrace_symbol s;

	if (!svmtrace_symbols_lookup(a->syms, cr3, va, &s))
		return -1;
	*function_va = s.function ? s.function_va : svmtrace_symbols_module(a->syms, (size_t)s.module)->base;
	*module = svmtrace_symbols_module(a->syms, (size_t)s.module)->name;
	*function = s.function;
	return s.module;
}

uint64_t analysis_function_key(int module, uint64_t function_va)
{
	return (uint64_t)(module + 1) << 48 | (function_va & 0xffffffffffffull);
}

void analysis_function_name(struct analysis *a, uint64_t key, char *buf, size_t size)
{
	const struct svmtrace_module_info *m;
	struct svmtrace_symbol s;
	uint64_t va = (uint64_t)((int64_t)(key << 16) >> 16); /* canonical again */

	if (!(key >> 48)) {
		snprintf(buf, size, "(outside every module)");
		return;
	}
	m = svmtrace_symbols_module(a->syms, (size_t)(key >> 48) - 1);
	if (svmtrace_symbols_lookup(a->syms, m->cr3[0], va, &s) && s.function)
		svmtrace_symbols_format(a->syms, m->cr3[0], va, buf, size);
	else
		snprintf(buf, size, "%s (no function known)", m->name);
}

char *analysis_put_symbol(struct analysis *a, char *p, uint64_t cr3, uint64_t va)
{
	struct svmtrace_symbol s;

	if (!last_sym.valid || cr3 != last_sym.cr3 || va < last_sym.lo || va >= last_sym.hi) {
		const struct svmtrace_module_info *m;
		int n;

		last_sym.valid = false;
		if (!svmtrace_symbols_lookup(a->syms, cr3, va, &s))
			return p;
		last_sym.cr3 = cr3;
		m = svmtrace_symbols_module(a->syms, (size_t)s.module);
		if (s.function) {
			n = snprintf(last_sym.prefix, sizeof(last_sym.prefix), "%s!%s", m->name,
				     s.function);
			last_sym.lo = s.function_va;
			last_sym.base = s.function_va;
			last_sym.at_start_plain = true;
		} else {
			n = snprintf(last_sym.prefix, sizeof(last_sym.prefix), "%s", m->name);
			last_sym.lo = m->base;
			last_sym.base = m->base;
			last_sym.at_start_plain = false;
		}
		last_sym.hi = s.function_end;
		last_sym.len = n < 0 ? 0 : (size_t)n >= sizeof(last_sym.prefix) ? sizeof(last_sym.prefix) - 1 : (size_t)n;
		last_sym.valid = true;
	}
	memcpy(p, last_sym.prefix, last_sym.len);
	p += last_sym.len;
	if (va == last_sym.base && last_sym.at_start_plain)
		return p;
	*p++ = '+';
	return put_hex(p, va - last_sym.base);
}

static void set_text(struct insn_slot *e, const char *t)
{
	snprintf(e->text, sizeof(e->text), "%s", t);
}

const struct insn *analysis_insn(struct analysis *a, uint64_t cr3, uint64_t va, uint64_t sequence)
{
	struct insn_slot *e = &insn_cache[(va ^ (va >> 16)) & (INSN_CACHE - 1)];
	const struct svmtrace_code_page *version = NULL;
	uint8_t bytes[16];
	size_t got = svmtrace_code_read(a->code, cr3, va, sequence, bytes, sizeof(bytes), &version);
	const uint8_t *code = bytes;
	uint64_t addr = va;
	size_t size = got;
	cs_insn *ci;

	if (e->used && e->va == va && e->version == version)
		return &e->insn;
	e->used = true;
	e->va = va;
	e->version = version;
	e->insn.size = 0;
	e->insn.text = e->text;
	if (!got) {
		e->insn.kind = INSN_MISSING;
		set_text(e, a->code ? "(bytes missing: page not in code.bin)"
				    : "(bytes missing: no code.bin)");
		return &e->insn;
	}
	ci = cs_malloc(cs);
	if (!ci)
		die("out of memory");
	if (!cs_disasm_iter(cs, &code, &size, &addr, ci)) {
		if (got < sizeof(bytes)) {
			e->insn.kind = INSN_MISSING;
			snprintf(e->text, sizeof(e->text),
				 "(bytes missing: %zu known before page 0x%" PRIx64
				 ", which code.bin lacks)",
				 got, (uint64_t)((va + got) & ~(uint64_t)0xfff));
		} else {
			e->insn.kind = INSN_BAD;
			snprintf(e->text, sizeof(e->text), "(undecodable: %02x %02x %02x %02x)",
				 bytes[0], bytes[1], bytes[2], bytes[3]);
		}
		cs_free(ci, 1);
		return &e->insn;
	}
	e->insn.size = (uint8_t)ci->size;
	switch (ci->id) {
	case X86_INS_CALL:
	case X86_INS_LCALL:
		e->insn.kind = INSN_CALL;
		break;
	case X86_INS_RET:
	case X86_INS_RETF:
	case X86_INS_RETFQ:
		e->insn.kind = INSN_RET;
		break;
	default:
		e->insn.kind = INSN_OTHER;
	}
	if (ci->op_str[0])
		snprintf(e->text, sizeof(e->text), "%s %s", ci->mnemonic, ci->op_str);
	else
		snprintf(e->text, sizeof(e->text), "%s", ci->mnemonic);
	cs_free(ci, 1);
	return &e->insn;
}
