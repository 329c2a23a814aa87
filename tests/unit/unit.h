/* unit.h - what the unit tests share: cmocka's prelude, a configuration loaded from text, and
 * a crashed run's scratch records. Header-only (static inline): each test is its own program
 * linked with libnastune.a, and uses what it needs. */
#ifndef NASTUNE_TESTS_UNIT_H
#define NASTUNE_TESTS_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "diag.h"
#include "fsutil.h"
#include "model.h"
#include "profile.h"
#include "xmalloc.h"

/* The model of a configuration given as text (presets from the tree's profiles/; the tests
 * run from the top of it); its diagnostics are printed, and it must load. */
static inline struct model *
unit_model(const char *text)
{
	static const char *const dirs[] = { "profiles" };
	struct diag d;
	struct model *m;

	diag_init(&d);
	m = profile_load_string("t.conf", text, dirs, 1, &d);
	diag_print(&d, stderr);
	assert_non_null(m);
	diag_clear(&d);
	return m;
}

/* Every scratch record in the registry reg rewritten to pid, as a crash of process pid
 * leaves them (the records stay: they are the dead process's now). */
static inline void
unit_crash_records(const char *reg, pid_t pid)
{
	char *text, *path, *fixed, *p;
	struct dirent *de;
	DIR *dp;

	assert_non_null(dp = opendir(reg));
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s", reg, de->d_name);
		assert_int_equal(fs_read_file(path, 8192, &text, NULL), 0);
		assert_non_null(p = strstr(text, "\npid "));
		*p = '\0';
		fixed = xasprintf("%s\npid %ld\n%s", text, (long)pid, strchr(p + 1, '\n') + 1);
		assert_int_equal(fs_write_atomic(path, fixed, strlen(fixed), 0600, 0), 0);
		free(fixed);
		free(text);
		free(path);
	}
	closedir(dp);
}

#endif
