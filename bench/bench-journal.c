/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Benchmark, run by hand: the cost of the transaction log, a stow and unstow with and without it in
 * one run. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "grove/stow.h"

/*
 * Usage: bench-journal [FILES [ROUNDS]] (defaults 1000 and 9). Makes, in a
 * fresh temp dir (under $TMPDIR, else /tmp), a stow dir with two packages
 * sharing bin/ (FILES files each, so the second stow unfolds bin/), then per round, alternating the
 * two modes: stow a, stow b, unstow a, unstow b; timed as a whole. Prints the median wall time of
 * each mode and their ratio.
 */

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
make_pkg(const char *root, const char *pkg, int files)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/stow/%s", root, pkg);
	mkdir(p, 0777);
	snprintf(p, sizeof(p), "%s/stow/%s/bin", root, pkg);
	mkdir(p, 0777);
	for (int i = 0; i < files; i++) {
		int fd;

		snprintf(p, sizeof(p), "%s/stow/%s/bin/%s-%05d", root, pkg, pkg, i);
		fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
}

static int
one(const char *stow, const char *target, const char *state, bool unstow, const char *pkg,
    bool journal)
{
	struct grove_stow_request req;
	struct grove_stow_run run;
	struct grove_session_opts so = { .state_opt = state };
	struct grove_error err = { 0 };
	int r;

	grove_stow_request_init(&req);
	req.dir = strdup(stow);
	req.target = strdup(target);
	req.command = strdup("bench");
	grove_stow_request_add(&req, unstow, pkg);
	r = grove_stow_prepare(&req, journal ? &so : NULL, &run, &err);
	if (r >= 0) {
		r = grove_stow_execute(&run, &err);
		grove_stow_run_release(&run);
	}
	grove_stow_request_release(&req);
	if (r < 0)
		fprintf(stderr, "bench-journal: %s\n", err.msg);
	return r;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	int files = argc > 1 ? atoi(argv[1]) : 1000;
	int rounds = argc > 2 ? atoi(argv[2]) : 9;
	const char *tmp = getenv("TMPDIR");
	char root[4096], stow[4200], target[4200], state[4200];
	double *t[2];

	snprintf(root, sizeof(root), "%s/grove-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (files <= 0 || rounds <= 0 || !mkdtemp(root))
		return 2;
	t[0] = calloc((size_t)rounds, sizeof(double));
	t[1] = calloc((size_t)rounds, sizeof(double));
	snprintf(stow, sizeof(stow), "%s/stow", root);
	snprintf(target, sizeof(target), "%s/target", root);
	snprintf(state, sizeof(state), "%s/state", root);
	mkdir(stow, 0777);
	mkdir(target, 0777);
	make_pkg(root, "a", files);
	make_pkg(root, "b", files);
	for (int i = 0; i < rounds; i++) {
		for (int k = 0; k < 2; k++) {
			int mode = (i + k) % 2; /* alternate which mode goes first */
			double t0 = now();

			if (one(stow, target, state, false, "a", mode) < 0 ||
			    one(stow, target, state, false, "b", mode) < 0 ||
			    one(stow, target, state, true, "a", mode) < 0 ||
			    one(stow, target, state, true, "b", mode) < 0)
				return 1;
			t[mode][i] = now() - t0;
		}
	}
	qsort(t[0], (size_t)rounds, sizeof(double), cmp_double);
	qsort(t[1], (size_t)rounds, sizeof(double), cmp_double);
	printf("stow a, stow b (unfolds bin/ of %d+%d links), unstow a (folds), unstow b; "
	       "median of %d rounds\n",
	       files, files, rounds);
	printf("  without the log: %8.2f ms\n", t[0][rounds / 2] * 1e3);
	printf("  with the log:    %8.2f ms  (%.2fx, +%.2f ms per command)\n",
	       t[1][rounds / 2] * 1e3, t[1][rounds / 2] / t[0][rounds / 2],
	       (t[1][rounds / 2] - t[0][rounds / 2]) * 1e3 / 4);
	printf("(temp dir %s left for inspection)\n", root);
	return 0;
}
