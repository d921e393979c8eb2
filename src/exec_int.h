/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Private to the executor (exec.c applies ops, exec_dcache.c holds the folders they act in). */
#ifndef GROVE_EXEC_INT_H
#define GROVE_EXEC_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "grove/error.h"

#define GROVE_DCACHE_SIZE 16

struct grove_dcache_ent {
	char *rel; /* folder path beneath the root */
	int fd;
	bool dirty; /* changed since opened: fsync before closing */
};

struct grove_dcache {
	int rootfd;
	struct grove_dcache_ent e[GROVE_DCACHE_SIZE];
	size_t n;
};

/* A failure that means "the world is not what the plan expected" (EEXIST, ENOENT, ENOTDIR,
 * ELOOP, EXDEV, ENOTEMPTY, EISDIR) becomes GROVE_E_PRECONDITION in err; returns err's code, or r.
 */
int grove_exec_as_precondition(struct grove_error *err, int r);

/* Closes entry i, fsyncing it first when sync and it changed; returns the fsync's error. */
int grove_dcache_evict(struct grove_dcache *c, size_t i, bool sync, struct grove_error *err);

/* Closes every cached fd, fsyncing the changed folders first when sync; returns the first error. */
int grove_dcache_flush(struct grove_dcache *c, bool sync, struct grove_error *err);

/* Drops rel and everything under it (they are being removed: no fsync needed). */
void grove_dcache_forget(struct grove_dcache *c, const char *rel);

/* Closes the cached fds of rel and everything under it, fsyncing the changed ones first (rel is
 * about to move). */
int grove_dcache_settle(struct grove_dcache *c, const char *rel, struct grove_error *err);

/* Caches fd as folder rel; takes ownership of fd (closes it on failure). */
int grove_dcache_put(struct grove_dcache *c, const char *rel, int fd, bool dirty,
		     struct grove_error *err);

/* The fd of folder rel beneath the cache's root, opened with RESOLVE_NO_SYMLINKS; marked changed
 * when dirty. The fd stays the cache's. A failure that means the world changed is
 * GROVE_E_PRECONDITION. */
int grove_dcache_get(struct grove_dcache *c, const char *rel, bool dirty, struct grove_error *err);

#endif
