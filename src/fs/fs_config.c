/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The fs layer's root making and grove's own files in a held root: mkdir -p for a root that may
 * not exist yet, lock files beneath the state dir and flock on them. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grove/fs.h"

#include "banned.h" /* last */

/* mkdir of buf, then of its parents when they are missing. buf is modified in place and
 * restored; on failure failed[] receives the prefix that could not be made. */
static int
make_dirs(char *buf, mode_t mode, char *failed, size_t failed_size)
{
	char *slash;
	int r;

	/* Try the whole path first: the common case is that it exists, and EEXIST
	 * comes before EACCES or EROFS, so an existing folder under a read-only
	 * parent is fine. */
	if (mkdir(buf, mode) == 0 || errno == EEXIST) /* grove: root-open */
		return 0;
	r = -errno;
	slash = strrchr(buf, '/');
	if (r != -ENOENT || !slash || slash == buf) {
		(void)snprintf(failed, failed_size, "%s", buf); /* for a message: may be cut */
		return r;
	}
	*slash = '\0';
	r = make_dirs(buf, mode, failed, failed_size);
	*slash = '/';
	if (r < 0)
		return r;
	if (mkdir(buf, mode) == 0 || errno == EEXIST) /* grove: root-open */
		return 0;
	r = -errno;
	(void)snprintf(failed, failed_size, "%s", buf);
	return r;
}

int
grove_fs_make_dirs(const char *path, mode_t mode, struct grove_error *err)
{
	char buf[PATH_MAX], failed[PATH_MAX];
	size_t len = path ? strlen(path) : 0;
	int r;

	if (!len)
		return grove_error_errno(err, -ENOENT, "make folder ''");
	if (len >= sizeof(buf))
		return grove_error_errno(err, -ENAMETOOLONG, "make folder '%s'", path);
	memcpy(buf, path, len + 1);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	r = make_dirs(buf, mode, failed, sizeof(failed));
	if (r < 0)
		return grove_error_errno(err, r, "make folder '%s'", failed);
	return 0;
}

int
grove_fs_open_file_at(int dirfd, const char *name, int flags, mode_t mode, struct grove_error *err)
{
	struct stat st;
	int fd;

	fd = openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, mode);
	if (fd < 0) {
		if (errno == ELOOP)
			return grove_error_set(err, -ELOOP, "open '%s': it is a symlink", name);
		return grove_error_errno(err, -errno, "open '%s'", name);
	}
	if (fstat(fd, &st) < 0) {
		int r = -errno;

		grove_fd_close(fd);
		return grove_error_errno(err, r, "open '%s'", name);
	}
	if (!S_ISREG(st.st_mode)) {
		grove_fd_close(fd);
		return grove_error_set(err, -EINVAL, "open '%s': not a regular file", name);
	}
	return fd;
}

int
grove_fs_open_append_at(int dirfd, const char *name, mode_t mode, struct grove_error *err)
{
	struct stat st;
	int fd, fl;

	/* O_NONBLOCK while we look: a fifo planted there cannot hang the open. */
	fd = openat(dirfd, name,
		    O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		    mode);
	if (fd < 0) {
		if (errno == ELOOP)
			return grove_error_set(err, -ELOOP, "open '%s': it is a symlink", name);
		return grove_error_errno(err, -errno, "open '%s'", name);
	}
	if (fstat(fd, &st) < 0 || (fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int r = -errno;

		grove_fd_close(fd);
		return grove_error_errno(err, r, "open '%s'", name);
	}
	if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) {
		grove_fd_close(fd);
		return grove_error_set(err, -EINVAL,
				       "open '%s': not a regular file or a character device", name);
	}
	return fd;
}

int
grove_fs_open_or_make_dir(int dirfd, const char *name, mode_t mode, struct grove_error *err)
{
	int fd = grove_fs_mkdir(dirfd, name, mode, err);

	/* Made by someone else first, or there all along: open what is there,
	 * which refuses anything but a folder. */
	if (fd == -EEXIST) {
		grove_error_clear(err);
		fd = grove_fs_open_dir_at(dirfd, name, err);
	}
	return fd;
}

int
grove_fs_flock(int fd, int op, struct grove_error *err)
{
	int r;

	do
		r = flock(fd, op);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return grove_error_errno(err, -errno, "lock");
	return 0;
}

/* Far past any holder record, so that nothing ever reads or writes the marked byte. */
#define LOCK_MARK_OFFSET ((off_t)1 << 30)

int
grove_fs_lock_mark(int fd, struct grove_error *err)
{
	struct flock fl = {
		.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = LOCK_MARK_OFFSET, .l_len = 1
	};
	int r;

	do
		r = fcntl(fd, F_OFD_SETLK, &fl);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return grove_error_errno(err, -errno, "mark the lock");
	return 0;
}

int
grove_fs_lock_probe(int fd, bool *ret_marked, struct grove_error *err)
{
	struct flock fl = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = LOCK_MARK_OFFSET, .l_len = 1
	};
	int r;

	do
		r = fcntl(fd, F_OFD_GETLK, &fl);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return grove_error_errno(err, -errno, "probe the lock");
	*ret_marked = fl.l_type != F_UNLCK;
	return 0;
}

int
grove_fs_write_head(int fd, const char *buf, size_t len, struct grove_error *err)
{
	size_t done = 0;

	while (done < len) {
		ssize_t w = pwrite(fd, buf + done, len - done, (off_t)done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return grove_error_errno(err, -errno, "write");
		done += (size_t)w;
	}
	return 0;
}

int
grove_fs_read_head(int fd, char *buf, size_t size, struct grove_error *err)
{
	size_t done = 0;

	while (done + 1 < size) {
		ssize_t n = pread(fd, buf + done, size - 1 - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return grove_error_errno(err, -errno, "read");
		if (n == 0)
			break;
		done += (size_t)n;
	}
	buf[done] = '\0';
	return (int)done;
}

int
grove_root_open_beneath(struct grove_root *root, const struct grove_root *parent,
			const char *relpath, bool make, mode_t mode, struct grove_error *err)
{
	char *copy = strdup(relpath), *save = NULL;
	struct stat st;
	int fd = fcntl(parent->fd, F_DUPFD_CLOEXEC, 3), r = 0;

	if (!copy || fd < 0) {
		r = grove_error_errno(err, !copy ? -ENOMEM : -errno, "open '%s' beneath '%s'",
				      relpath, parent->path);
		goto out;
	}
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int next;

		if (!strcmp(c, ".") || !strcmp(c, "..")) {
			r = grove_error_set(err, -GROVE_E_ESCAPE,
					    "open '%s' beneath '%s': '%s' "
					    "is not allowed there",
					    relpath, parent->path, c);
			goto out;
		}
		next = make ? grove_fs_open_or_make_dir(fd, c, mode, err)
			    : grove_fs_open_dir_at(fd, c, err);
		grove_fd_close(fd);
		fd = next;
		if (fd < 0) {
			r = fd == -ELOOP ? grove_error_set(err, -ELOOP,
							   "open '%s/%s': a symlink is in the way "
							   "at '%s' (grove stays inside '%s')",
							   parent->path, relpath, c, parent->path)
					 : grove_error_prefix(err, "open '%s/%s'", parent->path,
							      relpath);
			goto out;
		}
	}
	if (fstat(fd, &st) < 0) {
		r = grove_error_errno(err, -errno, "open '%s/%s'", parent->path, relpath);
		goto out;
	}
	size_t pl = strlen(parent->path) + strlen(relpath) + 2;
	size_t rl = parent->real ? strlen(parent->real) + strlen(relpath) + 2 : 0;

	root->path = malloc(pl);
	root->real = parent->real ? malloc(rl) : NULL;
	if (!root->path || (parent->real && !root->real)) {
		free(root->path);
		free(root->real);
		root->path = root->real = NULL;
		r = grove_error_errno(err, -ENOMEM, "open '%s/%s'", parent->path, relpath);
		goto out;
	}
	/* Both buffers are sized above for what they hold: nothing is cut. */
	(void)snprintf(root->path, pl, "%s/%s", parent->path, relpath);
	if (root->real)
		(void)snprintf(root->real, rl, "%s%s%s", parent->real,
			       parent->real[strlen(parent->real) - 1] == '/' ? "" : "/", relpath);
	root->fd = fd;
	fd = -1;
	root->dev = st.st_dev;
	root->ino = st.st_ino;
	root->born = grove_fd_born(root->fd);
out:
	grove_fd_close(fd);
	free(copy);
	return r;
}
