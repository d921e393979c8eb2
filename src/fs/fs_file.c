/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The fs layer's one writer of file contents: a new small file made durable (profile records);
 * and what publishing a file made under a temporary name needs (the journal's first making): a
 * claim on the file while it is being made, and a second name for it; a cache file replaced
 * unsynced (grove alt's stamps). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "grove/fs.h"

#include "banned.h" /* last */

/* A failure after the file was made: it goes again, so that the caller, which
 * records no change on a failure, leaves nothing behind. */
static int
fail_made(int dirfd, const char *name, int fd, int r, const char *what, struct grove_error *err)
{
	if (fd >= 0)
		grove_fd_close(fd);
	if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
		return grove_error_set(err, -GROVE_E_STUCK,
				       "%s '%s': %s; removing it again failed: %s", what, name,
				       grove_strerror(r), grove_strerror(-errno));
	return grove_error_errno(err, r, "%s '%s'", what, name);
}

int
grove_fs_write_new_file(int dirfd, const char *name, const char *buf, size_t len, mode_t mode,
			struct grove_error *err)
{
	int fd = grove_fs_open_file_at(dirfd, name, O_WRONLY | O_CREAT | O_EXCL, mode, err);
	size_t done = 0;

	if (fd < 0)
		return fd;
	while (done < len) {
		ssize_t w = write(fd, buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return fail_made(dirfd, name, fd, -errno, "write", err);
		done += (size_t)w;
	}
	/* The file's data before the rename that publishes the folder holding it. */
	if (fsync(fd) < 0)
		return fail_made(dirfd, name, fd, -errno, "sync", err);
	if (close(fd) < 0)
		return fail_made(dirfd, name, -1, -errno, "close", err);
	return 0;
}

int
grove_fs_try_claim(int fd, bool *ret_claimed, struct grove_error *err)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	int r;

	do
		r = fcntl(fd, F_OFD_SETLK, &fl);
	while (r < 0 && errno == EINTR);
	if (r < 0 && (errno == EAGAIN || errno == EACCES)) {
		*ret_claimed = false;
		return 0;
	}
	if (r < 0)
		return grove_error_errno(err, -errno, "claim the file");
	*ret_claimed = true;
	return 0;
}

int
grove_fs_hardlink(int dirfd, const char *from, const char *to, struct grove_error *err)
{
	if (linkat(dirfd, from, dirfd, to, 0) < 0)
		return grove_error_errno(err, -errno, "link '%s' as '%s'", from, to);
	return 0;
}

int
grove_fs_write_cache_file(int dirfd, const char *name, const char *tmpname, const char *buf,
			  size_t len, struct grove_error *err)
{
	size_t done = 0;
	int fd;

	if (unlinkat(dirfd, tmpname, 0) < 0 && errno != ENOENT)
		return grove_error_errno(err, -errno, "remove '%s'", tmpname);
	fd = grove_fs_open_file_at(dirfd, tmpname, O_WRONLY | O_CREAT | O_EXCL, 0600, err);
	if (fd < 0)
		return fd;
	while (done < len) {
		ssize_t w = write(fd, buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			int e = -errno;

			close(fd);
			unlinkat(dirfd, tmpname, 0);
			return grove_error_errno(err, e, "write '%s'", tmpname);
		}
		done += (size_t)w;
	}
	if (close(fd) < 0 || renameat(dirfd, tmpname, dirfd, name) < 0) {
		int e = -errno;

		unlinkat(dirfd, tmpname, 0);
		return grove_error_errno(err, e, "replace '%s'", name);
	}
	return 0;
}
