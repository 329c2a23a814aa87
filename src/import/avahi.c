/* avahi.c - the service types an Avahi static service file publishes: each <type> element's
 * text. Enough to name what a file not nastune's keeps advertising next to nastune's own
 * records. Pure. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "xmalloc.h"

void
avahi_service_types(const char *text, size_t len, struct strlist *types)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *open = memmem(p, (size_t)(end - p), "<type>", 6), *close;
		char *t;

		if (!open)
			break;
		open += 6;
		close = memmem(open, (size_t)(end - open), "</type>", 7);
		if (!close)
			break;
		while (open < close && isspace((unsigned char)*open))
			open++;
		while (close > open && isspace((unsigned char)close[-1]))
			close--;
		t = xstrndup(open, (size_t)(close - open));
		if (!strlist_has(types, t))
			strlist_add(types, t);
		free(t);
		p = close + 7;
	}
}
