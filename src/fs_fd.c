/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The fs layer's fd-only helpers: fstat and reading an open file. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grove/fs.h"

#include "banned.h" /* last */

static enum grove_ftype
mode_type(mode_t m)
{
	if (S_ISDIR(m))
		return GROVE_FT_DIR;
	if (S_ISLNK(m))
		return GROVE_FT_LINK;
	if (S_ISREG(m))
		return GROVE_FT_REG;
	return GROVE_FT_OTHER;
}

int
grove_fs_stat_fd(int fd, struct grove_stat *ret, struct grove_error *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return grove_error_errno(err, -errno, "stat open file");
	ret->type = mode_type(st.st_mode);
	ret->mode = st.st_mode;
	ret->uid = st.st_uid;
	ret->dev = st.st_dev;
	ret->ino = st.st_ino;
	ret->size = st.st_size;
	return 0;
}

int
grove_fs_read_fd(int fd, size_t max, char **ret_buf, size_t *ret_len, struct grove_error *err)
{
	struct grove_stat st = { 0 };
	char *buf;
	size_t len = 0;
	int r = grove_fs_stat_fd(fd, &st, err);

	if (r < 0)
		return r;
	if (st.type != GROVE_FT_REG)
		return grove_error_set(err, -EINVAL, "not a regular file");
	if ((size_t)st.size > max)
		return grove_error_set(err, -EFBIG, "file larger than %zu bytes", max);
	buf = malloc(max + 1 < (size_t)st.size + 4096 ? max + 1 : (size_t)st.size + 4096);
	if (!buf)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (;;) {
		size_t cap = max + 1 < (size_t)st.size + 4096 ? max + 1 : (size_t)st.size + 4096;
		ssize_t k;

		if (len >= cap - 1) {
			free(buf);
			return grove_error_set(err, -EFBIG, "file larger than %zu bytes", max);
		}
		k = read(fd, buf + len, cap - 1 - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = -errno;
			free(buf);
			return grove_error_errno(err, e, "read");
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	buf[len] = '\0';
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}
