// SPDX-License-Identifier: GPL-2.0
#include "lib/analysis/json_get.h"

#include <errno.h>
#include <stdlib.h>

const char *json_member_str(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool num_of(json_object *v, uint64_t *out)
{
	const char *t;
	char *end;

	if (!v)
		return false;
	if (json_object_is_type(v, json_type_int)) {
		*out = json_object_get_uint64(v);
		return true;
	}
	if (!json_object_is_type(v, json_type_string))
		return false;
	t = json_object_get_string(v);
	errno = 0;
	*out = strtoull(t, &end, 0);
	return !errno && end != t && !*end;
}

bool json_member_num(json_object *o, const char *key, uint64_t *out)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && num_of(v, out);
}

bool json_element_num(json_object *a, size_t i, uint64_t *out)
{
	return json_object_is_type(a, json_type_array) && i < json_object_array_length(a) &&
	       num_of(json_object_array_get_idx(a, i), out);
}
