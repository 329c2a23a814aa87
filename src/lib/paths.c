/* paths.c - where nastune keeps its own files (paths.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "log.h"
#include "paths.h"
#include "xmalloc.h"

#define STATE_DIR "/var/lib/nastune"
#define RUN_DIR "/run/nastune"

char *
paths_state_dir(const char *root)
{
	return fs_rooted(root, STATE_DIR);
}

char *
paths_state(const char *root, const char *fmt, ...)
{
	char *dir = paths_state_dir(root), *p;
	size_t dlen = strlen(dir);
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatalx("paths_state: bad format");
	p = xmalloc(dlen + 1 + (size_t)n + 1);
	memcpy(p, dir, dlen);
	p[dlen] = '/';
	va_start(ap, fmt);
	vsnprintf(p + dlen + 1, (size_t)n + 1, fmt, ap);
	va_end(ap);
	free(dir);
	return p;
}

char *
paths_state_db(const char *root)
{
	return paths_state(root, "state.db");
}

char *
paths_lock(const char *root)
{
	return paths_state(root, "lock");
}

char *
paths_trials_lock(const char *root)
{
	return paths_state(root, "trials");
}

char *
paths_pending(const char *root)
{
	return paths_state(root, "pending");
}

char *
paths_generation(const char *root, long id)
{
	return paths_state(root, "generations/%ld", id);
}

char *
paths_agent_key(const char *root)
{
	return paths_state(root, "agent.key");
}

char *
paths_sysctl_orig(void)
{
	return paths_state(NULL, "sysctl.orig");
}

char *
paths_run(const char *root, const char *name)
{
	char *dir = fs_rooted(root, RUN_DIR), *p = xasprintf("%s/%s", dir, name);

	free(dir);
	return p;
}
