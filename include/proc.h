/* proc.h - child processes: spawned, waited for across signals. */
#ifndef NASTUNE_PROC_H
#define NASTUNE_PROC_H

#include <sys/types.h>

/* Waits for the child pid, retrying when a signal handler interrupts the wait (the tune and
 * bench handlers are installed without SA_RESTART, so an interrupted waitpid() must never
 * be read as the child's status). *status gets the wait status. Returns 0 or -errno. */
int proc_wait(pid_t pid, int *status);

/* Runs argv (PATH searched) with this process's stdio and waits for it. Returns its exit
 * status (128 + signal when killed), or -errno when it could not be run or waited for. */
int proc_run(char *const argv[]);

#endif
