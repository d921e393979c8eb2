/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where the journal lives (the state dir) and the one-writer-per-target lock beneath it. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "grove/journal.h"
#include "util.h"

#define LOCKS_DIR "locks"

/* grove_lock_target polls a held lock at growing intervals up to this long. */
#define LOCK_POLL_MAX_NS 100000000L

/* ---- the state dir ---- */

/* An environment variable, with empty counting as unset. */
static const char *
env_nonempty(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* base + "/" + rest without doubling a trailing slash of base. */
static char *
join(const char *base, const char *rest)
{
	size_t len = strlen(base);

	while (len > 1 && base[len - 1] == '/')
		len--;
	return grove_strdupf("%.*s/%s", (int)len, base, rest);
}

int
grove_journal_state_dir(const char *state_opt, char **ret_path, struct grove_error *err)
{
	const char *v;
	char *p;

	if (state_opt) {
		if (!*state_opt)
			return grove_error_set(err, -GROVE_E_USAGE, "state dir '': empty path");
		p = strdup(state_opt);
	} else if ((v = env_nonempty("GROVE_STATE_DIR"))) {
		p = strdup(v);
	} else if (geteuid() == 0) {
		p = strdup("/var/lib/grove");
	} else if ((v = env_nonempty("XDG_STATE_HOME")) && v[0] == '/') {
		/* The XDG spec: a relative value is invalid and is ignored. */
		p = join(v, "grove");
	} else if ((v = env_nonempty("HOME"))) {
		p = join(v, ".local/state/grove");
	} else {
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "cannot find the state dir: HOME is not set (use --state or "
				       "GROVE_STATE_DIR)");
	}
	if (!p)
		return grove_error_errno(err, -ENOMEM, "state dir");
	*ret_path = p;
	return 0;
}

/* ---- the writer lock ---- */

static double
monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* flock(LOCK_EX) on fd, polling up to wait_seconds: 0, -EWOULDBLOCK (err not set) or another
 * error (err set). */
static int
lock_wait(int fd, double wait_seconds, struct grove_error *err)
{
	double deadline;
	long interval_ns = 1000000L;
	int r;

	deadline = monotonic_seconds() + wait_seconds;
	for (;;) {
		struct timespec ts;
		double left;

		r = grove_fs_flock(fd, LOCK_EX | LOCK_NB, err);
		if (r != -EWOULDBLOCK)
			return r;
		grove_error_clear(err);
		left = deadline - monotonic_seconds();
		if (left <= 0)
			return -EWOULDBLOCK;
		/* Polling, not a blocking flock under a timer: no signals in library
		 * code, and the wait stays bounded whatever the caller does. */
		if ((double)interval_ns / 1e9 > left)
			interval_ns = (long)(left * 1e9) + 1;
		ts.tv_sec = 0;
		ts.tv_nsec = interval_ns;
		nanosleep(&ts, NULL);
		if (interval_ns < LOCK_POLL_MAX_NS)
			interval_ns = interval_ns * 2 > LOCK_POLL_MAX_NS ? LOCK_POLL_MAX_NS
									 : interval_ns * 2;
	}
}

/* Bounded: NaN and negatives mean "do not wait", and a week is forever enough. */
static double
bound_wait(double wait_seconds)
{
	if (!(wait_seconds > 0))
		return 0;
	return wait_seconds > 7 * 86400.0 ? 7 * 86400.0 : wait_seconds;
}

int
grove_lock_target(const struct grove_root *state, const struct grove_root *target,
		  double wait_seconds, struct grove_error *err)
{
	cleanup_fd int dirfd = -1;
	cleanup_fd int fd = -1;
	char name[64];
	int r;

	wait_seconds = bound_wait(wait_seconds);
	dirfd = grove_fs_open_or_make_dir(state->fd, LOCKS_DIR, 0700, err);
	if (dirfd < 0)
		return grove_error_prefix(err, "lock target '%s': state dir '%s'", target->path,
					  state->path);
	snprintf(name, sizeof(name), "%ju-%ju.lock", (uintmax_t)target->dev,
		 (uintmax_t)target->ino);
	/* The file stays after we are done: removing it would let a waiter lock
	 * an unlinked inode while a newcomer locks a fresh one. The lock itself
	 * dies with the fd, so a killed grove leaves nothing held. */
	fd = grove_fs_open_file_at(dirfd, name, O_RDWR | O_CREAT, 0600, err);
	if (fd < 0)
		return grove_error_prefix(err, "lock target '%s': in '%s/" LOCKS_DIR "'",
					  target->path, state->path);
	r = lock_wait(fd, wait_seconds, err);
	if (r == 0)
		return steal_fd(fd);
	if (r != -EWOULDBLOCK)
		return grove_error_prefix(err, "lock target '%s'", target->path);
	if (wait_seconds > 0)
		return grove_error_set(err, -EWOULDBLOCK,
				       "target '%s' is locked by another grove run (waited %g s)",
				       target->path, wait_seconds);
	return grove_error_set(err, -EWOULDBLOCK, "target '%s' is locked by another grove run",
			       target->path);
}

int
grove_lock_dir(const struct grove_root *dir, double wait_seconds, const char *what,
	       struct grove_error *err)
{
	cleanup_fd int fd = grove_fs_open_dir_beneath(dir->fd, ".", err);
	int r;

	wait_seconds = bound_wait(wait_seconds);
	if (fd < 0)
		return grove_error_prefix(err, "lock %s '%s'", what, dir->path);
	r = lock_wait(fd, wait_seconds, err);
	if (r == 0)
		return steal_fd(fd);
	if (r != -EWOULDBLOCK)
		return grove_error_prefix(err, "lock %s '%s'", what, dir->path);
	if (wait_seconds > 0)
		return grove_error_set(err, -EWOULDBLOCK,
				       "%s '%s' is locked by another grove run (waited %g s)", what,
				       dir->path, wait_seconds);
	return grove_error_set(err, -EWOULDBLOCK, "%s '%s' is locked by another grove run", what,
			       dir->path);
}
