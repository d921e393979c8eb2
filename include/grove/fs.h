/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The fs layer: the only code that makes filesystem syscalls, always beneath a held root fd. */
#ifndef GROVE_FS_H
#define GROVE_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "grove/error.h"

/*
 * Contract (DESIGN.md invariant 1): a root is opened once by the path the
 * user gave (grove_root_open is the only place a path string reaches the
 * kernel, together with grove_fs_read_config_file for user configuration).
 * Everything beneath a root goes through a directory fd plus a single name,
 * or through openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS (RESOLVE_IN_ROOT, or grove_fs_chase_dir's walk, where
 * alternatives follow the root's own links, as merged /usr's). Every fd is O_CLOEXEC.
 *
 * "name" parameters are single path components (no '/', not "." or "..");
 * "relpath" parameters are relative paths beneath a root ("" or "." is the
 * root itself), without "..". Functions return >= 0 or a negative errno /
 * grove code with err filled, naming the path and the reason.
 */

enum grove_ftype {
	GROVE_FT_NONE = 0, /* nothing there */
	GROVE_FT_DIR,
	GROVE_FT_LINK,
	GROVE_FT_REG,
	GROVE_FT_OTHER, /* fifo, socket, device */
	GROVE_FT_UNKNOWN,
};

struct grove_root {
	int fd;     /* O_RDONLY | O_DIRECTORY | O_CLOEXEC, listable */
	char *path; /* as the user gave it, for messages */
	char *real; /* canonical absolute path, symlinks resolved at open time */
	dev_t dev;
	ino_t ino;
	/* Birth time in nanoseconds (statx), 0 where the filesystem does not keep
	 * it: with dev and ino it tells a folder from a new one that reuses the
	 * inode number of a removed one. */
	int64_t born;
};

struct grove_stat {
	enum grove_ftype type;
	mode_t mode;
	uid_t uid;
	dev_t dev;
	ino_t ino;
	off_t size;
};

struct grove_dirent {
	char *name;
	enum grove_ftype type; /* from d_type; lstat-resolved when the fs says DT_UNKNOWN */
	ino_t ino;             /* d_ino */
};

/* Opens the folder at path (following symlinks in path, as a user expects) and
 * holds it. root->real is its canonical absolute path. -ENOTDIR if not a folder. */
int grove_root_open(struct grove_root *root, const char *path, struct grove_error *err);

/* As grove_root_open, but a symlink as the last component of path is refused
 * (-ELOOP, "it is a symlink"): for grove's own state dir, which must be the
 * folder named, not wherever a link someone planted leads. */
int grove_root_open_nofollow(struct grove_root *root, const char *path, struct grove_error *err);

/* Holds the folder relpath beneath parent as a root of its own, following no
 * symlink on the way (one in the way is -ELOOP, "a symlink is in the way"),
 * and making missing folders with mode when make is true. root->path and
 * root->real are parent's with relpath appended. relpath is clean and relative. */
int grove_root_open_beneath(struct grove_root *root, const struct grove_root *parent,
			    const char *relpath, bool make, mode_t mode, struct grove_error *err);

/*
 * Following symlinks inside a root, as update-alternatives sees an installation root (merged
 * /usr: bin -> usr/bin). grove_fs_chase_dir walks relpath beneath rootfd one name at a time, each
 * folder opened from the one before by its name alone (O_NOFOLLOW), and follows a symlink on the
 * way only when it belongs to root or to the owner of the folder rootfd holds (-EPERM otherwise,
 * naming the link); its owner and its text are read through one fd, so the link followed is the
 * one checked. A relative text goes on from the link's folder. With root_path NULL the root is a
 * chroot's / (openat2's RESOLVE_IN_ROOT): an absolute text starts again at the root and ".." at
 * the root stays there. Else root_path is the root's absolute path: an absolute text beneath it
 * starts again at the root, any other, and a ".." above the root (unless root_path is "/"), is
 * -EXDEV. At most 40 links (-ELOOP).
 *
 * On success ret->phys is where relpath lies beneath the root with no symlink in it ("" is the
 * root itself), and ret->fd holds that folder (O_RDONLY | O_DIRECTORY); a lookup of ret->phys
 * with RESOLVE_NO_SYMLINKS reaches it without following anything. A missing part (or a file where
 * a folder should be) is an answer, not an error: ret->fd is -1 and ret->phys the folders that
 * exist followed by the rest as given (NULL when the rest holds a ".."). With make, missing
 * folders are made with mode instead (as mkdir -p), except beneath a link whose target is
 * missing (-ENOENT). grove_chase_release frees ret.
 */
struct grove_chase {
	int fd;
	char *phys;
};
int grove_fs_chase_dir(int rootfd, const char *root_path, const char *relpath, bool make,
		       mode_t mode, struct grove_chase *ret, struct grove_error *err);
void grove_chase_release(struct grove_chase *c);

/* As grove_root_open_beneath, but relpath is walked with grove_fs_chase_dir (root_path as
 * there): root->path is parent's path with relpath appended, root->real parent's real path with
 * the physical path appended. A missing folder (when not make) is -ENOENT. */
int grove_root_open_chase(struct grove_root *root, const struct grove_root *parent,
			  const char *root_path, const char *relpath, bool make, mode_t mode,
			  struct grove_error *err);

/* stat of relpath beneath rootfd following every symlink as in a chroot whose / is rootfd
 * (openat2 RESOLVE_IN_ROOT): missing is type NONE, returns 0. For reading only (whether an
 * alternative's file exists): no owner is checked. */
int grove_fs_stat_in_root(int rootfd, const char *relpath, struct grove_stat *ret,
			  struct grove_error *err);
/* Which folder a root was when a transaction used it (recorded with the transaction, schema
 * v13): device, inode and birth time (0 where the filesystem keeps none). */
struct grove_root_id {
	dev_t dev;
	ino_t ino;
	int64_t born;
};

/* How a root is found beneath its parent: following no symlink at all (every root so far), or
 * following symlinks that stay inside the parent (RESOLVE_IN_ROOT, for a layout that needs
 * them, as merged /usr in an installation root). A replay reopens a root the way the run that
 * recorded it opened it. */
enum grove_resolve {
	GROVE_RESOLVE_BENEATH = 0,
	GROVE_RESOLVE_IN_ROOT,
};

/*
 * The one way a replay (undo, rollback, recovery) holds a root again (DESIGN.md invariant 11):
 * relpath beneath parent ("" is parent itself), found as resolve says and never made, and, when
 * id is not NULL, checked to be that very folder (device, inode, and birth time where both sides
 * have one). Anything else -- a symlink in the way, a missing folder, another folder in its
 * place -- is -GROVE_E_STUCK with a message naming the root as what (e.g. "administrative
 * directory") and saying that nothing was written; the caller writes nothing then.
 */
int grove_root_reopen(struct grove_root *root, const struct grove_root *parent, const char *relpath,
		      enum grove_resolve resolve, const struct grove_root_id *id, const char *what,
		      struct grove_error *err);

/* Whether root is the folder id records (born compared only where both are known). */
bool grove_root_is(const struct grove_root *root, const struct grove_root_id *id);

/* root's identity, to record with a transaction. */
struct grove_root_id grove_root_id_of(const struct grove_root *root);

/* The birth time (statx) of what fd holds, in nanoseconds, or 0 where the
 * filesystem does not keep it: every grove_root's born comes from here, so a
 * folder has one identity however it was opened. */
int64_t grove_fd_born(int fd);

/* Closes the fd and frees the strings; safe on a zeroed or released root. */
void grove_root_release(struct grove_root *root);

/* ---- root opening ---- */

/* Makes the folder path and its missing parents (as mkdir -p), each with mode
 * less the umask; folders that exist are left as they are. A path-string
 * operation, for a root that may not exist yet (the state dir): the caller
 * then holds path with grove_root_open, which also refuses a non-folder. */
int grove_fs_make_dirs(const char *path, mode_t mode, struct grove_error *err);

/* Opens (with O_CREAT in flags: creates, with mode) the regular file name in
 * dirfd, never following a symlink (O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, and
 * O_NONBLOCK so a fifo planted there cannot hang us); anything but a regular
 * file is refused with -EINVAL. Returns the fd. For grove's own files in a
 * held root, such as the state dir's lock files. */
int grove_fs_open_file_at(int dirfd, const char *name, int flags, mode_t mode,
			  struct grove_error *err);

/* Opens name in dirfd for appending (creating a regular file with mode when it is missing),
 * never following a symlink, as a log is opened: a regular file or a character device (such as
 * /dev/null, which update-alternatives' --log accepts) is taken; a fifo, socket or folder is
 * -EINVAL. The fd is left blocking. */
int grove_fs_open_append_at(int dirfd, const char *name, mode_t mode, struct grove_error *err);

/* Opens the folder name in dirfd (as grove_fs_open_dir_at), making it with
 * mode first when it is missing. A symlink or a non-folder there is refused. */
int grove_fs_open_or_make_dir(int dirfd, const char *name, mode_t mode, struct grove_error *err);

/* flock(fd, op), retried on EINTR. With LOCK_NB, a lock held elsewhere gives
 * -EWOULDBLOCK (err says "lock: ..."; callers name what is locked). */
int grove_fs_flock(int fd, int op, struct grove_error *err);

/*
 * The holder's mark on a lock file: an open-file-description lock (F_OFD_SETLK, F_RDLCK) on one
 * byte far past any record, taken by whoever holds the file's flock and dropped with its fd,
 * as the flock is. It never conflicts with another holder's mark (all are read locks) and has
 * nothing to do with the flock itself: it only lets grove_fs_lock_probe tell, without taking
 * anything, that a live process holds the file. (flock and fcntl locks do not see each other
 * on Linux, so the flock cannot be probed that way.)
 */
int grove_fs_lock_mark(int fd, struct grove_error *err);

/* Whether a live process holds a mark on the file open at fd (F_OFD_GETLK: nothing is taken,
 * and fd may be read-only). */
int grove_fs_lock_probe(int fd, bool *ret_marked, struct grove_error *err);

/* The effective uid the process pid runs as (the owner of /proc/PID): 0, or -ESRCH when there
 * is no such process (or -errno when /proc cannot be asked). */
int grove_fs_pid_owner(long pid, uid_t *ret_uid);

/*
 * Whether a process running as uid holds an flock on the file name in dirfd, found in
 * /proc/locks (by the file's device and inode, so the asker need not be able to open the file):
 * 1 with *ret_pid the pid that took it, 0 when no such process holds one (a holder running as
 * another user is none), or a negative errno when /proc/locks cannot be read (err set).
 */
int grove_fs_lock_holder_at(int dirfd, const char *name, uid_t uid, long *ret_pid,
			    struct grove_error *err);

/* Replaces name in dirfd by a new empty regular file with mode, made as tmpname (a name of
 * the caller's that nothing else uses) and renamed over name in one step. */
int grove_fs_replace_file_at(int dirfd, const char *name, const char *tmpname, mode_t mode,
			     struct grove_error *err);

/* pwrite of all of buf at offset 0 of the file open at fd (a lock file's holder record). */
int grove_fs_write_head(int fd, const char *buf, size_t len, struct grove_error *err);

/* pread of at most size - 1 bytes from offset 0 into buf, NUL-terminated; returns the length. */
int grove_fs_read_head(int fd, char *buf, size_t size, struct grove_error *err);

/* openat2(rootfd, relpath, flags | O_CLOEXEC) with RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS, plus RESOLVE_NO_SYMLINKS unless follow is true.
 * EAGAIN (rename storms) is retried a bounded number of times. A symlink on the
 * way gives -ELOOP; an escape gives -EXDEV. Returns the fd. */
int grove_fs_open_beneath(int rootfd, const char *relpath, int flags, bool follow,
			  struct grove_error *err);

/* Opens the folder relpath beneath rootfd, refusing symlinks anywhere on the way. */
int grove_fs_open_dir_beneath(int rootfd, const char *relpath, struct grove_error *err);

/* Opens the folder name inside dirfd (O_DIRECTORY | O_NOFOLLOW). */
int grove_fs_open_dir_at(int dirfd, const char *name, struct grove_error *err);

/* As grove_fs_open_dir_at and grove_fs_open_beneath, and *ret_same_mount says whether what was
 * opened is on the mount of dirfd (rootfd), no mount crossed on the way (RESOLVE_NO_XDEV). A
 * mount on the way is no error: it is opened all the same, with *ret_same_mount false. Errors
 * are those of grove_fs_open_dir_at and grove_fs_open_beneath. */
int grove_fs_open_dir_at_mount(int dirfd, const char *name, bool *ret_same_mount,
			       struct grove_error *err);
int grove_fs_open_beneath_mount(int rootfd, const char *relpath, int flags, bool follow,
				bool *ret_same_mount, struct grove_error *err);
int grove_fs_open_dir_beneath_mount(int rootfd, const char *relpath, bool *ret_same_mount,
				    struct grove_error *err);

/* The same open, as a question: the fd, or -errno with no error set and nothing more asked of
 * the kernel (a symlink gives -ENOTDIR or -ELOOP, as a file gives -ENOTDIR). For a caller that
 * asks again with its own calls when the answer is not a folder. *ret_same_mount as
 * grove_fs_open_dir_at_mount's (a mount point is opened with a second call). */
int grove_fs_try_open_dir_at(int dirfd, const char *name, bool *ret_same_mount);

/* lstat of name in dirfd. "ENOENT is an answer": a missing entry gives
 * ret->type = GROVE_FT_NONE and returns 0. */
int grove_fs_stat_at(int dirfd, const char *name, struct grove_stat *ret, struct grove_error *err);

/* stat of relpath beneath rootfd, following symlinks but never leaving the
 * root (RESOLVE_BENEATH without NO_SYMLINKS). Missing: type NONE, returns 0.
 * Escaping: -EXDEV; a loop: -ELOOP. */
int grove_fs_stat_beneath_follow(int rootfd, const char *relpath, struct grove_stat *ret,
				 struct grove_error *err);

/*
 * Closing many fds in few syscalls. A scan opens and closes one fd per package folder; on a
 * machine where entering the kernel is the cost (a VM), the close is a quarter of a folder's
 * syscalls. A batch takes fds the caller is done with (ownership passes to it) and closes them
 * when full or flushed: each run of consecutive numbers, all of them the batch's own, with one
 * close_range, the rest with close. Until then the fds stay open (at most
 * GROVE_FD_BATCH_MAX). A zeroed batch is empty; flush before it goes out of scope.
 */
#define GROVE_FD_BATCH_MAX 64
struct grove_fd_batch {
	int fds[GROVE_FD_BATCH_MAX];
	size_t n;
};

/* Takes fd (ignored when negative); flushes first when the batch is full. */
void grove_fd_batch_add(struct grove_fd_batch *b, int fd);

/* Closes every fd in the batch and empties it. */
void grove_fd_batch_flush(struct grove_fd_batch *b);

/* fstat of an open fd. */
int grove_fs_stat_fd(int fd, struct grove_stat *ret, struct grove_error *err);

/* Reads the regular file open at fd (at most max bytes), NUL-terminated. */
int grove_fs_read_fd(int fd, size_t max, char **ret_buf, size_t *ret_len, struct grove_error *err);

/* Reads the text of the link name in dirfd into a new string. */
int grove_fs_readlink_at(int dirfd, const char *name, char **ret_text, struct grove_error *err);

/* Lists the folder open at dirfd (getdents64), without "." and "..", sorted
 * bytewise by name. *ret_ents is one allocation holding the entries and their
 * names (NULL when there are none): grove_dirents_free (or free) releases it,
 * and a name must not be freed or kept past it. */
int grove_fs_list(int dirfd, struct grove_dirent **ret_ents, size_t *ret_n,
		  struct grove_error *err);
void grove_dirents_free(struct grove_dirent *ents, size_t n);

/*
 * grove_fs_list_flags(GROVE_LIST_SHORT_END): the folder is on a filesystem whose getdents64
 * fills the buffer while entries are left (grove_fs_fills_listings said so of the mount it is
 * on), so a read that leaves room for the longest entry is the last one, and the read that
 * would return 0 to say so is not made: one syscall fewer per folder, which on a farm of small
 * folders is a third of the scan's calls. On any other filesystem (FUSE, NFS, overlayfs...) a
 * short read says nothing, and the folder is read until a read returns 0, as without the flag.
 */
#define GROVE_LIST_SHORT_END 0x1u
int grove_fs_list_flags(int dirfd, unsigned flags, struct grove_dirent **ret_ents, size_t *ret_n,
			struct grove_error *err);

/* Whether the filesystem dirfd is on is one whose listings may be read with
 * GROVE_LIST_SHORT_END (ext2/3/4, tmpfs, XFS, btrfs): one fstatfs. False when it cannot tell. */
bool grove_fs_fills_listings(int dirfd);

/* Reads a regular file name in dirfd (no symlink followed) of at most max bytes,
 * NUL-terminated. */
int grove_fs_read_file_at(int dirfd, const char *name, size_t max, char **ret_buf, size_t *ret_len,
			  struct grove_error *err);

/*
 * What tells a file's content changed without reading it: its inode, size, and change and
 * modification times in ns. A file rewritten in place gets a new change time, one renamed over
 * it (as update-alternatives writes its admin files) a new inode or a new change time.
 */
struct grove_fs_stamp {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

/* lstat of name in dirfd as a stamp; *ret_type its type (GROVE_FT_NONE when missing, then 0). */
int grove_fs_stamp_at(int dirfd, const char *name, struct grove_fs_stamp *ret,
		      enum grove_ftype *ret_type, struct grove_error *err);

/* grove_fs_read_file_at that also gives the stamp of the file it read (fstat of the fd read,
 * before the read). */
int grove_fs_read_file_stamped_at(int dirfd, const char *name, size_t max, char **ret_buf,
				  size_t *ret_len, struct grove_fs_stamp *ret_stamp,
				  struct grove_error *err);

/* Replaces name in dirfd by a file holding buf, written as tmpname (removed first when a
 * crash left it) and renamed over name; never synced: for caches only, whose loss or an old
 * copy costs a slower run, never a wrong one. */
int grove_fs_write_cache_file(int dirfd, const char *name, const char *tmpname, const char *buf,
			      size_t len, struct grove_error *err);

/* Reads a user configuration file by path (.stowrc, ~/.stow-global-ignore,
 * config.yaml, grove.yaml). Missing: returns 0 with *ret_buf = NULL. One that another
 * user can write is refused as grove_fs_open_config says. */
int grove_fs_read_config_file(const char *path, size_t max, char **ret_buf, size_t *ret_len,
			      struct grove_error *err);

/* Opens a user configuration file by path for reading (following symlinks, non-blocking) and
 * checks that only the caller or root can have written it (DESIGN invariant 8): the file, and
 * a symlink at its name, must be owned by the caller's effective uid or by root, and the file
 * not writable by its group or others; else -GROVE_E_CONFIG, naming the file, its owner or
 * mode and the way out. Returns the fd, or a negative code (-ENOENT when missing). */
int grove_fs_open_config(const char *path, struct grove_error *err);

/* ---- The safe verbs. Each checks its precondition atomically where the kernel allows. ---- */

/* symlinkat(text, dirfd, name); an existing name is -EEXIST (a precondition failure). */
int grove_fs_link_create(int dirfd, const char *name, const char *text, struct grove_error *err);

/* Replaces the link name (whose text must be old_text) by a link to text: a new
 * link under a private temporary name (grove_fs_temp_name with tag), renamed over
 * the old one. If name is not a link with old_text, nothing changes:
 * GROVE_E_PRECONDITION. */
int grove_fs_link_replace(int dirfd, const char *name, const char *old_text, const char *text,
			  const char *tag, struct grove_error *err);

/* Removes the link name only if it is a link whose text is expect_text: renames
 * it to a private name (the transaction's removal name, grove_fs_removal_name with
 * tag, or when that is taken, grove_fs_temp_name's), verifies what was moved,
 * then unlinks it; if what was moved is not our link it is renamed back and
 * GROVE_E_PRECONDITION returned. */
int grove_fs_link_remove(int dirfd, const char *name, const char *expect_text, const char *tag,
			 struct grove_error *err);

/* Removes the link name in dirfd if it is a link whose text is expect_text: the
 * check (readlinkat) and the unlink are two calls, so this is only safe in a folder
 * nobody else reaches by path — one grove has moved aside under a private
 * temporary name, as the executor does with a folder it removes whole. Not a link
 * with that text (or missing): GROVE_E_PRECONDITION, nothing removed. */
int grove_fs_link_remove_aside(int dirfd, const char *name, const char *expect_text,
			       struct grove_error *err);

/* mkdirat(dirfd, name, mode), then reopens it O_NOFOLLOW | O_DIRECTORY and
 * checks it is a folder; returns the new folder's fd. -EEXIST if name exists. */
int grove_fs_mkdir(int dirfd, const char *name, mode_t mode, struct grove_error *err);

/* Removes the empty folder name (unlinkat AT_REMOVEDIR); never recursive. */
int grove_fs_rmdir(int dirfd, const char *name, struct grove_error *err);

/* renameat2(dirfd, a, dirfd, b, RENAME_EXCHANGE). A filesystem without it gives
 * GROVE_E_UNSUPPORTED with a clear message, never a silent fallback. */
int grove_fs_exchange(int dirfd, const char *a, const char *b, struct grove_error *err);

/* renameat2(fromfd, from, tofd, to, flags) (flags: 0 or RENAME_NOREPLACE). */
int grove_fs_move(int fromfd, const char *from, int tofd, const char *to, unsigned int flags,
		  struct grove_error *err);

/* Removes name if it is a regular file or a symlink (unlinkat); a folder or a
 * special file is refused with GROVE_E_PRECONDITION. Only for grove's own
 * temporary entries (e.g. the package file an adopt set aside, deleted once
 * the transaction is done). */
int grove_fs_unlink_file(int dirfd, const char *name, struct grove_error *err);

/* Makes a fresh private name for a temporary entry in a folder of the target:
 * ".grove-<tag>.<counter>.<base>" (tag: normally the transaction's id, carried
 * in the executor's options, so that recovery finds every temporary entry of an
 * interrupted transaction by name), or ".grove-tmp.<pid>.<counter>.<base>"
 * when tag is NULL or empty; truncated to fit NAME_MAX. buf holds at least 256
 * bytes. */
void grove_fs_temp_name(char *buf, size_t size, const char *tag, const char *base);

/* Whether name is a temporary entry grove_fs_temp_name (or grove_fs_removal_name)
 * made with tag (the one parser of that format: recovery of every kind of
 * transaction uses it). */
bool grove_fs_is_temp_of(const char *name, const char *tag);

/* The name grove_fs_link_remove moves each link aside under first: ".grove-<tag>.rm",
 * the same for every link a transaction removes (never a name grove_fs_temp_name
 * makes: it has no counter). One removal runs at a time, and each unlinks its
 * link before the next, so a crash leaves at most one such entry in the target:
 * a link with the text of a link the transaction removed from that folder. The
 * same name every time lets the kernel find the name again in each folder rather
 * than make a new entry per link (a 1M-link unstow: 4 % less time, and no million
 * stale names left in the kernel's cache). False (buf unusable) when tag is NULL
 * or empty or the name does not fit. */
bool grove_fs_removal_name(char *buf, size_t size, const char *tag);

/* Whether name is the removal name of tag (grove_fs_removal_name). */
bool grove_fs_is_removal_name(const char *name, const char *tag);

/* Makes the regular file name in dirfd (O_EXCL: an existing name is -EEXIST)
 * holding buf, fsynced and closed. For grove's own small records (a profile
 * generation's record), never for user data. */
int grove_fs_write_new_file(int dirfd, const char *name, const char *buf, size_t len, mode_t mode,
			    struct grove_error *err);

/*
 * A claim on the file open at fd (writable): an open-file-description write lock
 * (F_OFD_SETLK) on its first byte, not waited for. *ret_claimed is false when another
 * open of the file holds it. The claim goes with the last fd of this open, in this process
 * or any, and never with another fd's close (as a POSIX lock would); SQLite's own locks lie
 * at 1 GiB, so a database file can be claimed while SQLite works on it. For files grove
 * makes under a temporary name: whoever claims one is its only user.
 */
int grove_fs_try_claim(int fd, bool *ret_claimed, struct grove_error *err);

/* linkat(dirfd, from, dirfd, to, 0): a second name for a file (never a symlink followed); an
 * existing to is -EEXIST. */
int grove_fs_hardlink(int dirfd, const char *from, const char *to, struct grove_error *err);

/* fsync(dirfd). */
int grove_fs_sync(int fd, struct grove_error *err);

/* close() that keeps errno; accepts -1; returns -1. */
int grove_fd_close(int fd);

#endif
