/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The fs layer's reopening of a root for a replay: beneath its parent, the way the first run
 * found it, and checked to be the folder the transaction recorded (DESIGN.md invariant 11). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grove/fs.h"
#include "base/util.h"

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
		/* The installation root's own layout (merged /usr), walked as the run walks it:
		 * symlinks kept inside parent, and only root's or parent's owner's followed. */
		r = grove_root_open_chase(&got, parent, NULL, rel, false, 0, err);
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
