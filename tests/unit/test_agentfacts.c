/* test_agentfacts.c - the agents' facts and errors typed (measure/agentfacts.c): a facts
 * message read once (strings as sent, NULL when not strings, the NIC's numbers), written back
 * byte for byte as the agent sent it, fields of another version included; errors written in
 * the form the documents have always stored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agentctl.h"
#include "xmalloc.h"

/* Compact, in order: what the documents store. */
static char *
dump(const json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
}

static void
test_facts_read_once(void **state)
{
	static const char wire[] =
		"{\"type\":\"facts\",\"hostname\":\"mac\",\"os\":\"Darwin\",\"os_version\":7,"
		"\"agent_version\":\"9.9\",\"future\":{\"x\":[1,2]},\"nic\":{\"name\":\"en0\","
		"\"address\":\"198.18.0.11\",\"mtu\":9000,\"path_mtu\":1500,\"speed_mbps\":"
		"10000}}";
	json_t *msg = json_loads(wire, 0, NULL), *out = json_array();
	struct agent_factset set = { 0 };
	char *s;

	(void)state;
	set.v = xcalloc(2, sizeof(*set.v));
	agent_facts_parse(msg, &set.v[set.n++]);
	json_decref(msg); /* the typed facts own what they keep */
	assert_string_equal(set.v[0].hostname, "mac");
	assert_string_equal(set.v[0].os, "Darwin");
	assert_null(set.v[0].os_version); /* not a string */
	assert_string_equal(set.v[0].nic, "en0");
	assert_string_equal(set.v[0].address, "198.18.0.11");
	assert_int_equal(set.v[0].mtu, 9000);
	assert_int_equal(set.v[0].path_mtu, 1500);
	assert_int_equal(set.v[0].speed_mbps, 10000);
	agent_facts_copy(&set.v[set.n++], &set.v[0]);
	agent_factset_json(&set, out);
	s = dump(json_array_get(out, 1));
	assert_string_equal(s, wire);
	free(s);
	json_decref(out);
	agent_factset_clear(&set);

	/* an agent that says little: NULLs and zeros, never a crash */
	msg = json_loads("{\"type\":\"facts\",\"nic\":3}", 0, NULL);
	set.v = xcalloc(1, sizeof(*set.v));
	agent_facts_parse(msg, &set.v[set.n++]);
	assert_null(set.v[0].hostname);
	assert_null(set.v[0].address);
	assert_int_equal(set.v[0].mtu, 0);
	json_decref(msg);
	agent_factset_clear(&set);
}

static void
test_errors_as_stored(void **state)
{
	struct agent_error e[] = {
		{ .client = "mac (198.18.0.11)",
		  .target = "smb://198.18.0.1/Media",
		  .protocol = "smb",
		  .workload = "seq-write",
		  .message = "agent disappeared mid-job",
		  .busy = false },
		{ .client = "198.18.0.12", .message = "busy: another job", .busy = true },
		{ .client = "x", .message = "\xff not UTF-8" },
	};
	const struct agent_errors errors = { e, 3 };
	json_t *out = json_array();
	char *s;

	(void)state;
	agent_errors_json(&errors, out);
	s = dump(out);
	/* the job's error, the unreached agent's, and the one json_pack would have refused */
	assert_string_equal(s,
			    "[{\"client\":\"mac (198.18.0.11)\",\"target\":\"smb://198.18.0.1/"
			    "Media\",\"protocol\":\"smb\",\"workload\":\"seq-write\",\"message\":"
			    "\"agent disappeared mid-job\",\"busy\":false},{\"client\":\"198.18."
			    "0.12\",\"message\":\"busy: another job\",\"busy\":true}]");
	free(s);
	json_decref(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_facts_read_once),
		cmocka_unit_test(test_errors_as_stored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
