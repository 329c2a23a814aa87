/* test_proc.c - children waited for across signals (issue 17): the tune and bench signal
 * handlers are installed without SA_RESTART, and a wait they interrupt must not be taken
 * for the child's status (testparm's "pass" came from an unset status that way). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc.h"

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

static void
test_run_status(void **state)
{
	char *f[] = { "false", NULL }, *t[] = { "true", NULL };
	char *none[] = { "/nonexistent/nastune-no-such-program", NULL };

	(void)state;
	assert_int_equal(proc_run(t), 0);
	assert_int_equal(proc_run(f), 1);
	assert_int_equal(proc_run(none), -ENOENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_across_signals),
		cmocka_unit_test(test_wait_no_child),
		cmocka_unit_test(test_run_status),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
