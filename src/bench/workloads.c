/* workloads.c - the registry of workloads: their names, each one's setup and run, the
 * options' defaults and limits, and the space each needs on the target. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run.h"
#include "units.h"
#include "workloads.h"

static const char *const workload_names[BENCH_NWORKLOADS] = {
	"seq-write", "seq-read", "copy-in-share", "mixed-rw", "small-files", "small-io",
	"random-io", "metadata", "video-frames",  "big-dir",  "source-tree",
};

const char *
bench_workload_name(enum bench_workload w)
{
	return (unsigned)w < BENCH_NWORKLOADS ? workload_names[w] : NULL;
}

int
bench_workload_parse(const char *name)
{
	int i;

	for (i = 0; i < BENCH_NWORKLOADS; i++)
		if (strcmp(workload_names[i], name) == 0)
			return i;
	return -EINVAL;
}

const struct wl_ops wl_ops[BENCH_NWORKLOADS] = {
	[BENCH_SEQ_WRITE] = { NULL, wl_seq_write },
	[BENCH_SEQ_READ] = { wl_seq_read_setup, wl_seq_read },
	[BENCH_COPY] = { wl_copy_setup, wl_copy_run },
	[BENCH_MIXED_RW] = { wl_mixed_setup, wl_mixed_run },
	[BENCH_SMALL_FILES] = { wl_small_files_setup, wl_small_files_run },
	[BENCH_SMALL_IO] = { wl_small_io_setup, wl_small_io_run },
	[BENCH_RANDOM_IO] = { wl_random_setup, wl_random_run },
	[BENCH_METADATA] = { wl_meta_setup, wl_meta_run },
	[BENCH_VIDEO] = { NULL, wl_video_run },
	[BENCH_BIG_DIR] = { wl_bigdir_setup, wl_bigdir_run },
	[BENCH_SOURCE_TREE] = { wl_tree_setup, wl_tree_run },
};

void
wl_normalize(struct bench_opts *o)
{
	if (!o->size)
		o->size = BENCH_DEFAULT_SIZE;
	if (!o->repeats)
		o->repeats = BENCH_DEFAULT_REPEATS;
	if (!o->small_files)
		o->small_files = 100;
	if (!o->small_io_write)
		o->small_io_write = o->size < 10000000 ? o->size : 10000000;
	if (!o->small_io_read)
		o->small_io_read = o->size < 100000000 ? o->size : 100000000;
	if (!o->meta_entries)
		o->meta_entries = 1000;
	if (!o->tree_files)
		o->tree_files = 2000;
	if (!o->video)
		o->video = bench_video_formats()[0];
	if (!(o->video_fps > 0))
		o->video_fps = 30;
	if (!(o->video_seconds > 0))
		o->video_seconds = 10;
	if (!o->seed)
		o->seed = 0x6e617374756e65ull; /* "nastune" */
}

uint64_t
bench_footprint(enum bench_workload w, const struct bench_opts *opts)
{
	struct bench_opts o = *opts;
	double frames;

	wl_normalize(&o);
	switch (w) {
	case BENCH_SEQ_WRITE:
	case BENCH_SEQ_READ:
		return o.size;
	case BENCH_COPY:
	case BENCH_MIXED_RW:
		return units_mul_sat(2, o.size);
	case BENCH_SMALL_FILES:
		return units_mul_sat(o.small_files, SMALL_FILE + 8192);
	case BENCH_SMALL_IO:
		return units_add_sat(o.small_io_read, o.small_io_write);
	case BENCH_RANDOM_IO:
		return wl_random_file_size(&o);
	case BENCH_METADATA:
		return units_mul_sat(o.meta_entries, 4096);
	case BENCH_BIG_DIR:
		return units_mul_sat(o.meta_entries + BENCH_DIR_OPS, 4096);
	case BENCH_SOURCE_TREE:
		return units_mul_sat(o.tree_files + o.tree_files / 16 + 16, 4096);
	case BENCH_VIDEO:
		/* Converting a double beyond 2^64 to an integer is undefined: saturate first. */
		frames = ceil(o.video_fps * o.video_seconds);
		if (!(frames >= 0 && frames < 1e18))
			return UINT64_MAX;
		return units_mul_sat(o.video->frame_bytes, (uint64_t)frames);
	default:
		return 0;
	}
}

int
bench_opts_check(const struct bench_opts *o, char *err, size_t errlen)
{
	if (o->size > BENCH_MAX_SIZE)
		snprintf(err, errlen, "size %llu is above the limit of %llu bytes (16T)",
			 (unsigned long long)o->size, (unsigned long long)BENCH_MAX_SIZE);
	else if (o->small_io_write > BENCH_MAX_SIZE || o->small_io_read > BENCH_MAX_SIZE)
		snprintf(err, errlen, "small-io volume %llu is above the limit of %llu bytes (16T)",
			 (unsigned long long)(o->small_io_write > o->small_io_read
						      ? o->small_io_write
						      : o->small_io_read),
			 (unsigned long long)BENCH_MAX_SIZE);
	else if (o->repeats > BENCH_MAX_REPEATS || o->warmup > BENCH_MAX_WARMUP)
		snprintf(err, errlen, "%u repeats and %u warm-up runs: at most %u and %u",
			 o->repeats, o->warmup, BENCH_MAX_REPEATS, BENCH_MAX_WARMUP);
	else if (o->small_files > BENCH_MAX_FILES)
		snprintf(err, errlen, "%u small files is above the limit of %u", o->small_files,
			 BENCH_MAX_FILES);
	else if (o->tree_files > BENCH_MAX_TREE_FILES)
		snprintf(err, errlen, "%u source-tree files is above the limit of %u",
			 o->tree_files, BENCH_MAX_TREE_FILES);
	else if (o->meta_entries > BENCH_MAX_ENTRIES)
		snprintf(err, errlen, "%u metadata entries is above the limit of %u",
			 o->meta_entries, BENCH_MAX_ENTRIES);
	else if (o->video_fps < 0 || o->video_fps > 240 || o->video_fps != o->video_fps)
		snprintf(err, errlen, "video frame rate %g is outside 1 to 240", o->video_fps);
	else if (o->video_seconds < 0 || o->video_seconds > 3600 ||
		 o->video_seconds != o->video_seconds)
		snprintf(err, errlen, "video seconds %g is outside 0.1 to 3600", o->video_seconds);
	else
		return 0;
	return -EINVAL;
}
