/* sigstop.c - the one stop-request handler. */
#include <stddef.h>

#include "sigstop.h"

volatile sig_atomic_t sigstop_caught;

void
sigstop_handler(int sig)
{
	sigstop_caught = sig;
}

void
sigstop_catch(struct sigaction old[2])
{
	struct sigaction sa = { .sa_handler = sigstop_handler };

	sigemptyset(&sa.sa_mask);
	sigstop_caught = 0;
	sigaction(SIGINT, &sa, old ? &old[0] : NULL);
	sigaction(SIGTERM, &sa, old ? &old[1] : NULL);
}

void
sigstop_restore(const struct sigaction old[2])
{
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);
}
