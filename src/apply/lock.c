/* lock.c - one apply, rollback, repair or tune at a time: the lock under the state directory
 * (waited for up to --lock-timeout), and the trials lock a tune holds from its first trial
 * install to its end, which status and repair read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "adopt.h"
#include "apply.h"
#include "buf.h"
#include "fsutil.h"
#include "hash.h"
#include "hwinfo.h"
#include "import.h"
#include "job.h"
#include "knobs.h"
#include "log.h"
#include "netif.h"
#include "paths.h"
#include "proc.h"
#include "profile.h"
#include "runrec.h"
#include "served.h"
#include "service.h"
#include "smbmod.h"
#include "state.h"
#include "timeutil.h"

int
lock_acquire(struct job *j, char *err, size_t errlen)
{
	char *p = paths_lock(j->o->root);
	int waited = 0, rc = 0;

	if ((rc = fs_mkdir_p(j->sdir, 0755)) < 0) {
		snprintf(err, errlen, "cannot create %s: %s", j->sdir, strerror(-rc));
		goto out;
	}
	j->lockfd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (j->lockfd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot open the lock %s: %s", p, strerror(-rc));
		goto out;
	}
	while (flock(j->lockfd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK) {
			rc = -errno;
			snprintf(err, errlen, "cannot lock %s: %s", p, strerror(-rc));
			goto out;
		}
		if (waited == 0)
			log_info("another nastune apply is running; waiting up to %d s for it",
				 j->o->lock_timeout_s);
		if (waited >= j->o->lock_timeout_s * 10) {
			snprintf(err, errlen,
				 "another nastune apply still holds %s after %d s — "
				 "nothing was changed; run again when it has finished",
				 p, j->o->lock_timeout_s);
			rc = -EBUSY;
			goto out;
		}
		usleep(100000);
		waited++;
	}
out:
	free(p);
	return rc;
}

/* A tune holds this lock from its first trial to apply_end_trials (the process ending lets it
 * go): the journal its trials leave between them, while it lives, is no interrupted apply. */
static int trials_fd = -1;

void
lock_trials_hold(struct job *j)
{
	char *p;

	if (trials_fd >= 0)
		return;
	p = paths_trials_lock(j->o->root);
	trials_fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	/* apply_interrupted holds it shared for an instant; another tune would hold it on. */
	for (int i = 0; trials_fd >= 0 && flock(trials_fd, LOCK_EX | LOCK_NB) < 0; i++) {
		if (i == 20) {
			log_warnx("another process holds %s: a second tune?", p);
			close(trials_fd);
			trials_fd = -1;
		}
		usleep(50000);
	}
	free(p);
}

void
lock_trials_release(void)
{
	if (trials_fd >= 0)
		close(trials_fd);
	trials_fd = -1;
}

bool
lock_held(const char *p)
{
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	bool held = false;

	if (fd >= 0) {
		held = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
		close(fd);
	}
	return held;
}
