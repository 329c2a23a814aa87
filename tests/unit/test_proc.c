/* test_proc.c - the run-command API (proc.h): exit statuses, every redirection, capture,
 * stdin fed through a pipe, a timeout, a new session, no descriptor leaked; and children
 * waited for across signals: the tune and bench signal handlers are installed
 * without SA_RESTART, and a wait they interrupt must not be taken for the child's status
 * (testparm's "pass" came from an unset status that way). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc.h"
#include "timeutil.h"

static volatile sig_atomic_t alarms;

static void
on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* A handler without SA_RESTART fires twice while the child runs: the wait still returns the
 * child's real exit status. */
static void
test_wait_across_signals(void **state)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct itimerval it = { { 0, 50000 }, { 0, 50000 } }, off = { { 0, 0 }, { 0, 0 } };
	pid_t pid;
	int st = 0;

	(void)state;
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		usleep(300000);
		_exit(3);
	}
	setitimer(ITIMER_REAL, &it, NULL);
	assert_int_equal(proc_wait(pid, &st), 0);
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	assert_true(alarms >= 2);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 3);
}

static void
test_wait_no_child(void **state)
{
	int st;

	(void)state;
	assert_int_equal(proc_wait(999999, &st), -ECHILD);
}

/* The number of descriptors open in this process. */
static int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

static char *
slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void
test_run_status(void **state)
{
	char *f[] = { "false", NULL }, *t[] = { "true", NULL };
	char *none[] = { "/nonexistent/nastune-no-such-program", NULL };
	char *sig[] = { "sh", "-c", "kill -TERM $$", NULL };
	char *ex[] = { "sh", "-c", "exit 7", NULL };
	struct proc p = PROC_INIT(ex);
	int fds = open_fds();

	(void)state;
	assert_int_equal(proc_run_argv(t), 0);
	assert_int_equal(proc_run_argv(f), 1);
	assert_int_equal(proc_run_argv(none), -ENOENT);
	assert_int_equal(proc_run_argv(sig), 128 + SIGTERM);
	assert_int_equal(proc_run(&p), 7);
	assert_true(WIFEXITED(p.status));
	assert_int_equal(WEXITSTATUS(p.status), 7);
	/* A program that cannot run leaves no pipe open behind it. */
	p = (struct proc)PROC_INIT(none);
	p.in = p.out = p.err = PROC_PIPE;
	assert_int_equal(proc_start(&p), -ENOENT);
	assert_int_equal(p.in_fd, -1);
	assert_int_equal(p.out_fd, -1);
	assert_int_equal(open_fds(), fds);
	assert_int_equal(proc_finish(&p), -ECHILD);
}

/* Captured output, stdin through a pipe, stderr to a file or with stdout, argv[0] apart
 * from the program, the environment given. */
static void
test_redirections(void **state)
{
	char *echo[] = { "sh", "-c", "echo out; echo err >&2; echo \"$0 $NASTUNE_T\"", NULL };
	char *env[] = { "NASTUNE_T=given", "PATH=/usr/bin:/bin", NULL };
	char *cat[] = { "cat", NULL };
	char path[] = "/tmp/nastune-test-proc.XXXXXX";
	struct proc p = PROC_INIT(echo);
	char *out;
	size_t len;
	int fd, fds = open_fds();

	(void)state;
	assert_true((fd = mkstemp(path)) >= 0);
	close(fd);
	p.err = PROC_FILE;
	p.err_path = path;
	p.env = env;
	p.file = "/bin/sh";
	p.argv =
		(char *[]){ "named", "-c", "echo out; echo err >&2; echo \"$0 $NASTUNE_T\"", NULL };
	assert_int_equal(proc_capture(&p, 1024, &out, &len), 0);
	assert_string_equal(out, "out\nnamed given\n");
	assert_int_equal(len, strlen(out));
	free(out);
	assert_string_equal(slurp(path), "err\n");

	p = (struct proc)PROC_INIT(echo);
	p.err = PROC_TO_OUT;
	assert_int_equal(proc_capture(&p, 1024, &out, &len), 0);
	assert_non_null(strstr(out, "out\nerr\n"));
	free(out);

	/* Capped: the rest is read and dropped, the child is not left blocked. */
	p = (struct proc)PROC_INIT(((char *[]){ "sh", "-c", "yes | head -c 100000", NULL }));
	assert_int_equal(proc_capture(&p, 10, &out, &len), 0);
	assert_int_equal(len, 10);
	assert_string_equal(out, "y\ny\ny\ny\ny\n");
	free(out);

	/* stdin from a pipe we write, stdout to a descriptor we give. */
	assert_true((fd = open(path, O_WRONLY | O_TRUNC)) >= 0);
	p = (struct proc)PROC_INIT(cat);
	p.in = PROC_PIPE;
	p.out = PROC_FD;
	p.out_fd = fd;
	assert_int_equal(proc_start(&p), 0);
	assert_int_equal(proc_write_all(p.in_fd, "fed\n", 4), 0);
	assert_int_equal(proc_finish(&p), 0);
	close(fd);
	assert_string_equal(slurp(path), "fed\n");

	/* stdin from a file, stdout to /dev/null: nothing captured. */
	p = (struct proc)PROC_INIT(cat);
	p.in = PROC_FILE;
	p.in_path = path;
	assert_int_equal(proc_capture(&p, 1024, &out, &len), 0);
	assert_string_equal(out, "fed\n");
	free(out);
	unlink(path);
	assert_int_equal(open_fds(), fds);
}

/* pid exists and is not a zombie. */
static bool
running(pid_t pid)
{
	char path[64], st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return false;
	if (fscanf(f, "%*d %*s %c", &st) != 1)
		st = 0;
	fclose(f);
	return st && st != 'Z';
}

/* A child that hangs is killed at the deadline, its session with it. */
static void
test_timeout(void **state)
{
	char *hang[] = { "sh", "-c", "sleep 30 & echo $!; wait", NULL };
	struct proc p = PROC_INIT(hang);
	long long t0 = timeutil_mono_ms();
	char *out;
	size_t len;
	pid_t bg;

	(void)state;
	p.timeout_ms = 300;
	p.new_session = true;
	assert_int_equal(proc_capture(&p, 64, &out, &len), -ETIMEDOUT);
	assert_true(timeutil_mono_ms() - t0 < 5000);
	assert_true(WIFSIGNALED(p.status));
	bg = (pid_t)atoi(out);
	free(out);
	assert_true(bg > 0);
	/* The session's other member went with it (a zombie until init reaps it). */
	for (int i = 0; i < 100 && running(bg); i++)
		usleep(20000);
	assert_false(running(bg));

	p = (struct proc)PROC_INIT(((char *[]){ "sleep", "30", NULL }));
	p.timeout_ms = 200;
	t0 = timeutil_mono_ms();
	assert_int_equal(proc_run(&p), -ETIMEDOUT);
	assert_true(timeutil_mono_ms() - t0 < 5000);
	/* A child that ends in time is not killed. */
	p = (struct proc)PROC_INIT(((char *[]){ "true", NULL }));
	p.timeout_ms = 5000;
	assert_int_equal(proc_run(&p), 0);
}

/* A new session: its own process group, signals at their defaults even when ours are
 * ignored; close_fds: our descriptors do not reach it. */
static void
test_session(void **state)
{
	char *argv[] = { "sh", "-c",
			 "ps -o sid= -p $$ | tr -d ' '; ls /proc/$$/fd | wc -l; "
			 "grep SigIgn /proc/$$/status",
			 NULL };
	struct proc p = PROC_INIT(argv);
	char *out, sid[32], ign[64];
	size_t len;
	int fd, nfd = 0;

	(void)state;
	signal(SIGINT, SIG_IGN);
	fd = open("/dev/null", O_RDONLY); /* not close-on-exec */
	assert_true(fd > 2);
	p.new_session = true;
	p.close_fds = true;
	assert_int_equal(proc_capture(&p, 1024, &out, &len), 0);
	signal(SIGINT, SIG_DFL);
	close(fd);
	assert_int_equal(sscanf(out, "%31s %d SigIgn: %63s", sid, &nfd, ign), 3);
	free(out);
	assert_int_not_equal(atoi(sid), (int)getsid(0));
	assert_true(nfd <= 4); /* 0, 1, 2 and ls's own directory */
	assert_int_equal(strtoull(ign, NULL, 16) & (1ull << (SIGINT - 1)), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_across_signals),
		cmocka_unit_test(test_wait_no_child),
		cmocka_unit_test(test_run_status),
		cmocka_unit_test(test_redirections),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_session),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
