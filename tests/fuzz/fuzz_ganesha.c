/* fuzz_ganesha.c - libFuzzer harness for NFS-Ganesha's block syntax as nastune import reads it: any
 * text parses without undefined behaviour or a leak (an include naming itself included), what it
 * serves is derived, and compared with itself it loses nothing. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every include reads the input again: loops and depth limits are exercised. */
static const char *input;
static size_t input_len;

static int
include(void *ctx, const char *path, char **text, size_t *len)
{
	(void)ctx;
	if (strlen(path) % 3 == 0)
		return -ENOENT;
	*text = xstrndup(input, input_len);
	*len = strlen(*text);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	struct imp_served s = { 0 };
	struct buf out;
	struct diag d;

	size = strlen(text);
	input = text;
	input_len = size;
	diag_init(&d);
	buf_init(&out);
	{
		struct ganesha g = { 0 };

		ganesha_parse(&g, "fuzz.conf", text, size, include, NULL, &d);
		imp_served_ganesha(&s, &g);
		ganesha_clear(&g);
	}
	if (imp_served_compare(&s, &s, 0, &out) != 0)
		abort();
	imp_served_clear(&s);
	buf_clear(&out);
	diag_clear(&d);
	free(text);
	return 0;
}
