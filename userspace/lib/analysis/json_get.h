/* SPDX-License-Identifier: GPL-2.0 */
/* Reading capture.json's members, shared by symbols.c and threads.c. */
#ifndef SVMTRACE_LIB_JSON_GET_H
#define SVMTRACE_LIB_JSON_GET_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

/* The string member @key of @o, NULL if absent or not a string. */
const char *json_member_str(json_object *o, const char *key);
/* A number given as "0x..." text or as a JSON integer; false if absent or bad. */
bool json_member_num(json_object *o, const char *key, uint64_t *out);
/* The same for element @i of an array. */
bool json_element_num(json_object *a, size_t i, uint64_t *out);

#endif
