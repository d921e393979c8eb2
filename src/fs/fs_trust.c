/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The fs layer's opening of a user's configuration by path (.stowrc, ~/.stow-global-ignore,
 * config.yaml, grove.yaml), refusing one that another user can write (DESIGN invariant 8). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grove/fs.h"

#include "banned.h" /* last */

#define UNTRUSTED "grove reads no configuration another user can write"

/* "user 'alice' (uid 1000)", or "uid 1000" when the uid has no name. */
static void
owner_name(uid_t uid, char *buf, size_t size)
{
	struct passwd *pw = getpwuid(uid);

	if (pw && pw->pw_name)
		(void)snprintf(buf, size, "user '%s' (uid %u)", pw->pw_name, (unsigned)uid);
	else
		(void)snprintf(buf, size, "uid %u", (unsigned)uid);
}

/* The caller (its effective uid) or root: the only owners whose files grove trusts. */
static bool
trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* The file open at fd: a regular file of a trusted owner, writable by nobody else. Other kinds
 * are left to the reader, which refuses them. */
static int
check_file(int fd, const char *path, struct grove_error *err)
{
	struct stat st;
	char who[128];

	if (fstat(fd, &st) < 0)
		return grove_error_errno(err, -errno, "read '%s'", path);
	if (!S_ISREG(st.st_mode))
		return 0;
	if (!trusted_owner(st.st_uid)) {
		owner_name(st.st_uid, who, sizeof(who));
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "'%s' is owned by %s, not by you or root: " UNTRUSTED
				       " (chown it to you, or remove it)",
				       path, who);
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return grove_error_set(
			err, -GROVE_E_CONFIG,
			"'%s' can be written by its group or others (mode %04o): " UNTRUSTED
			" (chmod go-w '%s')",
			path, (unsigned)(st.st_mode & 07777), path);
	return 0;
}

/*
 * The name is a symlink (dotfiles are often stowed): it must be a trusted owner's too, or another
 * user who can write the folder picks which file grove reads. Its text is read from the link
 * checked and resolved from the same folder fd, so a link swapped in afterwards is not followed.
 */
static int
open_through_link(int dirfd, const char *base, const char *path, struct grove_error *err)
{
	char text[PATH_MAX], who[128];
	struct stat st;
	ssize_t n;
	int lfd, fd;

	lfd = openat(dirfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (lfd < 0)
		return grove_error_errno(err, -errno, "read '%s'", path);
	if (fstatat(lfd, "", &st, AT_EMPTY_PATH) < 0) {
		int r = -errno;

		grove_fd_close(lfd);
		return grove_error_errno(err, r, "read '%s'", path);
	}
	if (!S_ISLNK(st.st_mode)) { /* replaced since: look again next time */
		grove_fd_close(lfd);
		return grove_error_set(err, -EAGAIN, "read '%s': it changed while grove opened it",
				       path);
	}
	if (!trusted_owner(st.st_uid)) {
		grove_fd_close(lfd);
		owner_name(st.st_uid, who, sizeof(who));
		return grove_error_set(
			err, -GROVE_E_CONFIG,
			"'%s' is a symlink owned by %s, not by you or root: " UNTRUSTED
			" (remove it)",
			path, who);
	}
	n = readlinkat(lfd, "", text, sizeof(text));
	grove_fd_close(lfd);
	if (n < 0 || (size_t)n >= sizeof(text))
		return grove_error_errno(err, n < 0 ? -errno : -ENAMETOOLONG, "read '%s'", path);
	text[n] = '\0';
	fd = openat(dirfd, text, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) /* (ENOENT: a dangling link is a missing file) */
		return grove_error_errno(err, -errno, "read '%s'", path);
	return fd;
}

int
grove_fs_open_config(const char *path, struct grove_error *err)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	const char *base;
	int dirfd, fd, r;

	if (!slash) {
		(void)snprintf(dir, sizeof(dir), ".");
		base = path;
	} else if (slash == path) {
		(void)snprintf(dir, sizeof(dir), "/");
		base = slash + 1;
	} else if ((size_t)(slash - path) < sizeof(dir)) {
		(void)snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		base = slash + 1;
	} else {
		return grove_error_errno(err, -ENAMETOOLONG, "read '%s'", path);
	}
	if (!*base)
		return grove_error_errno(err, -EISDIR, "read '%s'", path);
	/* The folders on the way are the user's path (followed, as the shell would); the last
	 * name is looked at before it is followed. */
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC); /* grove: root-open */
	if (dirfd < 0)
		return grove_error_errno(err, -errno, "read '%s'", path);
	fd = openat(dirfd, base, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0 && errno == ELOOP)
		fd = open_through_link(dirfd, base, path, err);
	else if (fd < 0)
		fd = grove_error_errno(err, -errno, "read '%s'", path);
	grove_fd_close(dirfd);
	if (fd < 0)
		return fd;
	r = check_file(fd, path, err);
	if (r < 0) {
		grove_fd_close(fd);
		return r;
	}
	return fd;
}
