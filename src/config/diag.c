/* diag.c - collected configuration diagnostics. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "xmalloc.h"

void
diag_init(struct diag *d)
{
	memset(d, 0, sizeof(*d));
}

void
diag_clear(struct diag *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
	}
	free(d->v);
	diag_init(d);
}

static void
diag_vadd(struct diag *d, int warning, const char *file, int line, const char *fmt, va_list ap)
{
	struct diag_entry *e;
	char *msg;

	if (vasprintf(&msg, fmt, ap) < 0)
		msg = xstrdup("(out of memory formatting a diagnostic)");
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 8;
		d->v = xreallocarray(d->v, d->cap, sizeof(*d->v));
	}
	e = &d->v[d->n++];
	e->file = file ? xstrdup(file) : NULL;
	e->line = line;
	e->warning = warning;
	e->msg = msg;
	if (warning)
		d->warnings++;
	else
		d->errors++;
}

void
diag_error(struct diag *d, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vadd(d, 0, file, line, fmt, ap);
	va_end(ap);
}

void
diag_warning(struct diag *d, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vadd(d, 1, file, line, fmt, ap);
	va_end(ap);
}

void
diag_print(const struct diag *d, FILE *fp)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct diag_entry *e = &d->v[i];

		if (e->file && e->line > 0)
			fprintf(fp, "%s:%d: ", e->file, e->line);
		else if (e->file)
			fprintf(fp, "%s: ", e->file);
		fprintf(fp, "%s%s\n", e->warning ? "warning: " : "", e->msg);
	}
}
