/* log.c - diagnostics to stderr. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esc.h"
#include "log.h"

static int verbosity;

void
log_init(int v)
{
	verbosity = v;
}

int
log_verbosity(void)
{
	return verbosity;
}

static void
vlog(const char *prefix, const char *fmt, va_list ap, int errnum)
{
	char small[512], *msg = small, *safe;
	va_list ap2;
	int n;

	/* Messages carry names and error texts from peers and configs: one line each, with
	 * control characters escaped, so nothing received can forge or hide a line. */
	va_copy(ap2, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= (int)sizeof(small) && (msg = malloc((size_t)n + 1)))
		vsnprintf(msg, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	safe = esc_term(n < 0 ? fmt : msg ? msg : small);
	fprintf(stderr, "nastune: %s%s", prefix ? prefix : "", safe);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
	free(safe);
	if (msg != small)
		free(msg);
}

void
log_warn(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog(NULL, fmt, ap, saved);
	va_end(ap);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(NULL, fmt, ap, 0);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	if (verbosity < 0)
		return;
	va_start(ap, fmt);
	vlog(NULL, fmt, ap, 0);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (verbosity < 1)
		return;
	va_start(ap, fmt);
	vlog("debug: ", fmt, ap, 0);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog("fatal: ", fmt, ap, saved);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("fatal: ", fmt, ap, 0);
	va_end(ap);
	exit(1);
}

void
debug_crash(const char *step)
{
#ifndef NDEBUG
	const char *want = getenv("NASTUNE_DEBUG_CRASH");

	if (want && strcmp(want, step) == 0) {
		fprintf(stderr, "nastune: debug crash at %s\n", step);
		fflush(NULL);
		kill(getpid(), SIGKILL);
	}
#else
	(void)step;
#endif
}

void
debug_stop(const char *point)
{
#ifndef NDEBUG
	const char *want = getenv("NASTUNE_DEBUG_STOP");

	if (want && strcmp(want, point) == 0) {
		fprintf(stderr, "nastune: debug stop at %s (pid %ld)\n", point, (long)getpid());
		fflush(NULL);
		raise(SIGSTOP);
	}
#else
	(void)point;
#endif
}
