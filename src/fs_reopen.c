/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The fs layer's reopening of a root for a replay: beneath its parent, the way the first run
 * found it, and checked to be the folder the transaction recorded (DESIGN.md invariant 11). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "grove/fs.h"
#include "util.h"

#include "banned.h" /* last */

bool
grove_root_is(const struct grove_root *root, const struct grove_root_id *id)
{
	/* A birth time on one side only is no answer (a log written on another kernel, a
	 * filesystem that keeps none): device and inode decide then. */
	return root->dev == id->dev && root->ino == id->ino &&
	       (root->born == id->born || !root->born || !id->born);
}

struct grove_root_id
grove_root_id_of(const struct grove_root *root)
{
	return (struct grove_root_id){ .dev = root->dev, .ino = root->ino, .born = root->born };
}

/* root holds parent's folder again (its own fd, its own strings). */
static int
dup_root(struct grove_root *root, const struct grove_root *parent, struct grove_error *err)
{
	int fd = fcntl(parent->fd, F_DUPFD_CLOEXEC, 3);

	if (fd < 0)
		return grove_error_errno(err, -errno, "open '%s'", parent->path);
	root->path = strdup(parent->path);
	root->real = parent->real ? strdup(parent->real) : NULL;
	if (!root->path || (parent->real && !root->real)) {
		grove_fd_close(fd);
		free(root->path);
		free(root->real);
		root->path = root->real = NULL;
		return grove_error_errno(err, -ENOMEM, "open '%s'", parent->path);
	}
	root->fd = fd;
	root->dev = parent->dev;
	root->ino = parent->ino;
	root->born = grove_fd_born(fd);
	return 0;
}

/* relpath inside parent, symlinks followed but kept inside it (RESOLVE_IN_ROOT): the
 * installation root's own layout (merged /usr). */
static int
open_in_root(struct grove_root *root, const struct grove_root *parent, const char *relpath,
	     struct grove_error *err)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	size_t pl = strlen(parent->path) + strlen(relpath) + 2;
	struct stat st;
	long fd;

	do
		fd = syscall(SYS_openat2, parent->fd, relpath, &how, sizeof(how));
	while (fd < 0 && (errno == EAGAIN || errno == EINTR));
	if (fd < 0)
		return grove_error_errno(err, -errno, "open '%s/%s'", parent->path, relpath);
	if (fstat((int)fd, &st) < 0) {
		int r = -errno;

		grove_fd_close((int)fd);
		return grove_error_errno(err, r, "open '%s/%s'", parent->path, relpath);
	}
	root->path = malloc(pl);
	root->real = NULL; /* symlinks inside: no canonical path to claim */
	if (!root->path) {
		grove_fd_close((int)fd);
		return grove_error_errno(err, -ENOMEM, "open '%s/%s'", parent->path, relpath);
	}
	(void)snprintf(root->path, pl, "%s/%s", parent->path, relpath);
	root->fd = (int)fd;
	root->dev = st.st_dev;
	root->ino = st.st_ino;
	root->born = grove_fd_born(root->fd);
	return 0;
}

int
grove_root_reopen(struct grove_root *root, const struct grove_root *parent, const char *relpath,
		  enum grove_resolve resolve, const struct grove_root_id *id, const char *what,
		  struct grove_error *err)
{
	struct grove_root got = { .fd = -1 };
	const char *rel = relpath ? relpath : "";
	int r;

	if (!*rel)
		r = dup_root(&got, parent, err);
	else if (resolve == GROVE_RESOLVE_IN_ROOT)
		r = open_in_root(&got, parent, rel, err);
	else
		r = grove_root_open_beneath(&got, parent, rel, false, 0, err);
	if (r < 0) {
		char why[GROVE_ERROR_MSG_MAX];

		(void)snprintf(why, sizeof(why), "%s", err->msg);
		return grove_error_set(err, -GROVE_E_STUCK,
				       "the %s '%s%s%s' cannot be opened as the transaction used "
				       "it (%s); nothing was written",
				       what, parent->path, *rel ? "/" : "", rel, why);
	}
	if (id && !grove_root_is(&got, id)) {
		r = grove_error_set(err, -GROVE_E_STUCK,
				    "the %s '%s' is not the folder the transaction used (it was "
				    "replaced, or is a symlink now); nothing was written",
				    what, got.path);
		grove_root_release(&got);
		return r;
	}
	*root = got;
	return 0;
}
