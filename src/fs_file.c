/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The fs layer's one writer of file contents: a new small file made durable (profile records). */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "grove/fs.h"

#include "banned.h" /* last */

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
		if (w < 0) {
			int r = -errno;

			grove_fd_close(fd);
			return grove_error_errno(err, r, "write '%s'", name);
		}
		done += (size_t)w;
	}
	/* The file's data before the rename that publishes the folder holding it. */
	if (fsync(fd) < 0) {
		int r = -errno;

		grove_fd_close(fd);
		return grove_error_errno(err, r, "sync '%s'", name);
	}
	if (close(fd) < 0)
		return grove_error_errno(err, -errno, "close '%s'", name);
	return 0;
}
