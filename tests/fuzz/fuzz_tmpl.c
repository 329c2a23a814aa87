/* fuzz_tmpl.c - libFuzzer harness: any template text parsed and rendered against a view. */
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "render/tmpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct view *v = view_new_obj(), *l, *o;
	struct tmpl *t;
	struct buf b;
	char err[256];

	view_set_str(v, "name", "a<b>&\"'");
	view_set_bool(v, "flag", true);
	l = view_add_list(v, "items");
	o = view_list_add_obj(l);
	view_set_str(o, "name", "x");
	view_list_add_str(l, "y");
	buf_init(&b);
	t = tmpl_parse("fuzz", (const char *)data, size, err, sizeof(err));
	if (t) {
		tmpl_render(t, v, TMPL_ESC_XML, &b, err, sizeof(err));
		tmpl_render(t, v, TMPL_ESC_CONF, &b, err, sizeof(err));
	}
	tmpl_free(t);
	buf_clear(&b);
	view_free(v);
	return 0;
}
