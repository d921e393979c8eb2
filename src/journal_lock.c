/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where the journal lives (the state dir) and the one-writer-per-target lock beneath it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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
grove_journal_system_state_dir(char **ret_path, struct grove_error *err)
{
	const char *v = env_nonempty("GROVE_SYSTEM_STATE_DIR");
	char *p = strdup(v ? v : "/var/lib/grove");

	if (!p)
		return grove_error_errno(err, -ENOMEM, "state dir");
	*ret_path = p;
	return 0;
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
		return grove_journal_system_state_dir(ret_path, err);
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

/* ---- the holder's record ---- */

/*
 * The holder of a target lock writes "pid N\ncommand TEXT\n" (TEXT with its newlines as
 * spaces, cut to fit) at the start of the lock file, padded with NULs to RECORD_SIZE so that
 * one pwrite replaces any earlier record whole, then marks the file (grove_fs_lock_mark). The
 * record is advisory: the lock is the flock, and a record is believed only while a mark shows
 * that a live process holds the file, and only when the pid it names is alive.
 */
#define RECORD_SIZE 1024

static int
write_record(int fd, const char *command, struct grove_error *err)
{
	char rec[RECORD_SIZE] = { 0 };
	int n = snprintf(rec, sizeof(rec), "pid %ld\ncommand ", (long)getpid());
	size_t at = n > 0 ? (size_t)n : 0, room = sizeof(rec) - 2;

	for (const char *c = command ? command : ""; *c && at < room; c++)
		rec[at++] = (char)(*c == '\n' || *c == '\r' ? ' ' : *c);
	rec[at] = '\n';
	return grove_fs_write_head(fd, rec, sizeof(rec), err);
}

/* Whether pid names a live process (EPERM: it does, another user's). */
static bool
pid_alive(long pid)
{
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* Parses the record at fd into h->pid and h->command, leaving them 0 and NULL when it is not one
 * or names a process that is gone. */
static void
read_record(int fd, struct grove_lock_holder *h)
{
	char rec[RECORD_SIZE + 1], *end = NULL, *cmd, *nl;
	struct grove_error err;
	long pid;

	if (grove_fs_read_head(fd, rec, sizeof(rec), &err) < 0 || strncmp(rec, "pid ", 4) != 0)
		return;
	errno = 0;
	pid = strtol(rec + 4, &end, 10);
	if (errno || end == rec + 4 || strncmp(end, "\ncommand ", 9) != 0 || !pid_alive(pid))
		return;
	cmd = end + 9;
	nl = strchr(cmd, '\n');
	if (!nl)
		return;
	*nl = '\0';
	h->pid = pid;
	h->command = *cmd ? strdup(cmd) : NULL;
}

/* The error for a lock still held after the wait, naming the holder when its record says who
 * it is. */
static int
held_error(int fd, const char *what, const char *path, double seconds, struct grove_error *err)
{
	struct grove_lock_holder h = { 0 };
	char who[160] = "";
	char waited[48] = "";

	if (fd >= 0)
		read_record(fd, &h);
	if (h.pid == (long)getpid()) /* our own record: a conversion waited for others */
		grove_lock_holder_release(&h);
	if (h.pid && h.command)
		snprintf(who, sizeof(who), " (pid %ld: %.120s)", h.pid, h.command);
	else if (h.pid)
		snprintf(who, sizeof(who), " (pid %ld)", h.pid);
	if (seconds > 0)
		snprintf(waited, sizeof(waited), " (waited %g s)", seconds);
	grove_lock_holder_release(&h);
	return grove_error_set(err, -EWOULDBLOCK, "%s '%s' is locked by another grove run%s%s",
			       what, path, who, waited);
}

void
grove_lock_holder_release(struct grove_lock_holder *h)
{
	if (!h)
		return;
	free(h->command);
	memset(h, 0, sizeof(*h));
}

/* The lock file's name for target. */
static void
lock_name(char *buf, size_t size, const struct grove_root *target)
{
	snprintf(buf, size, "%ju-%ju.lock", (uintmax_t)target->dev, (uintmax_t)target->ino);
}

int
grove_lock_target_holder(const struct grove_root *state, const struct grove_root *target,
			 struct grove_lock_holder *ret, struct grove_error *err)
{
	struct grove_lock_holder h = { .state = GROVE_LOCK_FREE };
	cleanup_fd int dirfd = -1;
	cleanup_fd int fd = -1;
	bool marked = false;
	char name[64];

	(void)err;
	/* Read-only and without O_CREAT: looking makes nothing. No state dir (a reader's empty
	 * log, GROVE_JOURNAL_ABSENT_EMPTY), no locks/ or no file: nobody has ever locked the
	 * target through this state dir. */
	if (state->fd < 0) {
		*ret = h;
		return 0;
	}
	dirfd = grove_fs_open_dir_at(state->fd, LOCKS_DIR, err);
	lock_name(name, sizeof(name), target);
	if (dirfd >= 0)
		fd = grove_fs_open_file_at(dirfd, name, O_RDONLY, 0, err);
	if (dirfd == -ENOENT || fd == -ENOENT) {
		grove_error_clear(err);
		*ret = h;
		return 0;
	}
	if (fd < 0 || grove_fs_lock_probe(fd, &marked, err) < 0) {
		/* Another user's state dir whose locks cannot be read: say so, do not guess. */
		grove_error_clear(err);
		h.state = GROVE_LOCK_UNKNOWN;
		*ret = h;
		return 0;
	}
	if (marked) {
		h.state = GROVE_LOCK_HELD;
		read_record(fd, &h);
	}
	*ret = h;
	return 0;
}

int
grove_lock_target(const struct grove_root *state, const struct grove_root *target,
		  double wait_seconds, struct grove_error *err)
{
	struct grove_lock_wait w = { .seconds = wait_seconds };

	return grove_lock_target_with(state, target, &w, false, NULL, err);
}

int
grove_lock_target_with(const struct grove_root *state, const struct grove_root *target,
		       const struct grove_lock_wait *wait, bool shared, const char *command,
		       struct grove_error *err)
{
	struct grove_lock_wait w = *wait;
	cleanup_fd int dirfd = -1;
	cleanup_fd int fd = -1;
	struct grove_stat st;
	mode_t mode = 0600;
	char name[64];
	int r;

	w.seconds = bound_wait(w.seconds);
	dirfd = grove_fs_open_or_make_dir(state->fd, LOCKS_DIR, 0700, err);
	if (dirfd < 0)
		return grove_error_prefix(err, "lock target '%s': state dir '%s'", target->path,
					  state->path);
	/* Readable by whom the folder is (the system state dir's are, so that users can see
	 * whether a transaction of root's is in progress). */
	if (grove_fs_stat_fd(dirfd, &st, err) == 0)
		mode |= st.mode & 044;
	grove_error_clear(err);
	lock_name(name, sizeof(name), target);
	/* The file stays after we are done: removing it would let a waiter lock
	 * an unlinked inode while a newcomer locks a fresh one. The lock itself
	 * dies with the fd, so a killed grove leaves nothing held. */
	fd = grove_fs_open_file_at(dirfd, name, O_RDWR | O_CREAT, mode, err);
	if (fd < 0)
		return grove_error_prefix(err, "lock target '%s': in '%s/" LOCKS_DIR "'",
					  target->path, state->path);
	r = lock_wait(fd, shared ? LOCK_SH : LOCK_EX, &w, "target", target->path, err);
	if (r == -EWOULDBLOCK)
		return held_error(fd, "target", target->path, w.seconds, err);
	/* Who holds it, then the mark that makes that record believed (in this order, so that
	 * a marked file always carries its holder's record). */
	if (r == 0)
		r = write_record(fd, command, err);
	if (r == 0)
		r = grove_fs_lock_mark(fd, err);
	if (r == 0)
		return steal_fd(fd);
	return grove_error_prefix(err, "lock target '%s': in '%s/" LOCKS_DIR "'", target->path,
				  state->path);
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
	return held_error(fd, "target", target->path, w.seconds, err);
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
	return held_error(-1, what, dir->path, w.seconds, err);
}
