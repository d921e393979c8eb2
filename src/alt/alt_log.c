/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove alt: the --log FILE update-alternatives keeps, written beneath its held folder. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alt_int.h"
#include "grove/alt.h"
#include "grove/fs.h"
#include "grove/journal.h"
#include "grove/path.h"
#include "grove/plan.h"
#include "grove/session.h"
#include "base/util.h"

#include "banned.h" /* last */

/* ---- --log FILE ---- */

/* Opens req->log for appending beneath its held folder: the fd, 0 when there is no log or it
 * may not be written (EACCES: update-alternatives then logs nothing either), or an error. */
int
grove_alt_log_open(const struct grove_alt_request *req, const struct grove_root *inst,
		   struct grove_error *err)
{
	cleanup_free char *dir = NULL;
	struct grove_root root = { .fd = -1 };
	const char *base;
	char *slash;
	int fd, r;

	if (!req->log)
		return 0;
	/* Inside --root the log is too, as update-alternatives has it: opened
	 * beneath the held root, following no symlink on the way. */
	if (req->root) {
		cleanup_free char *rel = grove_path_canon(req->log);
		char *p = rel;

		while (p && *p == '/')
			p++;
		if (!rel)
			return grove_error_set(err, -ENOMEM, "out of memory");
		if (!*p || !grove_alt_disk_rel_ok(p))
			return grove_error_set(err, -EINVAL,
					       "cannot append to '%s': not a file "
					       "inside '%s'",
					       req->log, req->root);
		slash = strrchr(p, '/');
		if (slash)
			*slash = '\0';
		r = slash ? grove_root_open_beneath(&root, inst, p, true, 0755, err) : 0;
		if (r >= 0)
			r = grove_fs_open_append_at(slash ? root.fd : inst->fd,
						    slash ? slash + 1 : p, 0644, err);
		grove_root_release(&root);
		if (r == -EACCES) {
			grove_error_clear(err);
			return 0;
		}
		if (r < 0)
			return grove_error_set(err, r, "cannot append to '%s': %s", req->log,
					       err->msg);
		return r;
	}
	dir = strdup(req->log);
	if (!dir)
		return grove_error_set(err, -ENOMEM, "out of memory");
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		base = slash + 1;
	} else {
		base = dir;
	}
	/* Its folder is made when missing, as update-alternatives does. */
	r = slash && *dir ? grove_fs_make_dirs(dir, 0755, err) : 0;
	if (r >= 0)
		r = grove_root_open(&root, slash ? (*dir ? dir : "/") : ".", err);
	if (r >= 0) {
		fd = grove_fs_open_append_at(root.fd, base, 0644, err);
		r = fd;
	}
	grove_root_release(&root);
	if (r == -EACCES) {
		grove_error_clear(err);
		return 0;
	}
	if (r < 0)
		return grove_error_set(err, r, "cannot append to '%s': %s", req->log, strerror(-r));
	return r;
}

/* Holds the folder req->log is in without making it: into *root (or, for a log at the root of
 * --root, nothing held: *ret_dfd is the root's), *ret_base the file's name in it (malloc'd into
 * *ret_owned). -ENOENT when the folder is missing. */
static int
hold_log_folder(const struct grove_alt_request *req, const struct grove_root *inst,
		struct grove_root *root, int *ret_dfd, const char **ret_base, char **ret_owned,
		struct grove_error *err)
{
	char *p, *slash;
	int r;

	*ret_owned = req->root ? grove_path_canon(req->log) : strdup(req->log);
	if (!*ret_owned)
		return grove_error_set(err, -ENOMEM, "out of memory");
	p = *ret_owned;
	if (req->root) {
		while (*p == '/')
			p++;
		if (!*p || !grove_alt_disk_rel_ok(p))
			return grove_error_set(err, -EINVAL,
					       "cannot append to '%s': not a file inside '%s'",
					       req->log, req->root);
	}
	slash = strrchr(p, '/');
	if (slash)
		*slash = '\0';
	*ret_base = slash ? slash + 1 : p;
	*ret_dfd = inst->fd;
	if (req->root)
		r = slash ? grove_root_open_beneath(root, inst, p, false, 0, err) : 0;
	else
		r = grove_root_open(root, slash ? (*p ? p : "/") : ".", err);
	if (r >= 0 && root->fd >= 0)
		*ret_dfd = root->fd;
	return r;
}

int
grove_alt_log_check(const struct grove_alt_request *req, const struct grove_root *inst,
		    struct grove_error *err)
{
	cleanup_free char *owned = NULL;
	struct grove_root root = { .fd = -1 };
	struct grove_stat st = { 0 };
	const char *base = NULL;
	int dfd = -1, e;
	int r = req->log ? hold_log_folder(req, inst, &root, &dfd, &base, &owned, err) : 0;

	if (r >= 0 && req->log)
		r = grove_fs_stat_at(dfd, base, &st, err);
	grove_root_release(&root);
	if (r == -ENOENT || r == -EACCES) {
		/* (a folder the real run makes, or a log it may not write and passes over) */
		grove_error_clear(err);
		return 0;
	}
	if (r == -EINVAL || r == -ENOMEM)
		return r;
	if (r < 0)
		return req->root ? grove_error_set(err, r, "cannot append to '%s': %s", req->log,
						   err->msg)
				 : grove_error_set(err, r, "cannot append to '%s': %s", req->log,
						   strerror(-r));
	e = st.type == GROVE_FT_LINK ? ELOOP : st.type == GROVE_FT_DIR ? EISDIR : 0;
	if (!e)
		return 0;
	if (req->root && e == ELOOP)
		return grove_error_set(err, -e, "cannot append to '%s': open '%s': it is a symlink",
				       req->log, base);
	if (req->root)
		return grove_error_set(err, -e, "cannot append to '%s': open '%s': %s", req->log,
				       base, strerror(e));
	return grove_error_set(err, -e, "cannot append to '%s': %s", req->log, strerror(e));
}

static int
log_write(int fd, const struct grove_alt_request *req, const char *const *lines, size_t n,
	  struct grove_error *err)
{
	char stamp[64];
	time_t now = time(NULL);
	struct tm tm;

	if (!localtime_r(&now, &tm) || !strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm))
		return grove_error_set(err, -EINVAL, "cannot get local time to log into '%s'",
				       req->log);
	for (size_t i = 0; i < n; i++) {
		cleanup_free char *line = grove_strdupf(
			"%s %s: %s\n", req->prog ? req->prog : "grove alt", stamp, lines[i]);
		size_t len, off = 0;

		if (!line)
			return grove_error_set(err, -ENOMEM, "out of memory");
		len = strlen(line);
		while (off < len) {
			ssize_t w = write(fd, line + off, len - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return grove_error_set(err, -errno, "cannot append to '%s': %s",
						       req->log, strerror(errno));
			off += (size_t)w;
		}
	}
	return 0;
}

int
grove_alt_log(const struct grove_alt_request *req, const char *const *lines, size_t n,
	      struct grove_error *err)
{
	struct grove_root inst = { .fd = -1 };
	int fd, r;

	if (req->root && grove_root_open(&inst, req->root, err) < 0)
		return grove_error_prefix(err, "cannot append to '%s'", req->log);
	fd = grove_alt_log_open(req, &inst, err);
	grove_root_release(&inst);
	if (fd <= 0)
		return fd;
	r = log_write(fd, req, lines, n, err);
	grove_fd_close(fd);
	return r;
}

/* The LOG messages of res, in order, into the log. */
int
grove_alt_log_flush(int fd, const struct grove_alt_request *req, const struct grove_alt_result *res,
		    struct grove_error *err)
{
	for (size_t i = 0; i < res->n_msgs; i++) {
		const char *line = res->msgs[i].text;
		int r;

		if (res->msgs[i].kind != GROVE_ALT_LOG)
			continue;
		r = log_write(fd, req, &line, 1, err);
		if (r < 0)
			return r;
	}
	return 0;
}
