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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "grove/journal.h"
#include "base/util.h"

#include "banned.h" /* last */

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

/* Whether pid names a live process running as uid: a record is believed only when the process it
 * names runs as the user who owns the lock file (the only one who can write it), so that a pid
 * taken over by someone else's process after a crash names no holder. */
static bool
pid_runs_as(long pid, uid_t uid)
{
	uid_t owner = (uid_t)-1;

	return grove_fs_pid_owner(pid, &owner) == 0 && owner == uid;
}

/* Parses the record at fd (a lock file owned by uid) into h->pid and h->command, leaving them 0
 * and NULL when it is not one or names a process that is gone or runs as another user. */
static void
read_record(int fd, uid_t uid, struct grove_lock_holder *h)
{
	char rec[RECORD_SIZE + 1], *end = NULL, *cmd, *nl;
	struct grove_error err;
	long pid;

	if (grove_fs_read_head(fd, rec, sizeof(rec), &err) < 0 || strncmp(rec, "pid ", 4) != 0)
		return;
	errno = 0;
	pid = strtol(rec + 4, &end, 10);
	if (errno || end == rec + 4 || strncmp(end, "\ncommand ", 9) != 0 || !pid_runs_as(pid, uid))
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
held_error(int fd, uid_t uid, const char *what, const char *path, double seconds,
	   struct grove_error *err)
{
	struct grove_lock_holder h = { 0 };
	char who[160] = "";
	char waited[48] = "";

	if (fd >= 0)
		read_record(fd, uid, &h);
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

/*
 * Locks only their owner can take (DESIGN.md invariant 11). flock(2) needs nothing but an open
 * file, read-only will do, so a lock is private only when no one else can open its file: each
 * lock file is made 0600 in a folder that only its owner can write, and one that others could
 * open (an earlier grove made the system state dir's 0644, and whoever opened one then can keep
 * it open for ever) is never locked again: it is replaced by a new file. Whoever cannot open a
 * lock file learns whether it is held from /proc/locks (grove_lock_target_holder), where only a
 * holder running as the file's owner counts.
 */
struct private_lock {
	int dirfd;           /* the folder it is in */
	const char *name;    /* its name there */
	const char *tmpname; /* the name a replacement is made under (this run's own) */
	const char *shown;   /* its path, for messages */
	uid_t owner;         /* the folder's owner, who (or the user running grove) owns the file */
};

/* A folder of lock files: owned by owner and writable by no one else, or refused (whoever can
 * write it can put a file there that others can open). */
static int
check_lock_folder(int dirfd, uid_t owner, const char *path, struct grove_error *err)
{
	struct grove_stat st;

	if (grove_fs_stat_fd(dirfd, &st, err) < 0)
		return grove_error_prefix(err, "lock folder '%s'", path);
	if (st.uid != owner)
		return grove_error_set(
			err, -GROVE_E_CONFIG,
			"lock folder '%s' is owned by uid %u, not by the state dir's "
			"owner (uid %u): refusing locks another user controls",
			path, (unsigned)st.uid, (unsigned)owner);
	if (st.mode & (S_IWGRP | S_IWOTH))
		return grove_error_set(
			err, -GROVE_E_CONFIG,
			"lock folder '%s' is writable by %s: refusing locks others can "
			"replace (chmod go-w it)",
			path, (st.mode & S_IWOTH) ? "everyone" : "its group");
	return 0;
}

/* Before an earlier lock file open at fd (others could open it) is replaced: 0 when no process of
 * its owner's holds it (fd then holds it, or only another user's process does: the lock-out the
 * replacement ends), else waits for that holder (an earlier grove's run during an upgrade), and
 * -EWOULDBLOCK when it still holds it after the wait. */
static int
wait_earlier(int fd, const struct private_lock *l, const struct grove_lock_wait *w,
	     const char *what, const char *path, struct grove_error *err)
{
	long pid = 0;
	int r = grove_fs_flock(fd, LOCK_EX | LOCK_NB, err);

	if (r != -EWOULDBLOCK)
		return r;
	grove_error_clear(err);
	r = grove_fs_lock_holder_at(l->dirfd, l->name, l->owner, &pid, err);
	grove_error_clear(err);
	if (r == 0)
		return 0;
	/* Held by the owner, or /proc/locks cannot tell: wait as for any held lock. */
	return lock_wait(fd, LOCK_EX, w, what, path, err);
}

/* Opens l's file (made 0600 when missing; replaced when others could open it) and takes op on it,
 * waiting as w says: the fd, or -EWOULDBLOCK with err naming the holder (its record read when
 * record is set), or another error with err set. */
static int
take_private(const struct private_lock *l, int op, const struct grove_lock_wait *w,
	     const char *what, const char *path, bool record, struct grove_error *err)
{
	for (int round = 0; round < 64; round++) {
		cleanup_fd int fd =
			grove_fs_open_file_at(l->dirfd, l->name, O_RDWR | O_CREAT, 0600, err);
		struct grove_stat st, now = { .type = GROVE_FT_NONE };
		int r;

		if (fd < 0)
			return fd;
		r = grove_fs_stat_fd(fd, &st, err);
		if (r < 0)
			return r;
		if (st.uid != l->owner && st.uid != geteuid())
			return grove_error_set(err, -GROVE_E_CONFIG,
					       "lock file '%s' is owned by uid %u, not by uid %u: "
					       "refusing a lock another user controls",
					       l->shown, (unsigned)st.uid, (unsigned)l->owner);
		if (st.mode & 077) {
			r = wait_earlier(fd, l, w, what, path, err);
			if (r == -EWOULDBLOCK)
				return held_error(-1, st.uid, what, path, w->seconds, err);
			if (r == 0)
				r = grove_fs_replace_file_at(l->dirfd, l->name, l->tmpname, 0600,
							     err);
			if (r < 0)
				return r;
			continue;
		}
		r = lock_wait(fd, op, w, what, path, err);
		if (r == -EWOULDBLOCK)
			return held_error(record ? fd : -1, st.uid, what, path, w->seconds, err);
		if (r == 0)
			r = grove_fs_stat_at(l->dirfd, l->name, &now, err);
		if (r < 0)
			return r;
		/* Replaced while we waited (another run replaced an earlier file): a lock on the
		 * old file excludes no one, so take the new one. */
		if (now.type == GROVE_FT_REG && now.dev == st.dev && now.ino == st.ino)
			return steal_fd(fd);
	}
	return grove_error_set(err, -EAGAIN,
			       "lock %s '%s': its lock file '%s' keeps being replaced", what, path,
			       l->shown);
}

int
grove_lock_target_holder(const struct grove_root *state, const struct grove_root *target,
			 struct grove_lock_holder *ret, struct grove_error *err)
{
	struct grove_lock_holder h = { .state = GROVE_LOCK_FREE };
	struct grove_stat sst, dst, st;
	cleanup_fd int dirfd = -1;
	cleanup_fd int fd = -1;
	bool marked = false, own;
	long pid = 0;
	char name[64];
	int r;

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
	r = dirfd;
	if (r >= 0)
		r = grove_fs_stat_fd(state->fd, &sst, err);
	if (r >= 0)
		r = grove_fs_stat_fd(dirfd, &dst, err);
	if (r >= 0)
		r = grove_fs_stat_at(dirfd, name, &st, err);
	grove_error_clear(err);
	if (r == -ENOENT || (r >= 0 && st.type == GROVE_FT_NONE)) {
		*ret = h;
		return 0;
	}
	if (r < 0) {
		/* Another user's state dir whose locks cannot be read: say so, do not guess. */
		h.state = GROVE_LOCK_UNKNOWN;
		*ret = h;
		return 0;
	}
	/* The mark is believed where only the owner could have placed it: a private file in a
	 * folder only the owner writes. */
	own = dst.uid == sst.uid && !(dst.mode & (S_IWGRP | S_IWOTH)) && st.type == GROVE_FT_REG &&
	      st.uid == sst.uid && !(st.mode & 077);
	if (own)
		fd = grove_fs_open_file_at(dirfd, name, O_RDONLY, 0, err);
	grove_error_clear(err);
	if (fd >= 0) {
		if (grove_fs_lock_probe(fd, &marked, err) < 0) {
			grove_error_clear(err);
			h.state = GROVE_LOCK_UNKNOWN;
		} else if (marked) {
			h.state = GROVE_LOCK_HELD;
			read_record(fd, st.uid, &h);
		}
		*ret = h;
		return 0;
	}
	/* A file the reader cannot open (another user's), or one others could have opened (an
	 * earlier grove's): the kernel's list of locks says whether a process of the owner's
	 * holds it. The record stays the owner's to read. */
	r = grove_fs_lock_holder_at(dirfd, name, sst.uid, &pid, err);
	grove_error_clear(err);
	if (r < 0) {
		h.state = GROVE_LOCK_UNKNOWN;
	} else if (r > 0) {
		h.state = GROVE_LOCK_HELD;
		h.pid = pid;
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
	cleanup_free char *folder = NULL, *shown = NULL;
	cleanup_fd int dirfd = -1;
	cleanup_fd int fd = -1;
	struct grove_stat sst;
	char name[64], tmpname[96];
	int r;

	w.seconds = bound_wait(w.seconds);
	lock_name(name, sizeof(name), target);
	snprintf(tmpname, sizeof(tmpname), "%s.%ld.new", name, (long)getpid());
	folder = grove_strdupf("%s/" LOCKS_DIR, state->path);
	shown = grove_strdupf("%s/" LOCKS_DIR "/%s", state->path, name);
	if (!folder || !shown)
		return grove_error_set(err, -ENOMEM, "out of memory");
	r = grove_fs_stat_fd(state->fd, &sst, err);
	if (r >= 0)
		r = dirfd = grove_fs_open_or_make_dir(state->fd, LOCKS_DIR, 0700, err);
	if (r >= 0)
		r = check_lock_folder(dirfd, sst.uid, folder, err);
	if (r < 0)
		return grove_error_prefix(err, "lock target '%s'", target->path);
	struct private_lock l = {
		.dirfd = dirfd, .name = name, .tmpname = tmpname, .shown = shown, .owner = sst.uid
	};
	/* The file stays after we are done: removing it would let a waiter lock
	 * an unlinked inode while a newcomer locks a fresh one. The lock itself
	 * dies with the fd, so a killed grove leaves nothing held. */
	fd = take_private(&l, shared ? LOCK_SH : LOCK_EX, &w, "target", target->path, true, err);
	if (fd == -EWOULDBLOCK)
		return fd;
	if (fd < 0)
		return grove_error_prefix(err, "lock target '%s'", target->path);
	/* Who holds it, then the mark that makes that record believed (in this order, so that
	 * a marked file always carries its holder's record). */
	r = write_record(fd, command, err);
	if (r == 0)
		r = grove_fs_lock_mark(fd, err);
	if (r == 0)
		return steal_fd(fd);
	return grove_error_prefix(err, "lock target '%s': in '%s'", target->path, folder);
}

int
grove_lock_convert(int fd, bool shared, const struct grove_lock_wait *wait,
		   const struct grove_root *target, struct grove_error *err)
{
	struct grove_lock_wait w = *wait;
	struct grove_stat st = { .uid = geteuid() };
	int r;

	w.seconds = bound_wait(w.seconds);
	r = lock_wait(fd, shared ? LOCK_SH : LOCK_EX, &w, "target", target->path, err);
	if (r == 0)
		return 0;
	if (r != -EWOULDBLOCK)
		return grove_error_prefix(err, "lock target '%s'", target->path);
	(void)grove_fs_stat_fd(fd, &st, err);
	grove_error_clear(err);
	return held_error(fd, st.uid, "target", target->path, w.seconds, err);
}

int
grove_lock_dir(const struct grove_root *dir, double wait_seconds, const char *what,
	       struct grove_error *err)
{
	struct grove_lock_wait w = { .seconds = wait_seconds };

	return grove_lock_dir_with(dir, &w, what, err);
}

/* The lock file of a folder grove_lock_dir locks. In an admindir it must be no group for
 * update-alternatives or grove: no group's name has a space, and both skip names ending in
 * ".dpkg-tmp" (update-alternatives' own temporary files, made as NAME.dpkg-tmp, so never this
 * one). It stays empty. */
#define DIR_LOCK_NAME ".grove lock.dpkg-tmp"

int
grove_lock_dir_with(const struct grove_root *dir, const struct grove_lock_wait *wait,
		    const char *what, struct grove_error *err)
{
	struct grove_lock_wait w = *wait;
	cleanup_free char *shown = grove_strdupf("%s/" DIR_LOCK_NAME, dir->path);
	cleanup_free char *tmpname = grove_strdupf(".grove lock.%ld.dpkg-tmp", (long)getpid());
	struct grove_stat dst;
	int fd;

	w.seconds = bound_wait(w.seconds);
	if (!shown || !tmpname)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (grove_fs_stat_fd(dir->fd, &dst, err) < 0)
		return grove_error_prefix(err, "lock %s '%s'", what, dir->path);
	/* A file in the folder, not the folder itself: anyone who can read a folder can open it,
	 * and so hold an flock on it. */
	struct private_lock l = { .dirfd = dir->fd,
				  .name = DIR_LOCK_NAME,
				  .tmpname = tmpname,
				  .shown = shown,
				  .owner = dst.uid };
	fd = take_private(&l, LOCK_EX, &w, what, dir->path, false, err);
	if (fd < 0 && fd != -EWOULDBLOCK)
		return grove_error_prefix(err, "lock %s '%s'", what, dir->path);
	return fd;
}
