/* proc.c - child processes: spawned, waited for across signals. */
#include <errno.h>
#include <spawn.h>
#include <sys/wait.h>

#include "proc.h"

extern char **environ;

int
proc_wait(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

int
proc_run(char *const argv[])
{
	pid_t pid;
	int st, rc;

	rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (rc != 0)
		return -rc;
	if ((rc = proc_wait(pid, &st)) < 0)
		return rc;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
