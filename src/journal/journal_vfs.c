/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The held-dir sqlite VFS: the unix VFS with database names taken as given. */
#include <pthread.h>
#include <sqlite3.h>
#include <string.h>

#include "journal_int.h"
#include "base/util.h"

#include "banned.h" /* last */

#define HELD_VFS_NAME "grove-held"

static sqlite3_vfs held_vfs;
static int held_vfs_rc = SQLITE_ERROR;
static pthread_once_t held_vfs_once = PTHREAD_ONCE_INIT;

/*
 * sqlite's unix VFS canonicalises a database name by resolving every symlink
 * in it (lstat and readlink on each component), which would turn
 * "/proc/self/fd/N/grove.db" back into the state dir's path string: a state
 * dir swapped after we opened it would then redirect the database and its
 * -journal. This VFS is the unix one with names taken as given, so every
 * open, stat, unlink and directory fsync sqlite makes for the database and its
 * rollback journal goes through the magic link to the folder we hold. The
 * unix VFS still opens with O_NOFOLLOW, so a symlink planted as grove.db or
 * grove.db-journal is refused.
 */
static int
held_full_pathname(sqlite3_vfs *vfs, const char *path, int size, char *out)
{
	size_t len = strlen(path);

	(void)vfs;
	if (path[0] != '/' || size < 0 || len >= (size_t)size)
		return SQLITE_CANTOPEN;
	memcpy(out, path, len + 1);
	return SQLITE_OK;
}

static void
held_vfs_register(void)
{
	sqlite3_vfs *base;

	/* Before sqlite initialises (sqlite3_vfs_find does): no allocation
	 * statistics, so no global mutex around every sqlite3_malloc and free.
	 * grove never reads them. Refused (and harmless) if sqlite is already
	 * initialised by someone else in the process. */
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/* No initial bulk of page-cache slots: by default every connection's
	 * cache allocates 20 pages at once and writes a header into each slot,
	 * touching fresh heap (43 page faults in a dothome stow) that a command
	 * reading a few pages never uses (a fault costs up to ~20 us on a
	 * VM with shadow paging); slots are now allocated as pages are read. */
	(void)sqlite3_config(SQLITE_CONFIG_PAGECACHE, NULL, 0, 0);
	base = sqlite3_vfs_find("unix");

	if (!base)
		return;
	held_vfs = *base;
	held_vfs.pNext = NULL;
	held_vfs.zName = HELD_VFS_NAME;
	held_vfs.xFullPathname = held_full_pathname;
	held_vfs_rc = sqlite3_vfs_register(&held_vfs, 0);
}

const char *
grove_journal_vfs(void)
{
	pthread_once(&held_vfs_once, held_vfs_register);
	return held_vfs_rc == SQLITE_OK ? HELD_VFS_NAME : NULL;
}
