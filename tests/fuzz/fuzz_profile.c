/* fuzz_profile.c - libFuzzer harness: any text through the configuration loader. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "model.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct diag d;
	struct model *m;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	diag_init(&d);
	m = profile_load_string("fuzz.conf", text, NULL, 0, &d);
	model_free(m);
	diag_clear(&d);
	free(text);
	return 0;
}
