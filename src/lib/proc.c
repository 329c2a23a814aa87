/* proc.c - running other programs (proc.h). Portable: POSIX spawn, with glibc's
 * extensions (setsid, closefrom) where the build has them. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "timeutil.h"
#include "xmalloc.h"

extern char **environ;

int
proc_wait(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static int
cloexec_pipe(int fds[2])
{
	if (pipe(fds) < 0)
		return -errno;
	if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) < 0 || fcntl(fds[1], F_SETFD, FD_CLOEXEC) < 0) {
		int e = -errno;

		close(fds[0]);
		close(fds[1]);
		return e;
	}
	return 0;
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Adds the file actions that set child descriptor target as io says; for a pipe, *ours
 * gets our end and *theirs the child's (closed by the caller once spawned). */
static int
stream_actions(posix_spawn_file_actions_t *fa, int target, enum proc_io io, int fd,
	       const char *path, int *ours, int *theirs)
{
	int fds[2], rc;

	switch (io) {
	case PROC_INHERIT:
		return 0;
	case PROC_NULL:
		return -posix_spawn_file_actions_addopen(fa, target, "/dev/null",
							 target ? O_WRONLY : O_RDONLY, 0);
	case PROC_FILE:
		if (!path)
			return -EINVAL;
		return -posix_spawn_file_actions_addopen(
			fa, target, path, target ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY, 0600);
	case PROC_FD:
		return fd < 0 ? -EBADF : -posix_spawn_file_actions_adddup2(fa, fd, target);
	case PROC_TO_OUT:
		return target == 2 ? -posix_spawn_file_actions_adddup2(fa, 1, 2) : -EINVAL;
	case PROC_PIPE:
		if ((rc = cloexec_pipe(fds)) < 0)
			return rc;
		/* For stdin we write to fds[1]; for stdout and stderr we read fds[0]. */
		*ours = target ? fds[0] : fds[1];
		*theirs = target ? fds[1] : fds[0];
		return -posix_spawn_file_actions_adddup2(fa, *theirs, target);
	}
	return -EINVAL;
}

static int
session_attrs(posix_spawnattr_t *at, const struct proc *p)
{
	short flags = 0;
	sigset_t all, none;

	if (p->new_session) {
#ifdef POSIX_SPAWN_SETSID
		flags |= POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
#else
		return -ENOTSUP;
#endif
		sigfillset(&all);
		sigemptyset(&none);
		posix_spawnattr_setsigdefault(at, &all);
		posix_spawnattr_setsigmask(at, &none);
	}
	return -posix_spawnattr_setflags(at, flags);
}

static int
close_fds_action(posix_spawn_file_actions_t *fa, posix_spawnattr_t *at)
{
#if defined(__GLIBC__) && defined(_GNU_SOURCE) &&                                                  \
	(__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	(void)at;
	return -posix_spawn_file_actions_addclosefrom_np(fa, 3);
#elif defined(POSIX_SPAWN_CLOEXEC_DEFAULT)
	short flags = 0;

	(void)fa;
	posix_spawnattr_getflags(at, &flags);
	return -posix_spawnattr_setflags(at, flags | POSIX_SPAWN_CLOEXEC_DEFAULT);
#else
	(void)fa;
	(void)at;
	return -ENOTSUP;
#endif
}

int
proc_start(struct proc *p)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int in_child = -1, out_child = -1, err_child = -1, rc;

	if (p->in == PROC_PIPE)
		p->in_fd = -1;
	if (p->out == PROC_PIPE)
		p->out_fd = -1;
	if (p->err == PROC_PIPE)
		p->err_fd = -1;
	p->pid = -1;
	p->status = 0;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	if ((rc = stream_actions(&fa, 0, p->in, p->in_fd, p->in_path, &p->in_fd, &in_child)) ||
	    (rc = stream_actions(&fa, 1, p->out, p->out_fd, p->out_path, &p->out_fd, &out_child)) ||
	    (rc = stream_actions(&fa, 2, p->err, p->err_fd, p->err_path, &p->err_fd, &err_child)) ||
	    (rc = session_attrs(&at, p)) || (p->close_fds && (rc = close_fds_action(&fa, &at))))
		goto out;
	if (p->out == PROC_INHERIT)
		fflush(stdout);
	if (p->err == PROC_INHERIT)
		fflush(stderr);
	rc = -posix_spawnp(&p->pid, p->file ? p->file : p->argv[0], &fa, &at, p->argv,
			   p->env ? p->env : environ);
	p->started_ms = timeutil_mono_ms();
out:
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close_fd(&in_child);
	close_fd(&out_child);
	close_fd(&err_child);
	if (rc < 0) {
		p->pid = -1;
		if (p->in == PROC_PIPE)
			close_fd(&p->in_fd);
		if (p->out == PROC_PIPE)
			close_fd(&p->out_fd);
		if (p->err == PROC_PIPE)
			close_fd(&p->err_fd);
	}
	return rc;
}

/* Milliseconds left before p's deadline; -1 when it has none. */
static int
time_left(const struct proc *p)
{
	long long left;

	if (p->timeout_ms <= 0)
		return -1;
	left = p->started_ms + p->timeout_ms - timeutil_mono_ms();
	return left > 0 ? (int)left : 0;
}

static void
proc_kill(struct proc *p)
{
	kill(p->new_session ? -p->pid : p->pid, SIGKILL);
	if (p->new_session) /* its session may be gone already: the leader itself */
		kill(p->pid, SIGKILL);
}

int
proc_finish(struct proc *p)
{
	struct timespec nap = { 0, 1000000 };
	bool killed = false;
	pid_t r;

	if (p->in == PROC_PIPE)
		close_fd(&p->in_fd);
	if (p->out == PROC_PIPE)
		close_fd(&p->out_fd);
	if (p->err == PROC_PIPE)
		close_fd(&p->err_fd);
	if (p->pid <= 0)
		return -ECHILD;
	if (p->timeout_ms <= 0) {
		int rc = proc_wait(p->pid, &p->status);

		if (rc < 0)
			return rc;
	} else {
		/* Polled: a blocking wait cannot time out without a signal of our own. */
		while ((r = waitpid(p->pid, &p->status, WNOHANG)) == 0 ||
		       (r < 0 && errno == EINTR)) {
			if (r == 0 && !killed && time_left(p) == 0) {
				proc_kill(p);
				killed = true;
			}
			nanosleep(&nap, NULL);
			if (nap.tv_nsec < 50000000)
				nap.tv_nsec *= 2;
		}
		if (r < 0)
			return -errno;
	}
	p->pid = -1;
	if (killed)
		return -ETIMEDOUT;
	return WIFEXITED(p->status) ? WEXITSTATUS(p->status) : 128 + WTERMSIG(p->status);
}

int
proc_run(struct proc *p)
{
	int rc = proc_start(p);

	return rc < 0 ? rc : proc_finish(p);
}

int
proc_capture(struct proc *p, size_t max, char **out, size_t *len)
{
	size_t n = 0, cap = 0;
	char *buf = NULL, sink[4096];
	int rc;

	*out = NULL;
	*len = 0;
	p->out = PROC_PIPE;
	if ((rc = proc_start(p)) < 0)
		return rc;
	for (;;) {
		struct pollfd pfd = { .fd = p->out_fd, .events = POLLIN };
		int left = time_left(p);
		ssize_t k;
		char *to = sink;
		size_t room = sizeof(sink);

		if (left == 0 || ((rc = poll(&pfd, 1, left)) == 0))
			break; /* the deadline: proc_finish kills it */
		if (rc < 0 && errno == EINTR)
			continue;
		if (n < max) {
			if (cap - n < 4096 + 1)
				buf = xreallocarray(buf, cap = cap ? cap * 2 : 16384, 1);
			to = buf + n;
			room = cap - n - 1 < max - n ? cap - n - 1 : max - n;
		}
		k = read(p->out_fd, to, room);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (to != sink)
			n += (size_t)k;
	}
	if (!buf)
		buf = xmalloc(1);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return proc_finish(p);
}

int
proc_write_all(int fd, const void *data, size_t len)
{
	const char *d = data;

	while (len > 0) {
		ssize_t w = write(fd, d, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		d += w;
		len -= (size_t)w;
	}
	return 0;
}

int
proc_run_argv(char *const argv[])
{
	struct proc p = PROC_INIT(argv);

	return proc_run(&p);
}
