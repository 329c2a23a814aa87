/* cmd_knobs.c - knobs: the knob table with this configuration's values, and what tune may try. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "knobs.h"
#include "model.h"

static json_t *
cmd_knobs_json(const struct model *m, const struct knob *k)
{
	const struct knob_setting *s = &m->knobs[k->id];
	enum knob_src src = knob_source(m, k->id);
	json_t *vals = json_array(), *tries = json_array(), *unsafe = json_array(),
	       *wl = json_array(), *visible = json_array();
	char why[512], first_no[512] = "", at[512] = "";
	bool any = false;
	size_t i;
	unsigned b;

	for (i = 0; k->candidates[i]; i++) {
		bool ok = knob_allowed(m, k, k->candidates[i], why, sizeof(why));

		if (!ok && !first_no[0])
			snprintf(first_no, sizeof(first_no), "%s", why);
		any |= ok;
		json_array_append_new(vals, json_string(k->candidates[i]));
		json_array_append_new(tries,
				      json_pack("{s:s, s:b, s:s?}", "value", k->candidates[i],
						"allowed", ok, "reason", ok ? NULL : why));
	}
	for (i = 0; k->unsafe && k->unsafe[i]; i++)
		json_array_append_new(unsafe, json_string(k->unsafe[i]));
	for (b = 1; b < (1u << WL_COUNT); b <<= 1)
		if (k->workloads & b)
			json_array_append_new(wl, json_string(knob_workload_name(b)));
	if (src != KNOB_UNSET && s->loc.file)
		snprintf(at, sizeof(at), "%s:%d", s->loc.file, s->loc.line);
	/* tune.reason: why tune leaves the knob alone, when it may try none of its values. */
	for (i = 0; k->candidates[i]; i++)
		if (knob_value_visible(k, k->candidates[i]))
			json_array_append_new(visible, json_string(k->candidates[i]));
	return json_pack("{s:s, s:s?, s:s, s:s, s:s?, s:s?, s:s, s:s?, s:s?, s:o, s:s, s:o, "
			 "s:o, s:s?, s:s, s:o, s:s, s:{s:b, s:s?, s:o}}",
			 "name", k->name, "protocol", model_proto_name(k->proto), "parameter",
			 k->param, "where", k->where, "file", knob_place_file(k->place), "value",
			 knob_value(m, k->id), "source", knob_src_name(src), "set_at",
			 at[0] ? at : NULL, "default", k->dflt, "candidates", vals, "safety",
			 knob_safety_name(k->safety), "unsafe_values", unsafe, "visible_values",
			 visible, "changes", k->safety == KNOB_SEMANTICS ? k->changes : NULL,
			 "effect", knob_effect_name(k->effect), "workloads", wl, "why", k->why,
			 "tune", "allowed", any, "reason", any ? NULL : first_no, "candidates",
			 tries);
}

static void
cmd_knobs_text(const struct model *m, const struct knob *k)
{
	const struct knob_setting *s = &m->knobs[k->id];
	enum knob_src src = knob_source(m, k->id);
	char why[512], first_no[512] = "";
	const char *no_value = NULL;
	size_t i, nok = 0;
	unsigned b;

	printf("%s  [%s] %s: %s\n", k->name,
	       model_proto_name(k->proto) ? model_proto_name(k->proto) : "host", k->where,
	       k->param);
	if (src == KNOB_UNSET)
		printf("  value:      unset (the daemon's default%s%s)\n", k->dflt ? ": " : "",
		       k->dflt ? k->dflt : "");
	else
		printf("  value:      %s (%s, %s:%d)\n", knob_value(m, k->id),
		       src == KNOB_CONFIG ? "pinned in nastune.conf" : "tuned.conf",
		       s->loc.file ? s->loc.file : "?", s->loc.line);
	printf("  candidates:");
	for (i = 0; k->candidates[i]; i++)
		printf("%s %s", i ? "," : "", k->candidates[i]);
	printf("\n  class:      %s", knob_safety_name(k->safety));
	for (i = 0; k->unsafe && k->unsafe[i]; i++)
		printf("%s%s", i ? ", " : " (may lose data: ", k->unsafe[i]);
	printf("%s", k->unsafe ? ")" : "");
	for (i = 0; k->visible && k->visible[i]; i++)
		printf("%s%s", i ? ", " : " (changes what clients see: ", k->visible[i]);
	if (k->safety == KNOB_SEMANTICS && !k->visible)
		printf(" (changes what clients see: any value but %s", k->dflt ? k->dflt : "unset");
	printf("%s, %s\n", k->safety == KNOB_SEMANTICS ? ")" : "", knob_effect_name(k->effect));
	if (k->safety == KNOB_SEMANTICS)
		printf("  changes:    %s\n", k->changes);
	printf("  workloads: ");
	for (b = 1; b < (1u << WL_COUNT); b <<= 1)
		if (k->workloads & b)
			printf(" %s", knob_workload_name(b));
	printf("\n  tune:       ");
	for (i = 0; k->candidates[i]; i++) {
		if (knob_allowed(m, k, k->candidates[i], why, sizeof(why))) {
			printf("%s%s", nok++ ? ", " : "may try ", k->candidates[i]);
		} else if (!no_value) {
			no_value = k->candidates[i];
			snprintf(first_no, sizeof(first_no), "%s", why);
		}
	}
	if (nok == 0)
		printf("not allowed: %s\n", first_no);
	else if (no_value)
		printf("; not %s: %s\n", no_value, first_no);
	else
		printf("\n");
	printf("  why:        %s\n\n", k->why);
}

int
cmd_knobs(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct knob *k;
	struct model *m;
	json_t *list = NULL;
	int c, i, status = EXIT_OK;
	bool json = ctx->json;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			printf("usage: nastune knobs [--json] [NAME...]\n");
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	for (i = optind; i < argc; i++)
		if (!knob_find(argv[i])) {
			fprintf(stderr,
				"nastune knobs: no knob named '%s' — `nastune knobs` lists "
				"them\n",
				argv[i]);
			return EXIT_USAGE;
		}
	if (!(m = cli_load_model(ctx, &status)))
		return status;
	cli_host_facts(m);
	if (json)
		list = json_array();
	for (k = knob_first(); k; k = knob_next(k)) {
		bool want = optind >= argc;

		for (i = optind; i < argc && !want; i++)
			want = strcmp(argv[i], k->name) == 0;
		if (!want)
			continue;
		if (json)
			json_array_append_new(list, cmd_knobs_json(m, k));
		else
			cmd_knobs_text(m, k);
	}
	if (json) {
		json_t *o = json_pack("{s:b, s:b, s:o}", "allow_unsafe", m->tuning.allow_unsafe,
				      "allow_semantics", m->tuning.allow_semantics, "knobs", list);

		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
	}
	model_free(m);
	return EXIT_OK;
}
