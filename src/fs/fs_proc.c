/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The fs layer's questions to /proc about other processes: who runs a pid, and who holds an flock
 * on a file the asker may not be able to open (a lock only its owner can take). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "grove/fs.h"

#include "banned.h" /* last */

int
grove_fs_pid_owner(long pid, uid_t *ret_uid)
{
	char name[32];
	struct stat st;
	int procfd, r = 0;

	if (pid <= 0)
		return -ESRCH;
	procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC); /* grove: root-open */
	if (procfd < 0)
		return -errno;
	/* The folder /proc/PID is owned by the process's effective uid whatever its dumpable
	 * flag (its files are root's when it is not dumpable; the folder never is). */
	snprintf(name, sizeof(name), "%ld", pid);
	if (fstatat(procfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r = errno == ENOENT ? -ESRCH : -errno;
	else if (!S_ISDIR(st.st_mode))
		r = -ESRCH;
	else
		*ret_uid = st.st_uid;
	close(procfd);
	return r;
}

/* The device number the kernel gives locks of the mount mnt_id in /proc/locks (its superblock's,
 * which is mountinfo's "major:minor" and may differ from st_dev: a btrfs subvolume, an
 * overlay), or 0 when it cannot be found. */
static dev_t
mount_dev(uint64_t mnt_id)
{
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC); /* grove: root-open */
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	char *line = NULL;
	size_t cap = 0;
	dev_t dev = 0;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (getline(&line, &cap, f) > 0) {
		unsigned long long id;
		unsigned int maj, min;

		if (sscanf(line, "%llu %*u %u:%u", &id, &maj, &min) == 3 && id == mnt_id) {
			dev = makedev(maj, min);
			break;
		}
	}
	free(line);
	(void)fclose(f);
	return dev;
}

int
grove_fs_lock_holder_at(int dirfd, const char *name, uid_t uid, long *ret_pid,
			struct grove_error *err)
{
	struct statx sx;
	dev_t devs[2];
	char *line = NULL;
	size_t cap = 0;
	long found = 0;
	FILE *f;
	int fd;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_INO | STATX_MNT_ID,
		  &sx) < 0)
		return grove_error_errno(err, -errno, "stat '%s'", name);
	devs[0] = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	devs[1] = (sx.stx_mask & STATX_MNT_ID) ? mount_dev(sx.stx_mnt_id) : 0;
	fd = open("/proc/locks", O_RDONLY | O_CLOEXEC); /* grove: root-open */
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		int r = -errno;

		if (fd >= 0)
			close(fd);
		return grove_error_errno(err, r, "read '/proc/locks'");
	}
	/* "ID: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INO START END", maj and min in hex; a waiter's
	 * line has "-> " before its kind and is no holder. */
	while (!found && getline(&line, &cap, f) > 0) {
		char kind[16], *p = strchr(line, ':');
		unsigned int maj, min;
		unsigned long long ino;
		long pid;
		uid_t owner = (uid_t)-1;
		dev_t dev;

		if (!p || !strncmp(p + 1, " ->", 3))
			continue;
		if (sscanf(p + 1, " %15s %*s %*s %ld %x:%x:%llu", kind, &pid, &maj, &min, &ino) !=
			    5 ||
		    strcmp(kind, "FLOCK") != 0 || ino != sx.stx_ino)
			continue;
		dev = makedev(maj, min);
		if (dev != devs[0] && (!devs[1] || dev != devs[1]))
			continue;
		/* Only a holder running as uid counts: a lock another user took (on a file it could
		 * open once) is never the owner's run. */
		if (grove_fs_pid_owner(pid, &owner) == 0 && owner == uid)
			found = pid;
	}
	free(line);
	(void)fclose(f);
	if (found)
		*ret_pid = found;
	return found ? 1 : 0;
}

int
grove_fs_replace_file_at(int dirfd, const char *name, const char *tmpname, mode_t mode,
			 struct grove_error *err)
{
	int fd, r = 0;

	/* A temporary file a killed run left is ours to drop (same name: same owner's run). */
	(void)unlinkat(dirfd, tmpname, 0);
	fd = openat(dirfd, tmpname, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
		    mode);
	if (fd < 0)
		return grove_error_errno(err, -errno, "make '%s'", tmpname);
	close(fd);
	if (renameat(dirfd, tmpname, dirfd, name) < 0) {
		r = grove_error_errno(err, -errno, "replace '%s'", name);
		(void)unlinkat(dirfd, tmpname, 0);
	}
	return r;
}
