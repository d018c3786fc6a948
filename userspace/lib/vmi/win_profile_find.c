// SPDX-License-Identifier: GPL-2.0
/*
 * Choosing a profile for a kernel: from one file (which must match) or from
 * a directory tree holding many, found by the "GUID-AGE" in their names the
 * way volatility3's symbol packs and JPCERTCC's tables name them.
 */
#include "lib/vmi/win_profile.h"
#include "lib/vmi/vmi_error.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define FIND_MAX_DEPTH 8

struct candidates {
	char **paths;
	size_t count, cap;
};

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcasecmp(s + n - m, suffix);
}

static int is_isf_name(const char *name)
{
	return has_suffix(name, ".json") || has_suffix(name, ".json.xz");
}

/* "GUID-AGE.json[.xz]" or "anything-GUID-AGE.json[.xz]", any case. */
static int name_matches(const char *name, const char *id)
{
	size_t n = strlen(id);
	const char *at;

	for (at = name; (at = strcasestr(at, id)); at++)
		if ((at == name || at[-1] == '-' || at[-1] == '_') &&
		    (!strcasecmp(at + n, ".json") || !strcasecmp(at + n, ".json.xz")))
			return 1;
	return 0;
}

static int add(struct candidates *c, const char *path)
{
	if (c->count == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		char **p = realloc(c->paths, cap * sizeof(*p));

		if (!p)
			return -1;
		c->paths = p;
		c->cap = cap;
	}
	c->paths[c->count] = strdup(path);
	if (!c->paths[c->count])
		return -1;
	c->count++;
	return 0;
}

/* Collect ISF files under @dir into @named (name has @id) or @others. */
static int collect(const char *dir, const char *id, int depth, struct candidates *named,
		   struct candidates *others)
{
	struct dirent *d;
	DIR *dh;
	int rc = 0;

	if (depth > FIND_MAX_DEPTH || !(dh = opendir(dir)))
		return 0;
	while (!rc && (d = readdir(dh))) {
		char path[PATH_MAX];
		struct stat st;

		if (d->d_name[0] == '.' ||
		    snprintf(path, sizeof(path), "%s/%s", dir, d->d_name) >= (int)sizeof(path) ||
		    stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			rc = collect(path, id, depth + 1, named, others);
		else if (S_ISREG(st.st_mode) && is_isf_name(d->d_name))
			rc = add(name_matches(d->d_name, id) ? named : others, path);
	}
	closedir(dh);
	return rc;
}

static void candidates_free(struct candidates *c)
{
	size_t i;

	for (i = 0; i < c->count; i++)
		free(c->paths[i]);
	free(c->paths);
}

/* Load @path; keep it in *out if it is for @id. */
static int try_file(const char *path, const char *id, struct svmtrace_vmi_profile **out,
		    struct svmtrace_error *err)
{
	struct svmtrace_vmi_profile *p;
	int rc = svmtrace_vmi_profile_load(path, &p, err);

	if (rc)
		return rc;
	if (strcasecmp(p->id, id)) {
		rc = vmi_fail(err, SVMTRACE_E_MISMATCH,
			      "%s: profile is for kernel PDB GUID %s age %u, but the kernel in "
			      "memory has PDB GUID-age %s",
			      path, p->guid, p->age, id);
		svmtrace_vmi_profile_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

static int find_in(const struct candidates *c, const char *id, struct svmtrace_vmi_profile **out,
		   struct svmtrace_error *err)
{
	size_t i;

	for (i = 0; i < c->count; i++)
		if (!try_file(c->paths[i], id, out, err))
			return 0;
	return SVMTRACE_E_NOT_FOUND;
}

int svmtrace_vmi_profile_find(const char *path, const char *id, struct svmtrace_vmi_profile **out,
			      struct svmtrace_error *err)
{
	struct candidates named = { 0 }, others = { 0 };
	struct stat st;
	int rc;

	*out = NULL;
	if (stat(path, &st))
		return vmi_fail(err, SVMTRACE_E_IO, "profiles %s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return try_file(path, id, out, err);
	if (collect(path, id, 0, &named, &others)) {
		rc = vmi_fail(err, SVMTRACE_E_NOMEM, "profiles %s: out of memory", path);
	} else {
		rc = find_in(&named, id, out, err);
		if (rc)
			rc = find_in(&others, id, out, err);
		if (rc)
			rc = vmi_fail(err, SVMTRACE_E_NOT_FOUND,
				      "no profile for kernel PDB GUID-age %s in %s (%zu ISF files "
				      "looked at; get ntkrnlmp.pdb/%s.json.xz from a volatility3 "
				      "symbol pack)",
				      id, path, named.count + others.count, id);
	}
	candidates_free(&named);
	candidates_free(&others);
	return rc;
}
