/* log.h - diagnostics to stderr, in one place. */
#ifndef NASTUNE_LOG_H
#define NASTUNE_LOG_H

#include <stdarg.h>

/* Verbosity: -1 quiet (errors only), 0 normal, 1 verbose (-v), 2 debug (-vv). */
void log_init(int verbosity);
int log_verbosity(void);

/* log_warn appends ": strerror(errno)"; log_warnx does not. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print the message and exit(1); for the impossible (out of memory, broken invariants). */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Debug-only crash points for the fault tests: NASTUNE_DEBUG_CRASH=step kills the process
 * with SIGKILL when it reaches that step. Compiled out with -DNDEBUG. */
void debug_crash(const char *step);
/* Debug-only pause points for the race tests: NASTUNE_DEBUG_STOP=point stops the process
 * (SIGSTOP) each time it reaches that point, so that a test changes the world at that very
 * moment and then continues it (SIGCONT). Compiled out with -DNDEBUG. */
void debug_stop(const char *point);

#endif
