/* fuzz_ini.c - libFuzzer harness for Samba's ini syntax (smb.conf, afp.conf) as nastune import
 * reads it: any text parses without undefined behaviour or a leak (an include naming itself
 * included), what it serves is derived, and compared with itself it loses nothing. */
#include <ctype.h>
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

/* A name as Samba matches it holds neither blanks nor upper case. */
static void
check_norm(const char *n)
{
	for (; *n; n++)
		if (isspace((unsigned char)*n) || isupper((unsigned char)*n))
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	struct imp_served s = { 0 };
	struct buf out;
	struct diag d;
	size_t i, k;

	size = strlen(text);
	input = text;
	input_len = size;
	diag_init(&d);
	buf_init(&out);
	{
		struct ini ini = { 0 };

		ini_parse(&ini, "fuzz.conf", text, size, include, NULL, &d);
		imp_served_smb(&s, &ini);
		imp_served_afp(&s, &ini);
		for (i = 0; i < ini.n; i++)
			for (k = 0; k < ini.s[i].n; k++)
				check_norm(ini.s[i].v[k].norm);
		ini_clear(&ini);
	}
	if (imp_served_compare(&s, &s, 0, &out) != 0)
		abort();
	imp_served_clear(&s);
	buf_clear(&out);
	diag_clear(&d);
	free(text);
	return 0;
}
