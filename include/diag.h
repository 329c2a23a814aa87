/* diag.h - configuration diagnostics, collected so every error is reported in one run. */
#ifndef NASTUNE_DIAG_H
#define NASTUNE_DIAG_H

#include <stddef.h>
#include <stdio.h>

struct diag_entry {
	char *file;  /* may be NULL when no file applies */
	int line;    /* 0 when unknown */
	int warning; /* 1: a warning, does not fail the check */
	char *msg;   /* "message — fix" */
};

struct diag {
	struct diag_entry *v;
	size_t n;
	size_t cap;
	size_t errors;
	size_t warnings;
};

void diag_init(struct diag *d);
void diag_clear(struct diag *d);
void diag_error(struct diag *d, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void diag_warning(struct diag *d, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Prints "file:line: message" (warnings with "warning: ") one per line, in file order. */
void diag_print(const struct diag *d, FILE *fp);

#endif
