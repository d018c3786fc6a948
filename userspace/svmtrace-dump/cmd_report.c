// SPDX-License-Identifier: GPL-2.0
/*
 * report: one self-contained HTML page about a capture, no network
 * resources: the capture summary (capture.json), a timeline of
 * instructions per module, the hottest functions and pages, the threads
 * and processes the instructions ran in (capture.json's "threads"), and
 * the drops and gaps.  The figures are drawn by a small inline script from the
 * data embedded in the page; when it has drawn all of them it sets
 * data-figures on <body> (tests check that in a real browser).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "svmtrace-dump/analysis.h"
#include "svmtrace-dump/commands.h"
#include "svmtrace-dump/counts.h"
#include "svmtrace-dump/files.h"

#define BUCKETS	    120
#define MAX_MODULES 64 /* timeline series; the rest are "other" */

static const char report_usage[] =
	"usage: svmtrace-dump report [--out FILE] [--top N] [symbol options] FILE...\n"
	"Write one self-contained HTML page (no network resources) about the traces of a\n"
	"capture: summary from capture.json, a timeline of instructions per module, the N\n"
	"hottest functions and pages (default 15), instructions per thread, drops and gaps.\n"
	"  --out FILE         write to FILE (default standard output)\n"
	"  --top N            rows in the hottest tables (default 15)\n"
	"  --symbols [DIR]    modules and exports from capture.json beside the trace, ISF\n"
	"                     files from DIR\n"
	"  --no-symbols       no module timeline or function table\n"
	"  --capture FILE     the capture.json to summarise and take modules from\n"
	"  --allow-truncated  exit 0 when a file ends inside a frame\n";

struct report {
	struct analysis an;
	uint64_t first, last; /* sequence range of all files */
	uint64_t timeline[BUCKETS][MAX_MODULES + 2]; /* [0] outside, [k+1] module k */
	struct counts functions, pages;
	uint64_t instructions;
	uint64_t *per_thread; /* [0] no known thread, [k+1] thread k */
	json_object *files; /* per-file summaries */
};

static int bucket_of(const struct report *r, uint64_t seq)
{
	uint64_t span = r->last - r->first + 1;

	return (int)((unsigned __int128)(seq - r->first) * BUCKETS / span);
}

static void add_record(struct report *r, const struct svmtrace_record *rec)
{
	const char *m, *f;
	uint64_t fva;
	int mi = -1, b = bucket_of(r, rec->sequence);

	r->instructions++;
	counts_add(&r->pages, rec->state->rip & ~0xfffull);
	if (r->per_thread) {
		const struct svmtrace_thread_info *th = analysis_thread(&r->an, rec);

		r->per_thread[th ? th - svmtrace_threads_at(r->an.threads, 0) + 1 : 0]++;
	}
	if (r->an.syms) {
		mi = analysis_function(&r->an, rec->state->cr3, rec->state->rip, &fva, &m, &f);
		if (mi >= 0)
			counts_add(&r->functions, analysis_function_key(mi, fva));
	}
	if (mi >= MAX_MODULES)
		mi = MAX_MODULES; /* "other modules" */
	r->timeline[b][mi + 1]++;
}

static json_object *hexstr(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return json_object_new_string(b);
}

static json_object *top_table(struct report *r, struct counts *c, size_t n, bool functions)
{
	struct count_entry *top = calloc(n ? n : 1, sizeof(*top));
	json_object *a = json_object_new_array();
	char name[400];
	size_t got;

	if (!top)
		die("out of memory");
	got = counts_top(c, top, n);
	for (size_t i = 0; i < got; i++) {
		json_object *o = json_object_new_object();
		uint64_t address = top[i].key;

		if (functions) {
			address = (uint64_t)((int64_t)(top[i].key << 16) >>
					     16); /* the function's VA */
			analysis_function_name(&r->an, top[i].key, name, sizeof(name));
		} else if (r->an.syms) {
			size_t len = svmtrace_symbols_format(r->an.syms, 0, top[i].key, name,
							     sizeof(name));

			if (!len)
				snprintf(name, sizeof(name), "(outside every module)");
		} else {
			name[0] = 0;
		}
		json_object_object_add(o, "address", hexstr(address));
		json_object_object_add(o, "name", json_object_new_string(name));
		json_object_object_add(o, "count", json_object_new_int64((int64_t)top[i].count));
		json_object_array_add(a, o);
	}
	free(top);
	return a;
}

static json_object *timeline(struct report *r)
{
	json_object *o = json_object_new_object(), *series = json_object_new_array(),
		    *names = json_object_new_array();
	size_t nm = svmtrace_symbols_module_count(r->an.syms);

	if (nm > MAX_MODULES)
		nm = MAX_MODULES;
	for (size_t k = 0; k <= nm + 1; k++) {
		json_object *s = json_object_new_array();
		uint64_t total = 0;

		for (int b = 0; b < BUCKETS; b++) {
			json_object_array_add(s, json_object_new_int64((int64_t)r->timeline[b][k]));
			total += r->timeline[b][k];
		}
		if (!total) {
			json_object_put(s);
			continue;
		}
		json_object_array_add(series, s);
		json_object_array_add(names,
				      json_object_new_string(
					      k == 0	     ? "(outside every module)" :
					      k == nm + 1 ? "(other modules)" :
							     svmtrace_symbols_module(r->an.syms, k - 1)->name));
	}
	json_object_object_add(o, "first", json_object_new_int64((int64_t)r->first));
	json_object_object_add(o, "last", json_object_new_int64((int64_t)r->last));
	json_object_object_add(o, "names", names);
	json_object_object_add(o, "series", series);
	return o;
}

/* The page: static text, the data as JSON, and the script drawing it. */
static const char page_head[] =
	"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	"style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
	"<title>svmtrace report</title>\n<style>\n"
	"body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}\n"
	"h1{font-size:20px}h2{font-size:16px;margin-top:28px}\n"
	"table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left;"
	"border-bottom:1px solid #ddd}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	"code{font:12px ui-monospace,monospace}.legend "
	"span{display:inline-block;margin-right:14px}\n"
	".sw{display:inline-block;width:10px;height:10px;margin-right:4px}\n"
	".bad{color:#b00}\n</style></head>\n<body>\n<h1>svmtrace report</h1>\n"
	"<div id=\"summary\"></div>\n"
	"<h2>Instructions per module over the trace</h2>\n<div id=\"timeline\"></div>\n"
	"<h2>Hottest functions</h2>\n<div id=\"functions\"></div>\n"
	"<h2>Hottest pages</h2>\n<div id=\"pages\"></div>\n"
	"<h2>Threads</h2>\n<div id=\"threads\"></div>\n"
	"<h2>Drops and gaps</h2>\n<div id=\"gaps\"></div>\n"
	"<script type=\"application/json\" id=\"data\">";

static const char page_tail[] =
	"</script>\n<script>\n"
	"'use strict';\n"
	"const D = JSON.parse(document.getElementById('data').textContent);\n"
	"const NS = 'http://www.w3.org/2000/svg';\n"
	"const COLORS = ['#4e79a7','#f28e2b','#e15759','#76b7b2','#59a14f','#edc948',"
	"'#b07aa1','#ff9da7','#9c755f','#bab0ac'];\n"
	"function el(tag, attrs, text) { const e = document.createElement(tag);\n"
	"  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);\n"
	"  if (text !== undefined) e.textContent = text; return e; }\n"
	"function svg(tag, attrs) { const e = document.createElementNS(NS, tag);\n"
	"  for (const k in attrs) e.setAttribute(k, attrs[k]); return e; }\n"
	"function table(rows, head) { const t = el('table'); const h = el('tr');\n"
	"  head.forEach(c => h.appendChild(el('th', {}, c))); t.appendChild(h);\n"
	"  rows.forEach(r => { const tr = el('tr');\n"
	"    r.forEach((c, i) => tr.appendChild(el('td', typeof c === 'number' ? {class: 'n'} : {},"
	" typeof c === 'number' ? c.toLocaleString('en') : c)));\n"
	"    t.appendChild(tr); }); return t; }\n"
	"let figures = 0;\n"
	"function summary() { const s = D.summary, rows = [];\n"
	"  for (const k in s) rows.push([k, String(s[k])]);\n"
	"  document.getElementById('summary').appendChild(table(rows, ['', ''])); }\n"
	"function timeline() { const T = D.timeline, W = 1000, H = 240, n = T.series.length ? "
	"T.series[0].length : 0;\n"
	"  const box = document.getElementById('timeline');\n"
	"  if (!n) { box.textContent = 'no instructions'; return; }\n"
	"  const tot = new Array(n).fill(0); T.series.forEach(s => s.forEach((v, i) => tot[i] += "
	"v));\n"
	"  const max = Math.max(1, ...tot), bw = W / n;\n"
	"  const g = svg('svg', {width: W, height: H + 20, viewBox: `0 0 ${W} ${H + 20}`, id: "
	"'timeline-svg'});\n"
	"  const base = new Array(n).fill(0);\n"
	"  T.series.forEach((s, k) => s.forEach((v, i) => { if (!v) return;\n"
	"    const h = v / max * H; base[i] += h;\n"
	"    g.appendChild(svg('rect', {x: i * bw, y: H - base[i], width: Math.max(bw - 1, 1),"
	" height: h, fill: COLORS[k % COLORS.length], class: 'bar'})); }));\n"
	"  const lab = svg('text', {x: 0, y: H + 16, 'font-size': 11}); lab.textContent = "
	"`sequence ${T.first} .. ${T.last}, ${n} buckets, tallest ${max.toLocaleString('en')}`;\n"
	"  g.appendChild(lab); box.appendChild(g); const lg = el('div', {class: 'legend'});\n"
	"  T.names.forEach((name, k) => { const sp = el('span'); const sw = el('span', {class: "
	"'sw', style: 'background:' + COLORS[k % COLORS.length]});\n"
	"    sp.appendChild(sw); sp.appendChild(document.createTextNode(name)); "
	"lg.appendChild(sp); "
	"});\n"
	"  box.appendChild(lg); figures++; }\n"
	"function bars(id, rows, label) { const box = document.getElementById(id);\n"
	"  if (!rows.length) { box.textContent = 'none'; figures++; return; }\n"
	"  const W = 1000, rh = 18, max = rows[0].count;\n"
	"  const g = svg('svg', {width: W, height: rows.length * rh, id: id + '-svg'});\n"
	"  rows.forEach((r, i) => { g.appendChild(svg('rect', {x: 420, y: i * rh + 3, width: "
	"Math.max(1, r.count / max * 500), height: rh - 6, fill: '#4e79a7', class: 'bar'}));\n"
	"    const t = svg('text', {x: 0, y: i * rh + 13, 'font-size': 12}); t.textContent = "
	"label(r); g.appendChild(t);\n"
	"    const c = svg('text', {x: 930, y: i * rh + 13, 'font-size': 12}); c.textContent = "
	"r.count.toLocaleString('en'); g.appendChild(c); });\n"
	"  box.appendChild(g); figures++; }\n"
	"function gaps() { const rows = D.files.map(f => [f.file, f.records, f.gaps, f.dropped,"
	" f.truncated ? 'yes' : 'no']);\n"
	"  const t = table(rows, ['file', 'records', 'gaps', 'records dropped', 'truncated']);\n"
	"  document.getElementById('gaps').appendChild(t);\n"
	"  if (D.files.some(f => f.gaps || f.truncated)) t.classList.add('bad'); figures++; }\n"
	"function threads() { const box = document.getElementById('threads');\n"
	"  if (!D.threads.length) { box.textContent = 'capture.json names no threads'; return; }\n"
	"  box.appendChild(table(D.threads.map(t => [t.pid === undefined ? '' : String(t.pid),\n"
	"    t.tid === undefined ? '' : String(t.tid), t.process || '', t.start || '', "
	"t.instructions]),\n"
	"    ['pid', 'tid', 'process', 'start', 'instructions'])); }\n"
	"summary(); timeline();\n"
	"bars('functions', D.functions, r => r.name || r.address);\n"
	"bars('pages', D.pages, r => r.address + (r.name ? '  ' + r.name : ''));\n"
	"threads(); gaps();\n"
	"document.body.setAttribute('data-figures', String(figures));\n"
	"</script>\n</body></html>\n";

/* JSON inside <script>: "</" must not appear in it. */
static void put_json(FILE *f, json_object *o)
{
	const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);

	for (; *t; t++) {
		if (t[0] == '<' && t[1] == '/')
			fputs("<\\/", f), t++;
		else
			fputc(*t, f);
	}
}

/* Instructions per thread: pid, tid, process, start address. */
static json_object *threads_table(struct report *r)
{
	json_object *a = json_object_new_array();
	size_t n = r->per_thread ? svmtrace_threads_count(r->an.threads) : 0;

	for (size_t k = 0; k <= n && r->per_thread; k++) {
		const struct svmtrace_thread_info *th =
			k ? svmtrace_threads_at(r->an.threads, k - 1) : NULL;
		json_object *o;
		char b[24];

		if (!r->per_thread[k] && !th)
			continue;
		o = json_object_new_object();
		if (th) {
			json_object_object_add(o, "pid", json_object_new_int64((int64_t)th->pid));
			json_object_object_add(o, "tid", json_object_new_int64((int64_t)th->tid));
			if (th->process)
				json_object_object_add(o, "process",
						       json_object_new_string(th->process));
			snprintf(b, sizeof(b), "0x%" PRIx64,
				 th->win32_start_address ? th->win32_start_address
							 : th->start_address);
			json_object_object_add(o, "start", json_object_new_string(b));
		} else {
			json_object_object_add(o, "process",
					       json_object_new_string("(no known thread)"));
		}
		json_object_object_add(o, "instructions",
				       json_object_new_int64((int64_t)r->per_thread[k]));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *summary(struct report *r, int nfiles)
{
	json_object *o = json_object_new_object(), *c = NULL, *v;
	char b[64];

	if (r->an.capture_path && (c = json_object_from_file(r->an.capture_path))) {
		json_object *p;

		if (json_object_object_get_ex(c, "process", &p)) {
			if (json_object_object_get_ex(p, "name", &v))
				json_object_object_add(o, "process", json_object_get(v));
			if (json_object_object_get_ex(p, "pid", &v))
				json_object_object_add(o, "pid", json_object_get(v));
		}
		if (json_object_object_get_ex(c, "domain", &p) &&
		    json_object_object_get_ex(p, "name", &v))
			json_object_object_add(o, "domain", json_object_get(v));
		if (json_object_object_get_ex(c, "kernel", &p) &&
		    json_object_object_get_ex(p, "pdb_id", &v))
			json_object_object_add(o, "kernel", json_object_get(v));
		if (json_object_object_get_ex(c, "started", &v))
			json_object_object_add(o, "started", json_object_get(v));
		if (json_object_object_get_ex(c, "end_reason", &v))
			json_object_object_add(o, "end reason", json_object_get(v));
		if (json_object_object_get_ex(c, "code", &p) && p &&
		    json_object_object_get_ex(p, "pages", &v))
			json_object_object_add(o, "code pages saved", json_object_get(v));
		json_object_put(c);
	}
	json_object_object_add(o, "trace files", json_object_new_int(nfiles));
	json_object_object_add(o, "instructions", json_object_new_int64((int64_t)r->instructions));
	snprintf(b, sizeof(b), "%" PRIu64 " .. %" PRIu64, r->first, r->last);
	json_object_object_add(o, "sequence", json_object_new_string(b));
	json_object_object_add(o, "modules",
			       json_object_new_int64((int64_t)svmtrace_symbols_module_count(r->an.syms)));
	return o;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, 'n' },
		{ "allow-truncated", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		ANALYSIS_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct analysis_options ao = { .symbols = SYMBOLS_AUTO, .threads = SYMBOLS_AUTO };
	static struct report r;
	const char *out = NULL;
	bool allow_truncated = false, any = false;
	uint64_t top = 15;
	json_object *doc;
	int c, status = 0;
	FILE *f;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'n':
			top = parse_u64(optarg, "--top");
			if (top > 1000)
				die("--top: expected at most 1000, got %s", optarg);
			break;
		case 't':
			allow_truncated = true;
			break;
		case 'h':
			fputs(report_usage, stdout);
			return 0;
		default:
			if (analysis_opt(c, argc, argv, &ao))
				break;
			fputs(report_usage, stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fputs(report_usage, stderr);
		return 2;
	}
	analysis_open(&r.an, &ao, argv[optind]);
	if (r.an.threads) {
		r.per_thread =
			calloc(svmtrace_threads_count(r.an.threads) + 1, sizeof(*r.per_thread));
		if (!r.per_thread)
			die("out of memory");
	}
	counts_init(&r.functions);
	counts_init(&r.pages);
	r.files = json_object_new_array();
	/* First pass: the sequence range (the timeline's axis). */
	for (int i = optind; i < argc; i++) {
		struct svmtrace_summary s;
		struct svmtrace_error err;
		int ret = svmtrace_read(argv[i], NULL, NULL, &s, &err);

		if (ret && ret != SVMTRACE_E_TRUNCATED)
			die("%s", err.message);
		if (!s.records)
			continue;
		if (!any || s.first_sequence < r.first)
			r.first = s.first_sequence;
		if (!any || s.last_sequence > r.last)
			r.last = s.last_sequence;
		any = true;
	}
	for (int i = optind; i < argc; i++) {
		struct svmtrace_reader *rd = open_trace(argv[i]);
		const struct svmtrace_record *rec;
		const struct svmtrace_summary *s;
		json_object *o = json_object_new_object();
		int ret;

		while ((ret = svmtrace_reader_next(rd, &rec)) > 0)
			if (rec->kind != SVMTRACE_SLOT_SESSION_END)
				add_record(&r, rec);
		s = svmtrace_reader_summary(rd);
		json_object_object_add(o, "file", json_object_new_string(argv[i]));
		json_object_object_add(o, "records", json_object_new_int64((int64_t)s->records));
		json_object_object_add(o, "gaps", json_object_new_int64((int64_t)s->gaps));
		json_object_object_add(o, "dropped", json_object_new_int64((int64_t)s->dropped));
		json_object_object_add(o, "truncated", json_object_new_boolean(s->truncated));
		json_object_array_add(r.files, o);
		status |= finish_trace(rd, ret, allow_truncated);
		svmtrace_reader_close(rd);
	}
	doc = json_object_new_object();
	json_object_object_add(doc, "summary", summary(&r, argc - optind));
	json_object_object_add(doc, "timeline", timeline(&r));
	json_object_object_add(doc, "functions",
			       r.an.syms ? top_table(&r, &r.functions, top, true) :
					   json_object_new_array());
	json_object_object_add(doc, "pages", top_table(&r, &r.pages, top, false));
	json_object_object_add(doc, "threads", threads_table(&r));
	json_object_object_add(doc, "files", r.files);
	f = out ? fopen(out, "w") : stdout;
	if (!f)
		die("%s: cannot create: %s", out, strerror(errno));
	fputs(page_head, f);
	put_json(f, doc);
	fputs(page_tail, f);
	if (fflush(f) || (out && fclose(f)))
		die("%s: write failed: %s", out ? out : "standard output", strerror(errno));
	json_object_put(doc);
	counts_free(&r.functions);
	counts_free(&r.pages);
	free(r.per_thread);
	analysis_close(&r.an);
	return status;
}
