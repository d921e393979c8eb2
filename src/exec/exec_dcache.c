/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The executor's folder cache: the folders ops act in, held open beneath a root, fsynced when
 * they changed before they are closed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/fs.h"
#include "exec_int.h"

#include "banned.h" /* last */

/* A failure that means "the world is not what the plan expected". */
int
grove_exec_as_precondition(struct grove_error *err, int r)
{
	if (r == -EEXIST || r == -ENOENT || r == -ENOTDIR || r == -ELOOP || r == -EXDEV ||
	    r == -ENOTEMPTY || r == -EISDIR) {
		err->code = -GROVE_E_PRECONDITION;
		return err->code;
	}
	return r;
}

static bool
under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(path, prefix, n) == 0 && path[n] == '/';
}

int
grove_dcache_evict(struct grove_dcache *c, size_t i, bool sync, struct grove_error *err)
{
	int r = 0;

	if (sync && c->e[i].dirty)
		r = grove_fs_sync(c->e[i].fd, err);
	if (r < 0)
		grove_error_set(err, r, "sync folder '%s': %s", *c->e[i].rel ? c->e[i].rel : ".",
				grove_strerror(r));
	grove_fd_close(c->e[i].fd);
	free(c->e[i].rel);
	memmove(&c->e[i], &c->e[i + 1], (c->n - i - 1) * sizeof(c->e[0]));
	c->n--;
	return r;
}

/* Closes every cached fd, fsyncing the changed folders first when sync; returns the first error. */
int
grove_dcache_flush(struct grove_dcache *c, bool sync, struct grove_error *err)
{
	int r = 0;

	while (c->n) {
		int k = grove_dcache_evict(c, 0, sync && r == 0, err);

		if (k < 0 && r == 0)
			r = k;
	}
	return r;
}

/* Drops rel and everything under it (they are being removed: no fsync needed). */
void
grove_dcache_forget(struct grove_dcache *c, const char *rel)
{
	for (size_t i = 0; i < c->n;) {
		if (!strcmp(c->e[i].rel, rel) || under(c->e[i].rel, rel))
			grove_dcache_evict(c, i, false, NULL);
		else
			i++;
	}
}

/* Closes the cached fds of rel and everything under it, fsyncing the changed
 * ones first (rel is about to move: its contents must be durable before it is
 * seen under its new name, and no cached fd may outlive its old name). */
int
grove_dcache_settle(struct grove_dcache *c, const char *rel, struct grove_error *err)
{
	int r = 0;

	for (size_t i = 0; i < c->n;) {
		if (!strcmp(c->e[i].rel, rel) || under(c->e[i].rel, rel)) {
			int k = grove_dcache_evict(c, i, r == 0, err);

			if (k < 0 && r == 0)
				r = k;
		} else {
			i++;
		}
	}
	return r;
}

/* Takes ownership of fd (closes it on failure). */
int
grove_dcache_put(struct grove_dcache *c, const char *rel, int fd, bool dirty,
		 struct grove_error *err)
{
	char *copy = strdup(rel);
	int r = 0;

	if (!copy) {
		grove_fd_close(fd);
		return grove_error_errno(err, -ENOMEM, "open folder '%s'", rel);
	}
	if (c->n == GROVE_DCACHE_SIZE)
		r = grove_dcache_evict(c, 0, true, err);
	c->e[c->n].rel = copy;
	c->e[c->n].fd = fd;
	c->e[c->n].dirty = dirty;
	c->n++;
	return r;
}

/* The fd of folder rel beneath the cache's root, opened with RESOLVE_NO_SYMLINKS. */
int
grove_dcache_get(struct grove_dcache *c, const char *rel, bool dirty, struct grove_error *err)
{
	int fd, r;

	/* Newest first: ops come folder by folder, so the folder asked for is most often the one
	 * opened last. */
	for (size_t i = c->n; i-- > 0;) {
		if (!strcmp(c->e[i].rel, rel)) {
			c->e[i].dirty |= dirty;
			return c->e[i].fd;
		}
	}
	fd = grove_fs_open_dir_beneath(c->rootfd, rel, err);
	if (fd < 0)
		return grove_exec_as_precondition(err, fd);
	r = grove_dcache_put(c, rel, fd, dirty, err);
	return r < 0 ? r : fd;
}
