/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where the journal lives (the state dir) and the one-writer-per-target lock beneath it. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
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

/* A held lock is polled at growing intervals up to this long. */
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

/* How long a held lock is waited for before the notice is given. */
#define LOCK_NOTICE_AFTER 1.0

/* flock(op) on fd (LOCK_EX or LOCK_SH), polling up to w->seconds: 0, -EWOULDBLOCK (err not set)
 * or another error (err set). w->notice is called once when the lock is still held after
 * LOCK_NOTICE_AFTER seconds. A conversion that fails leaves fd without a lock (flock(2) drops the
 * old one first), which is what lets two shared holders that both want it exclusively through. */
static int
lock_wait(int fd, int op, const struct grove_lock_wait *w, const char *what, const char *path,
	  struct grove_error *err)
{
	double start = monotonic_seconds(), deadline = start + w->seconds;
	long interval_ns = 1000000L;
	bool told = false;
	int r;

	for (;;) {
		struct timespec ts;
		double now, left;

		r = grove_fs_flock(fd, op | LOCK_NB, err);
		if (r != -EWOULDBLOCK)
			return r;
		grove_error_clear(err);
		now = monotonic_seconds();
		left = deadline - now;
		if (left <= 0)
			return -EWOULDBLOCK;
		if (!told && w->notice && now - start >= LOCK_NOTICE_AFTER) {
			w->notice(w->ctx, what, path, w->seconds);
			told = true;
		}
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

/* The error for a lock still held after the wait. */
static int
held_error(const char *what, const char *path, double seconds, struct grove_error *err)
{
	if (seconds > 0)
		return grove_error_set(err, -EWOULDBLOCK,
				       "%s '%s' is locked by another grove run (waited %g s)", what,
				       path, seconds);
	return grove_error_set(err, -EWOULDBLOCK, "%s '%s' is locked by another grove run", what,
			       path);
}

int
grove_lock_target(const struct grove_root *state, const struct grove_root *target,
		  double wait_seconds, struct grove_error *err)
{
	struct grove_lock_wait w = { .seconds = wait_seconds };

	return grove_lock_target_with(state, target, &w, false, err);
}

int
grove_lock_target_with(const struct grove_root *state, const struct grove_root *target,
		       const struct grove_lock_wait *wait, bool shared, struct grove_error *err)
{
	struct grove_lock_wait w = *wait;
	cleanup_fd int dirfd = -1;
	cleanup_fd int fd = -1;
	char name[64];
	int r;

	w.seconds = bound_wait(w.seconds);
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
	r = lock_wait(fd, shared ? LOCK_SH : LOCK_EX, &w, "target", target->path, err);
	if (r == 0)
		return steal_fd(fd);
	if (r != -EWOULDBLOCK)
		return grove_error_prefix(err, "lock target '%s'", target->path);
	return held_error("target", target->path, w.seconds, err);
}

int
grove_lock_convert(int fd, bool shared, const struct grove_lock_wait *wait,
		   const struct grove_root *target, struct grove_error *err)
{
	struct grove_lock_wait w = *wait;
	int r;

	w.seconds = bound_wait(w.seconds);
	r = lock_wait(fd, shared ? LOCK_SH : LOCK_EX, &w, "target", target->path, err);
	if (r == 0)
		return 0;
	if (r != -EWOULDBLOCK)
		return grove_error_prefix(err, "lock target '%s'", target->path);
	return held_error("target", target->path, w.seconds, err);
}

int
grove_lock_dir(const struct grove_root *dir, double wait_seconds, const char *what,
	       struct grove_error *err)
{
	struct grove_lock_wait w = { .seconds = wait_seconds };

	return grove_lock_dir_with(dir, &w, what, err);
}

int
grove_lock_dir_with(const struct grove_root *dir, const struct grove_lock_wait *wait,
		    const char *what, struct grove_error *err)
{
	struct grove_lock_wait w = *wait;
	cleanup_fd int fd = grove_fs_open_dir_beneath(dir->fd, ".", err);
	int r;

	w.seconds = bound_wait(w.seconds);
	if (fd < 0)
		return grove_error_prefix(err, "lock %s '%s'", what, dir->path);
	r = lock_wait(fd, LOCK_EX, &w, what, dir->path, err);
	if (r == 0)
		return steal_fd(fd);
	if (r != -EWOULDBLOCK)
		return grove_error_prefix(err, "lock %s '%s'", what, dir->path);
	return held_error(what, dir->path, w.seconds, err);
}
