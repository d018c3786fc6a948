/* SPDX-License-Identifier: GPL-2.0 */
/*
 * volatility3 ISF (Intermediate Symbol Format) files, .json or .json.xz.
 *
 * A Windows kernel ISF is megabytes of JSON of which VMI needs a few dozen
 * entries, so loading does not build a JSON tree of the whole file: one pass
 * over the text checks its structure and indexes the members of "symbols"
 * and "user_types" by name; an entry is parsed (with json-c) only when it is
 * asked for, and then cached.
 */
#ifndef SVMTRACE_VMI_ISF_H
#define SVMTRACE_VMI_ISF_H

#include <svmtrace/vmi.h>

struct isf;

/* A member of a user type. */
struct isf_field {
	uint64_t offset;	   /* byte offset in the structure */
	unsigned int bit_position; /* bitfields only */
	unsigned int bit_length;   /* 0: not a bitfield */
	uint64_t count;		   /* arrays: element count, else 0 */
};

/* Load @path (xz-compressed when it starts with the xz magic). */
int isf_load_file(const char *path, struct isf **out, struct svmtrace_error *err);

/* Load from memory; @name is used in messages.  The text is copied. */
int isf_load_buffer(const void *text, size_t len, const char *name, struct isf **out,
		    struct svmtrace_error *err);

void isf_free(struct isf *isf);

/* The file name given at load time. */
const char *isf_name(const struct isf *isf);

/* metadata.windows.pdb: GUID (32 hex digits, upper case), age and name. */
const char *isf_pdb_guid(const struct isf *isf);
uint32_t isf_pdb_age(const struct isf *isf);
const char *isf_pdb_database(const struct isf *isf);

/* symbols.<name>.address; E_NOT_FOUND when absent. */
int isf_symbol(struct isf *isf, const char *name, uint64_t *rva, struct svmtrace_error *err);

/* Every member of "symbols" that has an address, in no particular order;
 * a non-zero return from @fn stops the walk and is returned. */
int isf_symbols_each(struct isf *isf, int (*fn)(void *ctx, const char *name, uint64_t rva),
		     void *ctx);

/* user_types.<type>.size */
int isf_type_size(struct isf *isf, const char *type, uint64_t *size, struct svmtrace_error *err);

/* user_types.<type>.fields.<field>; E_NOT_FOUND when either is absent. */
int isf_field(struct isf *isf, const char *type, const char *field, struct isf_field *out,
	      struct svmtrace_error *err);

#endif
