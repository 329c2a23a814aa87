/* esc_json.c - esc_term over a stored JSON document (apart from esc.c, which log.c needs
 * in binaries that do not link jansson). */
#include <jansson.h>
#include <stdlib.h>

#include "esc.h"

json_t *
esc_json(const json_t *v)
{
	const char *k;
	json_t *out, *x;
	size_t i;
	char *e;

	if (!v)
		return NULL;
	switch (json_typeof(v)) {
	case JSON_STRING:
		e = esc_term_len(json_string_value(v), json_string_length(v));
		out = json_string(e);
		free(e);
		return out ? out : json_string("");
	case JSON_ARRAY:
		out = json_array();
		json_array_foreach(v, i, x) json_array_append_new(out, esc_json(x));
		return out;
	case JSON_OBJECT:
		out = json_object();
		json_object_foreach((json_t *)v, k, x)
		{
			e = esc_term(k);
			json_object_set_new(out, e, esc_json(x));
			free(e);
		}
		return out;
	default:
		return json_deep_copy(v);
	}
}

char *
esc_render(const json_t *doc, char *(*render)(const json_t *doc, char *err, size_t errlen),
	   char *err, size_t errlen)
{
	json_t *safe = esc_json(doc);
	char *out = render(safe, err, errlen);

	json_decref(safe);
	return out;
}
