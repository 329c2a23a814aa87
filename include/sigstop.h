/* sigstop.h - SIGINT and SIGTERM as a request to stop: one handler for every long-running
 * command (bench, tune, agent, mdns publish), so each loop checks one flag and cleans up. */
#ifndef NASTUNE_SIGSTOP_H
#define NASTUNE_SIGSTOP_H

#include <signal.h>

/* The signal that asked this process to stop (SIGINT or SIGTERM); 0 until one arrives. Pass
 * its address where a stop flag is wanted (bench_opts.stop, agent_opts.stop). */
extern volatile sig_atomic_t sigstop_caught;

/* Clears sigstop_caught and catches SIGINT and SIGTERM into it, without SA_RESTART (a
 * blocked read or write returns EINTR, so the loop sees the flag); the previous handlers go
 * into old (NULL: not kept). */
void sigstop_catch(struct sigaction old[2]);
/* Puts back the handlers sigstop_catch kept in old. */
void sigstop_restore(const struct sigaction old[2]);
/* The handler itself (stores sig in sigstop_caught), for a caller installing it by hand. */
void sigstop_handler(int sig);

#endif
