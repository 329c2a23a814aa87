/* timeutil.h - the clocks nastune reads: monotonic for durations, UTC for records. Portable
 * (the agent and the bench engine use it). */
#ifndef NASTUNE_TIMEUTIL_H
#define NASTUNE_TIMEUTIL_H

#include <stddef.h>

/* Seconds on the monotonic clock (durations, deadlines; never a date). */
double timeutil_mono(void);
/* Milliseconds on the monotonic clock. */
long long timeutil_mono_ms(void);
/* The current UTC time as ISO 8601 ("2026-12-01T00:42:41Z") into buf (32 bytes suffice). */
void timeutil_now_iso(char *buf, size_t len);

#endif
