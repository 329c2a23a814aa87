/* proc.h - running other programs: one API for every child process nastune starts (git's
 * run-command): describe the child in a struct proc, proc_start it, talk to it through the
 * pipes asked for, proc_finish it. Waits survive signal handlers installed without
 * SA_RESTART, and a timeout kills a child that hangs.
 *
 *	char *argv[] = { "testparm", "-s", path, NULL };
 *	struct proc p = PROC_INIT(argv);
 *
 *	p.out = PROC_NULL;
 *	rc = proc_run(&p);	(the exit status, 128 + signal, or -errno)
 */
#ifndef NASTUNE_PROC_H
#define NASTUNE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Where one of the child's standard streams goes. */
enum proc_io {
	PROC_INHERIT = 0, /* ours */
	PROC_NULL,	  /* /dev/null */
	PROC_PIPE,	  /* a pipe to us: in_fd, out_fd or err_fd after proc_start */
	PROC_FD,	  /* the descriptor in in_fd, out_fd or err_fd (left open for us) */
	PROC_FILE,	  /* the file at in_path (read), or out_path/err_path (created or
			   * truncated, mode 0600) */
	PROC_TO_OUT,	  /* err only: wherever stdout goes (2>&1) */
};

struct proc {
	char *const *argv; /* argv[0] is looked up in PATH unless it holds a '/' */
	const char *file;  /* the program to run instead of argv[0] (which it then sees) */
	char *const *env;  /* NULL: our environment */
	enum proc_io in, out, err;
	int in_fd, out_fd, err_fd; /* PROC_FD: given; PROC_PIPE: our end, set by proc_start */
	const char *in_path, *out_path, *err_path; /* PROC_FILE */
	bool new_session; /* setsid, every signal at its default and none blocked: a daemon
			   * started this way is not part of our process group */
	bool close_fds;	  /* close every descriptor above 2 in the child */
	int timeout_ms;	  /* > 0: proc_finish and proc_capture kill the child (its session
			   * with new_session) with SIGKILL once this long has passed since
			   * proc_start, and return -ETIMEDOUT */

	/* Set by proc_start and proc_finish. */
	pid_t pid;
	int status; /* the wait status (waitpid's), once finished */
	long long started_ms;
};

#define PROC_INIT(a)                                                                               \
	{                                                                                          \
		.argv = (a), .in_fd = -1, .out_fd = -1, .err_fd = -1                               \
	}

/* Starts the child p describes (stdout and stderr are flushed first, so what we printed
 * comes before what it prints). Returns 0, or -errno (-ENOENT: no such program) with every
 * pipe closed again. */
int proc_start(struct proc *p);

/* Closes our ends of the pipes still open and waits for the child, across signals, until
 * p->timeout_ms. Returns its exit status, 128 + the signal that killed it, -ETIMEDOUT (it
 * was killed), or -errno; p->status holds the wait status. */
int proc_finish(struct proc *p);

/* proc_start, then proc_finish. */
int proc_run(struct proc *p);
/* Runs argv with our standard streams and waits for it: proc_run of PROC_INIT(argv). */
int proc_run_argv(char *const argv[]);

/* Starts p with p->out = PROC_PIPE, reads what it prints into *out (NUL-terminated,
 * *len bytes without the NUL; the caller frees *out, also on error) until it closes
 * stdout or max bytes (what follows is read and dropped), then finishes it. Returns as
 * proc_finish, or the -errno of proc_start (*out NULL then). */
int proc_capture(struct proc *p, size_t max, char **out, size_t *len);

/* Writes all of data to fd (a child's stdin), retrying short writes and signals. Returns 0
 * or -errno (-EPIPE when the child stopped reading; SIGPIPE must be ignored for that). */
int proc_write_all(int fd, const void *data, size_t len);

/* Waits for the child pid, retrying when a signal handler interrupts the wait (the tune and
 * bench handlers are installed without SA_RESTART, so an interrupted waitpid() must never
 * be read as the child's status). *status gets the wait status. Returns 0 or -errno. For
 * children forked to run our own code; programs go through proc_start. */
int proc_wait(pid_t pid, int *status);

#endif
