/* restart.c - which services a file change needs restarted rather than reloaded: decided by
 * comparing the installed file with its replacement (knob_restart_changes), so apply, undo,
 * rollback and journal recovery decide alike with no state kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void
restart_note(struct job *j, const char *path, const char *cur, size_t curlen, const char *next,
	     size_t nextlen)
{
	enum svc s = gen_svc_of_path(path);
	char params[256], *why = j->restart_why[s];
	size_t used = strlen(why);

	if (!next)
		return;
	if (knob_restart_changes(path, cur, curlen, next, nextlen, params, sizeof(params)) == 0) {
		if (strcmp(path, "/etc/ganesha/ganesha.conf") != 0 || !cur ||
		    !ganesha_ids_moved(cur, curlen, next, nextlen))
			return;
		snprintf(params, sizeof(params), "Export_Id");
	}
	j->restart_mask |= 1u << s;
	if (!strstr(why, params))
		snprintf(why + used, sizeof(j->restart_why[s]) - used, "%s%s", used ? ", " : "",
			 params);
}

char *
restart_read_installed(const struct job *j, const char *path, size_t *len)
{
	char *abs = fs_rooted(j->o->root, path), *data = NULL;

	*len = 0;
	if (fs_read_file(abs, FILE_MAX, &data, len) < 0)
		data = NULL;
	free(abs);
	return data;
}

int
restart_restore_noting(struct job *j, const struct generation *g, const char *journal,
		       const char *path)
{
	size_t blen, alen;
	char *before = restart_read_installed(j, path, &blen), *after;
	int rc = journal ? journal_restore_kept(j, journal, path) : 1;

	if (rc == 1)
		rc = gen_restore_file(j, g, path);

	if (rc == 0) {
		after = restart_read_installed(j, path, &alen);
		restart_note(j, path, before, blen, after, alen);
		free(after);
	}
	free(before);
	return rc;
}
