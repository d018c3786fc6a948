// SPDX-License-Identifier: GPL-2.0
/*
 * A validating JSON skipper (RFC 8259 grammar) specialised for ISF's
 * top level.  Recursive descent, depth-limited.
 */
#include "lib/vmi/isf_scan.h"
#include "lib/vmi/vmi_error.h"

#include <string.h>

struct scan {
	const char *text, *p, *end;
	const char *name;
	struct svmtrace_error *err;
};

static int bad(struct scan *s, const char *what)
{
	return vmi_fail(s->err, SVMTRACE_E_FORMAT, "%s: byte %zu: %s", s->name,
			(size_t)(s->p - s->text), what);
}

static void ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A string at s->p; *span gets its raw contents (escapes not decoded). */
static int string(struct scan *s, struct isf_span *span)
{
	const char *start;

	if (s->p >= s->end || *s->p != '"')
		return bad(s, "expected a string");
	start = ++s->p;
	while (s->p < s->end && *s->p != '"') {
		unsigned char c = (unsigned char)*s->p;

		if (c < 0x20)
			return bad(s, "control character inside a string");
		if (c == '\\') {
			if (++s->p >= s->end)
				break;
			if (*s->p == 'u') {
				if (s->end - s->p < 5 || !is_hex(s->p[1]) || !is_hex(s->p[2]) ||
				    !is_hex(s->p[3]) || !is_hex(s->p[4]))
					return bad(s, "bad \\u escape");
				s->p += 4;
			} else if (!strchr("\"\\/bfnrt", *s->p)) {
				return bad(s, "bad escape in a string");
			}
		}
		s->p++;
	}
	if (s->p >= s->end)
		return bad(s, "string runs to the end of the file");
	if (span) {
		span->at = start;
		span->len = (size_t)(s->p - start);
	}
	s->p++;
	return 0;
}

static int digits(struct scan *s)
{
	const char *start = s->p;

	while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		s->p++;
	return s->p > start ? 0 : bad(s, "expected a digit");
}

static int number(struct scan *s)
{
	if (s->p < s->end && *s->p == '-')
		s->p++;
	if (s->p < s->end && *s->p == '0')
		s->p++;
	else if (digits(s))
		return s->err->status;
	if (s->p < s->end && *s->p == '.') {
		s->p++;
		if (digits(s))
			return s->err->status;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (digits(s))
			return s->err->status;
	}
	return 0;
}

static int literal(struct scan *s, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n))
		return bad(s, "expected a JSON value");
	s->p += n;
	return 0;
}

static int value(struct scan *s, int depth);

/* Parses one member's value at s->p (the key is already read). */
typedef int (*member_fn)(struct scan *s, int depth, struct isf_span key, void *ctx);

/* An object at s->p; each member's value is parsed by @member (NULL: skipped). */
static int object(struct scan *s, int depth, member_fn member, void *ctx)
{
	int rc;

	s->p++; /* '{' */
	ws(s);
	if (s->p < s->end && *s->p == '}') {
		s->p++;
		return 0;
	}
	for (;;) {
		struct isf_span key;

		ws(s);
		rc = string(s, &key);
		if (rc)
			return rc;
		ws(s);
		if (s->p >= s->end || *s->p != ':')
			return bad(s, "expected ':' after an object key");
		s->p++;
		ws(s);
		rc = member ? member(s, depth + 1, key, ctx) : value(s, depth + 1);
		if (rc)
			return rc;
		ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == '}') {
			s->p++;
			return 0;
		}
		return bad(s, "expected ',' or '}' in an object");
	}
}

static int array(struct scan *s, int depth)
{
	int rc;

	s->p++; /* '[' */
	ws(s);
	if (s->p < s->end && *s->p == ']') {
		s->p++;
		return 0;
	}
	for (;;) {
		ws(s);
		rc = value(s, depth + 1);
		if (rc)
			return rc;
		ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == ']') {
			s->p++;
			return 0;
		}
		return bad(s, "expected ',' or ']' in an array");
	}
}

static int value(struct scan *s, int depth)
{
	if (depth > ISF_SCAN_MAX_DEPTH)
		return bad(s, "JSON nested too deeply");
	if (s->p >= s->end)
		return bad(s, "file ends where a value was expected");
	switch (*s->p) {
	case '{':
		return object(s, depth, NULL, NULL);
	case '[':
		return array(s, depth);
	case '"':
		return string(s, NULL);
	case 't':
		return literal(s, "true");
	case 'f':
		return literal(s, "false");
	case 'n':
		return literal(s, "null");
	default:
		return number(s);
	}
}

static int key_is(struct isf_span key, const char *word)
{
	return key.len == strlen(word) && !memcmp(key.at, word, key.len);
}

struct section {
	const struct isf_scan_ops *ops;
	enum isf_section which;
};

/* A member of "symbols" or "user_types": skip its value, report its span. */
static int indexed_member(struct scan *s, int depth, struct isf_span key, void *ctx)
{
	const struct section *sec = ctx;
	struct isf_span val = { s->p, 0 };
	int rc = value(s, depth);

	if (rc)
		return rc;
	val.len = (size_t)(s->p - val.at);
	return sec->ops->member(sec->ops->ctx, sec->which, key, val, s->err);
}

struct top {
	const struct isf_scan_ops *ops;
	struct isf_span *metadata;
};

/* A top-level member: index "symbols" and "user_types", note "metadata". */
static int top_member(struct scan *s, int depth, struct isf_span key, void *ctx)
{
	const struct top *top = ctx;
	const char *at = s->p;
	struct section sec = { top->ops, key_is(key, "symbols") ? ISF_SYMBOLS : ISF_USER_TYPES };
	int rc;

	if ((key_is(key, "symbols") || key_is(key, "user_types")) && s->p < s->end && *s->p == '{')
		return object(s, depth, indexed_member, &sec);
	rc = value(s, depth);
	if (!rc && key_is(key, "metadata")) {
		top->metadata->at = at;
		top->metadata->len = (size_t)(s->p - at);
	}
	return rc;
}

int isf_scan(const char *text, size_t len, const char *name, const struct isf_scan_ops *ops,
	     struct isf_span *metadata, struct svmtrace_error *err)
{
	struct svmtrace_error local;
	struct scan s = { text, text, text + len, name, err ? err : &local };
	struct top top = { ops, metadata };
	int rc;

	metadata->at = NULL;
	metadata->len = 0;
	ws(&s);
	if (s.p >= s.end || *s.p != '{')
		return bad(&s, "an ISF file is a JSON object");
	rc = object(&s, 0, top_member, &top);
	if (rc)
		return rc;
	ws(&s);
	if (s.p != s.end)
		return bad(&s, "bytes after the top-level object");
	return 0;
}
