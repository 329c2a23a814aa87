/* test_tuner.c - the tuner's search (tune/search.c) driven by a seeded simulated machine with
 * the noise this machine shows: a level that moves by up to +-100% from minute to minute,
 * 5% noise per run, and one pair in eight hit by an outlier. It measures the figures that
 * nastune-tune(7) states and asserts them: the false-positive rate of placebo tunes, the
 * power for a real +10%, what that costs, a planted 2x cost removed, the MTU step's decision,
 * and the budget. A control runs a naive rule (one fixed window per candidate at 5%, no
 * share of the budget) on the same simulator, to show these tests can fail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "knobs.h"
#include "model.h"
#include "profile.h"
#include "tune.h"
#include "tune/search_api.h"

static const char *const dirs[] = { "profiles" };

/* The simulated machine: every score is 100 x level(t) x the installed configuration's
 * effect x log-normal noise, sometimes an outlier; every run and install advances the clock. */
struct sim {
	uint64_t rng;
	double t;	/* simulated seconds */
	double noise;	/* sigma of log(score) per run */
	double swing;	/* the level moves by a factor up to exp(+-swing) from minute to minute */
	double outlier; /* probability that a run is an outlier (x0.4..x0.8 or x1.25..x2.5) */
	double lv[64];	/* the level at each minute (linear in between) */
	double run_s, install_s, client_s;
	double slow_at, slow_s; /* from slow_at seconds on, a switch costs slow_s */
	/* An install that changes an NFS or AFP knob restarts Ganesha or afpd: this much more
	 * (in the lab 0.4 s, where reloading smbd takes 0.01 s). */
	double restart_s;
	char restarted[1024]; /* the NFS and AFP knobs' values at the last install */
	double (*effect)(const struct model *m); /* the knobs' effect; NULL: none */
	double installed;			 /* effect of the configuration installed */
	int mtu, mtu_cur, mtu_next;		 /* the MTU step: in force, probe's answer */
	double mtu_gain;			 /* clients at mtu_next are this much faster */
	unsigned pairs;				 /* the most pairs per comparison (0: default) */
	unsigned measures;
	const bool *sel; /* --knobs, or NULL: every knob */
	/* A run right after one of a configuration with smb.io_uring = yes is this much faster
	 * (a run carries over into the next: a daemon reloaded with other modules). */
	double carry;
	bool after_uring, uring; /* the last run's configuration had it; the installed one has */
	double alpha;		 /* --false-positives (0: the default) */
	bool every;		 /* SMB, NFS and AFP served and measured (else SMB only) */
	const struct model *im;	 /* the configuration installed */
	/* An install with fail_id = fail_v fails, as a daemon that refuses a value would. */
	enum knob_id fail_id;
	const char *fail_v;
	/* From the progress line containing fail_on on, every install fails (fail_all). */
	const char *fail_on;
	bool fail_all;
	/* > 0: a run measures seq-write (this sigma of log) and seq-read (noise), each moved by
	 * the knobs that move it (plant_wl); the score is their geometric mean. */
	double wnoise;
	double installed_wl[2]; /* the installed configuration's effect on write, on read */
};

static double
uni(uint64_t *rng)
{
	return ((double)(bench_rand(rng) >> 11) + 0.5) / 9007199254740992.0;
}

static double
gauss(uint64_t *rng)
{
	return sqrt(-2 * log(uni(rng))) * cos(2 * M_PI * uni(rng));
}

/* The protocols a run of a NAS serving several measures (0: any): a plant on one protocol's
 * server moves only its runs. */
static unsigned plant_protos;
/* The workload whose rate a plant is asked for (WL_SEQ_WRITE or WL_SEQ_READ; 0: the score):
 * a knob that moves only that one moves its rate twice as much (in log) as the score. */
static unsigned plant_wl;

/* The installed configuration's effects: on the score, and on each workload's rate. */
static void
sim_effects(struct sim *s)
{
	static const unsigned wl[2] = { WL_SEQ_WRITE, WL_SEQ_READ };

	s->installed = s->effect ? s->effect(s->im) : 1;
	for (int i = 0; i < 2; i++) {
		plant_wl = wl[i];
		s->installed_wl[i] = s->effect ? s->effect(s->im) : 1;
	}
	plant_wl = 0;
}

static int
sim_install(void *arg, const struct model *m, char *err, size_t errlen)
{
	struct sim *s = arg;

	s->t += s->slow_at > 0 && s->t >= s->slow_at ? s->slow_s : s->install_s;
	if (s->restart_s > 0) {
		char now[sizeof(s->restarted)] = "";
		size_t n = 0;

		for (const struct knob *k = knob_first(); k && n < sizeof(now); k = knob_next(k))
			if (k->proto == PROTO_NFS || k->proto == PROTO_AFP)
				n += (size_t)snprintf(now + n, sizeof(now) - n, "%s;",
						      knob_value(m, k->id) ? knob_value(m, k->id)
									   : "-");
		if (strcmp(now, s->restarted) != 0)
			s->t += s->restart_s;
		memcpy(s->restarted, now, sizeof(now));
	}
	if (s->fail_all) {
		snprintf(err, errlen, "the daemon refused every configuration");
		return -EIO;
	}
	if (s->fail_v && knob_value(m, s->fail_id) &&
	    strcmp(knob_value(m, s->fail_id), s->fail_v) == 0) {
		snprintf(err, errlen, "%s = %s refused", knob_get(s->fail_id)->name, s->fail_v);
		return -EIO;
	}
	s->im = m;
	sim_effects(s);
	s->uring = knob_value(m, KNOB_SMB_IO_URING) &&
		   strcmp(knob_value(m, KNOB_SMB_IO_URING), "yes") == 0;
	return 0;
}

static double
sim_level(const struct sim *s)
{
	double x = s->t / 60;
	size_t i = (size_t)x % 63;

	return s->lv[i] + (s->lv[i + 1] - s->lv[i]) * (x - floor(x));
}

/* sim_measure's runs of a machine measuring seq-write and seq-read apart (s->wnoise). */
static int
sim_measure_split(struct sim *s, unsigned runs, double *scores, struct bench_results *keep)
{
	double w[8], r[8];

	assert_true(runs <= 8);
	for (unsigned i = 0; i < runs; i++) {
		double lv = 100 * sim_level(s);

		s->t += s->run_s;
		w[i] = lv * s->installed_wl[0] * exp(s->wnoise * gauss(&s->rng));
		r[i] = lv * s->installed_wl[1] * exp(s->noise * gauss(&s->rng));
		if (uni(&s->rng) < s->outlier)
			w[i] *= uni(&s->rng) < 0.5 ? 0.4 + 0.4 * uni(&s->rng)
						   : 1.25 + 1.25 * uni(&s->rng);
		scores[i] = sqrt(w[i] * r[i]);
	}
	for (int k = 0; keep && k < 2; k++) {
		struct bench_result b = { .target = "smb://sim/Media",
					  .protocol = "smb",
					  .workload = k ? "seq-read" : "seq-write",
					  .metric = k ? "read" : "write",
					  .unit = "MB/s",
					  .client = "loopback",
					  .cache = "hot",
					  .runs = k ? r : w,
					  .nruns = runs,
					  .pass = -1 };

		bench_results_add(keep, &b);
	}
	return 0;
}

static int
sim_measure(void *arg, unsigned protos, unsigned runs, unsigned warmup, double *scores,
	    struct bench_results *keep, char *err, size_t errlen)
{
	struct sim *s = arg;
	bool clients = protos & TUNER_CLIENTS;

	(void)err;
	(void)errlen;
	s->measures++;
	s->t += warmup * s->run_s;
	if (s->every && s->effect) {
		plant_protos = protos & ~TUNER_CLIENTS;
		sim_effects(s);
		plant_protos = 0;
	}
	if (s->wnoise > 0)
		return sim_measure_split(s, runs, scores, keep);
	for (unsigned i = 0; i < runs; i++) {
		double x = exp(s->noise * gauss(&s->rng));

		s->t += clients ? s->client_s : s->run_s;
		if (uni(&s->rng) < s->outlier)
			x *= uni(&s->rng) < 0.5 ? 0.4 + 0.4 * uni(&s->rng)
						: 1.25 + 1.25 * uni(&s->rng);
		scores[i] =
			100 * sim_level(s) * s->installed * x * (s->after_uring ? 1 + s->carry : 1);
		s->after_uring = s->uring;
		if (clients && s->mtu == s->mtu_next)
			scores[i] *= 1 + s->mtu_gain;
	}
	if (keep) {
		/* a NAS's protocols each under its own name, as the machine's runs are */
		bool nfs = s->every && !(protos & PROTO_SMB) && (protos & PROTO_NFS);
		bool afp = s->every && !(protos & (PROTO_SMB | PROTO_NFS)) && (protos & PROTO_AFP);
		struct bench_result r = { .target = nfs	  ? "nfs://sim/srv/media"
						    : afp ? "afp://sim/Media"
							  : "smb://sim/Media",
					  .protocol = nfs   ? "nfs"
						      : afp ? "afp"
							    : "smb",
					  .workload = "seq-read",
					  .metric = "read",
					  .unit = "MB/s",
					  .client = "loopback",
					  .cache = "hot",
					  .runs = scores,
					  .nruns = runs,
					  .pass = -1 };

		bench_results_add(keep, &r);
	}
	return 0;
}

/* A read of the clock takes a microsecond, as a real one's does: a deadline set as now + x
 * and checked against now + x a moment later is missed, as on the machine. */
static double
sim_clock(void *arg)
{
	return ((struct sim *)arg)->t += 1e-6;
}

static void
sim_progress(void *arg, const char *line)
{
	struct sim *s = arg;

	if (s->fail_on && strstr(line, s->fail_on))
		s->fail_all = true;
	if (getenv("TUNER_TRACE"))
		fprintf(stderr, "#   [%.0f] %s\n", s->t, line);
}

static void
sim_clients(void *arg)
{
	((struct sim *)arg)->t += 10 * ((struct sim *)arg)->client_s;
}

static int
sim_mtu_probe(void *arg, int *cur, int *next, char *why, size_t whylen)
{
	struct sim *s = arg;

	s->t += 3;
	*cur = s->mtu_cur;
	*next = s->mtu_next;
	snprintf(why, whylen, "no larger MTU reaches every peer");
	return 0;
}

static int
sim_mtu_set(void *arg, int mtu, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	((struct sim *)arg)->mtu = mtu;
	return 0;
}

/* The model of a configuration's text, which must load. */
static struct model *
model_of(const char *text)
{
	struct diag d;
	struct model *m;

	diag_init(&d);
	m = profile_load_string("t.conf", text, dirs, 1, &d);
	diag_print(&d, stderr);
	diag_clear(&d);
	assert_non_null(m);
	return m;
}

/* An SMB-only NAS (the default: shares are SMB only). */
static struct model *
smb_model(void)
{
	return model_of("protocols = { smb = { enabled = true; }; nfs = { enabled = false; };\n"
			"  afp = { enabled = false; }; };\n"
			"network = { interface = \"eth0\"; mtu = \"auto\"; };\n"
			"shares = ( { name = \"Media\"; path = \"/srv/media\"; protocols = "
			"[\"smb\"]; } );\n"
			"tuning = { goal = \"throughput\"; allow_unsafe = false; };\n");
}

/* A NAS serving one share over SMB, NFS and AFP. */
static struct model *
nas_model(void)
{
	return model_of(
		"protocols = { smb = { enabled = true; };\n"
		"  nfs = { enabled = true; server = \"ganesha\"; versions = [3, 4]; };\n"
		"  afp = { enabled = true; }; };\n"
		"network = { interface = \"eth0\"; mtu = \"auto\"; };\n"
		"shares = ( { name = \"Media\"; path = \"/srv/media\"; "
		"protocols = [\"smb\", \"nfs\", \"afp\"]; nfs = { clients = [\"192.0.2.0/24\"]; }; "
		"} );\n"
		"tuning = { goal = \"throughput\"; allow_unsafe = false; };\n");
}

/* The machine as measured here: +-100% between minutes, 5% per run, one pair in eight with
 * an outlier; a run costs about what a switch does. */
static void
sim_init(struct sim *s, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->rng = (seed + 1) * 0xd1b54a32d192ed03ull;
	bench_rand(&s->rng);
	s->noise = 0.05;
	s->swing = log(2);
	s->outlier = 1.0 - sqrt(7.0 / 8);
	s->run_s = 0.3;
	s->install_s = 0.2;
	s->client_s = 2;
	s->installed = 1;
	for (size_t i = 0; i < 64; i++)
		s->lv[i] = exp(s->swing * (2 * uni(&s->rng) - 1));
}

struct outcome {
	size_t applied, tried, undecided;
	size_t cands, worse; /* candidates measured, and those called worse */
	double elapsed;
	struct tuner_decision dec[KNOB_COUNT];
	double improvement;
	/* the after-score's medians and runs, and its pairs */
	double before_median, after_median;
	size_t before_runs, after_runs, after_pairs;
	double alpha, alpha_look; /* the plan's */
	struct tuner_plan plan;
	int rc;
};

static const char *real_value;
static enum knob_id real_id;
static double real_gain;

/* real_id = real_value multiplies the speed by 1 + real_gain. */
static double
real_effect(const struct model *m)
{
	const char *v = knob_value(m, real_id);

	return v && strcmp(v, real_value) == 0 ? 1 + real_gain : 1;
}

/* Gains their confirmation neither confirmed nor ruled out at its level, bounded on their
 * pairs' 90% interval instead: counted, never applied, and each told by that interval: no
 * effect beyond its reach when that is 10% or less, else undecided; one whose interval lies
 * above 0 (leans) undecided whatever its reach, with the runs that would confirm it. */
static size_t at90, leans;

static void
bounded_at90(const struct tuner_decision *d)
{
	const char *end = strstr(d->confirmed, "] at 90%, "), *lb = end;
	double lo, hi, reach;

	if (!end)
		return;
	while (lb > d->confirmed && *lb != '[')
		lb--;
	assert_int_equal(sscanf(lb, "[%lf%%, %lf%%]", &lo, &hi), 2);
	reach = fmax(fabs(lo), fabs(hi)) / 100;
	at90++;
	assert_false(d->applied);
	if (lo > 0) {
		leans++;
		assert_int_equal(d->verdict, TUNE_UNDECIDED);
		assert_non_null(strstr(d->reason, "would confirm it at its level"));
		assert_true(d->e.more_runs >= 2);
	} else if (d->verdict == TUNE_WORSE)
		assert_true(hi < 0);
	else if (reach > TUNE_BOUND_MAX + 0.0005)
		assert_int_equal(d->verdict, TUNE_UNDECIDED);
	else if (reach < TUNE_BOUND_MAX - 0.0005)
		assert_true((d->verdict == TUNE_BOUNDED || d->verdict == TUNE_SAME) &&
			    fabs(d->e.delta - reach) < 0.0006);
}

/* One tune of s's knobs (every SMB knob without s->sel) from start (KNOB_COUNT-terminated
 * id/value pairs planted as tuned values, or NULL). */
static void
tune_once(struct sim *s, double budget, const char *const *plant, struct outcome *out)
{
	struct model *m = s->every ? nas_model() : smb_model();
	bool wl[BENCH_NWORKLOADS];
	struct tuner_opts o = { .protos = s->every ? PROTO_SMB | PROTO_NFS | PROTO_AFP : PROTO_SMB,
				.goal = "throughput",
				.pairs = s->pairs ? s->pairs : TUNE_PAIRS,
				.budget_s = budget,
				.sel = s->sel,
				.alpha = s->alpha };
	struct tuner_ops ops = {
		.arg = s, .install = sim_install, .measure = sim_measure, .clock = sim_clock
	};
	struct tuner_result r;
	json_t *doc = json_object();
	char err[256];

	for (size_t i = 0; plant && plant[i]; i += 2)
		tuner_set_knob(m, knob_find(plant[i])->id, plant[i + 1], KNOB_TUNED);
	if (s->mtu_next) {
		ops.clients = sim_clients;
		ops.mtu_probe = sim_mtu_probe;
		ops.mtu_set = sim_mtu_set;
		s->mtu = s->mtu_cur;
	}
	o.wlmask = tune_goal_workloads(GOAL_THROUGHPUT, wl);
	if (getenv("TUNER_TRACE") || s->fail_on)
		ops.progress = sim_progress;
	memset(out, 0, sizeof(*out));
	out->rc = tuner_run(m, &o, &ops, &r, err, sizeof(err));
	tuner_result_json(&r, doc);
	for (size_t i = 0; i < KNOB_COUNT; i++) {
		out->applied += r.dec[i].applied;
		out->tried += r.dec[i].tried;
		out->undecided += r.dec[i].tried && r.dec[i].verdict == TUNE_UNDECIDED;
		for (size_t j = 0; j < r.dec[i].ncand; j++) {
			out->cands += r.dec[i].cand[j].e.n > 0;
			out->worse += r.dec[i].cand[j].e.verdict == TUNE_WORSE;
		}
		/* a confirmation skipped for time had none: what it needed exceeds what was
		 * left */
		if (strstr(r.dec[i].confirmed, "no time for the ")) {
			const char *w = strstr(r.dec[i].confirmed, "pairs it needs (");
			double need = 0, left = 0;

			assert_non_null(w);
			assert_int_equal(
				sscanf(w, "pairs it needs (%lfs; %lfs left)", &need, &left), 2);
			assert_true(need >= left); /* as printed: to the hundredth */
		}
		bounded_at90(&r.dec[i]);
		out->dec[i] = r.dec[i];
		out->dec[i].before = out->dec[i].after = NULL;
		if (getenv("TUNER_DEBUG") && r.dec[i].tried)
			fprintf(stderr, "# %s: %s [%s]\n", r.dec[i].k->name, r.dec[i].reason,
				r.dec[i].design);
	}
	out->elapsed = s->t;
	out->improvement = json_real_value(json_object_get(doc, "improvement"));
	out->before_median =
		json_real_value(json_object_get(json_object_get(doc, "before"), "median"));
	out->after_median =
		json_real_value(json_object_get(json_object_get(doc, "after"), "median"));
	out->before_runs = json_array_size(json_object_get(json_object_get(doc, "before"), "runs"));
	out->after_runs = json_array_size(json_object_get(json_object_get(doc, "after"), "runs"));
	out->after_pairs = r.after_pairs;
	out->alpha = r.plan.alpha;
	out->alpha_look = r.plan.alpha_look;
	out->plan = r.plan;
	tuner_result_release(&r);
	json_decref(doc);
	model_free(m);
}

/* Tunes of seeds base+1..base+count with real_effect and sel (NULL: every knob) from plant:
 * how many applied real_id, its pairs in all, and the simulated seconds in all; a planted
 * value's removal says "better: ... faster here". */
struct batch {
	size_t applied, pairs;
	double t;
};

static struct batch
sim_batch(uint64_t base, size_t count, const bool *sel, const char *const *plant)
{
	struct batch b = { 0 };

	for (uint64_t seed = 1; seed <= count; seed++) {
		struct sim s;
		struct outcome out;

		sim_init(&s, base + seed);
		s.effect = real_effect;
		s.sel = sel;
		tune_once(&s, 1e6, plant, &out);
		assert_int_equal(out.rc, 0);
		b.applied += out.dec[real_id].applied;
		b.pairs += out.dec[real_id].e.n;
		b.t += out.elapsed;
		if (plant) {
			assert_non_null(strstr(out.dec[real_id].reason, "better: "));
			assert_non_null(strstr(out.dec[real_id].reason, "faster here"));
		}
	}
	return b;
}

/* smb.case_sensitive = yes makes small work 40% faster. */
static double
case_effect(const struct model *m)
{
	const char *v = knob_value(m, KNOB_SMB_CASE_SENSITIVE);

	return v && strcmp(v, "yes") == 0 ? 1.4 : 1;
}

/* A small-files tune of an SMB share the tune measures (trial_semantics, as the machine marks
 * its targets), with share_allow in the share's group; its case_sensitive decision into d, and
 * the value in force after it into *after (NULL: unset). */
static void
tune_case(uint64_t seed, const char *share_allow, bool trial, struct tuner_decision *d,
	  char **after, json_t **doc)
{
	char text[512];
	struct diag dg;
	struct model *m;
	struct sim s;
	bool wl[BENCH_NWORKLOADS], sel[KNOB_COUNT] = { false };
	struct tuner_opts o = { .protos = PROTO_SMB,
				.goal = "small-files",
				.pairs = TUNE_PAIRS,
				.budget_s = 1e6,
				.sel = sel };
	struct tuner_ops ops = {
		.arg = &s, .install = sim_install, .measure = sim_measure, .clock = sim_clock
	};
	struct tuner_result r;
	char err[256];

	snprintf(text, sizeof(text),
		 "protocols = { smb = { enabled = true; }; nfs = { enabled = false; };\n"
		 "  afp = { enabled = false; }; };\n"
		 "shares = ( { name = \"Big\"; path = \"/srv/big\"; protocols = [\"smb\"]; %s } "
		 ");\ntuning = { goal = \"small-files\"; };\n",
		 share_allow);
	diag_init(&dg);
	m = profile_load_string("t.conf", text, dirs, 1, &dg);
	diag_print(&dg, stderr);
	diag_clear(&dg);
	assert_non_null(m);
	m->shares[0].trial_semantics = trial;
	sel[KNOB_SMB_CASE_SENSITIVE] = sel[KNOB_SMB_STRICT_LOCKING] = true;
	sim_init(&s, seed);
	s.effect = case_effect;
	o.wlmask = tune_goal_workloads(GOAL_SMALL_FILES, wl);
	if (getenv("TUNER_TRACE"))
		ops.progress = sim_progress;
	assert_int_equal(tuner_run(m, &o, &ops, &r, err, sizeof(err)), 0);
	*d = r.dec[KNOB_SMB_CASE_SENSITIVE];
	d->before = d->after = NULL;
	*after = knob_value(m, KNOB_SMB_CASE_SENSITIVE)
			 ? strdup(knob_value(m, KNOB_SMB_CASE_SENSITIVE))
			 : NULL;
	*doc = json_object();
	tuner_result_json(&r, *doc);
	tuner_result_release(&r);
	model_free(m);
}

/* A value that changes what clients see: measured on the share the tune measures, but
 * without the configuration's consent never applied; the decision says what it gained, with
 * its interval, and what it would change for the clients. With the share's consent it is
 * decided and applied like any knob; outside a tune's trials it is not even tried. */
static void
test_semantics_consent(void **state)
{
	struct tuner_decision d;
	char *after;
	json_t *doc, *k = NULL, *x;
	size_t i;

	(void)state;
	tune_case(7, "", true, &d, &after, &doc);
	assert_true(d.tried);
	assert_int_equal(d.verdict, TUNE_BETTER);
	assert_false(d.applied);
	assert_null(after);
	assert_true(d.e.est > 0.2 && isfinite(d.e.lo) && d.e.lo > 0);
	assert_ptr_equal(d.withheld, knob_get(KNOB_SMB_CASE_SENSITIVE)->changes);
	assert_string_equal(d.withheld_value, "yes");
	assert_non_null(strstr(d.reason, "better, not applied: yes measured +"));
	assert_non_null(strstr(d.reason, "names become case-sensitive"));
	assert_non_null(strstr(d.reason, "allow \"semantics\""));
	json_array_foreach(json_object_get(doc, "knobs"), i,
			   x) if (strcmp(json_string_value(json_object_get(x, "name")),
					 "smb.case_sensitive") == 0) k = x;
	assert_non_null(k);
	assert_false(json_is_true(json_object_get(k, "applied")));
	assert_string_equal(json_string_value(json_object_get(k, "verdict")), "better");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(k, "withheld"), "changes")),
		knob_get(KNOB_SMB_CASE_SENSITIVE)->changes);
	assert_non_null(json_object_get(k, "interval"));
	json_decref(doc);

	tune_case(7, "allow = [\"semantics\"];", true, &d, &after, &doc);
	assert_int_equal(d.verdict, TUNE_BETTER);
	assert_true(d.applied);
	assert_null(d.withheld);
	assert_string_equal(after, "yes");
	free(after);
	json_decref(doc);

	tune_case(7, "", false, &d, &after, &doc);
	assert_false(d.applied);
	assert_null(after);
	assert_null(d.withheld);
	json_decref(doc);
}

/* The exact interval: 8 pairs all +10% (ties) give +10%; at a one-sided level of 2^-8 the
 * interval is the smallest and largest Walsh average; below it, none. A flipped pair moves
 * the estimate little; a clear loss is worse with its cost. */
static void
test_effect(void **state)
{
	double d[12], w[12];
	struct tune_effect e;

	(void)state;
	for (size_t i = 0; i < 12; i++)
		d[i] = log(1.10) + 0.01 * ((double)i - 5.5);
	tune_effect_of(d, 8, 1.0 / 256 + 1e-12, 0.01, &e);
	assert_int_equal(e.verdict, TUNE_BETTER);
	assert_true(fabs(e.lo - expm1(d[0])) < 1e-9 && fabs(e.hi - expm1(d[7])) < 1e-9);
	tune_effect_of(d, 8, 1.0 / 256 - 1e-6, 0.01, &e);
	assert_true(isinf(e.lo) && e.verdict != TUNE_BETTER);
	memcpy(w, d, sizeof(d));
	w[3] = -w[3]; /* one pair in eight flipped */
	tune_effect_of(w, 8, 0.05, 0.05, &e);
	assert_true(e.est > 0.07 && e.est < 0.12);
	for (size_t i = 0; i < 12; i++)
		w[i] = log(0.63) + 0.02 * ((double)(i % 3) - 1);
	tune_effect_of(w, 12, 0.0005, 0.01, &e);
	assert_int_equal(e.verdict, TUNE_WORSE);
	assert_true(fabs(e.est + 0.37) < 0.02);
	for (size_t i = 0; i < 12; i++)
		w[i] = 0.004 * ((double)(i % 5) - 2);
	tune_effect_of(w, 12, 0.0005, 0.01, &e);
	assert_int_equal(e.verdict, TUNE_SAME);
	assert_true(e.lo >= -TUNE_MIN_GAIN && e.hi <= TUNE_MIN_GAIN); /* the interval judged */
	for (size_t i = 0; i < 12; i++)
		w[i] = 0.08 * ((double)(i % 5) - 2);
	tune_effect_of(w, 10, 0.0005, 0.01, &e); /* two whole cycles: centred on 0 */
	assert_int_equal(e.verdict, TUNE_UNDECIDED);
	assert_true(e.more > 0 && e.more != SIZE_MAX);
	assert_string_equal(tune_verdict_name(TUNE_WORSE), "worse");
}

/* (1) Placebo tunes of every SMB knob on this machine's noise: a change is applied in at most
 * 5% of 200 tunes. */
static void
test_placebo(void **state)
{
	size_t accepted = 0, tried = 0, undecided = 0, cands = 0, worse = 0;
	double t = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 200; seed++) {
		struct sim s;
		struct outcome out;

		sim_init(&s, seed);
		tune_once(&s, 1e6, NULL, &out);
		assert_int_equal(out.rc, 0);
		accepted += out.applied > 0;
		tried += out.tried;
		undecided += out.undecided;
		cands += out.cands;
		worse += out.worse;
		t += out.elapsed;
	}
	printf("# placebo, every SMB knob, +-100%% between minutes, one pair in 8 an outlier: "
	       "a change applied in %zu of 200 tunes (%zu knobs tried, %zu undecided); a cost "
	       "named for %zu of %zu candidates; %.0f simulated seconds a tune\n",
	       accepted, tried, undecided, worse, cands, t / 200);
	assert_true(tried >= 200 * 7);
	assert_true(accepted <= 10);
	/* A cost is named at each comparison's own 5%. */
	assert_true(worse <= cands / 20);
}

/* (2) A real +10% against 5% noise, the same drift and outliers: found (applied) in at least
 * 90% of 200 tunes; what a verdict costs. */
static void
test_power(void **state)
{
	static const bool only[KNOB_COUNT] = { [KNOB_SMB_USE_SENDFILE] = true,
					       [KNOB_SMB_MULTICHANNEL] = true,
					       [KNOB_SMB_MIN_RECEIVEFILE_SIZE] = true };
	struct batch b;
	size_t found;

	(void)state;
	real_id = KNOB_SMB_USE_SENDFILE;
	real_value = "yes";
	real_gain = 0.10;
	b = sim_batch(1000, 200, only, NULL);
	found = b.applied;
	printf("# a real +10%% against 5%% noise (with the drift and outliers): found in %zu of "
	       "200 tunes, after %.1f pairs on average; a tune of 3 knobs %.0f simulated seconds "
	       "(a run %.1fs, a switch %.1fs)\n",
	       found, (double)b.pairs / 200, b.t / 200, 0.3, 0.2);
	assert_true(found >= 180);
}

/* (3) A planted 2x cost (encryption required halves the speed) is removed in every tune, and
 * its verdict names the cost. */
static void
test_planted_cost(void **state)
{
	static const char *const plant[] = { "smb.smb_encrypt", "required", NULL };
	static const bool three[KNOB_COUNT] = { [KNOB_SMB_SMB_ENCRYPT] = true,
						[KNOB_SMB_SERVER_SIGNING] = true,
						[KNOB_SMB_USE_SENDFILE] = true };
	struct batch b;
	size_t removed, pairs;

	(void)state;
	real_id = KNOB_SMB_SMB_ENCRYPT;
	real_value = "required";
	real_gain = -0.5;
	b = sim_batch(2000, 100, NULL, plant);
	printf("# encryption required, a 2x cost: removed in %zu of 100 tunes, after %.1f pairs on "
	       "average\n",
	       b.applied, (double)b.pairs / 100);
	removed = b.applied;
	assert_int_equal(removed, 100);
	/* Three knobs (bench/tune.sh's): the first look, at 8 pairs, spends half the budget and
	 * decides it there (with the budget shared equally by the looks: 12). */
	b = sim_batch(2000, 100, three, plant);
	removed = b.applied;
	pairs = b.pairs;
	printf("# ... in a tune of three knobs: removed in %zu of 100, after %.1f pairs\n", removed,
	       (double)pairs / 100);
	assert_int_equal(removed, 100);
	assert_true(pairs <= 100 * 9);
}

/* Signing required costs 37%: the report says so ("required: 37% slower here"), never "no
 * significant effect". */
static void
test_cost_named(void **state)
{
	static const bool only[KNOB_COUNT] = { [KNOB_SMB_SERVER_SIGNING] = true };
	struct sim s;
	struct outcome out;

	(void)state;
	real_id = KNOB_SMB_SERVER_SIGNING;
	real_value = "required";
	real_gain = -0.37;
	sim_init(&s, 7);
	s.effect = real_effect;
	s.sel = only;
	tune_once(&s, 1e6, NULL, &out);
	printf("# %s\n", out.dec[real_id].reason);
	assert_non_null(strstr(out.dec[real_id].reason, "required: 3"));
	assert_non_null(strstr(out.dec[real_id].reason, "% slower here"));
	assert_null(strstr(out.dec[real_id].reason, "significant"));
	assert_false(out.dec[real_id].applied);
	/* Costs are front-loaded too: the first look spends half of the comparison's 5%, the
	 * later ones share the rest. */
	assert_int_equal(out.plan.cost_first_n, 8);
	assert_true(fabs(out.plan.cost_first - TUNE_ALPHA / 2) < 1e-12);
	assert_true(out.plan.alpha_cost < TUNE_ALPHA / 2);
	assert_true(out.dec[real_id].e.n == 8);
}

/* (4) The MTU step: a peer carries 9000 where 1500 is in force. The clients 36% faster:
 * raised, better. The clients no different: raised on the proof, not worse. The clients 30%
 * slower: kept. With 20 s of budget it still runs (never "budget exhausted"). */
static void
test_mtu(void **state)
{
	static const bool only[KNOB_COUNT] = {
		[KNOB_NET_MTU] = true, [KNOB_SMB_USE_SENDFILE] = true
	};
	static const double gain[] = { 0.36, 0, -0.30 };
	size_t raised[3] = { 0 }, better = 0;

	(void)state;
	for (size_t g = 0; g < 3; g++)
		for (uint64_t seed = 1; seed <= 50; seed++) {
			struct sim s;
			struct outcome out;

			sim_init(&s, 3000 + seed);
			s.noise = 0.05;
			s.mtu_cur = 1500;
			s.mtu_next = 9000;
			s.mtu_gain = gain[g];
			s.sel = only;
			tune_once(&s, 300, NULL, &out);
			assert_int_equal(out.rc, 0);
			raised[g] += out.dec[KNOB_NET_MTU].applied;
			better += g == 0 && out.dec[KNOB_NET_MTU].verdict == TUNE_BETTER;
			assert_true(out.dec[KNOB_NET_MTU].applied == (s.mtu == 9000));
			assert_true(out.dec[KNOB_NET_MTU].by_clients);
		}
	printf("# MTU 1500 -> 9000 proven: raised in %zu of 50 tunes at +36%% (better in %zu), "
	       "%zu at +0%%, %zu at -30%%\n",
	       raised[0], better, raised[1], raised[2]);
	assert_int_equal(raised[0], 50);
	assert_true(raised[1] >= 45);
	assert_true(raised[2] <= 5);
	{
		struct sim s;
		struct outcome out;

		sim_init(&s, 1);
		s.mtu_cur = 1500;
		s.mtu_next = 9000;
		tune_once(&s, 20, NULL, &out);
		printf("# budget 20s: %s\n", out.dec[KNOB_NET_MTU].reason);
		assert_true(out.dec[KNOB_NET_MTU].applied);
		assert_null(strstr(out.dec[KNOB_NET_MTU].reason, "budget"));
	}
}

/* (5) The budget holds: every SMB knob in 60 s ends within it + 5%, and every knob tried has
 * a verdict with what it rests on: none "not tried: budget exhausted", no infinite interval,
 * an undecided one with the runs and seconds that would bound it. */
static void
test_budget(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct sim s;
		struct outcome out;

		sim_init(&s, 4000 + seed);
		tune_once(&s, 60, NULL, &out);
		assert_int_equal(out.rc, 0);
		assert_true(out.elapsed <= 60 * 1.05);
		assert_true(out.tried >= 7);
		for (size_t i = 0; i < KNOB_COUNT; i++) {
			const struct tuner_decision *d = &out.dec[i];

			assert_null(strstr(d->reason, "budget exhausted"));
			assert_null(strstr(d->reason, "inf"));
			if (!d->tried || !d->design[0])
				continue;
			if (d->verdict == TUNE_UNDECIDED)
				assert_non_null(strstr(d->reason, "would bound it to +-5%"));
		}
	}
}

/* ... and when the switches turn slow partway (the machine loaded, a daemon that now restarts
 * for every candidate): a round sized on the calls before ran past the budget by its whole
 * length (a 25 s tune ended at 27.5 s in lab/t_tune). */
static void
test_budget_slow_switch(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct sim s;
		struct outcome out;

		sim_init(&s, 4100 + seed);
		s.slow_at = 12 + seed % 8;
		s.slow_s = 3;
		tune_once(&s, 25, NULL, &out);
		assert_int_equal(out.rc, 0);
		if (out.elapsed > 25 * 1.05)
			fail_msg("seed %u: %.1f s for a budget of 25 s", (unsigned)seed,
				 out.elapsed);
	}
}

/* The plan settles how many looks spend the budget for every number of candidates and pairs:
 * with 9 candidates and 16 pairs the level of one share reaches both looks and that of two
 * reaches one (a tune of four knobs once spun there forever). Every such tune ends, within
 * its budget. */
static void
test_plan_settles(void **state)
{
	static const bool only[KNOB_COUNT] = { [KNOB_SMB_SMB_ENCRYPT] = true,
					       [KNOB_SMB_SERVER_SIGNING] = true,
					       [KNOB_SMB_AIO_READ_SIZE] = true,
					       [KNOB_SMB_AIO_WRITE_SIZE] = true };

	(void)state;
	alarm(20); /* a spin fails here instead of hanging the suite */
	for (unsigned pairs = 8; pairs <= 40; pairs++) {
		struct sim s;
		struct outcome out;

		sim_init(&s, 5000 + pairs);
		s.pairs = pairs;
		s.sel = only;
		tune_once(&s, 60, NULL, &out);
		assert_int_equal(out.rc, 0);
		assert_true(out.elapsed <= 60 * 1.05);
	}
	alarm(0);
}

/* Encryption is decided before signing, whatever the table's order. */
static void
test_encryption_first(void **state)
{
	struct sim s;
	struct model *m = smb_model();
	struct tuner_result r;
	struct tuner_ops ops = { .arg = &s,
				 .install = sim_install,
				 .measure = sim_measure,
				 .clock = sim_clock,
				 .progress = NULL };
	bool wl[BENCH_NWORKLOADS];
	struct tuner_opts o = {
		.protos = PROTO_SMB, .goal = "throughput", .pairs = 16, .budget_s = 1e6
	};
	json_t *doc = json_object(), *dec;
	const char *first = NULL, *key;
	json_t *v;
	char err[256];

	(void)state;
	o.wlmask = tune_goal_workloads(GOAL_THROUGHPUT, wl);
	sim_init(&s, 5);
	assert_int_equal(tuner_run(m, &o, &ops, &r, err, sizeof(err)), 0);
	tuner_result_json(&r, doc);
	dec = json_object_get(doc, "decided");
	json_object_foreach(dec, key, v)
	{
		if (strcmp(key, "smb.smb_encrypt") == 0 || strcmp(key, "smb.server_signing") == 0) {
			first = key;
			break;
		}
	}
	assert_non_null(first);
	assert_string_equal(first, "smb.smb_encrypt");
	tuner_result_release(&r);
	json_decref(doc);
	model_free(m);
}

/* The after-score: with a change, the starting and the chosen configuration are measured side
 * by side at the end, and "results" holds the chosen configuration's runs. On a NAS of three
 * protocols where only SMB's changed (a placebo NFS knob: the start measures NFS too, the
 * after-score SMB alone), its before and after medians are told on the same pairs as the
 * change, so they move the way it does (mixed with the start's two runs of NFS and AFP, a
 * +100% change once showed as a median 3% higher, a -14% one as one 3% higher). */
static void
test_after_score(void **state)
{
	static const char *const plant[] = { "smb.smb_encrypt", "required", NULL };
	static const bool only[2][KNOB_COUNT] = {
		{ [KNOB_SMB_SMB_ENCRYPT] = true },
		{ [KNOB_SMB_SMB_ENCRYPT] = true, [KNOB_NFS_GANESHA_MAX_READ] = true }
	};

	(void)state;
	real_id = KNOB_SMB_SMB_ENCRYPT;
	real_value = "required";
	real_gain = -0.5;
	for (int nas = 0; nas < 2; nas++) {
		struct sim s;
		struct outcome out;

		sim_init(&s, 11);
		s.every = nas;
		s.effect = real_effect;
		s.sel = only[nas];
		tune_once(&s, 1e6, plant, &out);
		printf("# after-score of encryption required -> %s%s: before %.1f (%zu runs), "
		       "after %.1f (%zu runs), %+.0f%% on %zu pairs\n",
		       out.dec[real_id].applied ? "not required" : "?", nas ? ", a NAS" : "",
		       out.before_median, out.before_runs, out.after_median, out.after_runs,
		       100 * out.improvement, out.after_pairs);
		assert_true(out.dec[real_id].applied);
		assert_true(out.improvement > 0.5);
		assert_true(out.after_pairs >= 2);
		assert_int_equal(out.before_runs, out.after_pairs);
		assert_int_equal(out.after_runs, out.after_pairs);
		assert_true(out.after_median > 1.5 * out.before_median);
	}
}

/* The control: one window of 8 pairs per candidate, better at a one-sided 5% with no share of
 * the tune's budget, on the same simulator: placebo tunes of every SMB knob apply a change
 * far more often than 5%. */
static void
test_control_naive(void **state)
{
	size_t accepted = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 200; seed++) {
		struct sim s;
		bool any = false;

		sim_init(&s, seed);
		for (size_t cand = 0; cand < 20; cand++) {
			double d[8], a, b;
			struct tune_effect e;

			for (size_t i = 0; i < 8; i++) {
				sim_measure(&s, PROTO_SMB, 1, 0, i % 2 ? &b : &a, NULL, NULL, 0);
				sim_measure(&s, PROTO_SMB, 1, 0, i % 2 ? &a : &b, NULL, NULL, 0);
				d[i] = tune_log_ratio(a, b);
			}
			tune_effect_of(d, 8, 0.05, 0.05, &e);
			any |= e.verdict == TUNE_BETTER;
		}
		accepted += any;
	}
	printf("# control (one window of 8 pairs at 5%%, 20 candidates, no shared budget): a "
	       "placebo applied in %zu of 200 tunes\n",
	       accepted);
	assert_true(accepted > 20);
}

/* A run that carries over into the next (+20% for the run after one with io_uring, a placebo
 * itself) must not make a placebo win: the pools change their order every round, so no
 * candidate always follows the same one. In a fixed order (forwards, then backwards) the
 * knobs next to io_uring won in 54 of 200 tunes. */
static void
test_carry_over(void **state)
{
	static const bool only[KNOB_COUNT] = {
		[KNOB_SMB_IO_URING] = true,
		[KNOB_SMB_USE_SENDFILE] = true,
		[KNOB_SMB_AIO_READ_SIZE] = true,
		[KNOB_SMB_AIO_WRITE_SIZE] = true,
		[KNOB_SMB_MIN_RECEIVEFILE_SIZE] = true,
	};
	size_t accepted = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 200; seed++) {
		struct sim s;
		struct outcome out;

		sim_init(&s, 5000 + seed);
		s.carry = 0.2;
		s.sel = only;
		tune_once(&s, 1e6, NULL, &out);
		assert_int_equal(out.rc, 0);
		accepted += out.applied > 0;
	}
	printf("# a run carrying +20%% into the next (after io_uring = yes): a placebo applied in "
	       "%zu of 200 tunes\n",
	       accepted);
	assert_true(accepted <= 10);
}

/* A stricter false-positive budget (--false-positives 0.005) is the plan's, and the same
 * placebo tunes as test_placebo's apply a change in at most 1% of 200. */
static void
test_false_positives(void **state)
{
	size_t accepted = 0, tried = 0;
	double look = 0, look_default = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 200; seed++) {
		struct sim s;
		struct outcome out;

		sim_init(&s, seed);
		s.alpha = 0.005;
		tune_once(&s, 1e6, NULL, &out);
		assert_int_equal(out.rc, 0);
		assert_true(fabs(out.alpha - 0.005) < 1e-12);
		look = out.alpha_look;
		accepted += out.applied > 0;
		tried += out.tried;
		if (seed == 1) {
			sim_init(&s, seed);
			tune_once(&s, 1e6, NULL, &out);
			assert_true(fabs(out.alpha - TUNE_ALPHA) < 1e-12);
			look_default = out.alpha_look;
		}
	}
	printf("# placebo at a false-positive budget of 0.005: a change applied in %zu of 200 "
	       "tunes (%zu knobs tried); a look's level %.2g (at the default %.2g)\n",
	       accepted, tried, look, look_default);
	assert_true(tried >= 200 * 7);
	assert_true(accepted <= 2);
	assert_true(look > 0 && look * 5 < look_default);
}

/* Encryption required seals every session, so signing's cost shows only without it: sealed,
 * the run is half as fast; unsealed, signing required costs 37%. */
static double
sealed_effect(const struct model *m)
{
	const char *e = knob_value(m, KNOB_SMB_SMB_ENCRYPT),
		   *g = knob_value(m, KNOB_SMB_SERVER_SIGNING);

	if (e && (strcmp(e, "required") == 0 || strcmp(e, "desired") == 0))
		return 0.5;
	return g && strcmp(g, "required") == 0 ? 0.63 : 1;
}

/* From encryption and signing both required (bench/tune.sh's start), in a budget of 45
 * simulated seconds (about its 0.28 of the grid): signing is measured while encryption still
 * seals, with encryption's candidate in force on both sides, so both costs go in one tune.
 * Waiting for encryption's verdict first: encryption removed in 95 of 100, both in 60. In 28
 * s (about the bench's calls: its 9-10 s tune) the tier's first look is whole, not cut at its
 * share of the budget: both removed in 57 of 100; cut at the share, 0 (signing one pair short
 * of its look, the screen's pairs spent on a placebo); without finishing a look a round or two
 * short past the share (pool_share), 48. */
static void
test_sealed_pair(void **state)
{
	static const char *const plant[] = { "smb.smb_encrypt", "required", "smb.server_signing",
					     "required", NULL };
	static const bool three[KNOB_COUNT] = { [KNOB_SMB_SMB_ENCRYPT] = true,
						[KNOB_SMB_SERVER_SIGNING] = true,
						[KNOB_SMB_USE_SENDFILE] = true };
	static const struct {
		double budget;
		size_t enc, both; /* the least of 100 */
	} at[] = { { 45, 85, 80 }, { 28, 50, 52 } };

	(void)state;
	for (size_t b = 0; b < sizeof(at) / sizeof(at[0]); b++) {
		size_t both = 0, enc = 0;

		for (uint64_t seed = 1; seed <= 100; seed++) {
			struct sim s;
			struct outcome out;

			sim_init(&s, 7000 + seed);
			s.effect = sealed_effect;
			s.sel = three;
			tune_once(&s, at[b].budget, plant, &out);
			assert_int_equal(out.rc, 0);
			enc += out.dec[KNOB_SMB_SMB_ENCRYPT].applied;
			both += out.dec[KNOB_SMB_SMB_ENCRYPT].applied &&
				out.dec[KNOB_SMB_SERVER_SIGNING].applied;
			/* never signing alone: while sealed it changes nothing */
			assert_true(out.dec[KNOB_SMB_SMB_ENCRYPT].applied ||
				    !out.dec[KNOB_SMB_SERVER_SIGNING].applied);
		}
		printf("# encryption and signing required (sealed), %.0f s: encryption removed in "
		       "%zu of 100, both in %zu\n",
		       at[b].budget, enc, both);
		assert_true(enc >= at[b].enc);
		assert_true(both >= at[b].both);
	}
}

/* A gain among several candidates of one knob (aio_read_size 1M +15%) is found by the screen
 * and applied through its confirmation, which the decision names. */
static void
test_gain_confirmed(void **state)
{
	static const bool only[KNOB_COUNT] = {
		[KNOB_SMB_AIO_READ_SIZE] = true, [KNOB_SMB_USE_SENDFILE] = true
	};
	size_t applied = 0;

	(void)state;
	real_id = KNOB_SMB_AIO_READ_SIZE;
	real_value = "1M";
	real_gain = 0.15;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct sim s;
		struct outcome out;
		const struct tuner_decision *d;

		sim_init(&s, 6000 + seed);
		s.effect = real_effect;
		s.sel = only;
		tune_once(&s, 1e6, NULL, &out);
		assert_int_equal(out.rc, 0);
		d = &out.dec[KNOB_SMB_AIO_READ_SIZE];
		assert_non_null(strstr(d->design, "SMB screen"));
		if (d->applied) {
			applied++;
			assert_int_equal(d->verdict, TUNE_BETTER);
			assert_non_null(strstr(d->confirmed, "P against P without it"));
			assert_non_null(strstr(d->reason, "confirmed"));
		}
		assert_false(out.dec[KNOB_SMB_USE_SENDFILE].applied);
	}
	assert_true(applied >= 19);
}

/* ---- the screens at this machine's noise (13.7% a run in log), as nastune-tune(7) states
 * them: 50 seeded tunes of every SMB knob a row ---- */

/* Planted effects: a value of a knob multiplies the speed; with inter, smb.use_sendfile = yes
 * and smb.io_uring = yes together +20% (neither alone). */
static struct {
	enum knob_id id;
	const char *v;
	double gain;
} plants[4];
static size_t nplants;
/* The workloads plants[i] moves in split runs (0: the knob's own). */
static unsigned plant_wls[4];
static bool inter;

static double
planted_effect(const struct model *m)
{
	double x = 1;
	const char *a = knob_value(m, KNOB_SMB_USE_SENDFILE), *b = knob_value(m, KNOB_SMB_IO_URING);

	for (size_t i = 0; i < nplants; i++) {
		const char *v = knob_value(m, plants[i].id);
		unsigned kp = knob_get(plants[i].id)->proto;
		unsigned kw = (plant_wls[i] ? plant_wls[i] : knob_get(plants[i].id)->workloads) &
			      (WL_SEQ_WRITE | WL_SEQ_READ);

		if (plant_protos && kp && !(kp & plant_protos))
			continue;
		if (plant_wl && !(kw & plant_wl))
			continue;
		if (v && strcmp(v, plants[i].v) == 0)
			x *= plant_wl && kw == plant_wl ? pow(1 + plants[i].gain, 2)
							: 1 + plants[i].gain;
	}
	if (inter && a && b && strcmp(a, "yes") == 0 && strcmp(b, "yes") == 0)
		x *= 1.2;
	return x;
}

enum drift { DRIFT_LINEAR, DRIFT_WALK };

/* The machine of the screens' figures: 13.7% a run, one pair in eight an outlier, and a
 * drift: +20% over the tune (linear), or a random walk of +-35% a minute. */
static void
sim_screen(struct sim *s, uint64_t seed, enum drift drift)
{
	sim_init(s, seed);
	s->noise = 0.137;
	s->effect = planted_effect;
	for (size_t i = 0; i < 64; i++)
		s->lv[i] = drift == DRIFT_LINEAR ? 1 + 0.2 * (double)i / 10 : 1;
	for (size_t i = 1; drift == DRIFT_WALK && i < 64; i++)
		s->lv[i] = s->lv[i - 1] * exp(log(1.35) * gauss(&s->rng) / 2);
}

struct screen_row {
	size_t real, cost, placebo, bounded, knobs;
	double runs;
};

/* 50 tunes of every SMB knob at budget, the +10% and -30% planted (or the interaction). */
static struct screen_row
screen_batch(uint64_t base, double budget, enum drift drift, bool interaction)
{
	struct screen_row row = { 0 };

	nplants = 0;
	memset(plant_wls, 0, sizeof(plant_wls));
	inter = interaction;
	if (!interaction) {
		plants[nplants++] =
			(typeof(plants[0])){ KNOB_SMB_MIN_RECEIVEFILE_SIZE, "128K", 0.10 };
		plants[nplants++] = (typeof(plants[0])){ KNOB_SMB_USE_SENDFILE, "yes", -0.30 };
	}
	for (uint64_t seed = 1; seed <= 50; seed++) {
		struct sim s;
		struct outcome out;
		bool placebo = false;

		sim_screen(&s, base + seed, drift);
		tune_once(&s, budget, NULL, &out);
		assert_int_equal(out.rc, 0);
		assert_true(out.elapsed <= budget * 1.05);
		row.runs += (double)s.measures;
		if (interaction) {
			row.real += out.dec[KNOB_SMB_USE_SENDFILE].applied &&
				    out.dec[KNOB_SMB_IO_URING].applied;
		} else {
			row.real += out.dec[KNOB_SMB_MIN_RECEIVEFILE_SIZE].applied;
			row.cost += out.dec[KNOB_SMB_USE_SENDFILE].applied;
		}
		for (size_t i = 0; i < KNOB_COUNT; i++) {
			const struct tuner_decision *d = &out.dec[i];
			bool planted = i == KNOB_SMB_MIN_RECEIVEFILE_SIZE ||
				       i == KNOB_SMB_USE_SENDFILE ||
				       (interaction && i == KNOB_SMB_IO_URING);

			if (!d->tried || !d->design[0])
				continue;
			row.knobs++;
			row.bounded += d->verdict == TUNE_WORSE || d->verdict == TUNE_BETTER ||
				       ((d->verdict == TUNE_SAME || d->verdict == TUNE_BOUNDED) &&
					d->e.delta <= TUNE_BOUND_GOAL);
			placebo |= !planted && d->applied;
			assert_true(d->verdict != TUNE_UNDECIDED || d->e.more_runs > 0 ||
				    strstr(d->reason, "interaction suspected"));
			assert_null(strstr(d->reason, "inf"));
		}
		row.placebo += placebo;
	}
	row.runs /= 50;
	return row;
}

/* The +10% applied in at least 56% of tunes at 600 runs a tune and 90% at 1,200 (the sim's
 * run and switch cost 0.5 s: 300 and 600 s), the -30% never, a placebo in at most 5%, under
 * a linear drift of +20%. */
static void
test_screen_linear(void **state)
{
	static const double budgets[] = { 300, 600 };
	static const size_t least[] = { 28, 45 };

	(void)state;
	for (size_t b = 0; b < 2; b++) {
		struct screen_row r = screen_batch(8000 + 100 * b, budgets[b], DRIFT_LINEAR, false);

		printf("# screen, %.0f s (%.0f measure calls a tune), +20%% linear drift, 13.7%% "
		       "noise, one pair in 8 an outlier: the +10%% applied in %zu of 50, the -30%% "
		       "in "
		       "%zu, a placebo in %zu; %zu of %zu screened knobs bounded within +-5%% or "
		       "decided\n",
		       budgets[b], r.runs, r.real, r.cost, r.placebo, r.bounded, r.knobs);
		assert_true(r.real >= least[b]);
		assert_int_equal(r.cost, 0);
		assert_true(r.placebo <= 2);
	}
}

/* ... under a random walk of +-35% a minute. */
static void
test_screen_walk(void **state)
{
	struct screen_row r;

	(void)state;
	r = screen_batch(8500, 1200, DRIFT_WALK, false);
	printf("# screen, 1200 s, random walk +-35%%/min: the +10%% applied in %zu of 50, the "
	       "-30%% "
	       "in %zu, a placebo in %zu; %zu of %zu screened knobs bounded or decided\n",
	       r.real, r.cost, r.placebo, r.bounded, r.knobs);
	assert_true(r.real >= 45);
	assert_int_equal(r.cost, 0);
	assert_true(r.placebo <= 2);
}

/* Two knobs that help (+20%) only together: the screen sees half of it in each main effect,
 * and the confirmation (P against P without one) applies both. */
static void
test_screen_interaction(void **state)
{
	struct screen_row r;

	(void)state;
	r = screen_batch(8700, 600, DRIFT_LINEAR, true);
	printf("# interaction (+20%% only together): both applied in %zu of 50 tunes, a placebo in "
	       "%zu\n",
	       r.real, r.placebo);
	assert_true(r.real >= 45);
	assert_true(r.placebo <= 2);
}

/* sel: the SMB knobs but the CPU tier (one screen); no plant yet. */
static void
smb_screen_only(bool *sel)
{
	for (const struct knob *k = knob_first(); k; k = knob_next(k))
		sel[k->id] = k->proto == PROTO_SMB && k->id != KNOB_SMB_SMB_ENCRYPT &&
			     k->id != KNOB_SMB_SERVER_SIGNING;
	nplants = 0;
	memset(plant_wls, 0, sizeof(plant_wls));
	inter = false;
}

/* A short budget is spent, not left: 20 tunes of the SMB knobs but the CPU tier (the +10% and
 * -30% planted) at 120 s end at 0.8 of it or later, unless every knob screened is resolved
 * (worse, better, or bounded within +-5%); a confirmation that ends early hands its time back
 * to the screens. No gain is left "confirmed" by zero pairs. */
static void
test_screens_spend_budget(void **state)
{
	bool sel[KNOB_COUNT] = { false };
	double least = 1e9, sum = 0;

	(void)state;
	smb_screen_only(sel);
	plants[nplants++] = (typeof(plants[0])){ KNOB_SMB_MIN_RECEIVEFILE_SIZE, "128K", 0.10 };
	plants[nplants++] = (typeof(plants[0])){ KNOB_SMB_USE_SENDFILE, "yes", -0.30 };
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct sim s;
		struct outcome out;
		bool open = false;

		sim_screen(&s, 9100 + seed, DRIFT_LINEAR);
		s.sel = sel;
		tune_once(&s, 120, NULL, &out);
		assert_int_equal(out.rc, 0);
		for (size_t i = 0; i < KNOB_COUNT; i++) {
			const struct tuner_decision *d = &out.dec[i];

			if (!d->tried)
				continue;
			open |= !(d->verdict == TUNE_WORSE || d->verdict == TUNE_BETTER ||
				  ((d->verdict == TUNE_SAME || d->verdict == TUNE_BOUNDED) &&
				   d->e.delta <= TUNE_BOUND_GOAL));
			assert_null(strstr(d->confirmed, ", 0 pairs"));
			/* skipped for time: the runs it would take are its pairs' */
			if (strstr(d->confirmed, "no time for the ")) {
				unsigned need = 0;

				sscanf(strstr(d->confirmed, "no time for the ") + 16, "%u", &need);
				assert_int_equal(d->e.more_runs, 2 * need);
			}
			/* the effect a knob is told by has an interval when a candidate has */
			for (size_t j = 0; d->design[0] && !d->confirmed[0] && j < d->ncand; j++)
				assert_true(!isfinite(d->cand[j].e.lo) ||
					    !isfinite(d->cand[j].e.hi) ||
					    (isfinite(d->e.lo) && isfinite(d->e.hi)));
		}
		if (open && out.elapsed < 0.8 * 120)
			fprintf(stderr, "# seed %u ended at %.1f s of 120 with knobs open\n",
				(unsigned)(9100 + seed), out.elapsed);
		assert_true(!open || out.elapsed >= 0.8 * 120);
		least = fmin(least, out.elapsed);
		sum += out.elapsed;
	}
	printf("# 120 s tunes of the SMB screen: ended at %.1f s on average, %.1f s the earliest\n",
	       sum / 20, least);
}

/* A 120 s tune of sel on a machine whose writes spread 25% a run and reads 3%. */
static void
split_tune(struct sim *s, uint64_t seed, const bool *sel, struct outcome *out)
{
	sim_screen(s, seed, DRIFT_LINEAR);
	s->sel = sel;
	s->noise = 0.03;
	s->wnoise = 0.25;
	tune_once(s, 120, NULL, out);
	assert_int_equal(out->rc, 0);
}

/* A machine whose cold writes spread 25% a run where its reads spread 3% (as the lab's SMB
 * share does): a knob that moves only reads is fitted on the reads' part of the score, so
 * the writes' noise no longer hides it. 20 tunes of the SMB screen at 120 s, use_sendfile =
 * yes -30% on reads, min_receivefile_size = 128K +10% on writes: aio_read_size and
 * use_sendfile end bounded within +-5% or decided in at least 36 of 40 (37; fitted on the
 * whole score, 21), at least 36 on the reads' part (37: in 3 the writes' noise, one run in
 * sixteen an outlier, looked like an effect of aio_read_size on the rest of the score); the
 * cost is never applied, a placebo in at most 1 of 20. */
static void
test_screen_parts(void **state)
{
	bool sel[KNOB_COUNT] = { false };
	size_t reads = 0, fitted = 0, cost = 0, placebo = 0;

	(void)state;
	smb_screen_only(sel);
	plants[nplants++] = (typeof(plants[0])){ KNOB_SMB_MIN_RECEIVEFILE_SIZE, "128K", 0.10 };
	plants[nplants++] = (typeof(plants[0])){ KNOB_SMB_USE_SENDFILE, "yes", -0.30 };
	for (uint64_t seed = 1; seed <= 20; seed++) {
		static const enum knob_id rd[] = { KNOB_SMB_AIO_READ_SIZE, KNOB_SMB_USE_SENDFILE };
		struct sim s;
		struct outcome out;

		split_tune(&s, 9700 + seed, sel, &out);
		for (size_t i = 0; i < 2; i++) {
			const struct tuner_decision *d = &out.dec[rd[i]];

			reads += d->verdict == TUNE_WORSE || d->verdict == TUNE_BETTER ||
				 ((d->verdict == TUNE_SAME || d->verdict == TUNE_BOUNDED) &&
				  d->e.delta <= TUNE_BOUND_GOAL);
			fitted += strstr(d->design, "fitted on seq-read alone") != NULL;
		}
		cost += out.dec[KNOB_SMB_USE_SENDFILE].applied;
		for (size_t i = 0; i < KNOB_COUNT; i++)
			if (out.dec[i].applied && i != KNOB_SMB_MIN_RECEIVEFILE_SIZE &&
			    i != KNOB_SMB_USE_SENDFILE) {
				fprintf(stderr, "# seed %u: %s: %s\n", (unsigned)(9700 + seed),
					out.dec[i].k->name, out.dec[i].reason);
				placebo++;
			}
	}
	printf("# writes 25%% a run, reads 3%%, 120 s: the read-only knobs bounded within +-5%% or "
	       "decided in %zu of 40 (%zu fitted on the reads' part); the -30%% applied in %zu, "
	       "a placebo in %zu\n",
	       reads, fitted, cost, placebo);
	assert_true(fitted >= 36);
	assert_true(reads >= 36);
	assert_int_equal(cost, 0);
	assert_true(placebo <= 1);
}

/* A real gain on the workload a knob moves, confirmed on that workload's part of the score
 * (the writes' noise kept out), and the same gain paid for by the other workload: 20 tunes
 * of the SMB screen at 120 s on the split machine, each case. use_sendfile = yes making reads
 * 10% faster (+4.9% on the score) is applied in at least 16 of 20 (17; confirmed on the
 * whole score: 0 of 20; the three kept out had the rest's estimate -3.6% to -4.4% where it is
 * 0, its noise); with writes 12% slower too (the score -1.6%), in at most 2 of 20 (1). No
 * placebo applied. */
static void
test_screen_parts_gain(void **state)
{
	bool sel[KNOB_COUNT] = { false };
	size_t real = 0, paid = 0, placebo = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		bool trade = seed > 20;
		struct sim s;
		struct outcome out;
		const struct tuner_decision *d = &out.dec[KNOB_SMB_USE_SENDFILE];

		smb_screen_only(sel);
		plant_wls[nplants] = WL_SEQ_READ;
		plants[nplants++] = (typeof(plants[0])){ KNOB_SMB_USE_SENDFILE, "yes", 0.049 };
		if (trade) {
			plant_wls[nplants] = WL_SEQ_WRITE;
			plants[nplants++] =
				(typeof(plants[0])){ KNOB_SMB_USE_SENDFILE, "yes", -0.062 };
		}
		split_tune(&s, 9900 + seed, sel, &out);
		*(trade ? &paid : &real) += d->applied;
		/* applied: confirmed on its part, told as its effect on the whole score */
		if (d->applied)
			assert_non_null(strstr(d->reason, "confirmed on seq-read (its share of the "
							  "score "));
		if (d->applied)
			assert_non_null(strstr(d->reason, "; the rest of the score "));
		/* not confirmed for the rest's sake: its effect says so, and no gain */
		if (strstr(d->reason, "paid for it"))
			assert_true(d->e.verdict == TUNE_UNDECIDED && !d->applied);
		if (d->applied == trade)
			fprintf(stderr, "# seed %u: %s\n", (unsigned)(9900 + seed), d->reason);
		for (size_t i = 0; i < KNOB_COUNT; i++)
			placebo += out.dec[i].applied && i != KNOB_SMB_USE_SENDFILE;
	}
	printf("# reads +10%% (score +4.9%%), 120 s: applied in %zu of 20; reads +10%% and writes "
	       "-12%% (score -1.6%%): applied in %zu of 20; a placebo in %zu\n",
	       real, paid, placebo);
	memset(plant_wls, 0, sizeof(plant_wls));
	assert_true(real >= 16);
	assert_true(paid <= 2);
	assert_true(placebo <= 1);
}

/* A knob that moves a workload the table does not name for it: smb.min_receivefile_size =
 * 16K making writes 3.7x faster and reads 3.7x slower (seen in the lab), the score unmoved.
 * Its part alone would call it +92% (a gain in every tune); the rest of the score shows the
 * effect, so it is fitted on the whole score: in 20 tunes of 120 s it is never applied, at
 * least 18 say why in their design, and at most 4 call it an apparent gain (a screen's
 * gains are liberal: the confirmation decides). */
static void
test_screen_parts_cross(void **state)
{
	bool sel[KNOB_COUNT] = { false };
	size_t whole = 0, gain = 0, applied = 0;

	(void)state;
	smb_screen_only(sel);
	plant_wls[nplants] = WL_SEQ_WRITE;
	plants[nplants++] = (typeof(plants[0])){ KNOB_SMB_MIN_RECEIVEFILE_SIZE, "16K", 0.92 };
	plant_wls[nplants] = WL_SEQ_READ;
	plants[nplants++] = (typeof(plants[0])){ KNOB_SMB_MIN_RECEIVEFILE_SIZE, "16K", -0.48 };
	for (uint64_t seed = 1; seed <= 20; seed++) {
		const struct tuner_decision *d = NULL;
		struct sim s;
		struct outcome out;

		split_tune(&s, 9800 + seed, sel, &out);
		d = &out.dec[KNOB_SMB_MIN_RECEIVEFILE_SIZE];
		whole += strstr(d->design, "fitted on the whole score: it moved more than "
					   "seq-write") != NULL;
		for (size_t j = 0; j < d->ncand; j++)
			gain += strcmp(d->cand[j].value, "16K") == 0 &&
				d->cand[j].e.verdict == TUNE_BETTER;
		applied += d->applied;
	}
	printf("# writes 3.7x, reads 1/3.7x, 120 s: fitted on the whole score in %zu of 20, "
	       "called a gain in %zu, applied in %zu\n",
	       whole, gain, applied);
	memset(plant_wls, 0, sizeof(plant_wls));
	assert_true(whole >= 18);
	assert_true(gain <= 4);
	assert_int_equal(applied, 0);
}

/* A simulated lab of the demo's screens (every protocol's server, linear drift, a run 0.4 s,
 * an install 0.5 s) tuning the knobs sel names, nothing planted yet. */
static void
sim_joined(struct sim *s, uint64_t seed, const bool *sel)
{
	nplants = 0;
	inter = false;
	sim_screen(s, seed, DRIFT_LINEAR);
	s->every = true;
	s->sel = sel;
	s->run_s = 0.4;
	s->install_s = 0.5;
}

/* The three protocols' screens measured in the same runs: one install a side serves the SMB,
 * NFS and AFP screens' pairs, each fitted on its own protocol's scores. 20 tunes of every
 * SMB, NFS and AFP knob but the CPU tier at 120 s (a run 0.4 s, an install 0.5 s), +10%
 * planted on NFS and -30% on AFP: the NFS and AFP screens measure at least 70 runs a tune
 * (80 here; 55 each screen on its own), the SMB screen 38 (42; 41), and never apply the cost
 * or a placebo. Every knob screened has an interval for some candidate: a replicate begun
 * last, whose first pair brought the third candidates of several knobs (identical columns),
 * left 7 of 280 knobs without one. */
static void
test_screens_joined(void **state)
{
	size_t falsew = 0, runs[3] = { 0 }, bounded = 0, knobs = 0, real = 0, cost = 0, placebo = 0,
	       told = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		bool sel[KNOB_COUNT] = { false };
		struct sim s;
		struct outcome out;
		size_t screen[3] = { 0 }; /* each screen's runs: its knobs' most */

		for (const struct knob *k = knob_first(); k; k = knob_next(k))
			sel[k->id] = k->proto != 0 && k->id != KNOB_SMB_SMB_ENCRYPT &&
				     k->id != KNOB_SMB_SERVER_SIGNING;
		nplants = 0;
		inter = false;
		plants[nplants++] = (typeof(plants[0])){ KNOB_NFS_GANESHA_MAX_READ, "16M", 0.10 };
		plants[nplants++] = (typeof(plants[0])){ KNOB_AFP_SERVER_QUANTUM, "256K", -0.30 };
		sim_screen(&s, 9500 + seed, DRIFT_LINEAR);
		s.every = true;
		s.sel = sel;
		s.run_s = 0.4;
		s.install_s = 0.5;
		tune_once(&s, 120, NULL, &out);
		assert_int_equal(out.rc, 0);
		real += out.dec[KNOB_NFS_GANESHA_MAX_READ].applied;
		cost += out.dec[KNOB_AFP_SERVER_QUANTUM].applied;
		for (size_t i = 0; i < KNOB_COUNT; i++) {
			const struct tuner_decision *d = &out.dec[i];
			size_t *n = &screen[d->k->proto == PROTO_SMB   ? 0
					    : d->k->proto == PROTO_NFS ? 1
								       : 2];

			if (!d->tried || !d->design[0])
				continue;
			knobs++;
			bounded += d->verdict == TUNE_WORSE || d->verdict == TUNE_BETTER ||
				   ((d->verdict == TUNE_SAME || d->verdict == TUNE_BOUNDED) &&
				    d->e.delta <= TUNE_BOUND_MAX);
			placebo += d->applied && i != KNOB_NFS_GANESHA_MAX_READ;
			for (size_t c = 0; c < d->ncand; c++)
				falsew += d->cand[c].e.verdict == TUNE_WORSE &&
					  !(i == KNOB_AFP_SERVER_QUANTUM &&
					    strcmp(d->cand[c].value, "256K") == 0);
			for (size_t c = 0; !d->confirmed[0] && c < d->ncand; c++)
				*n = d->cand[c].e.runs > *n ? d->cand[c].e.runs : *n;
			for (size_t c = 0; c < d->ncand; c++)
				if (isfinite(d->cand[c].e.lo) && isfinite(d->cand[c].e.hi)) {
					told++;
					break;
				}
			if (getenv("TUNER_DEBUG"))
				fprintf(stderr, "# %s: %s | %s\n", d->k->name, d->design,
					d->reason);
		}
		for (int p = 0; p < 3; p++)
			runs[p] += screen[p];
	}
	printf("# candidates without an effect named worse: %zu\n", falsew);
	printf("# screens' runs a tune: SMB %.0f, NFS %.0f, AFP %.0f\n", (double)runs[0] / 20,
	       (double)runs[1] / 20, (double)runs[2] / 20);
	printf("# SMB, NFS and AFP screens in 120 s: %zu of %zu screened knobs decided or within "
	       "+-10%%; the +10%% applied in %zu of 20, the -30%% in %zu, a placebo in %zu\n",
	       bounded, knobs, real, cost, placebo);
	printf("# knobs with an interval for some candidate: %zu of %zu\n", told, knobs);
	assert_true(runs[0] >= 20 * 38 && runs[1] >= 20 * 70 && runs[2] >= 20 * 70);
	assert_int_equal(told, knobs);
	assert_int_equal(cost, 0);
	assert_true(placebo <= 1);
}

/* The demo's costs, as timed in the lab: a run 0.08 s, reloading smbd 0.01 s, a restart of
 * Ganesha and afpd 0.4 s more. Every SMB, NFS and AFP knob at 120 s (the CPU tier first, as in
 * the demo), +10% planted on SMB and -30% on AFP. The joined screens' installs restart both
 * daemons, an SMB switch alone reloads smbd: each switch is priced by what it changes, so an
 * SMB run costs 0.09 s and a run of the NFS and AFP screens (two a restart) 0.28 s, in what a
 * knob left undecided would take and in what a confirmation needs. Priced by the call before,
 * SMB's runs carried the joined install (0.49 s a run, 5x), NFS's and AFP's none (0.08 s):
 * the demo's SMB confirmations "had no time" for their 12 pairs ("about 24 more runs, 14s").
 * The outcome here is no better for it (the +10% applied in 11 of 20, 251 of 280 knobs
 * undecided; 11 and 254 before): the SMB screen's noise, not the price, limits the demo.
 * A gain not confirmed is bounded on its pairs' 90% interval, as a screen's knob is (24 of
 * them here, 2 leaning to a gain and so undecided): 238 undecided, where its interval at the
 * confirmation's level left 251. */
static void
test_demo_costs(void **state)
{
	size_t real = 0, cost = 0, placebo = 0, undecided = 0, knobs = 0, priced[2] = { 0 };
	double per_run[2] = { 0 }, most[2] = { 0 }, least[2] = { INFINITY, INFINITY };

	(void)state;
	at90 = leans = 0;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		bool sel[KNOB_COUNT] = { false };
		struct sim s;
		struct outcome out;

		for (const struct knob *k = knob_first(); k; k = knob_next(k))
			sel[k->id] = k->proto != 0;
		nplants = 0;
		inter = false;
		plants[nplants++] = (typeof(plants[0])){ KNOB_SMB_IO_URING, "yes", 0.10 };
		plants[nplants++] = (typeof(plants[0])){ KNOB_AFP_SERVER_QUANTUM, "256K", -0.30 };
		sim_screen(&s, 9900 + seed, DRIFT_LINEAR);
		s.every = true;
		s.sel = sel;
		s.run_s = 0.08;
		s.install_s = 0.01;
		s.restart_s = 0.4;
		tune_once(&s, 120, NULL, &out);
		assert_int_equal(out.rc, 0);
		real += out.dec[KNOB_SMB_IO_URING].applied;
		cost += out.dec[KNOB_AFP_SERVER_QUANTUM].applied;
		for (size_t i = 0; i < KNOB_COUNT; i++) {
			const struct tuner_decision *d = &out.dec[i];

			if (!d->tried || !d->design[0])
				continue;
			knobs++;
			undecided += d->verdict == TUNE_UNDECIDED;
			placebo += d->applied && i != KNOB_SMB_IO_URING;
			for (size_t c = 0; c < d->ncand; c++) {
				const struct tune_effect *e = &d->cand[c].e;
				int p = d->k->proto != PROTO_SMB;
				double r = e->more_runs ? e->more_s / (double)e->more_runs : 0;

				if (!r)
					continue;
				priced[p]++, per_run[p] += r;
				most[p] = fmax(most[p], r), least[p] = fmin(least[p], r);
			}
			if (getenv("TUNER_DEBUG"))
				fprintf(stderr, "# %s: %s | %s\n", d->k->name, d->design,
					d->reason);
		}
	}
	printf("# the demo's costs, 120 s: the SMB +10%% applied in %zu of 20, the -30%% in %zu, "
	       "a placebo in %zu; undecided %zu of %zu knobs (%zu gains not confirmed told by "
	       "their pairs' 90%% interval, %zu of them leaning to a gain)\n",
	       real, cost, placebo, undecided, knobs, at90, leans);
	printf("# a run priced for the undecided: SMB %.3f s (%.3f..%.3f, %zu), NFS and AFP %.3f s "
	       "(%.3f..%.3f, %zu)\n",
	       per_run[0] / (double)priced[0], least[0], most[0], priced[0],
	       per_run[1] / (double)priced[1], least[1], most[1], priced[1]);
	assert_true(priced[0] >= 20 && priced[1] >= 20);
	assert_true(least[0] >= 0.08 && most[0] <= 0.15);
	assert_true(least[1] >= 0.25 && most[1] <= 0.6);
	assert_int_equal(cost, 0);
	assert_true(placebo <= 1);
	assert_true(at90 >= 20 && leans >= 1 && undecided <= 240);
}

/* The demo's loopback screens in 120 s: SMB's five knobs, NFS's three, AFP's two. A screen of
 * three knobs or fewer (NFS's, AFP's) has a 4-run array: its replicates of 4 pairs cycle the
 * three candidates of each knob in 12 pairs. With the 8-run arrays they had, 11 of these 100
 * knobs kept a candidate "not reached" (about 20 pairs a knob: two and a half replicates; the
 * demo's 16 reached two). */
static void
test_screen_small(void **state)
{
	static const enum knob_id ids[] = {
		KNOB_SMB_USE_SENDFILE,	    KNOB_SMB_AIO_READ_SIZE,
		KNOB_SMB_AIO_WRITE_SIZE,    KNOB_SMB_MIN_RECEIVEFILE_SIZE,
		KNOB_SMB_IO_URING,	    KNOB_NFS_GANESHA_MAX_READ,
		KNOB_NFS_GANESHA_MAX_WRITE, KNOB_NFS_VERSIONS,
		KNOB_AFP_SERVER_QUANTUM,    KNOB_AFP_DSIREADBUF
	};
	size_t reached = 0, placebo = 0, pairs = 0, knobs = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		bool sel[KNOB_COUNT] = { false };
		struct sim s;
		struct outcome out;

		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
			sel[ids[i]] = true;
		sim_joined(&s, 9800 + seed, sel);
		tune_once(&s, 120, NULL, &out);
		assert_int_equal(out.rc, 0);
		for (size_t i = 0; i < KNOB_COUNT; i++) {
			const struct tuner_decision *d = &out.dec[i];
			size_t c = 0;

			placebo += d->applied;
			if (!sel[i] || d->k->proto == PROTO_SMB)
				continue;
			while (c < d->ncand && d->cand[c].e.verdict != TUNE_NOT_REACHED)
				c++;
			reached += c == d->ncand;
			pairs += d->e.runs / 4; /* two runs a restart, two sides a pair */
			knobs++;
			if (getenv("TUNER_DEBUG"))
				fprintf(stderr, "# %s: %s | %s\n", d->k->name, d->design,
					d->reason);
		}
	}
	printf("# the demo's loopback screens, 120 s: the NFS and AFP screens' knobs (3 and 2, "
	       "4-run arrays) with every candidate reached: %zu of %zu (%.0f pairs a knob); a "
	       "placebo applied in %zu\n",
	       reached, knobs, knobs ? (double)pairs / (double)knobs : 0.0, placebo);
	assert_int_equal(knobs, 100);
	assert_int_equal(reached, knobs);
	assert_true(placebo <= 1);
}

/* Either of two knobs gives +15%, both no more: the screen sees each at about +7% (its main
 * effect), the first confirmation, P against P without it, sees nothing. It stops once its
 * gain cannot reach +3% at 90% ("short of +3%": 10 of 20, 42.6 pairs each) instead of running
 * its share of the time until it is the same within +-3% (56.8 pairs each). */
static double
either_effect(const struct model *m)
{
	const char *a = knob_value(m, KNOB_SMB_USE_SENDFILE), *b = knob_value(m, KNOB_SMB_IO_URING);

	return (a && strcmp(a, "yes") == 0) || (b && strcmp(b, "yes") == 0) ? 1.15 : 1;
}

static void
test_confirm_futile(void **state)
{
	static const bool only[KNOB_COUNT] = {
		[KNOB_SMB_USE_SENDFILE] = true, [KNOB_SMB_IO_URING] = true
	};
	size_t confirmations = 0, pairs = 0, futile = 0, applied = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct sim s;
		struct outcome out;

		sim_init(&s, 6600 + seed);
		s.effect = either_effect;
		s.sel = only;
		tune_once(&s, 120, NULL, &out);
		assert_int_equal(out.rc, 0);
		for (int i = 0; i < 2; i++) {
			const struct tuner_decision *d =
				&out.dec[i ? KNOB_SMB_IO_URING : KNOB_SMB_USE_SENDFILE];

			applied += d->applied;
			if (!d->confirmed[0] || d->applied)
				continue;
			confirmations++;
			pairs += d->e.n;
			futile += strstr(d->confirmed, "short of +3%") != NULL;
		}
	}
	printf("# either of two knobs +15%%, both no more: %zu confirmations not confirmed, %zu "
	       "stopped short of +3%%, %.1f pairs each; %zu applied\n",
	       confirmations, futile, confirmations ? (double)pairs / (double)confirmations : 0.0,
	       applied);
	assert_true(confirmations >= 20);
	assert_true(2 * futile >= confirmations);
	assert_true(pairs <= 48 * confirmations); /* 56.8 each when they ran on to "same" */
	assert_true(applied <= 20);		  /* the second, with the first out of P, is real */
}

/* A knob's replicates leave a candidate far worse than 10%: smb.aio_read_size = 64K planted at
 * -40% is called so once the screen has a fit, and the later replicates measure 0 and 1M (the
 * placebos), not it: 5.0 pairs against 21.7 on average, fewer than each in 19 of 20 tunes. The
 * cycle gave the three the same (16.4 against 16.1, fewer in 0). */
static void
test_screen_adaptive(void **state)
{
	static const bool only[KNOB_COUNT] = { [KNOB_SMB_AIO_READ_SIZE] = true,
					       [KNOB_SMB_AIO_WRITE_SIZE] = true,
					       [KNOB_SMB_USE_SENDFILE] = true };
	size_t fewer = 0, worse = 0, bad = 0, rest = 0;

	(void)state;
	real_id = KNOB_SMB_AIO_READ_SIZE;
	real_value = "64K";
	real_gain = -0.4;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		const struct tuner_decision *d;
		struct sim s;
		struct outcome out;
		size_t n64 = 0, least = SIZE_MAX;

		sim_init(&s, 7700 + seed);
		s.effect = real_effect;
		s.sel = only;
		tune_once(&s, 60, NULL, &out);
		assert_int_equal(out.rc, 0);
		d = &out.dec[KNOB_SMB_AIO_READ_SIZE];
		for (size_t c = 0; c < d->ncand; c++) {
			if (strcmp(d->cand[c].value, "64K") == 0) {
				n64 = d->cand[c].e.n;
				worse += d->cand[c].e.verdict == TUNE_WORSE;
			} else {
				least = d->cand[c].e.n < least ? d->cand[c].e.n : least;
				rest += d->cand[c].e.n;
			}
		}
		bad += n64;
		fewer += n64 < least;
	}
	printf("# 64K at -40%% among aio_read_size's three: worse in %zu of 20, fewer pairs than "
	       "each placebo in %zu (%.1f pairs against %.1f)\n",
	       worse, fewer, (double)bad / 20, (double)rest / 40);
	assert_int_equal(worse, 20);
	assert_true(fewer >= 15);
	assert_true(4 * bad < rest); /* on average, under half a placebo's pairs */
}

/* A candidate the daemon refuses (nfs.ganesha_max_read = 16M fails its install) in a pair
 * the three screens share: the failure is put down to the NFS screen, whose knobs say so, the
 * refused value's levels do not stay in force for the next installs, and the SMB and AFP
 * screens go on sharing their runs (at least 38 and 70 runs a tune at 120 s, as when all three
 * screens share them). */
static void
test_screen_fails(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 5; seed++) {
		bool sel[KNOB_COUNT] = { false };
		struct sim s;
		struct outcome out;
		size_t runs[2] = { 0 };

		for (const struct knob *k = knob_first(); k; k = knob_next(k))
			sel[k->id] = k->proto != 0 && k->id != KNOB_SMB_SMB_ENCRYPT &&
				     k->id != KNOB_SMB_SERVER_SIGNING;
		sim_joined(&s, 9700 + seed, sel);
		s.fail_id = KNOB_NFS_GANESHA_MAX_READ;
		s.fail_v = "16M";
		tune_once(&s, 120, NULL, &out);
		assert_int_equal(out.rc, 0);
		assert_non_null(strstr(out.dec[KNOB_NFS_GANESHA_MAX_READ].reason, "16M refused"));
		assert_false(out.dec[KNOB_NFS_GANESHA_MAX_READ].applied);
		for (size_t i = 0; i < KNOB_COUNT; i++) {
			const struct tuner_decision *d = &out.dec[i];

			if (!d->tried || !d->design[0] || d->k->proto == PROTO_NFS)
				continue;
			assert_null(strstr(d->reason, "refused"));
			for (size_t c = 0; !d->confirmed[0] && c < d->ncand; c++) {
				size_t *n = &runs[d->k->proto == PROTO_AFP];

				*n = d->cand[c].e.runs > *n ? d->cand[c].e.runs : *n;
			}
		}
		assert_true(runs[0] >= 38 && runs[1] >= 70);
	}
}

/* A confirmation whose first round fails (every install refused from "confirming" on) says
 * why, not that it had no time, and nothing is applied: the gains after it left P too (they
 * stayed in force, applied unconfirmed: smb.aio_read_size in 1 of these 5). */
static void
test_confirm_fails(void **state)
{
	bool sel[KNOB_COUNT] = { false };
	size_t told = 0;

	(void)state;
	smb_screen_only(sel);
	plants[nplants++] = (typeof(plants[0])){ KNOB_SMB_MIN_RECEIVEFILE_SIZE, "16K", 0.40 };
	for (uint64_t seed = 1; seed <= 5; seed++) {
		struct sim s;
		struct outcome out;

		sim_screen(&s, 9500 + seed, DRIFT_LINEAR);
		s.sel = sel;
		s.fail_on = "tune: confirming";
		tune_once(&s, 120, NULL, &out);
		for (size_t i = 0; i < KNOB_COUNT; i++) {
			const struct tuner_decision *d = &out.dec[i];

			assert_false(d->applied);
			assert_null(strstr(d->confirmed, "no time for the"));
			if (strstr(d->confirmed, "failed: the daemon refused every configuration"))
				told++;
		}
	}
	nplants = 0;
	printf("# a confirmation whose installs fail: told so in %zu of 5 tunes\n", told);
	assert_int_equal(told, 5);
}

/* Three gains in a short budget (+40%, +8%, +8%): the largest, confirmed first, gets the pairs
 * its interval needs even when an equal share of what is left is shorter (it was skipped, and
 * the smaller ones had the time: applied in 1 of 20). Applied in at least 8 of 20 (10 here;
 * the rest are the noise's: 15 pairs at this level, a screen not yet fitted, or a gain found
 * too late for its pairs), the placebos in none. */
static void
test_confirm_largest(void **state)
{
	bool sel[KNOB_COUNT] = { false };
	size_t applied = 0, placebo = 0;

	(void)state;
	smb_screen_only(sel);
	plants[nplants++] = (typeof(plants[0])){ KNOB_SMB_MIN_RECEIVEFILE_SIZE, "16K", 0.40 };
	plants[nplants++] = (typeof(plants[0])){ KNOB_SMB_USE_SENDFILE, "yes", 0.08 };
	plants[nplants++] = (typeof(plants[0])){ KNOB_SMB_IO_URING, "yes", 0.08 };
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct sim s;
		struct outcome out;

		sim_screen(&s, 9300 + seed, DRIFT_LINEAR);
		s.sel = sel;
		s.run_s = 0.6;
		s.install_s = 0.6;
		tune_once(&s, 90, NULL, &out);
		assert_int_equal(out.rc, 0);
		applied += out.dec[KNOB_SMB_MIN_RECEIVEFILE_SIZE].applied;
		for (size_t i = 0; i < KNOB_COUNT; i++) /* applied, nothing "kept" */
			assert_true(!out.dec[i].applied || !strstr(out.dec[i].reason, " kept"));
		for (size_t i = 0; i < KNOB_COUNT; i++)
			placebo += out.dec[i].applied && i != KNOB_SMB_MIN_RECEIVEFILE_SIZE &&
				   i != KNOB_SMB_USE_SENDFILE && i != KNOB_SMB_IO_URING;
	}
	printf("# three gains in 90 s (+40%%, +8%%, +8%%): the +40%% applied in %zu of 20, a "
	       "placebo "
	       "in %zu\n",
	       applied, placebo);
	assert_true(applied >= 8);
	assert_int_equal(placebo, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_effect),
		cmocka_unit_test(test_placebo),
		cmocka_unit_test(test_false_positives),
		cmocka_unit_test(test_power),
		cmocka_unit_test(test_planted_cost),
		cmocka_unit_test(test_cost_named),
		cmocka_unit_test(test_mtu),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_budget_slow_switch),
		cmocka_unit_test(test_plan_settles),
		cmocka_unit_test(test_encryption_first),
		cmocka_unit_test(test_after_score),
		cmocka_unit_test(test_control_naive),
		cmocka_unit_test(test_carry_over),
		cmocka_unit_test(test_gain_confirmed),
		cmocka_unit_test(test_screen_linear),
		cmocka_unit_test(test_screen_walk),
		cmocka_unit_test(test_screen_interaction),
		cmocka_unit_test(test_screens_spend_budget),
		cmocka_unit_test(test_confirm_largest),
		cmocka_unit_test(test_screens_joined),
		cmocka_unit_test(test_demo_costs),
		cmocka_unit_test(test_screen_small),
		cmocka_unit_test(test_screen_adaptive),
		cmocka_unit_test(test_confirm_futile),
		cmocka_unit_test(test_screen_fails),
		cmocka_unit_test(test_confirm_fails),
		cmocka_unit_test(test_screen_parts),
		cmocka_unit_test(test_screen_parts_cross),
		cmocka_unit_test(test_screen_parts_gain),
		cmocka_unit_test(test_sealed_pair),
		cmocka_unit_test(test_semantics_consent),
	};

	if (getenv("TUNER_ONLY")) /* one test while working on it: TUNER_ONLY=test_mtu */
		cmocka_set_test_filter(getenv("TUNER_ONLY"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
