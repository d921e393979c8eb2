/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The log's first making: its schema written into a private temporary file in the state dir,
 * which then takes the name grove.db in one step, so that no one ever sees a half-made log. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "grove/fs.h"
#include "journal_int.h"
#include "base/util.h"

#include "banned.h" /* last */

#define DB_NAME        "grove.db"
#define DB_JOURNAL     "grove.db-journal"
#define SQLITE_JOURNAL "-journal"
#define TEMP_ATTEMPTS  8

/* ".grove.db.NEW-<pid>-<16 hex digits>", and SQLite's "-journal" after it, fit. */
#define TEMP_NAME_SIZE 64

_Static_assert(sizeof(GROVE_JOURNAL_NEW_PREFIX) + 10 + 1 + 16 + sizeof(SQLITE_JOURNAL) <=
		       TEMP_NAME_SIZE,
	       "a temporary log's name and its rollback journal's fit");

/* A fresh temporary name: the pid for a person reading the folder, 64 random bits so that no
 * two creators (in pid namespaces of their own too) ever pick the same. */
static void
temp_name(char *buf, size_t size)
{
	uint64_t rnd = 0;

	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		rnd ^= (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15u ^ (uint64_t)ts.tv_sec;
	}
	snprintf(buf, size, "%s%ld-%016" PRIx64, GROVE_JOURNAL_NEW_PREFIX, (long)getpid(), rnd);
}

/* Whether name in dirfd is still the file open at fd (a sweep may have removed it). */
static bool
still_named(int dirfd, const char *name, int fd)
{
	struct grove_stat a, b;
	struct grove_error e;

	return grove_fs_stat_at(dirfd, name, &a, &e) >= 0 && grove_fs_stat_fd(fd, &b, &e) >= 0 &&
	       a.type == GROVE_FT_REG && a.dev == b.dev && a.ino == b.ino;
}

/* Removes a temporary (claimed by the caller) and SQLite's rollback journal of it, the journal
 * first, so that a temporary is never left with a journal of a file that is gone. */
static void
temp_remove(int dirfd, const char *name)
{
	char journal[TEMP_NAME_SIZE];
	struct grove_error e;

	snprintf(journal, sizeof(journal), "%s%s", name, SQLITE_JOURNAL);
	if (grove_fs_unlink_file(dirfd, journal, &e) < 0 && e.code != -ENOENT)
		return;
	(void)grove_fs_unlink_file(dirfd, name, &e);
}

/* Makes a temporary of ours under a fresh name in dirfd (mode less the umask), claimed: its fd. */
static int
temp_make(int dirfd, char *name, size_t size, mode_t mode, const char *db, struct grove_error *err)
{
	for (int i = 0; i < TEMP_ATTEMPTS; i++) {
		bool claimed = false;
		int r, fd;

		temp_name(name, size);
		fd = grove_fs_open_file_at(dirfd, name, O_RDWR | O_CREAT | O_EXCL, mode, err);
		if (fd == -EEXIST)
			continue;
		/* The temporary's name says nothing the reason does not (a read-only state dir). */
		if (fd < 0)
			return grove_error_errno(err, fd, "make journal '%s'", db);
		r = grove_fs_try_claim(fd, &claimed, err);
		if (r < 0) {
			temp_remove(dirfd, name);
			grove_fd_close(fd);
			return grove_error_prefix(err, "make journal '%s': '%s'", db, name);
		}
		/* Claimed and still there: ours alone. Otherwise a sweep found it in the moment
		 * before the claim, and removes it; another name. */
		if (claimed && still_named(dirfd, name, fd))
			return fd;
		grove_fd_close(fd);
	}
	return grove_error_set(err, -EAGAIN,
			       "make journal '%s': every temporary name tried was taken or removed "
			       "at once (%d tries)",
			       db, TEMP_ATTEMPTS);
}

/*
 * Removes the temporaries that creators killed before they were done left in dirfd: only names
 * of that form (not their rollback journals, which go with them), only regular files of the
 * user running grove, and only those no one claims (a creator holds its claim from the moment
 * it made the file until it is gone). Best effort: one that cannot be removed stays, and is
 * ignored as every temporary is.
 */
static void
sweep(int dirfd)
{
	struct grove_dirent *ents = NULL;
	size_t n = 0, plen = strlen(GROVE_JOURNAL_NEW_PREFIX), jlen = strlen(SQLITE_JOURNAL);
	struct grove_error e;

	if (grove_fs_list(dirfd, &ents, &n, &e) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const char *name = ents[i].name;
		size_t len = strlen(name);
		struct grove_stat st;
		bool claimed = false;
		int fd;

		/* Never opened unless the listing says a regular file: not a device, not a fifo. */
		if (ents[i].type != GROVE_FT_REG || len <= plen || len >= TEMP_NAME_SIZE - jlen ||
		    memcmp(name, GROVE_JOURNAL_NEW_PREFIX, plen) != 0 ||
		    (len > jlen && strcmp(name + len - jlen, SQLITE_JOURNAL) == 0))
			continue;
		fd = grove_fs_open_file_at(dirfd, name, O_RDWR, 0, &e);
		if (fd < 0)
			continue;
		if (grove_fs_stat_fd(fd, &st, &e) >= 0 && st.uid == geteuid() &&
		    grove_fs_try_claim(fd, &claimed, &e) >= 0 && claimed &&
		    still_named(dirfd, name, fd))
			temp_remove(dirfd, name);
		grove_fd_close(fd);
	}
	grove_dirents_free(ents, n);
}

/*
 * A rollback journal beside a missing grove.db would be played into a new log by the first
 * connection that opens it. A journal is made only beside a log that is there: one found with no
 * log is one no log goes with any more (refused), unless a log came meanwhile (another grove made
 * it): *ret_log_there.
 */
static int
check_lone_journal(int dirfd, const char *db, bool *ret_log_there, struct grove_error *err)
{
	struct grove_stat st;
	int r;

	*ret_log_there = false;
	r = grove_fs_stat_at(dirfd, DB_JOURNAL, &st, err);
	if (r >= 0 && st.type != GROVE_FT_NONE) {
		r = grove_fs_stat_at(dirfd, DB_NAME, &st, err);
		*ret_log_there = r >= 0 && st.type != GROVE_FT_NONE;
		if (r >= 0 && !*ret_log_there)
			return grove_error_set(err, -GROVE_E_CONFIG,
					       "journal '%s-journal' is a rollback journal without "
					       "its log ('%s' is missing): refusing to start a new "
					       "log beside it (move it aside, with the log it "
					       "belongs to)",
					       db, db);
	}
	if (r < 0)
		return grove_error_prefix(err, "make journal '%s'", db);
	return 0;
}

/*
 * Gives the filled temporary the name grove.db, unless a log has that name by now (another
 * grove made it first): *ret_lost. Never replacing a name, so no log is ever lost to a race.
 * Returns 1 when the temporary's name is gone (renamed), 0 when it is still there.
 */
static int
publish(int dirfd, const char *tmp, const char *db, bool *ret_lost, struct grove_error *err)
{
	int r = check_lone_journal(dirfd, db, ret_lost, err);

	if (r < 0 || *ret_lost)
		return r;
	r = grove_fs_move(dirfd, tmp, dirfd, DB_NAME, RENAME_NOREPLACE, err);
	if (r >= 0)
		return 1;
	if (r == -GROVE_E_UNSUPPORTED) {
		/* No RENAME_NOREPLACE (NFS): a second name; the temporary one goes after. */
		grove_error_clear(err);
		r = grove_fs_hardlink(dirfd, tmp, DB_NAME, err);
	}
	if (r == -EEXIST) {
		grove_error_clear(err);
		*ret_lost = true;
		return 0;
	}
	if (r < 0)
		return grove_error_prefix(err, "make journal '%s'", db);
	return 0;
}

int
grove_journal_create(int dirfd, const char *db, mode_t mode, struct grove_error *err)
{
	char tmp[TEMP_NAME_SIZE];
	bool lost = false;
	int r, fd;

	/* Before anything is made (and again before the log takes its name). */
	r = check_lone_journal(dirfd, db, &lost, err);
	if (r < 0 || lost)
		return r;
	fd = temp_make(dirfd, tmp, sizeof(tmp), mode, db, err);
	if (fd < 0)
		return fd;
	/* SQLite writes the whole schema, application_id and user_version in one transaction and
	 * syncs the file (synchronous = EXTRA) before the connection closes. */
	r = grove_journal_fill(dirfd, tmp, db, err);
	if (r >= 0)
		r = publish(dirfd, tmp, db, &lost, err);
	/* Linked, lost, or failed: the temporary goes (renamed: its name is gone already). */
	if (r <= 0)
		temp_remove(dirfd, tmp);
	if (r >= 0 && !lost) {
		r = grove_fs_sync(dirfd, err);
		if (r < 0)
			r = grove_error_prefix(err, "make journal '%s'", db);
	}
	/* The claim goes with the fd, before anyone opens grove.db in this process: closing
	 * another fd of the file would drop the POSIX locks SQLite holds on it. */
	grove_fd_close(fd);
	sweep(dirfd);
	return r;
}
