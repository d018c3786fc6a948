// SPDX-License-Identifier: GPL-2.0
/*
 * ISF profiles: the text, an index of "symbols" and "user_types" members by
 * name (open addressing, FNV-1a), and json-c objects for the entries that
 * were asked for.
 */
#include "lib/vmi/isf.h"
#include "lib/vmi/isf_scan.h"
#include "lib/vmi/isf_text.h"
#include "lib/vmi/vmi_error.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ISF_MAX_OFFSET (1ULL << 24) /* no Windows structure is 16 MiB long */

struct isf_entry {
	struct isf_span key;
	struct isf_span value;
	json_object *parsed; /* NULL until first asked for */
};

struct isf_table {
	struct isf_entry *slots;
	size_t cap, used; /* cap is a power of two */
};

struct isf {
	char *text;
	size_t len;
	char *name;
	struct isf_table symbols, types;
	char guid[33];
	uint32_t age;
	char database[64];
};

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

static struct isf_entry *table_slot(const struct isf_table *t, const char *key, size_t n)
{
	size_t i;

	if (!t->cap)
		return NULL;
	for (i = hash(key, n) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct isf_entry *e = &t->slots[i];

		if (!e->key.at || (e->key.len == n && !memcmp(e->key.at, key, n)))
			return e;
	}
}

static int table_grow(struct isf_table *t)
{
	struct isf_table bigger = { NULL, t->cap ? t->cap * 2 : 1024, 0 };
	size_t i;

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -1;
	for (i = 0; i < t->cap; i++)
		if (t->slots[i].key.at) {
			*table_slot(&bigger, t->slots[i].key.at, t->slots[i].key.len) = t->slots[i];
			bigger.used++;
		}
	free(t->slots);
	*t = bigger;
	return 0;
}

static int index_member(void *ctx, enum isf_section section, struct isf_span key,
			struct isf_span value, struct svmtrace_error *err)
{
	struct isf *isf = ctx;
	struct isf_table *t = section == ISF_SYMBOLS ? &isf->symbols : &isf->types;
	struct isf_entry *e;

	if ((t->used + 1) * 2 > t->cap && table_grow(t))
		return vmi_fail(err, SVMTRACE_E_NOMEM, "%s: out of memory", isf->name);
	e = table_slot(t, key.at, key.len);
	if (!e->key.at) { /* the first of duplicate keys wins */
		e->key = key;
		e->value = value;
		t->used++;
	}
	return 0;
}

static json_object *parse_span(struct isf_span span)
{
	json_tokener *tok = json_tokener_new_ex(ISF_SCAN_MAX_DEPTH);
	json_object *obj;

	if (!tok)
		return NULL;
	obj = json_tokener_parse_ex(tok, span.at, (int)span.len);
	if (obj && json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return obj;
}

/* The entry's value as a json-c object (parsed once), or NULL. */
static json_object *lookup(struct isf *isf, struct isf_table *t, const char *name)
{
	struct isf_entry *e = table_slot(t, name, strlen(name));

	if (!e || !e->key.at)
		return NULL;
	if (!e->parsed)
		e->parsed = parse_span(e->value);
	return e->parsed;
}

/* An unsigned integer member of @obj, below @max. */
static int get_uint(json_object *obj, const char *key, uint64_t max, uint64_t *out)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_int))
		return -1;
	if (json_object_get_int64(v) < 0 && json_object_get_uint64(v) <= INT64_MAX)
		return -1;
	*out = json_object_get_uint64(v);
	return *out <= max ? 0 : -1;
}

static int parse_metadata(struct isf *isf, struct isf_span span, struct svmtrace_error *err)
{
	json_object *meta = span.len ? parse_span(span) : NULL, *win, *pdb, *v;
	const char *guid, *db;
	uint64_t age;
	size_t i;
	int rc = vmi_fail(err, SVMTRACE_E_FORMAT,
			  "%s: not a Windows kernel ISF (metadata.windows.pdb with GUID, age "
			  "and database expected)",
			  isf->name);

	if (!meta || !json_object_object_get_ex(meta, "windows", &win) ||
	    !json_object_object_get_ex(win, "pdb", &pdb) ||
	    !json_object_object_get_ex(pdb, "GUID", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strlen(guid = json_object_get_string(v)) != 32 ||
	    get_uint(pdb, "age", UINT32_MAX, &age) ||
	    !json_object_object_get_ex(pdb, "database", &v) ||
	    !json_object_is_type(v, json_type_string) || !(db = json_object_get_string(v)))
		goto out;
	for (i = 0; i < 32; i++) {
		char c = guid[i];

		if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f')))
			goto out;
		isf->guid[i] = c >= 'a' ? (char)(c - 'a' + 'A') : c;
	}
	isf->guid[32] = '\0';
	isf->age = (uint32_t)age;
	snprintf(isf->database, sizeof(isf->database), "%s", db);
	rc = 0;
out:
	json_object_put(meta);
	return rc;
}

int isf_load_buffer(const void *text, size_t len, const char *name, struct isf **out,
		    struct svmtrace_error *err)
{
	char *copy;
	size_t copy_len;
	int rc;

	*out = NULL;
	rc = isf_text_decode(text, len, name, &copy, &copy_len, err);
	if (rc)
		return rc;
	{
		struct isf *isf = calloc(1, sizeof(*isf));
		struct isf_scan_ops ops = { index_member, isf };
		struct isf_span meta;

		if (!isf || !(isf->name = strdup(name))) {
			free(isf);
			free(copy);
			return vmi_fail(err, SVMTRACE_E_NOMEM, "%s: out of memory", name);
		}
		isf->text = copy;
		isf->len = copy_len;
		rc = isf_scan(copy, copy_len, name, &ops, &meta, err);
		if (!rc)
			rc = parse_metadata(isf, meta, err);
		if (rc) {
			isf_free(isf);
			return rc;
		}
		*out = isf;
	}
	return 0;
}

int isf_load_file(const char *path, struct isf **out, struct svmtrace_error *err)
{
	char *text;
	size_t len;
	int rc;

	*out = NULL;
	rc = isf_text_read(path, &text, &len, err);
	if (rc)
		return rc;
	rc = isf_load_buffer(text, len, path, out, err);
	free(text);
	return rc;
}

static void table_free(struct isf_table *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		json_object_put(t->slots[i].parsed);
	free(t->slots);
}

void isf_free(struct isf *isf)
{
	if (!isf)
		return;
	table_free(&isf->symbols);
	table_free(&isf->types);
	free(isf->text);
	free(isf->name);
	free(isf);
}

const char *isf_name(const struct isf *isf)
{
	return isf->name;
}

const char *isf_pdb_guid(const struct isf *isf)
{
	return isf->guid;
}

uint32_t isf_pdb_age(const struct isf *isf)
{
	return isf->age;
}

const char *isf_pdb_database(const struct isf *isf)
{
	return isf->database;
}

int isf_symbol(struct isf *isf, const char *name, uint64_t *rva, struct svmtrace_error *err)
{
	json_object *sym = lookup(isf, &isf->symbols, name);

	if (!sym)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "%s: no symbol %s", isf->name, name);
	if (get_uint(sym, "address", UINT64_MAX, rva))
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: symbol %s has no unsigned integer address", isf->name, name);
	return 0;
}

int isf_symbols_each(struct isf *isf, int (*fn)(void *ctx, const char *name, uint64_t rva),
		     void *ctx)
{
	char name[512];
	size_t i;
	int rc;

	for (i = 0; i < isf->symbols.cap; i++) {
		const struct isf_entry *e = &isf->symbols.slots[i];
		uint64_t rva;

		if (!e->key.at || e->key.len >= sizeof(name))
			continue;
		memcpy(name, e->key.at, e->key.len);
		name[e->key.len] = 0;
		if (isf_symbol(isf, name, &rva, NULL))
			continue;
		rc = fn(ctx, name, rva);
		if (rc)
			return rc;
	}
	return 0;
}

int isf_type_size(struct isf *isf, const char *type, uint64_t *size, struct svmtrace_error *err)
{
	json_object *t = lookup(isf, &isf->types, type);

	if (!t)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "%s: no type %s", isf->name, type);
	if (get_uint(t, "size", ISF_MAX_OFFSET, size))
		return vmi_fail(err, SVMTRACE_E_FORMAT, "%s: type %s has no size below 16 MiB",
				isf->name, type);
	return 0;
}

/* The kind-specific part of a field's "type": bitfield bits, array count. */
static int field_type(json_object *type, struct isf_field *out)
{
	json_object *kind;
	uint64_t pos, len;

	if (!json_object_object_get_ex(type, "kind", &kind) ||
	    !json_object_is_type(kind, json_type_string))
		return -1;
	if (!strcmp(json_object_get_string(kind), "bitfield")) {
		if (get_uint(type, "bit_position", 63, &pos) ||
		    get_uint(type, "bit_length", 64, &len) || len == 0 || pos + len > 64)
			return -1;
		out->bit_position = (unsigned int)pos;
		out->bit_length = (unsigned int)len;
	} else if (!strcmp(json_object_get_string(kind), "array")) {
		if (get_uint(type, "count", ISF_MAX_OFFSET, &out->count))
			return -1;
	}
	return 0;
}

int isf_field(struct isf *isf, const char *type, const char *field, struct isf_field *out,
	      struct svmtrace_error *err)
{
	json_object *t = lookup(isf, &isf->types, type), *fields, *f, *ft;

	memset(out, 0, sizeof(*out));
	if (!t)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "%s: no type %s", isf->name, type);
	if (!json_object_object_get_ex(t, "fields", &fields) ||
	    !json_object_object_get_ex(fields, field, &f))
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "%s: no field %s.%s", isf->name, type,
				field);
	if (get_uint(f, "offset", ISF_MAX_OFFSET, &out->offset) ||
	    !json_object_object_get_ex(f, "type", &ft) || field_type(ft, out))
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: field %s.%s has a malformed offset or type", isf->name, type,
				field);
	return 0;
}
