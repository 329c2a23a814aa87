/* fuzz_untrusted.c - libFuzzer harness for what a peer sends and the terminal shows. First
 * byte even: the rest through esc_term, whose output must hold no control byte, grow at most
 * fourfold and come back unchanged from a second pass. Odd: the rest as the JSON "results" of
 * an agent's reply through bench_results_from_json, which must keep every result within
 * BENCH_RESULT_MAX_RUNS runs and BENCH_RESULT_MAX_STR bytes a string, and whose results
 * survive bench_results_to_json and back. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "esc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_str(const char *s)
{
	if (s && strlen(s) > BENCH_RESULT_MAX_STR)
		abort();
}

static void
check_esc(const char *in, size_t len)
{
	char *e = esc_term_len(in, len), *again;
	const unsigned char *p;

	if (strlen(e) > 4 * len)
		abort();
	for (p = (const unsigned char *)e; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			abort();
	again = esc_term(e);
	if (strcmp(again, e) != 0 || esc_term_needed(e))
		abort();
	free(again);
	free(e);
}

static void
check_results(const char *in, size_t len)
{
	struct bench_results rs = { 0 }, back = { 0 };
	json_t *j = json_loadb(in, len, JSON_DECODE_ANY, NULL), *out;
	char err[256];
	size_t i;

	if (!j)
		return;
	if (bench_results_from_json(j, &rs, err, sizeof(err)) == 0) {
		for (i = 0; i < rs.n; i++) {
			const struct bench_result *r = &rs.v[i];

			if (r->nruns > BENCH_RESULT_MAX_RUNS)
				abort();
			check_str(r->target);
			check_str(r->protocol);
			check_str(r->workload);
			check_str(r->metric);
			check_str(r->unit);
			check_str(r->client);
			check_str(r->note);
		}
		out = bench_results_to_json(&rs);
		if (bench_results_from_json(out, &back, err, sizeof(err)) != 0 || back.n != rs.n)
			abort();
		json_decref(out);
	}
	bench_results_clear(&rs);
	bench_results_clear(&back);
	json_decref(j);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		check_results((const char *)data + 1, size - 1);
	else
		check_esc((const char *)data + 1, size - 1);
	return 0;
}
