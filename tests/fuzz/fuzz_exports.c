/* fuzz_exports.c - libFuzzer harness for the kernel's exports(5) as nastune import reads it: any
 * text parses without undefined behaviour or a leak (an include naming itself included), what it
 * serves is derived, and compared with itself it loses nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	struct imp_served s = { 0 };
	struct buf out;
	struct diag d;
	size_t i;

	size = strlen(text);
	diag_init(&d);
	buf_init(&out);
	{
		struct exports e = { 0 };

		exports_parse(&e, "fuzz.exports", text, size, &d);
		imp_served_exports(&s, &e);
		for (i = 0; i < e.n; i++)
			if (e.v[i].path[0] != '/' || e.v[i].nc == 0)
				abort();
		exports_clear(&e);
	}
	if (imp_served_compare(&s, &s, 0, &out) != 0)
		abort();
	imp_served_clear(&s);
	buf_clear(&out);
	diag_clear(&d);
	free(text);
	return 0;
}
