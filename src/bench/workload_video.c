/* workload_video.c - the video-frames workload: paced frames of a known format written and
 * read back at the frame rate, and the formats it knows. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run.h"
#include "workloads.h"
#include "xmalloc.h"

/* ProRes 422 HQ frames are its target bit rate over the frame rate (Apple's ProRes white
 * paper: 220 Mb/s for 1920x1080 and 884 Mb/s for 3840x2160 at 29.97 fps); v210 packs six
 * 10-bit 4:2:2 pixels in 16 bytes: 1920 / 6 * 16 = 5120 bytes a line. */
static const struct bench_video_format fmt_prores_1080 = {
	"prores422hq-1080p",
	"1080p ProRes 422 HQ",
	917584,
};
static const struct bench_video_format fmt_prores_2160 = {
	"prores422hq-2160p",
	"4K UHD ProRes 422 HQ",
	3687020,
};
static const struct bench_video_format fmt_v210_1080 = {
	"v210-1080p",
	"uncompressed 10-bit 1080p (v210)",
	5120u * 1080u,
};
static const struct bench_video_format *const video_formats[] = {
	&fmt_prores_1080,
	&fmt_prores_2160,
	&fmt_v210_1080,
	NULL,
};

const struct bench_video_format *const *
bench_video_formats(void)
{
	return video_formats;
}

int
bench_video_parse(const char *spec, const struct bench_video_format **fmt, double *fps)
{
	const char *at = strchr(spec, '@');
	char *end;
	size_t i;

	if (!at)
		return -EINVAL;
	*fps = strtod(at + 1, &end);
	if (*end || end == at + 1 || !(*fps >= 1 && *fps <= 240))
		return -EINVAL;
	for (i = 0; video_formats[i]; i++)
		if (strlen(video_formats[i]->name) == (size_t)(at - spec) &&
		    strncmp(video_formats[i]->name, spec, at - spec) == 0) {
			*fmt = video_formats[i];
			return 0;
		}
	return -EINVAL;
}

static void
sleep_until(const struct run *r, double t)
{
	double d;

	while (!stopped(r) && (d = t - timeutil_mono()) > 0) {
		struct timespec ts = { (time_t)d, (long)((d - floor(d)) * 1e9) };

		nanosleep(&ts, NULL);
	}
}

/* Paced frames: frame i is due at t0 + i / fps; a frame that cannot start within one frame
 * time of its due time is dropped, as a capture device with a one-frame buffer would. */
static int
video_pass(struct run *r, bool write, uint64_t frames_on_disk, uint64_t *written)
{
	const struct bench_video_format *fmt = r->o.video;
	uint64_t n = (uint64_t)ceil(r->o.video_fps * r->o.video_seconds), i, done = 0, dropped = 0;
	double period = 1.0 / r->o.video_fps, *lat = xcalloc(n ? n : 1, sizeof(*lat));
	double t0, t_end, p99;
	struct bench_file *f;
	char p[256];
	int rc;

	run_path(r, p, sizeof(p), "video.dat");
	rc = r->d->open(r->c, p, write ? BENCH_WR | BENCH_CREATE : BENCH_RD, &f);
	if (rc < 0) {
		free(lat);
		return run_fail(r, r->c, rc, "open", p, r->err);
	}
	t0 = timeutil_mono();
	t_end = t0;
	for (i = 0; i < n; i++) {
		double due = t0 + (double)i * period, t1;
		uint64_t slot = write ? done : (frames_on_disk ? i % frames_on_disk : 0);
		ssize_t got;

		sleep_until(r, due);
		if ((rc = run_check_stop(r, r->err)) < 0)
			break;
		t1 = timeutil_mono();
		if (t1 > due + period) {
			dropped++;
			continue;
		}
		got = write ? r->d->pwrite(r->c, f, r->buf, fmt->frame_bytes,
					   slot * fmt->frame_bytes)
			    : r->d->pread(r->c, f, r->rbuf, fmt->frame_bytes,
					  slot * fmt->frame_bytes);
		if (got != (ssize_t)fmt->frame_bytes) {
			rc = run_fail(r, r->c, got < 0 ? (int)got : -EIO, write ? "write" : "read",
				      p, r->err);
			break;
		}
		t_end = timeutil_mono();
		lat[done++] = (t_end - t1) * 1e6;
	}
	if (rc == 0 && write && (rc = r->d->flush(r->c, f)) < 0)
		rc = run_fail(r, r->c, rc, "flush", p, r->err);
	r->d->close(r->c, f);
	if (rc == 0) {
		double secs = t_end - t0 > (double)n * period ? t_end - t0 : (double)n * period;
		const char *fps = write ? "write-fps" : "read-fps";
		struct metric *m;

		run_record(r, fps, "fps", (double)done / secs, r->cold);
		run_record(r, write ? "write-dropped" : "read-dropped", "frames", (double)dropped,
			   r->cold);
		qsort(lat, done, sizeof(*lat), run_cmp_double);
		p99 = bench_quantile(lat, done, 0.99);
		run_record(r, write ? "write-p99" : "read-p99", "us", p99, r->cold);
		if (write) {
			/* Frames are timed as they are written; the flush after them is not. */
			run_durable(r, "write-fps", false, 0);
			run_durable(r, "write-dropped", false, 0);
			run_durable(r, "write-p99", false, 0);
		}
		if ((m = run_metric(r, fps)) && r->measuring) {
			int ok = dropped == 0 && done > 0 && p99 <= 0.9 * period * 1e6;

			m->pass = m->pass < 0 ? ok : (m->pass && ok);
		}
	}
	*written = done;
	free(lat);
	return rc;
}

int
wl_video_run(struct run *r)
{
	uint64_t written = 0, ignored;
	char p[256];
	int rc;

	snprintf(r->note, sizeof(r->note),
		 "%s at %g fps for %g s: pass needs no dropped frame "
		 "and p99 frame time <= %.1f ms (90%% of the %.1f ms frame time)",
		 r->o.video->label, r->o.video_fps, r->o.video_seconds, 900.0 / r->o.video_fps,
		 1000.0 / r->o.video_fps);
	if ((rc = video_pass(r, true, 0, &written)) < 0)
		return rc;
	if ((rc = video_pass(r, false, written, &ignored)) < 0)
		return rc;
	run_path(r, p, sizeof(p), "video.dat");
	if ((rc = r->d->unlink(r->c, p)) < 0)
		return run_fail(r, r->c, rc, "unlink", p, r->err);
	return 0;
}
