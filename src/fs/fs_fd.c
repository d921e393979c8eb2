/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The fs layer's fd-only helpers: fstat, reading an open file, closing fds in batches. */
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
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

/* Sorts a batch's fds (at most GROVE_FD_BATCH_MAX) ascending. A scan adds a folder's fd after its
 * subfolders', so a batch is often in descending order: reversed first, then an insertion sort,
 * which is linear on what is left nearly sorted. */
static void
sort_fds(int *fds, size_t n)
{
	size_t d = 1;

	while (d < n && fds[d] < fds[d - 1])
		d++;
	for (size_t a = 0, z = d ? d - 1 : 0; a < z; a++, z--) {
		int x = fds[a];

		fds[a] = fds[z];
		fds[z] = x;
	}
	for (size_t i = 1; i < n; i++) {
		int x = fds[i];
		size_t j = i;

		for (; j > 0 && fds[j - 1] > x; j--)
			fds[j] = fds[j - 1];
		fds[j] = x;
	}
}

void
grove_fd_batch_flush(struct grove_fd_batch *b)
{
	size_t i = 0;

	sort_fds(b->fds, b->n);
	while (i < b->n) {
		size_t j = i;

		while (j + 1 < b->n && b->fds[j + 1] == b->fds[j] + 1)
			j++;
		/* Every number in [fds[i], fds[j]] is one of ours, so close_range closes
		 * nothing else. Where it is missing (Linux < 5.9), one close each. */
		if (j == i ||
		    syscall(SYS_close_range, (unsigned)b->fds[i], (unsigned)b->fds[j], 0U) < 0) {
			for (size_t k = i; k <= j; k++)
				(void)close(b->fds[k]);
		}
		i = j + 1;
	}
	b->n = 0;
}

void
grove_fd_batch_add(struct grove_fd_batch *b, int fd)
{
	if (fd < 0)
		return;
	if (b->n == GROVE_FD_BATCH_MAX)
		grove_fd_batch_flush(b);
	b->fds[b->n++] = fd;
}
