/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The fs layer: every filesystem syscall grove makes, each beneath a held root fd and a single
 * name. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "grove/fs.h"

#include "banned.h" /* last */

/* util.h's (fs.c keeps its own cleanup helpers, which close through grove_fd_close). */
int grove_sort_names(const char **v, size_t n);

/* openat2 returns EAGAIN when a rename anywhere on the mount raced the lookup;
 * retrying is correct, retrying forever lets an attacker stall us. */
#define OPENAT2_RETRIES 64

/* The longest link text we read; Linux caps symlink bodies at PATH_MAX. */
#define LINK_TEXT_MAX (PATH_MAX * 4)

static void
fd_cleanup(int *fd)
{
	if (*fd >= 0)
		grove_fd_close(*fd);
}

static void
free_cleanup(void *p)
{
	free(*(void **)p);
}

#define cleanup_fd   __attribute__((cleanup(fd_cleanup)))
#define cleanup_free __attribute__((cleanup(free_cleanup)))

static inline int
steal_fd(int *fd)
{
	int r = *fd;

	*fd = -1;
	return r;
}

static inline void *
steal_ptr(void *p)
{
	void **pp = p;
	void *r = *pp;

	*pp = NULL;
	return r;
}

int
grove_fd_close(int fd)
{
	int saved = errno;

	if (fd >= 0)
		close(fd);
	errno = saved;
	return -1;
}

static enum grove_ftype
ftype_of_mode(mode_t mode)
{
	if (S_ISDIR(mode))
		return GROVE_FT_DIR;
	if (S_ISLNK(mode))
		return GROVE_FT_LINK;
	if (S_ISREG(mode))
		return GROVE_FT_REG;
	return GROVE_FT_OTHER;
}

static void
fill_stat(struct grove_stat *ret, const struct stat *st)
{
	ret->type = ftype_of_mode(st->st_mode);
	ret->mode = st->st_mode;
	ret->uid = st->st_uid;
	ret->dev = st->st_dev;
	ret->ino = st->st_ino;
	ret->size = st->st_size;
}

/* ---- roots ---- */

static int root_open(struct grove_root *root, const char *path, int flags, struct grove_error *err);

/* A root that cannot be opened is the error's path (docs/json.md, "error.path"). */
int
grove_root_open(struct grove_root *root, const char *path, struct grove_error *err)
{
	int r = root_open(root, path, 0, err);

	return r < 0 ? grove_error_path(err, path), r : r;
}

int
grove_root_open_nofollow(struct grove_root *root, const char *path, struct grove_error *err)
{
	int r = root_open(root, path, O_NOFOLLOW, err);

	return r < 0 ? grove_error_path(err, path), r : r;
}

static int
root_open(struct grove_root *root, const char *path, int flags, struct grove_error *err)
{
	cleanup_fd int fd = -1;
	cleanup_free char *real = NULL;
	cleanup_free char *copy = NULL;
	struct stat st, st_real;

	if (!path || !*path)
		return grove_error_errno(err, -ENOENT, "open ''");
	/* The one place a user's path string reaches the kernel: open it, then
	 * canonicalise it and check the canonical path still names the folder we
	 * hold, so root->real never describes a different folder than root->fd. */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags); /* grove: root-open */
	if (fd < 0) {
		struct stat lst;
		int e = -errno;

		/* O_DIRECTORY wins over O_NOFOLLOW: a symlink gives ENOTDIR. */
		if ((flags & O_NOFOLLOW) && (e == -ELOOP || e == -ENOTDIR) &&
		    lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) /* grove: root-open */
			return grove_error_set(err, -ELOOP, "open '%s': it is a symlink", path);
		return grove_error_errno(err, e, "open '%s'", path);
	}
	if (fstat(fd, &st) < 0)
		return grove_error_errno(err, -errno, "stat root '%s'", path);
	real = realpath(path, NULL); /* grove: root-open */
	if (!real)
		return grove_error_errno(err, -errno, "resolve root '%s'", path);
	if (stat(real, &st_real) < 0) /* grove: root-open */
		return grove_error_errno(err, -errno, "stat root '%s'", real);
	if (st_real.st_dev != st.st_dev || st_real.st_ino != st.st_ino)
		return grove_error_set(err, -EAGAIN, "open '%s': it changed while being opened",
				       path);
	copy = strdup(path);
	if (!copy)
		return grove_error_errno(err, -ENOMEM, "open '%s'", path);

	root->fd = steal_fd(&fd);
	root->path = steal_ptr(&copy);
	root->real = steal_ptr(&real);
	root->dev = st.st_dev;
	root->ino = st.st_ino;
	root->born = grove_fd_born(root->fd);
	return 0;
}

int64_t
grove_fd_born(int fd)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) == 0 &&
	    (sx.stx_mask & STATX_BTIME))
		return (int64_t)sx.stx_btime.tv_sec * 1000000000 + sx.stx_btime.tv_nsec;
	return 0;
}

void
grove_root_release(struct grove_root *root)
{
	if (!root)
		return;
	/* A zeroed root has fd 0 but no path: only an opened root owns its fd. */
	if (root->path)
		grove_fd_close(root->fd);
	root->fd = -1;
	free(root->path);
	free(root->real);
	root->path = NULL;
	root->real = NULL;
}

/* ---- resolution beneath a root ---- */

static int
beneath_errmsg(struct grove_error *err, int code, const char *verb, const char *relpath,
	       bool follow)
{
	if (code == -EXDEV)
		return grove_error_set(err, code, "%s '%s': the path leads outside its root", verb,
				       relpath);
	if (code == -ELOOP && !follow)
		return grove_error_set(err, code, "%s '%s': a symlink is on the way", verb,
				       relpath);
	if (code == -EAGAIN)
		return grove_error_set(err, code,
				       "%s '%s': lookup kept racing with renames, giving up", verb,
				       relpath);
	if (code == -ENOSYS)
		return grove_error_set(
			err, -GROVE_E_UNSUPPORTED,
			"%s '%s': the kernel has no openat2 (Linux 5.6 or later needed)", verb,
			relpath);
	return grove_error_errno(err, code, "%s '%s'", verb, relpath);
}

/* openat2(dirfd, path, how), asked again a bounded number of times on EAGAIN (a rename raced the
 * lookup) and EINTR: the fd, or -errno. */
static int
openat2_retrying(int dirfd, const char *path, const struct open_how *how)
{
	for (int i = 0; i < OPENAT2_RETRIES; i++) {
		long fd = syscall(SYS_openat2, dirfd, path, how, sizeof(*how));

		if (fd >= 0)
			return (int)fd;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
	}
	return -EAGAIN;
}

static int
openat2_beneath(int rootfd, const char *relpath, int flags, bool follow, uint64_t resolve)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		/* O_TMPFILE includes O_DIRECTORY's bit: test all of it. */
		.mode = ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) ? 0666 : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | resolve,
	};
	const char *p = (!relpath || !*relpath) ? "." : relpath;

	/* A fifo (or a link to one) where grove expects a file or folder must not
	 * hang it while it holds a target's lock: never block in open. O_PATH
	 * takes no other flags. */
	if (!(flags & O_PATH))
		how.flags |= O_NONBLOCK | O_NOCTTY;
	if (!follow)
		how.resolve |= RESOLVE_NO_SYMLINKS;
	return openat2_retrying(rootfd, p, &how);
}

int
grove_fs_open_beneath(int rootfd, const char *relpath, int flags, bool follow,
		      struct grove_error *err)
{
	int fd = openat2_beneath(rootfd, relpath, flags, follow, 0);

	if (fd < 0)
		return beneath_errmsg(err, fd, "open", relpath ? relpath : "", follow);
	return fd;
}

int
grove_fs_open_beneath_mount(int rootfd, const char *relpath, int flags, bool follow,
			    bool *ret_same_mount, struct grove_error *err)
{
	int fd = openat2_beneath(rootfd, relpath, flags, follow, RESOLVE_NO_XDEV);

	/* EXDEV is a mount on the way, or an escape: asked again without RESOLVE_NO_XDEV, an
	 * escape fails as it always did, and a mount is opened. Any other failure too is asked
	 * again, so that its message is grove_fs_open_beneath's. */
	*ret_same_mount = fd >= 0;
	return fd >= 0 ? fd : grove_fs_open_beneath(rootfd, relpath, flags, follow, err);
}

int
grove_fs_open_dir_beneath(int rootfd, const char *relpath, struct grove_error *err)
{
	return grove_fs_open_beneath(rootfd, relpath, O_RDONLY | O_DIRECTORY, false, err);
}

int
grove_fs_open_dir_beneath_mount(int rootfd, const char *relpath, bool *ret_same_mount,
				struct grove_error *err)
{
	return grove_fs_open_beneath_mount(rootfd, relpath, O_RDONLY | O_DIRECTORY, false,
					   ret_same_mount, err);
}

int
grove_fs_open_dir_at(int dirfd, const char *name, struct grove_error *err)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		struct stat st;
		int r = -errno;

		/* O_DIRECTORY wins over O_NOFOLLOW: a symlink gives ENOTDIR. Say ELOOP,
		 * as openat2 does, so callers can tell "symlink" from "file". */
		if (r == -ENOTDIR && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode))
			r = -ELOOP;
		if (r == -ELOOP)
			return grove_error_set(err, r, "open folder '%s': it is a symlink", name);
		return grove_error_errno(err, r, "open folder '%s'", name);
	}
	return fd;
}

/* openat2 of the folder name in dirfd, on dirfd's mount: the fd or -errno (-EXDEV: a mount). */
static int
open_dir_on_mount(int dirfd, const char *name)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};

	return openat2_retrying(dirfd, name, &how);
}

int
grove_fs_try_open_dir_at(int dirfd, const char *name, bool *ret_same_mount)
{
	int fd = open_dir_on_mount(dirfd, name);

	*ret_same_mount = fd >= 0;
	if (fd == -EXDEV || fd == -EAGAIN) {
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	return fd;
}

int
grove_fs_open_dir_at_mount(int dirfd, const char *name, bool *ret_same_mount,
			   struct grove_error *err)
{
	int fd = open_dir_on_mount(dirfd, name);

	/* A mount point (EXDEV), or a failure that grove_fs_open_dir_at names as always. */
	*ret_same_mount = fd >= 0;
	return fd >= 0 ? fd : grove_fs_open_dir_at(dirfd, name, err);
}

int
grove_fs_stat_at(int dirfd, const char *name, struct grove_stat *ret, struct grove_error *err)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH)) < 0) {
		if (errno == ENOENT) {
			memset(ret, 0, sizeof(*ret));
			ret->type = GROVE_FT_NONE;
			return 0;
		}
		return grove_error_errno(err, -errno, "stat '%s'", name);
	}
	fill_stat(ret, &st);
	return 0;
}

/* What the O_PATH fd of relpath's lookup says, into ret; absent (the lookup found nothing there)
 * is an answer: GROVE_FT_NONE. The fd stays the caller's. */
static int
stat_opened(int fd, bool absent, const char *relpath, struct grove_stat *ret,
	    struct grove_error *err)
{
	struct stat st;

	if (absent) {
		memset(ret, 0, sizeof(*ret));
		ret->type = GROVE_FT_NONE;
		return 0;
	}
	if (fd < 0)
		return beneath_errmsg(err, fd, "stat", relpath ? relpath : "", true);
	if (fstat(fd, &st) < 0)
		return grove_error_errno(err, -errno, "stat '%s'", relpath);
	fill_stat(ret, &st);
	return 0;
}

int
grove_fs_stat_beneath_follow(int rootfd, const char *relpath, struct grove_stat *ret,
			     struct grove_error *err)
{
	/* O_PATH follows a final symlink too; RESOLVE_BENEATH keeps every hop inside. */
	cleanup_fd int fd = openat2_beneath(rootfd, relpath, O_PATH, true, 0);

	return stat_opened(fd, fd == -ENOENT, relpath, ret, err);
}

int
grove_fs_stat_in_root(int rootfd, const char *relpath, struct grove_stat *ret,
		      struct grove_error *err)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	cleanup_fd int fd = openat2_retrying(rootfd, (!relpath || !*relpath) ? "." : relpath, &how);

	return stat_opened(fd, fd == -ENOENT || fd == -ENOTDIR, relpath, ret, err);
}

/* ---- reading ---- */

/* readlinkat into a fresh string; -EINVAL when name is not a link. */
static int
read_link(int dirfd, const char *name, char **ret_text)
{
	for (size_t size = 256; size <= LINK_TEXT_MAX; size *= 2) {
		char *buf = malloc(size);
		ssize_t n;

		if (!buf)
			return -ENOMEM;
		n = readlinkat(dirfd, name, buf, size);
		if (n < 0) {
			int r = -errno;

			free(buf);
			return r;
		}
		if ((size_t)n < size) {
			buf[n] = '\0';
			*ret_text = buf;
			return 0;
		}
		free(buf);
	}
	return -ENAMETOOLONG;
}

int
grove_fs_readlink_at(int dirfd, const char *name, char **ret_text, struct grove_error *err)
{
	int r = read_link(dirfd, name, ret_text);

	if (r == -EINVAL)
		return grove_error_set(err, r, "read link '%s': not a symlink", name);
	if (r < 0)
		return grove_error_errno(err, r, "read link '%s'", name);
	return 0;
}

/* The kernel's record layout for getdents64 (glibc does not export it under this name). */
struct kdirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static enum grove_ftype
ftype_of_dtype(unsigned char t)
{
	switch (t) {
	case DT_DIR:
		return GROVE_FT_DIR;
	case DT_LNK:
		return GROVE_FT_LINK;
	case DT_REG:
		return GROVE_FT_REG;
	case DT_UNKNOWN:
		return GROVE_FT_UNKNOWN;
	default:
		return GROVE_FT_OTHER;
	}
}

void
grove_dirents_free(struct grove_dirent *ents, size_t n)
{
	(void)n; /* the array and its names are one allocation */
	free(ents);
}

/*
 * A listing is gathered in a scratch block, each entry as its d_type's grove_ftype (one byte),
 * its d_ino and its NUL-terminated name, and an array of each name's offset; then sorted and
 * copied into one allocation that holds the dirents and, after them, the names. One malloc per
 * listing instead of one per name, and most folders' scratch fits on the stack.
 */
struct list_scratch {
	char *blk; /* the entries */
	size_t len, cap;
	size_t *off; /* where each entry's name starts in blk */
	size_t n, cap_off;
	char blk_stack[8192];
	size_t off_stack[256];
};

#define LIST_HEAD (1 + sizeof(uint64_t)) /* type, d_ino, then the name */

static int
list_scratch_put(struct list_scratch *ls, enum grove_ftype type, uint64_t ino, const char *name)
{
	size_t nl = strlen(name) + 1, need = LIST_HEAD + nl;

	if (ls->len + need > ls->cap) {
		size_t cap = ls->cap * 2 > ls->len + need ? ls->cap * 2 : ls->len + need;
		char *nb = ls->blk == ls->blk_stack ? malloc(cap) : realloc(ls->blk, cap);

		if (!nb)
			return -ENOMEM;
		if (ls->blk == ls->blk_stack)
			memcpy(nb, ls->blk_stack, ls->len);
		ls->blk = nb;
		ls->cap = cap;
	}
	if (ls->n == ls->cap_off) {
		size_t cap = ls->cap_off * 2;
		size_t *no = ls->off == ls->off_stack ? malloc(cap * sizeof(*no))
						      : realloc(ls->off, cap * sizeof(*no));

		if (!no)
			return -ENOMEM;
		if (ls->off == ls->off_stack)
			memcpy(no, ls->off_stack, ls->n * sizeof(*no));
		ls->off = no;
		ls->cap_off = cap;
	}
	ls->blk[ls->len] = (char)type;
	memcpy(ls->blk + ls->len + 1, &ino, sizeof(ino));
	memcpy(ls->blk + ls->len + LIST_HEAD, name, nl);
	ls->off[ls->n++] = ls->len + LIST_HEAD;
	ls->len += need;
	return 0;
}

static void
list_scratch_release(struct list_scratch *ls)
{
	if (ls->blk != ls->blk_stack)
		free(ls->blk);
	if (ls->off != ls->off_stack)
		free(ls->off);
}

/* The scratch's entries, sorted, as one allocation of dirents and names. */
static int
list_scratch_finish(struct list_scratch *ls, struct grove_dirent **ret_ents)
{
	const char **names = (const char **)ls->off; /* same size: sorted in place */
	struct grove_dirent *ents;
	char *out;

	_Static_assert(sizeof(size_t) == sizeof(const char *), "offsets become pointers in place");
	if (!ls->n) {
		*ret_ents = NULL;
		return 0;
	}
	for (size_t i = 0; i < ls->n; i++)
		names[i] = ls->blk + ls->off[i];
	if (grove_sort_names(names, ls->n) < 0)
		return -ENOMEM;
	ents = malloc(ls->n * sizeof(*ents) + ls->len - ls->n * LIST_HEAD);
	if (!ents)
		return -ENOMEM;
	out = (char *)(ents + ls->n);
	for (size_t i = 0; i < ls->n; i++) {
		size_t nl = strlen(names[i]) + 1;
		uint64_t ino;

		memcpy(&ino, names[i] - sizeof(ino), sizeof(ino));
		ents[i].type = (enum grove_ftype)names[i][-(ptrdiff_t)LIST_HEAD];
		ents[i].ino = (ino_t)ino;
		ents[i].name = memcpy(out, names[i], nl);
		out += nl;
	}
	*ret_ents = ents;
	return 0;
}

/* The longest record getdents64 can give: a NAME_MAX name, its NUL, 8-byte aligned. */
#define KDIRENT_MAX ((offsetof(struct kdirent64, d_name) + NAME_MAX + 1 + 7) & ~(size_t)7)

bool
grove_fs_fills_listings(int dirfd)
{
	struct statfs sf;

	if (fstatfs(dirfd, &sf) < 0)
		return false;
	/* Each of these reads a folder in one loop that stops only when the next entry does not
	 * fit or there is none left (ext4_readdir and ext4_dx_readdir, offset_iterate_dir and
	 * dcache_readdir, xfs_readdir, btrfs_real_readdir). Others need not: FUSE gives one
	 * reply of its server per call, NFS, CIFS and 9p what one request brought back. */
	switch ((unsigned long)sf.f_type) {
	case EXT4_SUPER_MAGIC: /* ext2 and ext3 too */
	case TMPFS_MAGIC:
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

int
grove_fs_list(int dirfd, struct grove_dirent **ret_ents, size_t *ret_n, struct grove_error *err)
{
	return grove_fs_list_flags(dirfd, 0, ret_ents, ret_n, err);
}

int
grove_fs_list_flags(int dirfd, unsigned flags, struct grove_dirent **ret_ents, size_t *ret_n,
		    struct grove_error *err)
{
	char buf[32768] __attribute__((aligned(8)));
	struct list_scratch ls;
	bool rewound = false;
	int r = 0;

	ls.blk = ls.blk_stack;
	ls.cap = sizeof(ls.blk_stack);
	ls.off = ls.off_stack;
	ls.cap_off = sizeof(ls.off_stack) / sizeof(ls.off_stack[0]);
	ls.len = ls.n = 0;
	for (;;) {
		long len = syscall(SYS_getdents64, dirfd, buf, sizeof(buf));

		if (len < 0) {
			r = grove_error_errno(err, -errno, "list folder");
			goto out;
		}
		/* Nothing at all, not even ".": the fd was listed before and sits at
		 * its end (getdents64 reads from the offset). Rewind once. A fresh fd
		 * costs no lseek. */
		if (len == 0 && ls.n == 0 && !rewound) {
			rewound = true;
			if (lseek(dirfd, 0, SEEK_SET) < 0) {
				r = grove_error_errno(err, -errno, "list folder");
				goto out;
			}
			continue;
		}
		if (len == 0)
			break;
		rewound = true;
		for (long off = 0; off < len;) {
			struct kdirent64 *d = (struct kdirent64 *)(buf + off);
			enum grove_ftype type;

			off += d->d_reclen;
			if (d->d_name[0] == '.' &&
			    (!d->d_name[1] || (d->d_name[1] == '.' && !d->d_name[2])))
				continue;
			type = ftype_of_dtype(d->d_type);
			if (type == GROVE_FT_UNKNOWN) {
				struct stat st;

				if (fstatat(dirfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
					if (errno == ENOENT)
						continue; /* gone since it was listed */
					r = grove_error_errno(err, -errno, "stat '%s'", d->d_name);
					goto out;
				}
				type = ftype_of_mode(st.st_mode);
			}
			if (list_scratch_put(&ls, type, d->d_ino, d->d_name) < 0) {
				r = grove_error_errno(err, -ENOMEM, "list folder");
				goto out;
			}
		}
		/* Room left for the longest entry: the filesystem had no more to give. The read
		 * that would return 0 to say so is not made (see GROVE_LIST_SHORT_END). */
		if ((flags & GROVE_LIST_SHORT_END) && (size_t)len + KDIRENT_MAX <= sizeof(buf))
			break;
	}
	if (list_scratch_finish(&ls, ret_ents) < 0) {
		r = grove_error_errno(err, -ENOMEM, "list folder");
		goto out;
	}
	*ret_n = ls.n;
out:
	list_scratch_release(&ls);
	return r;
}

/* Reads the whole regular file open at fd (at most max bytes); what names it for messages. */
static int
read_fd(int fd, const char *what, size_t max, char **ret_buf, size_t *ret_len,
	struct grove_error *err)
{
	cleanup_free char *buf = NULL;
	struct stat st;
	size_t len = 0, cap;

	if (fstat(fd, &st) < 0)
		return grove_error_errno(err, -errno, "read '%s'", what);
	if (!S_ISREG(st.st_mode))
		return grove_error_set(err, -EINVAL, "read '%s': not a regular file", what);
	/* A file already known to be too big is refused before reading a byte. */
	if ((uint64_t)st.st_size > (uint64_t)max)
		return grove_error_set(err, -EFBIG, "read '%s': larger than %zu bytes", what, max);
	cap = (size_t)st.st_size < max ? (size_t)st.st_size + 1 : max + 1;
	buf = malloc(cap);
	if (!buf)
		return grove_error_errno(err, -ENOMEM, "read '%s'", what);
	for (;;) {
		ssize_t k;

		if (len + 1 >= cap) {
			char *nb;

			if (cap > max) {
				/* Probe one byte beyond max to tell "exactly max" from "too big".
				 */
				char c;

				k = read(fd, &c, 1);
				if (k < 0 && errno == EINTR)
					continue;
				if (k < 0)
					return grove_error_errno(err, -errno, "read '%s'", what);
				if (k > 0)
					return grove_error_set(err, -EFBIG,
							       "read '%s': larger than %zu bytes",
							       what, max);
				break;
			}
			nb = realloc(buf, cap * 2 > max + 1 ? max + 1 : cap * 2);
			if (!nb)
				return grove_error_errno(err, -ENOMEM, "read '%s'", what);
			buf = nb;
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			continue;
		}
		k = read(fd, buf + len, cap - 1 - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return grove_error_errno(err, -errno, "read '%s'", what);
		if (k == 0)
			break;
		len += (size_t)k;
	}
	buf[len] = '\0';
	*ret_buf = steal_ptr(&buf);
	*ret_len = len;
	return 0;
}

static void
stamp_of(const struct stat *st, struct grove_fs_stamp *ret)
{
	ret->dev = (uint64_t)st->st_dev;
	ret->ino = (uint64_t)st->st_ino;
	ret->size = (uint64_t)st->st_size;
	ret->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	ret->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

int
grove_fs_stamp_at(int dirfd, const char *name, struct grove_fs_stamp *ret,
		  enum grove_ftype *ret_type, struct grove_error *err)
{
	struct stat st;

	memset(ret, 0, sizeof(*ret));
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT) {
			*ret_type = GROVE_FT_NONE;
			return 0;
		}
		return grove_error_errno(err, -errno, "stat '%s'", name);
	}
	*ret_type = S_ISREG(st.st_mode)   ? GROVE_FT_REG
		    : S_ISDIR(st.st_mode) ? GROVE_FT_DIR
		    : S_ISLNK(st.st_mode) ? GROVE_FT_LINK
					  : GROVE_FT_OTHER;
	stamp_of(&st, ret);
	return 0;
}

int
grove_fs_read_file_stamped_at(int dirfd, const char *name, size_t max, char **ret_buf,
			      size_t *ret_len, struct grove_fs_stamp *ret_stamp,
			      struct grove_error *err)
{
	cleanup_fd int fd = -1;
	struct stat st;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == ELOOP)
			return grove_error_set(err, -ELOOP, "read '%s': it is a symlink", name);
		return grove_error_errno(err, -errno, "read '%s'", name);
	}
	if (fstat(fd, &st) < 0)
		return grove_error_errno(err, -errno, "read '%s'", name);
	stamp_of(&st, ret_stamp);
	return read_fd(fd, name, max, ret_buf, ret_len, err);
}

int
grove_fs_read_file_at(int dirfd, const char *name, size_t max, char **ret_buf, size_t *ret_len,
		      struct grove_error *err)
{
	cleanup_fd int fd = -1;

	/* O_NONBLOCK: a fifo planted under the name must not hang us. */
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == ELOOP)
			return grove_error_set(err, -ELOOP, "read '%s': it is a symlink", name);
		return grove_error_errno(err, -errno, "read '%s'", name);
	}
	return read_fd(fd, name, max, ret_buf, ret_len, err);
}

int
grove_fs_read_config_file(const char *path, size_t max, char **ret_buf, size_t *ret_len,
			  struct grove_error *err)
{
	cleanup_fd int fd = -1;

	/* A user's own configuration may well be a symlink, since dotfiles are
	 * often stowed: this is the one reader that follows them (fs_trust.c, which
	 * refuses a file or link another user can write). */
	fd = grove_fs_open_config(path, err);
	if (fd == -ENOENT) {
		grove_error_clear(err);
		*ret_buf = NULL;
		*ret_len = 0;
		return 0;
	}
	if (fd < 0)
		return fd;
	return read_fd(fd, path, max, ret_buf, ret_len, err);
}

/* ---- the safe verbs ---- */

/* Appends s to buf (len used of lim, one byte kept for the NUL), truncating as snprintf does. */
static size_t
put_str(char *buf, size_t len, size_t lim, const char *s)
{
	while (*s && len < lim - 1)
		buf[len++] = *s++;
	return len;
}

static size_t
put_ulong(char *buf, size_t len, size_t lim, unsigned long v)
{
	char digits[24];
	size_t i = sizeof(digits);

	digits[--i] = '\0';
	do
		digits[--i] = (char)('0' + v % 10);
	while ((v /= 10));
	return put_str(buf, len, lim, digits + i);
}

/* One per link an unstow removes: built by hand, since snprintf's format parsing cost as much
 * as the rest of the removal's user-space work. Same text and truncation as
 * snprintf(".grove-%s.%lu.%s") or (".grove-tmp.%ld.%lu.%s") into lim bytes. */
void
grove_fs_temp_name(char *buf, size_t size, const char *tag, const char *base)
{
	static unsigned long counter;
	unsigned long c = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
	const char *slash = base ? strrchr(base, '/') : NULL;
	size_t lim = size < NAME_MAX + 1 ? size : NAME_MAX + 1, len;

	if (slash)
		base = slash + 1;
	if (!lim)
		return;
	len = put_str(buf, 0, lim, ".grove-");
	if (tag && tag[0]) {
		len = put_str(buf, len, lim, tag);
	} else {
		len = put_str(buf, len, lim, "tmp.");
		len = put_ulong(buf, len, lim, (unsigned long)getpid()); /* (a pid is positive) */
	}
	len = put_str(buf, len, lim, ".");
	len = put_ulong(buf, len, lim, c);
	len = put_str(buf, len, lim, ".");
	len = put_str(buf, len, lim, base ? base : "");
	buf[len] = '\0';
}

bool
grove_fs_removal_name(char *buf, size_t size, const char *tag)
{
	size_t lim = size < NAME_MAX + 1 ? size : NAME_MAX + 1, len;

	if (!tag || !tag[0] || !lim)
		return false;
	len = put_str(buf, 0, lim, ".grove-");
	len = put_str(buf, len, lim, tag);
	len = put_str(buf, len, lim, ".rm");
	buf[len] = '\0';
	return len == strlen(".grove-") + strlen(tag) + strlen(".rm"); /* (not cut short) */
}

bool
grove_fs_is_removal_name(const char *name, const char *tag)
{
	size_t l = strlen(tag);

	return grove_fs_is_temp_of(name, tag) && strcmp(name + 7 + l, ".rm") == 0;
}

bool
grove_fs_is_temp_of(const char *name, const char *tag)
{
	size_t l = strlen(tag);

	return strncmp(name, ".grove-", 7) == 0 && strncmp(name + 7, tag, l) == 0 &&
	       name[7 + l] == '.';
}

/* True when the entry name in dirfd is a symlink whose text is exactly text.
 * Returns 1 yes, 0 no (including missing), negative errno on a read failure. */
static int
is_link_to(int dirfd, const char *name, const char *text)
{
	cleanup_free char *have = NULL;
	size_t want = strlen(text);
	int r;

	/* Into the stack, one byte more than the text we expect (a longer text shows as a longer
	 * read): no malloc for the common case. */
	if (want < PATH_MAX) {
		char buf[PATH_MAX];
		ssize_t n = readlinkat(dirfd, name, buf, want + 1);

		if (n < 0)
			return errno == EINVAL || errno == ENOENT ? 0 : -errno;
		return (size_t)n == want && memcmp(buf, text, want) == 0;
	}
	r = read_link(dirfd, name, &have);

	if (r == -EINVAL || r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	return have && strcmp(have, text) == 0;
}

/* Makes a link to text under a fresh temporary name derived from name; fills tmp. */
static int
link_create_temp(int dirfd, const char *name, const char *text, const char *tag, char *tmp,
		 size_t size)
{
	for (int i = 0; i < 16; i++) {
		grove_fs_temp_name(tmp, size, tag, name);
		if (symlinkat(text, dirfd, tmp) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int
grove_fs_link_create(int dirfd, const char *name, const char *text, struct grove_error *err)
{
	if (symlinkat(text, dirfd, name) < 0)
		return grove_error_errno(err, -errno, "create link '%s'", name);
	return 0;
}

int
grove_fs_link_replace(int dirfd, const char *name, const char *old_text, const char *text,
		      const char *tag, struct grove_error *err)
{
	char tmp[NAME_MAX + 1];
	int r;

	r = link_create_temp(dirfd, name, text, tag, tmp, sizeof(tmp));
	if (r < 0)
		return grove_error_errno(err, r, "replace link '%s': create temporary link", name);

	/* Exchange rather than rename-over: whatever sat at name is kept (at tmp)
	 * until we have checked it was our old link, so a foreign entry that
	 * appeared since planning is put back, never destroyed. */
	if (renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE) < 0) {
		r = -errno;
		if (r == -EINVAL) {
			/* No RENAME_EXCHANGE here: fall back to the check-then-rename the
			 * design allows for a replacement (the window is one syscall). */
			r = is_link_to(dirfd, name, old_text);
			if (r == 1 && renameat2(dirfd, tmp, dirfd, name, 0) == 0)
				return 0;
			r = r == 1 ? -errno : r;
		}
		unlinkat(dirfd, tmp, 0);
		if (r == 0 || r == -ENOENT)
			return grove_error_set(err, -GROVE_E_PRECONDITION,
					       "replace link '%s': not a link to '%s'", name,
					       old_text);
		return grove_error_errno(err, r, "replace link '%s'", name);
	}
	r = is_link_to(dirfd, tmp, old_text);
	if (r != 1) {
		/* Not what we expected: swap it back and drop our new link. */
		if (renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE) < 0)
			return grove_error_set(err, -GROVE_E_STUCK,
					       "replace link '%s': found something else and could "
					       "not put it back from '%s': %s",
					       name, tmp, strerror(errno));
		unlinkat(dirfd, tmp, 0);
		if (r < 0)
			return grove_error_errno(err, r, "replace link '%s'", name);
		return grove_error_set(err, -GROVE_E_PRECONDITION,
				       "replace link '%s': not a link to '%s'", name, old_text);
	}
	if (unlinkat(dirfd, tmp, 0) < 0) {
		r = -errno;
		/* Keep "nothing changed" on failure: put the old link back. */
		if (renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE) < 0)
			return grove_error_set(err, -GROVE_E_STUCK,
					       "replace link '%s': could not remove the old link "
					       "at '%s' (%s) nor put it back: %s",
					       name, tmp, strerror(-r), strerror(errno));
		unlinkat(dirfd, tmp, 0);
		return grove_error_errno(err, r, "replace link '%s': remove old link", name);
	}
	return 0;
}

int
grove_fs_link_remove(int dirfd, const char *name, const char *expect_text, const char *tag,
		     struct grove_error *err)
{
	char tmp[NAME_MAX + 1];
	int r = -EEXIST;

	/* Take the entry out of everyone's way first, then look at what we took:
	 * checking in place and unlinking after would remove whatever replaced our
	 * link in between. The first name tried is the transaction's one removal name:
	 * the same for every link, so the kernel finds it again where the last removal
	 * in this folder left it, instead of making (and keeping) a new entry per link. */
	if (grove_fs_removal_name(tmp, sizeof(tmp), tag))
		r = renameat2(dirfd, name, dirfd, tmp, RENAME_NOREPLACE) < 0 ? -errno : 0;
	for (int i = 0; i < 16 && r == -EEXIST; i++) {
		grove_fs_temp_name(tmp, sizeof(tmp), tag, name);
		r = renameat2(dirfd, name, dirfd, tmp, RENAME_NOREPLACE) < 0 ? -errno : 0;
	}
	if (r == -ENOENT)
		return grove_error_set(err, -GROVE_E_PRECONDITION,
				       "remove link '%s': it does not exist", name);
	if (r == -EINVAL)
		return grove_error_set(err, -GROVE_E_UNSUPPORTED,
				       "remove link '%s': the filesystem does not support "
				       "RENAME_NOREPLACE, which grove needs to remove safely",
				       name);
	if (r < 0)
		return grove_error_errno(err, r, "remove link '%s'", name);

	r = is_link_to(dirfd, tmp, expect_text);
	if (r == 1) {
		if (unlinkat(dirfd, tmp, 0) == 0)
			return 0;
		r = -errno;
	}
	if (renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE) < 0)
		return grove_error_set(err, -GROVE_E_STUCK,
				       "remove link '%s': could not move it back from '%s': %s",
				       name, tmp, strerror(errno));
	if (r == 0)
		return grove_error_set(err, -GROVE_E_PRECONDITION,
				       "remove link '%s': not a link to '%s'", name, expect_text);
	return grove_error_errno(err, r, "remove link '%s'", name);
}

int
grove_fs_link_remove_aside(int dirfd, const char *name, const char *expect_text,
			   struct grove_error *err)
{
	size_t want = strlen(expect_text);
	char buf[PATH_MAX];
	ssize_t n;
	int r;

	/* One byte more than the text we expect: a longer text shows as a longer read. */
	if (want + 1 <= sizeof(buf)) {
		n = readlinkat(dirfd, name, buf, want + 1);
		r = n < 0 ? -errno : (size_t)n == want && memcmp(buf, expect_text, want) == 0;
	} else {
		r = is_link_to(dirfd, name, expect_text);
	}
	if (r == -EINVAL || r == -ENOENT || r == 0)
		return grove_error_set(err, -GROVE_E_PRECONDITION,
				       "remove link '%s': not a link to '%s'", name, expect_text);
	if (r < 0)
		return grove_error_errno(err, r, "remove link '%s'", name);
	if (unlinkat(dirfd, name, 0) < 0)
		return grove_error_errno(err, -errno, "remove link '%s'", name);
	return 0;
}

int
grove_fs_mkdir(int dirfd, const char *name, mode_t mode, struct grove_error *err)
{
	int fd;

	if (mkdirat(dirfd, name, mode) < 0)
		return grove_error_errno(err, -errno, "create folder '%s'", name);
	/* No atomic mkdir-and-open exists; O_NOFOLLOW | O_DIRECTORY refuses
	 * anything that replaced our folder in between. */
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int r = -errno;

		/* Leave nothing behind: remove what we made if it is still an empty
		 * folder (AT_REMOVEDIR cannot remove anything else). */
		unlinkat(dirfd, name, AT_REMOVEDIR);
		return grove_error_errno(err, r, "open new folder '%s'", name);
	}
	return fd;
}

int
grove_fs_rmdir(int dirfd, const char *name, struct grove_error *err)
{
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
		return grove_error_errno(err, -errno, "remove folder '%s'", name);
	return 0;
}

int
grove_fs_exchange(int dirfd, const char *a, const char *b, struct grove_error *err)
{
	if (renameat2(dirfd, a, dirfd, b, RENAME_EXCHANGE) < 0) {
		if (errno == EINVAL)
			return grove_error_set(err, -GROVE_E_UNSUPPORTED,
					       "exchange '%s' and '%s': the filesystem does not "
					       "support RENAME_EXCHANGE, which grove needs to swap "
					       "atomically",
					       a, b);
		return grove_error_errno(err, -errno, "exchange '%s' and '%s'", a, b);
	}
	return 0;
}

int
grove_fs_move(int fromfd, const char *from, int tofd, const char *to, unsigned int flags,
	      struct grove_error *err)
{
	if (renameat2(fromfd, from, tofd, to, flags) < 0) {
		if (errno == EINVAL && (flags & RENAME_NOREPLACE))
			return grove_error_set(err, -GROVE_E_UNSUPPORTED,
					       "move '%s' to '%s': the filesystem does not support "
					       "RENAME_NOREPLACE",
					       from, to);
		return grove_error_errno(err, -errno, "move '%s' to '%s'", from, to);
	}
	return 0;
}

int
grove_fs_unlink_file(int dirfd, const char *name, struct grove_error *err)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return grove_error_errno(err, -errno, "remove file '%s'", name);
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return grove_error_set(err, -GROVE_E_PRECONDITION,
				       "remove file '%s': not a regular file or a link", name);
	if (unlinkat(dirfd, name, 0) < 0)
		return grove_error_errno(err, -errno, "remove file '%s'", name);
	return 0;
}

int
grove_fs_sync(int fd, struct grove_error *err)
{
	if (fsync(fd) < 0)
		return grove_error_errno(err, -errno, "sync folder");
	return 0;
}
