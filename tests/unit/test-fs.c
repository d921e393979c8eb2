/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests: the fs layer's resolution beneath a root and its safe verbs. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "grove/fs.h"
#include "testutil.h"

struct fx {
	char *dir;              /* temporary folder holding root/ and outside/ */
	char *rootpath;         /* dir/root */
	struct grove_root root; /* held root */
	struct grove_error err;
};

static int
setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	fx->dir = tu_mkdtemp();
	tu_build(fx->dir, "d root\nd outside\nf outside/secret s3cret\n");
	fx->rootpath = tu_path(fx->dir, "root");
	assert_int_equal(grove_root_open(&fx->root, fx->rootpath, &fx->err), 0);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *fx = *state;

	grove_root_release(&fx->root);
	tu_rmtree(fx->dir);
	free(fx->dir);
	free(fx->rootpath);
	free(fx);
	return 0;
}

/* Builds spec under the root. */
static void
build(struct fx *fx, const char *spec)
{
	tu_build(fx->rootpath, spec);
}

static void
test_fs_root_open(void **state)
{
	struct fx *fx = *state;
	struct grove_root r = { 0 };
	struct stat st;
	char *file = tu_path(fx->dir, "outside/secret");
	char *via = tu_path(fx->dir, "via");
	char *missing = tu_path(fx->dir, "missing");

	assert_string_equal(fx->root.real, fx->rootpath);
	assert_string_equal(fx->root.path, fx->rootpath);
	assert_int_equal(fstat(fx->root.fd, &st), 0);
	assert_true(st.st_dev == fx->root.dev && st.st_ino == fx->root.ino);
	assert_true(fcntl(fx->root.fd, F_GETFD) & FD_CLOEXEC);

	/* A symlink to the root is followed; real is the canonical path. */
	tu_build(fx->dir, "l via root\n");
	assert_int_equal(grove_root_open(&r, via, &fx->err), 0);
	assert_string_equal(r.real, fx->rootpath);
	assert_string_equal(r.path, via);
	grove_root_release(&r);
	grove_root_release(&r); /* released twice: harmless */

	assert_int_equal(grove_root_open(&r, file, &fx->err), -ENOTDIR);
	assert_non_null(strstr(fx->err.msg, "secret"));
	assert_int_equal(grove_root_open(&r, missing, &fx->err), -ENOENT);
	assert_int_equal(grove_root_open(&r, "", &fx->err), -ENOENT);

	memset(&r, 0, sizeof(r));
	grove_root_release(&r); /* zeroed: harmless, does not close fd 0 */
	assert_true(fcntl(0, F_GETFD) >= 0 || errno != EBADF);
	free(file);
	free(via);
	free(missing);
}

static void
test_fs_link_create(void **state)
{
	struct fx *fx = *state;
	char *text = NULL;
	char *before;

	assert_int_equal(grove_fs_link_create(fx->root.fd, "ls", "../stow/ls", &fx->err), 0);
	assert_int_equal(grove_fs_readlink_at(fx->root.fd, "ls", &text, &fx->err), 0);
	assert_string_equal(text, "../stow/ls");
	free(text);

	build(fx, "f file mine\n");
	before = tu_dump(fx->rootpath);
	assert_int_equal(grove_fs_link_create(fx->root.fd, "file", "x", &fx->err), -EEXIST);
	assert_string_equal(fx->err.msg, "create link 'file': File exists");
	assert_int_equal(grove_fs_link_create(fx->root.fd, "ls", "x", &fx->err), -EEXIST);
	{
		char *after = tu_dump(fx->rootpath);

		assert_string_equal(before, after);
		free(after);
	}
	free(before);
}

static void
test_fs_link_replace(void **state)
{
	struct fx *fx = *state;
	char *text = NULL;

	build(fx, "l a old\n");
	assert_int_equal(grove_fs_link_replace(fx->root.fd, "a", "old", "new", NULL, &fx->err), 0);
	assert_int_equal(grove_fs_readlink_at(fx->root.fd, "a", &text, &fx->err), 0);
	assert_string_equal(text, "new");
	free(text);
	{
		char *dump = tu_dump(fx->rootpath);

		assert_string_equal(dump, "l a new\n"); /* no temporary left behind */
		free(dump);
	}
}

static void
test_fs_link_replace_refuses(void **state)
{
	struct fx *fx = *state;
	const char *spec = "l a other\nf file data\nd dir\nf dir/x x\n";
	char *before, *after;

	build(fx, spec);
	before = tu_dump(fx->rootpath);
	assert_int_equal(grove_fs_link_replace(fx->root.fd, "a", "old", "new", NULL, &fx->err),
			 -GROVE_E_PRECONDITION);
	assert_non_null(strstr(fx->err.msg, "'a'"));
	assert_int_equal(grove_fs_link_replace(fx->root.fd, "file", "old", "new", NULL, &fx->err),
			 -GROVE_E_PRECONDITION);
	assert_int_equal(grove_fs_link_replace(fx->root.fd, "dir", "old", "new", NULL, &fx->err),
			 -GROVE_E_PRECONDITION);
	assert_int_equal(
		grove_fs_link_replace(fx->root.fd, "missing", "old", "new", NULL, &fx->err),
		-GROVE_E_PRECONDITION);
	after = tu_dump(fx->rootpath);
	assert_string_equal(before, after);
	free(before);
	free(after);
}

static void
test_fs_link_remove(void **state)
{
	struct fx *fx = *state;
	char *dump;

	build(fx, "l a ../stow/a\nf keep k\n");
	assert_int_equal(grove_fs_link_remove(fx->root.fd, "a", "../stow/a", NULL, &fx->err), 0);
	dump = tu_dump(fx->rootpath);
	assert_string_equal(dump, "f keep k\n");
	free(dump);
}

/* Builds spec, removes its n links ("a", "b": to ../stow/a, ../stow/b) with tag 7, expects the
 * tree to be want, then removes the entry kept. */
static void
removes_leaving(struct fx *fx, const char *spec, int n, const char *want, const char *kept)
{
	static const char *const names[] = { "a", "b" };
	static const char *const texts[] = { "../stow/a", "../stow/b" };
	char *dump;

	build(fx, spec);
	for (int i = 0; i < n; i++)
		assert_int_equal(
			grove_fs_link_remove(fx->root.fd, names[i], texts[i], "7", &fx->err), 0);
	dump = tu_dump(fx->rootpath);
	assert_string_equal(dump, want);
	free(dump);
	assert_int_equal(unlinkat(fx->root.fd, kept, 0), 0);
}

/* With a transaction's tag, each link goes aside under the one removal name first: nothing of it
 * is left after, a foreign entry of that name is left alone (a counter name serves instead), and a
 * refused removal puts the entry back. */
static void
test_fs_link_remove_tagged(void **state)
{
	struct fx *fx = *state;
	char name[NAME_MAX + 1], *before, *after;
	char long_tag[NAME_MAX];

	assert_true(grove_fs_removal_name(name, sizeof(name), "7"));
	assert_string_equal(name, ".grove-7.rm");
	assert_true(grove_fs_is_removal_name(".grove-7.rm", "7"));
	assert_true(grove_fs_is_temp_of(".grove-7.rm", "7"));
	assert_false(grove_fs_is_removal_name(".grove-7.0.rm", "7"));
	assert_false(grove_fs_is_removal_name(".grove-77.rm", "7"));
	assert_false(grove_fs_removal_name(name, sizeof(name), NULL));
	assert_false(grove_fs_removal_name(name, sizeof(name), ""));
	memset(long_tag, 'x', sizeof(long_tag) - 1);
	long_tag[sizeof(long_tag) - 1] = '\0';
	assert_false(grove_fs_removal_name(name, sizeof(name), long_tag));

	removes_leaving(fx, "l a ../stow/a\nl b ../stow/b\nf keep k\n", 2, "f keep k\n", "keep");
	removes_leaving(fx, "l a ../stow/a\nf .grove-7.rm someone's\n", 1,
			"f .grove-7.rm someone's\n", ".grove-7.rm");

	build(fx, "l a ../elsewhere\nf keep k\n");
	before = tu_dump(fx->rootpath);
	assert_int_equal(grove_fs_link_remove(fx->root.fd, "a", "../stow/a", "7", &fx->err),
			 -GROVE_E_PRECONDITION);
	after = tu_dump(fx->rootpath);
	assert_string_equal(before, after);
	free(before);
	free(after);
}

static void
test_fs_link_remove_refuses(void **state)
{
	struct fx *fx = *state;
	char *before, *after;

	build(fx, "f file data\nd dir\nf dir/x x\nd empty\nl other ../elsewhere\n");
	before = tu_dump(fx->rootpath);
	assert_int_equal(grove_fs_link_remove(fx->root.fd, "file", "t", NULL, &fx->err),
			 -GROVE_E_PRECONDITION);
	assert_string_equal(fx->err.msg, "remove link 'file': not a link to 't'");
	assert_int_equal(grove_fs_link_remove(fx->root.fd, "dir", "t", NULL, &fx->err),
			 -GROVE_E_PRECONDITION);
	assert_int_equal(grove_fs_link_remove(fx->root.fd, "empty", "t", NULL, &fx->err),
			 -GROVE_E_PRECONDITION);
	assert_int_equal(grove_fs_link_remove(fx->root.fd, "other", "t", NULL, &fx->err),
			 -GROVE_E_PRECONDITION);
	assert_int_equal(grove_fs_link_remove(fx->root.fd, "missing", "t", NULL, &fx->err),
			 -GROVE_E_PRECONDITION);
	after = tu_dump(fx->rootpath);
	assert_string_equal(before, after);
	free(before);
	free(after);
}

static void
test_fs_mkdir(void **state)
{
	struct fx *fx = *state;
	struct stat st;
	int fd;

	fd = grove_fs_mkdir(fx->root.fd, "d", 0755, &fx->err);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	/* The fd is the new folder: a link made through it lands inside. */
	assert_int_equal(grove_fs_link_create(fd, "in", "x", &fx->err), 0);
	close(fd);
	{
		char *dump = tu_dump(fx->rootpath);

		assert_string_equal(dump, "d d\nl d/in x\n");
		free(dump);
	}
	assert_int_equal(grove_fs_mkdir(fx->root.fd, "d", 0755, &fx->err), -EEXIST);
	assert_string_equal(fx->err.msg, "create folder 'd': File exists");
}

static void
test_fs_rmdir(void **state)
{
	struct fx *fx = *state;
	char *dump;

	build(fx, "d empty\nd full\nf full/x x\nl link empty\n");
	assert_int_equal(grove_fs_rmdir(fx->root.fd, "full", &fx->err), -ENOTEMPTY);
	assert_int_equal(grove_fs_rmdir(fx->root.fd, "link", &fx->err), -ENOTDIR);
	assert_int_equal(grove_fs_rmdir(fx->root.fd, "empty", &fx->err), 0);
	dump = tu_dump(fx->rootpath);
	assert_string_equal(dump, "d full\nf full/x x\nl link empty\n");
	free(dump);
}

static void
test_fs_exchange(void **state)
{
	struct fx *fx = *state;
	char *dump;

	build(fx, "d dir\nf dir/x x\nl lnk target\n");
	assert_int_equal(grove_fs_exchange(fx->root.fd, "dir", "lnk", &fx->err), 0);
	dump = tu_dump(fx->rootpath);
	assert_string_equal(dump, "l dir target\nd lnk\nf lnk/x x\n");
	free(dump);
	assert_int_equal(grove_fs_exchange(fx->root.fd, "dir", "missing", &fx->err), -ENOENT);
}

static void
test_fs_move(void **state)
{
	struct fx *fx = *state;
	char *dump;
	int sub;

	build(fx, "f a A\nd sub\nf sub/b B\n");
	sub = grove_fs_open_dir_beneath(fx->root.fd, "sub", &fx->err);
	assert_true(sub >= 0);
	assert_int_equal(grove_fs_move(fx->root.fd, "a", sub, "b", RENAME_NOREPLACE, &fx->err),
			 -EEXIST);
	assert_int_equal(grove_fs_move(fx->root.fd, "a", sub, "c", RENAME_NOREPLACE, &fx->err), 0);
	dump = tu_dump(fx->rootpath);
	assert_string_equal(dump, "d sub\nf sub/b B\nf sub/c A\n");
	free(dump);
	/* flags 0 replaces, as Stow's --adopt does. */
	assert_int_equal(grove_fs_move(sub, "c", sub, "b", 0, &fx->err), 0);
	dump = tu_dump(fx->rootpath);
	assert_string_equal(dump, "d sub\nf sub/b A\n");
	free(dump);
	close(sub);
}

static void
test_fs_unlink_file(void **state)
{
	struct fx *fx = *state;
	char *dump;

	build(fx, "f a A\nd d\nl l x\n");
	assert_int_equal(grove_fs_unlink_file(fx->root.fd, "d", &fx->err), -GROVE_E_PRECONDITION);
	assert_int_equal(grove_fs_unlink_file(fx->root.fd, "a", &fx->err), 0);
	assert_int_equal(grove_fs_unlink_file(fx->root.fd, "l", &fx->err), 0);
	dump = tu_dump(fx->rootpath);
	assert_string_equal(dump, "d d\n");
	free(dump);
}

static void
test_fs_open_dir_beneath(void **state)
{
	struct fx *fx = *state;
	struct stat st;
	int fd;

	build(fx, "d a/b/c\nl sneaky ../outside\nl inner a\nd a/real\nl a/real/up ../..\n");
	fd = grove_fs_open_dir_beneath(fx->root.fd, "a/b/c", &fx->err);
	assert_true(fd >= 0);
	close(fd);
	fd = grove_fs_open_dir_beneath(fx->root.fd, "", &fx->err);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(st.st_ino == fx->root.ino);
	close(fd);

	/* A symlink anywhere on the way is refused, even one staying inside. */
	assert_int_equal(grove_fs_open_dir_beneath(fx->root.fd, "sneaky", &fx->err), -ELOOP);
	assert_non_null(strstr(fx->err.msg, "'sneaky'"));
	assert_int_equal(grove_fs_open_dir_beneath(fx->root.fd, "inner/b", &fx->err), -ELOOP);
	assert_int_equal(grove_fs_open_dir_beneath(fx->root.fd, "a/real/up", &fx->err), -ELOOP);
	/* "..": out of the root. */
	assert_int_equal(grove_fs_open_dir_beneath(fx->root.fd, "../outside", &fx->err), -EXDEV);
	assert_int_equal(grove_fs_open_dir_beneath(fx->root.fd, "a/../../outside", &fx->err),
			 -EXDEV);
	assert_int_equal(grove_fs_open_dir_beneath(fx->root.fd, "/tmp", &fx->err), -EXDEV);
	assert_int_equal(grove_fs_open_dir_beneath(fx->root.fd, "missing", &fx->err), -ENOENT);
}

static void
test_fs_open_dir_at(void **state)
{
	struct fx *fx = *state;
	int fd;

	build(fx, "d a\nl b a\nf c c\n");
	fd = grove_fs_open_dir_at(fx->root.fd, "a", &fx->err);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(grove_fs_open_dir_at(fx->root.fd, "b", &fx->err), -ELOOP);
	assert_int_equal(grove_fs_open_dir_at(fx->root.fd, "c", &fx->err), -ENOTDIR);
}

static void
test_fs_stat_at(void **state)
{
	struct fx *fx = *state;
	struct grove_stat st;

	build(fx, "d d\nl l d\nf f 12345\np p\n");
	assert_int_equal(grove_fs_stat_at(fx->root.fd, "d", &st, &fx->err), 0);
	assert_int_equal(st.type, GROVE_FT_DIR);
	assert_int_equal(grove_fs_stat_at(fx->root.fd, "l", &st, &fx->err), 0);
	assert_int_equal(st.type, GROVE_FT_LINK);
	assert_int_equal(grove_fs_stat_at(fx->root.fd, "f", &st, &fx->err), 0);
	assert_int_equal(st.type, GROVE_FT_REG);
	assert_int_equal(st.size, 5);
	assert_int_equal(grove_fs_stat_at(fx->root.fd, "p", &st, &fx->err), 0);
	assert_int_equal(st.type, GROVE_FT_OTHER);
	assert_int_equal(grove_fs_stat_at(fx->root.fd, "missing", &st, &fx->err), 0);
	assert_int_equal(st.type, GROVE_FT_NONE);
}

static void
test_fs_stat_beneath_follow(void **state)
{
	struct fx *fx = *state;
	struct grove_stat st;

	build(fx, "d pkg\nf pkg/file data\nl good pkg/file\nl gooddir pkg\n"
		  "l escape ../outside/secret\nl abs /etc\nl loop1 loop2\nl loop2 loop1\n"
		  "l dangling pkg/nothing\n");
	assert_int_equal(grove_fs_stat_beneath_follow(fx->root.fd, "good", &st, &fx->err), 0);
	assert_int_equal(st.type, GROVE_FT_REG);
	assert_int_equal(grove_fs_stat_beneath_follow(fx->root.fd, "gooddir/file", &st, &fx->err),
			 0);
	assert_int_equal(st.type, GROVE_FT_REG);
	assert_int_equal(grove_fs_stat_beneath_follow(fx->root.fd, "escape", &st, &fx->err),
			 -EXDEV);
	assert_non_null(strstr(fx->err.msg, "'escape'"));
	assert_int_equal(grove_fs_stat_beneath_follow(fx->root.fd, "abs", &st, &fx->err), -EXDEV);
	assert_int_equal(grove_fs_stat_beneath_follow(fx->root.fd, "loop1", &st, &fx->err), -ELOOP);
	st.type = GROVE_FT_DIR;
	assert_int_equal(grove_fs_stat_beneath_follow(fx->root.fd, "dangling", &st, &fx->err), 0);
	assert_int_equal(st.type, GROVE_FT_NONE);
}

static void
test_fs_readlink_at(void **state)
{
	struct fx *fx = *state;
	char longtext[3001];
	char *text = NULL;

	memset(longtext, 'x', sizeof(longtext) - 1);
	longtext[sizeof(longtext) - 1] = '\0';
	build(fx, "f file f\n");
	assert_int_equal(symlinkat(longtext, fx->root.fd, "long"), 0);
	assert_int_equal(grove_fs_readlink_at(fx->root.fd, "long", &text, &fx->err), 0);
	assert_string_equal(text, longtext);
	free(text);
	text = NULL;
	assert_int_equal(grove_fs_readlink_at(fx->root.fd, "file", &text, &fx->err), -EINVAL);
	assert_null(text);
	assert_int_equal(grove_fs_readlink_at(fx->root.fd, "missing", &text, &fx->err), -ENOENT);
}

static void
test_fs_list(void **state)
{
	struct fx *fx = *state;
	struct grove_dirent *ents = NULL;
	size_t n = 99;
	int fd;

	build(fx, "d list\nf list/b b\nd list/a\nl list/C x\nf list/_z z\np list/fifo\n"
		  "f list/.hidden h\nd list/empty\n");
	fd = grove_fs_open_dir_beneath(fx->root.fd, "list", &fx->err);
	assert_true(fd >= 0);
	for (int pass = 0; pass < 2; pass++) { /* the same fd lists twice */
		assert_int_equal(grove_fs_list(fd, &ents, &n, &fx->err), 0);
		assert_int_equal(n, 7);
		/* bytewise: '.' < 'C' < '_' < 'a' */
		assert_string_equal(ents[0].name, ".hidden");
		assert_string_equal(ents[1].name, "C");
		assert_int_equal(ents[1].type, GROVE_FT_LINK);
		assert_string_equal(ents[2].name, "_z");
		assert_int_equal(ents[2].type, GROVE_FT_REG);
		assert_string_equal(ents[3].name, "a");
		assert_int_equal(ents[3].type, GROVE_FT_DIR);
		assert_string_equal(ents[4].name, "b");
		assert_string_equal(ents[5].name, "empty");
		assert_string_equal(ents[6].name, "fifo");
		assert_int_equal(ents[6].type, GROVE_FT_OTHER);
		grove_dirents_free(ents, n);
	}
	close(fd);

	fd = grove_fs_open_dir_beneath(fx->root.fd, "list/empty", &fx->err);
	assert_int_equal(grove_fs_list(fd, &ents, &n, &fx->err), 0);
	assert_int_equal(n, 0);
	grove_dirents_free(ents, n);
	close(fd);
	grove_dirents_free(NULL, 0);
}

static void
test_fs_list_many(void **state)
{
	struct fx *fx = *state;
	struct grove_dirent *ents = NULL;
	size_t n = 0;
	char name[32];
	int fd = grove_fs_mkdir(fx->root.fd, "many", 0755, &fx->err);

	/* More entries than one getdents64 buffer holds. */
	for (int i = 1999; i >= 0; i--) {
		snprintf(name, sizeof(name), "entry-with-a-long-name-%04d", i);
		assert_int_equal(grove_fs_link_create(fd, name, "x", &fx->err), 0);
	}
	assert_int_equal(grove_fs_list(fd, &ents, &n, &fx->err), 0);
	assert_int_equal(n, 2000);
	for (size_t i = 1; i < n; i++)
		assert_true(strcmp(ents[i - 1].name, ents[i].name) < 0);
	grove_dirents_free(ents, n);
	close(fd);
}

/* Entries made in a scrambled order, of three types: each comes back once, sorted, with its own
 * type and inode (the listing carries them through its scratch and its sort). 600 entries are
 * more than the listing's stack scratch holds (256 names, 8 KiB). */
static void
test_fs_list_scrambled_types(void **state)
{
	enum { N = 600 };
	struct fx *fx = *state;
	struct grove_dirent *ents = NULL;
	size_t n = 0;
	char name[48];
	int fd = grove_fs_mkdir(fx->root.fd, "mixed", 0755, &fx->err);

	assert_true(fd >= 0);
	for (int i = 0; i < N; i++) {
		int k = (i * 337) % N; /* 337 is prime to 600: every k once */

		snprintf(name, sizeof(name), "shared-prefix-of-some-length-%03d", k);
		if (k % 3 == 0)
			assert_int_equal(mkdirat(fd, name, 0755), 0);
		else if (k % 3 == 1)
			assert_int_equal(grove_fs_link_create(fd, name, "t", &fx->err), 0);
		else
			close(openat(fd, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	}
	assert_int_equal(grove_fs_list(fd, &ents, &n, &fx->err), 0);
	assert_int_equal(n, N);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		static const enum grove_ftype want[] = { GROVE_FT_DIR, GROVE_FT_LINK,
							 GROVE_FT_REG };

		snprintf(name, sizeof(name), "shared-prefix-of-some-length-%03zu", i);
		assert_string_equal(ents[i].name, name);
		assert_int_equal(ents[i].type, want[i % 3]);
		assert_int_equal(fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
		assert_int_equal(ents[i].ino, st.st_ino);
	}
	grove_dirents_free(ents, n);
	close(fd);
}

static void
test_fs_read_file_at(void **state)
{
	struct fx *fx = *state;
	char *buf = NULL;
	size_t len = 0;

	build(fx, "f f hello\nl l f\np p\nd d\n");
	assert_int_equal(grove_fs_read_file_at(fx->root.fd, "f", 100, &buf, &len, &fx->err), 0);
	assert_string_equal(buf, "hello");
	assert_int_equal(len, 5);
	free(buf);
	assert_int_equal(grove_fs_read_file_at(fx->root.fd, "f", 5, &buf, &len, &fx->err), 0);
	assert_string_equal(buf, "hello");
	free(buf);
	buf = NULL;
	assert_int_equal(grove_fs_read_file_at(fx->root.fd, "f", 4, &buf, &len, &fx->err), -EFBIG);
	assert_int_equal(grove_fs_read_file_at(fx->root.fd, "l", 100, &buf, &len, &fx->err),
			 -ELOOP);
	assert_int_equal(grove_fs_read_file_at(fx->root.fd, "p", 100, &buf, &len, &fx->err),
			 -EINVAL);
	assert_int_equal(grove_fs_read_file_at(fx->root.fd, "d", 100, &buf, &len, &fx->err),
			 -EINVAL);
	assert_null(buf);
}

static void
test_fs_read_config_file(void **state)
{
	struct fx *fx = *state;
	char *path = tu_path(fx->dir, "rc");
	char *missing = tu_path(fx->dir, "norc");
	char *buf = (char *)"unset";
	size_t len = 7;

	tu_build(fx->dir, "f real-rc --verbose\nl rc real-rc\n");
	assert_int_equal(grove_fs_read_config_file(path, 1000, &buf, &len, &fx->err), 0);
	assert_string_equal(buf, "--verbose");
	assert_int_equal(len, 9);
	free(buf);
	assert_int_equal(grove_fs_read_config_file(missing, 1000, &buf, &len, &fx->err), 0);
	assert_null(buf);
	assert_int_equal(len, 0);
	free(path);
	free(missing);
}

static void
test_fs_temp_name(void **state)
{
	char a[256], b[256], longbase[400];

	(void)state;
	grove_fs_temp_name(a, sizeof(a), NULL, "bin");
	grove_fs_temp_name(b, sizeof(b), NULL, "bin");
	assert_true(strncmp(a, ".grove-tmp.", 11) == 0);
	assert_non_null(strstr(a, ".bin"));
	assert_string_not_equal(a, b);
	memset(longbase, 'n', sizeof(longbase) - 1);
	longbase[sizeof(longbase) - 1] = '\0';
	grove_fs_temp_name(a, sizeof(a), NULL, longbase);
	assert_true(strlen(a) <= NAME_MAX);
	assert_null(strchr(a, '/'));
}

static void
test_fs_sync_and_close(void **state)
{
	struct fx *fx = *state;
	int fd = dup(fx->root.fd);

	assert_int_equal(grove_fs_sync(fd, &fx->err), 0);
	errno = 1234;
	assert_int_equal(grove_fd_close(fd), -1);
	assert_int_equal(errno, 1234);
	assert_int_equal(grove_fd_close(-1), -1);
	assert_int_equal(grove_fs_sync(-1, &fx->err), -EBADF);
}

/* /proc/locks answers who holds an flock on a file: this process (running as its own euid) once
 * it holds one, and no one for another uid, or once it lets go; a mark (an OFD lock) is no flock.
 * The pid's owner is the process's euid; a pid with no process is -ESRCH. */
static void
test_fs_lock_holder_at(void **state)
{
	struct fx *fx = *state;
	struct flock fl = {
		.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 1 << 20, .l_len = 1
	};
	long pid = 0;
	uid_t uid = 1;
	int fd;

	build(fx, "f lock\n");
	fd = openat(fx->root.fd, "lock", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(grove_fs_lock_holder_at(fx->root.fd, "lock", geteuid(), &pid, &fx->err),
			 0);
	assert_int_equal(fcntl(fd, F_OFD_SETLK, &fl), 0);
	assert_int_equal(grove_fs_lock_holder_at(fx->root.fd, "lock", geteuid(), &pid, &fx->err),
			 0);
	assert_int_equal(grove_fs_flock(fd, LOCK_SH | LOCK_NB, &fx->err), 0);
	assert_int_equal(grove_fs_lock_holder_at(fx->root.fd, "lock", geteuid(), &pid, &fx->err),
			 1);
	assert_int_equal(pid, (long)getpid());
	pid = 0;
	assert_int_equal(
		grove_fs_lock_holder_at(fx->root.fd, "lock", geteuid() + 1, &pid, &fx->err), 0);
	assert_int_equal(pid, 0);
	close(fd);
	assert_int_equal(grove_fs_lock_holder_at(fx->root.fd, "lock", geteuid(), &pid, &fx->err),
			 0);
	assert_int_equal(grove_fs_lock_holder_at(fx->root.fd, "none", geteuid(), &pid, &fx->err),
			 -ENOENT);

	assert_int_equal(grove_fs_pid_owner(getpid(), &uid), 0);
	assert_int_equal(uid, geteuid());
	assert_int_equal(grove_fs_pid_owner(0, &uid), -ESRCH);
	assert_int_equal(grove_fs_pid_owner(1L << 30, &uid), -ESRCH);
}

/* A replacement is a new empty file with the mode asked, under the name, in one rename; the
 * temporary name is gone. */
static void
test_fs_replace_file_at(void **state)
{
	struct fx *fx = *state;
	struct grove_stat before, after, tmp;
	mode_t um = umask(022);

	umask(um);
	build(fx, "f lock old\n");
	assert_int_equal(fchmodat(fx->root.fd, "lock", 0644, 0), 0);
	assert_int_equal(grove_fs_stat_at(fx->root.fd, "lock", &before, &fx->err), 0);
	assert_int_equal(grove_fs_replace_file_at(fx->root.fd, "lock", "lock.tmp", 0600, &fx->err),
			 0);
	assert_int_equal(grove_fs_stat_at(fx->root.fd, "lock", &after, &fx->err), 0);
	assert_int_equal(after.type, GROVE_FT_REG);
	assert_true(after.ino != before.ino);
	assert_int_equal(after.mode & 07777, 0600 & ~um);
	assert_int_equal(after.size, 0);
	assert_int_equal(grove_fs_stat_at(fx->root.fd, "lock.tmp", &tmp, &fx->err), 0);
	assert_int_equal(tmp.type, GROVE_FT_NONE);
}

/* A batch closes its own fds, runs of consecutive numbers and single ones, and nothing else:
 * an fd between two of the batch's, opened by someone else, stays open. */
static void
test_fs_fd_batch(void **state)
{
	struct fx *fx = *state;
	struct grove_fd_batch b = { 0 };
	int fds[8], other;

	for (int i = 0; i < 8; i++)
		fds[i] = dup(fx->root.fd);
	/* fds[3] becomes someone else's: the batch never holds it. */
	other = fds[3];
	for (int i = 7; i >= 0; i--)
		if (i != 3)
			grove_fd_batch_add(&b, fds[i]);
	grove_fd_batch_add(&b, -1);
	assert_int_equal(b.n, 7);
	for (int i = 0; i < 8; i++)
		assert_true(fcntl(fds[i], F_GETFD) >= 0);
	grove_fd_batch_flush(&b);
	assert_int_equal(b.n, 0);
	for (int i = 0; i < 8; i++) {
		errno = 0;
		if (i == 3) {
			assert_true(fcntl(fds[i], F_GETFD) >= 0);
		} else {
			assert_int_equal(fcntl(fds[i], F_GETFD), -1);
			assert_int_equal(errno, EBADF);
		}
	}
	close(other);
	/* More than GROVE_FD_BATCH_MAX: the batch flushes on its own and never holds more. */
	for (int i = 0; i < GROVE_FD_BATCH_MAX + 5; i++) {
		int fd = dup(fx->root.fd);

		assert_true(fd >= 0);
		grove_fd_batch_add(&b, fd);
		assert_true(b.n <= GROVE_FD_BATCH_MAX);
	}
	assert_int_equal(b.n, 5);
	grove_fd_batch_flush(&b);
	other = dup(fx->root.fd);
	/* Every fd the batch held is closed again: the lowest free number is reused. */
	assert_true(other <= fds[0]);
	close(other);
}

static void
test_fs_open_beneath_follow(void **state)
{
	struct fx *fx = *state;
	int fd;

	build(fx, "d pkg\nf pkg/f x\nl in pkg\nl out ../outside\n");
	fd = grove_fs_open_beneath(fx->root.fd, "in/f", O_RDONLY, true, &fx->err);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	assert_int_equal(grove_fs_open_beneath(fx->root.fd, "in/f", O_RDONLY, false, &fx->err),
			 -ELOOP);
	assert_int_equal(grove_fs_open_beneath(fx->root.fd, "out/secret", O_RDONLY, true, &fx->err),
			 -EXDEV);
}

/* Lists fd with and without GROVE_LIST_SHORT_END: the same entries, the same types. */
static void
assert_short_end_same(int fd, struct grove_error *err)
{
	struct grove_dirent *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;

	assert_int_equal(grove_fs_list(fd, &a, &na, err), 0);
	assert_int_equal(grove_fs_list_flags(fd, GROVE_LIST_SHORT_END, &b, &nb, err), 0);
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		assert_string_equal(a[i].name, b[i].name);
		assert_int_equal(a[i].type, b[i].type);
	}
	grove_dirents_free(a, na);
	grove_dirents_free(b, nb);
}

/*
 * A listing read with GROVE_LIST_SHORT_END stops at the first read that leaves room for the
 * longest entry (a 255-byte name: a 280-byte record). Folders of 117 to 120 entries with names
 * of 255 bytes and, for the last 0 to 10 made, 252 bytes (272-byte records) end their first 32 KiB
 * read at each place around the buffer's end, among them with 272 to 279 bytes left and a 280-byte
 * record next (room for a 272 but not the longest: not the end). Each comes back whole, as
 * listed to the end. Shorter names fill more reads. The test's folder is on ext4 or tmpfs,
 * where the flag holds (grove_fs_fills_listings).
 */
static void
test_fs_list_short_end(void **state)
{
	struct fx *fx = *state;
	char name[NAME_MAX + 1], dir[32];

	assert_true(grove_fs_fills_listings(fx->root.fd));
	for (int count = 117; count <= 120; count++) {
		for (int shorter = 0; shorter <= 10; shorter++) {
			int fd;

			snprintf(dir, sizeof(dir), "long%d-%d", count, shorter);
			fd = grove_fs_mkdir(fx->root.fd, dir, 0755, &fx->err);
			assert_true(fd >= 0);
			for (int i = 0; i < count; i++) {
				/* The last made: tmpfs lists newest first. */
				size_t len = i >= count - shorter ? NAME_MAX - 3 : NAME_MAX;

				memset(name, 'n', len);
				name[len] = '\0';
				memcpy(name, dir, 4);
				name[4 + snprintf(name + 4, 8, "%04d", i)] = 'n';
				assert_int_equal(grove_fs_link_create(fd, name, "x", &fx->err), 0);
			}
			assert_short_end_same(fd, &fx->err);
			close(fd);
		}
	}
	for (int len = 4; len <= 64; len += 20) {
		int fd;

		snprintf(dir, sizeof(dir), "len%d", len);
		fd = grove_fs_mkdir(fx->root.fd, dir, 0755, &fx->err);
		assert_true(fd >= 0);
		for (int i = 0; i < 1500; i++) {
			snprintf(name, sizeof(name), "%0*d", len, i);
			assert_int_equal(grove_fs_link_create(fd, name, "x", &fx->err), 0);
		}
		assert_short_end_same(fd, &fx->err);
		close(fd);
	}
}

/* Which filesystems grove_fs_fills_listings answers yes for: tmpfs (/dev/shm) and the test's
 * own folder, not procfs or sysfs. */
static void
test_fs_fills_listings(void **state)
{
	const char *no[] = { "/proc", "/sys" };
	int fd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_true(grove_fs_fills_listings(fd));
	close(fd);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		fd = open(no[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_false(grove_fs_fills_listings(fd));
		close(fd);
	}
	assert_false(grove_fs_fills_listings(-1));
}

/* In a child with its own mount namespace: root/mnt is a bind mount of outside/. Returns 0, or
 * the line of the first check that failed, modulo 256 (77: no mount namespace here). */
static int
mount_checks(struct fx *fx)
{
	char *mnt = tu_path(fx->rootpath, "mnt"), *outside = tu_path(fx->dir, "outside");
	struct grove_root root = { .fd = -1 };
	struct grove_error err;
	bool same = true;
	int fd;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	/* The root is opened again: fx's fd is on the mounts of the namespace it was opened in. */
	if (mount(outside, mnt, NULL, MS_BIND, NULL) < 0 ||
	    grove_root_open(&root, fx->rootpath, &err) < 0)
		return 1;
#define CHECK(c)                         \
	do {                             \
		if (!(c))                \
			return __LINE__; \
	} while (0)
	/* Across the mount: opened, and said to be on another mount. */
	fd = grove_fs_open_dir_at_mount(root.fd, "mnt", &same, &err);
	CHECK(fd >= 0 && !same);
	close(fd);
	fd = grove_fs_try_open_dir_at(root.fd, "mnt", &same);
	CHECK(fd >= 0 && !same);
	close(fd);
	same = true;
	fd = grove_fs_open_dir_beneath_mount(root.fd, "mnt", &same, &err);
	CHECK(fd >= 0 && !same);
	close(fd);
	same = true;
	fd = grove_fs_open_dir_beneath_mount(root.fd, "mnt/in", &same, &err);
	CHECK(fd >= 0 && !same);
	/* Beneath the mount, from a folder on it: the same mount. */
	{
		int kfd = grove_fs_open_dir_at_mount(fd, "deeper", &same, &err);

		CHECK(kfd >= 0 && same);
		close(kfd);
	}
	close(fd);
	/* Beside it: the root's own mount. */
	same = false;
	fd = grove_fs_open_dir_at_mount(root.fd, "plain", &same, &err);
	CHECK(fd >= 0 && same);
	close(fd);
	same = false;
	fd = grove_fs_open_dir_beneath_mount(root.fd, "plain/sub", &same, &err);
	CHECK(fd >= 0 && same);
	close(fd);
#undef CHECK
	grove_root_release(&root);
	free(mnt);
	free(outside);
	return 0;
}

/* grove_fs_open_dir_at_mount, grove_fs_try_open_dir_at and grove_fs_open_dir_beneath_mount
 * tell a folder on the root's mount from one across a mount point, and fail as the opens they
 * stand for. */
static void
test_fs_open_dir_mount(void **state)
{
	struct fx *fx = *state;
	bool same = true;
	pid_t pid;
	int status, fd;

	build(fx, "d mnt\nd plain\nd plain/sub\nd ../outside/in\nd ../outside/in/deeper\n"
		  "f file x\nl link plain\nl out ../outside\n");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(mount_checks(fx));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip(); /* no mount namespace for this user: CI runs as root */
	assert_int_equal(WEXITSTATUS(status), 0);

	/* Failures are those of the opens without the mount check. */
	assert_int_equal(grove_fs_open_dir_at_mount(fx->root.fd, "link", &same, &fx->err), -ELOOP);
	assert_false(same);
	assert_non_null(strstr(fx->err.msg, "it is a symlink"));
	assert_int_equal(grove_fs_open_dir_at_mount(fx->root.fd, "file", &same, &fx->err),
			 -ENOTDIR);
	assert_int_equal(grove_fs_open_dir_at_mount(fx->root.fd, "none", &same, &fx->err), -ENOENT);
	assert_int_equal(grove_fs_try_open_dir_at(fx->root.fd, "none", &same), -ENOENT);
	assert_int_equal(grove_fs_open_dir_beneath_mount(fx->root.fd, "out/in", &same, &fx->err),
			 -ELOOP);
	assert_int_equal(
		grove_fs_open_dir_beneath_mount(fx->root.fd, "../outside", &same, &fx->err),
		-EXDEV);
	fd = grove_fs_try_open_dir_at(fx->root.fd, "link", &same);
	assert_true(fd == -ELOOP || fd == -ENOTDIR);
}

/* Chases relpath (no make) and checks its fd and physical path (want_fd: whether it exists). */
static void
chase_is(struct fx *fx, const char *root_path, const char *relpath, bool want_fd,
	 const char *want_phys)
{
	struct grove_chase ch;

	assert_int_equal(
		grove_fs_chase_dir(fx->root.fd, root_path, relpath, false, 0, &ch, &fx->err), 0);
	assert_true((ch.fd >= 0) == want_fd);
	if (want_phys)
		assert_string_equal(ch.phys, want_phys);
	else
		assert_null(ch.phys);
	grove_chase_release(&ch);
}

static void
test_fs_chase_dir(void **state)
{
	struct fx *fx = *state;
	struct grove_chase ch;
	char *abs_link = tu_path(fx->rootpath, "usr/sbin");
	char *abs_out = tu_path(fx->dir, "outside");
	struct stat st;

	/* merged /usr, relative and absolute; a link to a link; '..' in a text; a loop */
	build(fx, "d usr/bin\nd usr/sbin\nd usr/lib/x\nl bin usr/bin\nl lib /usr/lib\n"
		  "l libx lib/x\nl up usr/bin/../lib\nl loop1 loop2\nl loop2 loop1\n"
		  "l out ../outside\nl dang usr/nothing\nl twice dang/../bin\nf file f\n");
	assert_int_equal(symlinkat(abs_link, fx->root.fd, "sbin"), 0);
	assert_int_equal(symlinkat(abs_out, fx->root.fd, "absout"), 0);
	/* As in a chroot (root_path NULL). */
	chase_is(fx, NULL, "bin", true, "usr/bin");
	chase_is(fx, NULL, "lib", true, "usr/lib");
	chase_is(fx, NULL, "libx", true, "usr/lib/x");
	chase_is(fx, NULL, "up/x", true, "usr/lib/x");
	chase_is(fx, NULL, "", true, "");
	chase_is(fx, NULL, "./bin/", true, "usr/bin");
	chase_is(fx, NULL, "out", false, "outside");      /* '..' stays at the root */
	chase_is(fx, NULL, "absout", false, abs_out + 1); /* the root's own: missing */
	chase_is(fx, NULL, "bin/new/deeper", false, "usr/bin/new/deeper");
	chase_is(fx, NULL, "dang/more", false, "usr/nothing/more");
	chase_is(fx, NULL, "twice", false, NULL);      /* '..' after a missing folder: no place */
	chase_is(fx, NULL, "file/x", false, "file/x"); /* a file on the way: not a folder */
	assert_int_equal(grove_fs_chase_dir(fx->root.fd, NULL, "loop1", false, 0, &ch, &fx->err),
			 -ELOOP);
	/* With the root's real path: an absolute text beneath it is followed, others leave it. */
	chase_is(fx, fx->root.real, "sbin", true, "usr/sbin");
	assert_int_equal(
		grove_fs_chase_dir(fx->root.fd, fx->root.real, "lib", false, 0, &ch, &fx->err),
		-EXDEV);
	assert_non_null(strstr(fx->err.msg, "leads outside the root"));
	assert_int_equal(
		grove_fs_chase_dir(fx->root.fd, fx->root.real, "out", false, 0, &ch, &fx->err),
		-EXDEV);
	/* The fd is the folder named by the physical path. */
	assert_int_equal(grove_fs_chase_dir(fx->root.fd, NULL, "bin", false, 0, &ch, &fx->err), 0);
	assert_int_equal(fstatat(fx->root.fd, "usr/bin", &st, 0), 0);
	{
		struct stat st2;

		assert_int_equal(fstat(ch.fd, &st2), 0);
		assert_true(st.st_ino == st2.st_ino);
	}
	grove_chase_release(&ch);
	/* make: missing folders made where the links lead, not beneath a dangling one. */
	assert_int_equal(
		grove_fs_chase_dir(fx->root.fd, NULL, "bin/m/n", true, 0755, &ch, &fx->err), 0);
	assert_string_equal(ch.phys, "usr/bin/m/n");
	assert_true(ch.fd >= 0);
	grove_chase_release(&ch);
	assert_int_equal(fstatat(fx->root.fd, "usr/bin/m/n", &st, 0), 0);
	assert_int_equal(grove_fs_chase_dir(fx->root.fd, NULL, "dang/m", true, 0755, &ch, &fx->err),
			 -ENOENT);
	assert_int_equal(fstatat(fx->root.fd, "usr/nothing", &st, AT_SYMLINK_NOFOLLOW), -1);
	free(abs_link);
	free(abs_out);
}

static void
test_fs_chase_dir_owner(void **state)
{
	struct fx *fx = *state;
	struct grove_chase ch;

	if (geteuid() != 0)
		skip(); /* giving a link away needs root: CI runs as root */
	build(fx, "d usr/bin\nl bin usr/bin\nl other usr/bin\n");
	assert_int_equal(fchownat(fx->root.fd, "other", 65534, 65534, AT_SYMLINK_NOFOLLOW), 0);
	chase_is(fx, NULL, "bin", true, "usr/bin");
	assert_int_equal(grove_fs_chase_dir(fx->root.fd, NULL, "other/x", false, 0, &ch, &fx->err),
			 -EPERM);
	assert_non_null(strstr(fx->err.msg, "the symlink 'other' belongs to uid 65534"));
	/* The root folder's owner's links are followed. */
	assert_int_equal(fchownat(fx->root.fd, "", 65534, 65534, AT_EMPTY_PATH), 0);
	chase_is(fx, NULL, "other", true, "usr/bin");
	chase_is(fx, NULL, "bin", true, "usr/bin");
}

static void
test_fs_stat_in_root(void **state)
{
	struct fx *fx = *state;
	struct grove_stat st;

	build(fx, "d usr/bin\nf usr/bin/p data\nl bin /usr/bin\nl out ../outside/secret\n");
	assert_int_equal(grove_fs_stat_in_root(fx->root.fd, "bin/p", &st, &fx->err), 0);
	assert_int_equal(st.type, GROVE_FT_REG);
	assert_int_equal(grove_fs_stat_in_root(fx->root.fd, "out", &st, &fx->err), 0);
	assert_int_equal(st.type, GROVE_FT_NONE); /* the root's /outside/secret */
}

/* A replay's reopening (DESIGN.md invariant 11): beneath its parent following no link, or inside
 * it as the run walked it (merged /usr: only root's or the root owner's links), and the very
 * folder the transaction recorded, else stuck with nothing opened. */
static void
test_fs_root_reopen(void **state)
{
	struct fx *fx = *state;
	struct grove_root usr = { .fd = -1 }, got = { .fd = -1 };
	struct grove_root_id usr_id;

	if (geteuid() != 0)
		skip(); /* giving a link away needs root: CI runs as root */
	build(fx, "d usr/bin\nl bin usr/bin\nl other usr/bin\nd var/adm\n");
	assert_int_equal(grove_root_open_beneath(&usr, &fx->root, "usr/bin", false, 0, &fx->err),
			 0);
	usr_id = grove_root_id_of(&usr);
	grove_root_release(&usr);
	assert_int_equal(grove_root_reopen(&got, &fx->root, "usr/bin", GROVE_RESOLVE_BENEATH,
					   &usr_id, "admindir", &fx->err),
			 0);
	grove_root_release(&got);
	assert_int_equal(grove_root_reopen(&got, &fx->root, "bin", GROVE_RESOLVE_BENEATH, &usr_id,
					   "admindir", &fx->err),
			 -GROVE_E_STUCK);
	assert_int_equal(grove_root_reopen(&got, &fx->root, "bin", GROVE_RESOLVE_IN_ROOT, &usr_id,
					   "admindir", &fx->err),
			 0);
	grove_root_release(&got);
	assert_int_equal(grove_root_reopen(&got, &fx->root, "var/adm", GROVE_RESOLVE_BENEATH,
					   &usr_id, "admindir", &fx->err),
			 -GROVE_E_STUCK);
	assert_non_null(strstr(fx->err.msg, "is not the folder the transaction used"));
	assert_int_equal(fchownat(fx->root.fd, "other", 65534, 65534, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(grove_root_reopen(&got, &fx->root, "other", GROVE_RESOLVE_IN_ROOT, &usr_id,
					   "admindir", &fx->err),
			 -GROVE_E_STUCK);
	assert_non_null(strstr(fx->err.msg, "belongs to uid 65534"));
	assert_int_equal(got.fd, -1);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_fs_root_open),
		T(test_fs_link_create),
		T(test_fs_link_replace),
		T(test_fs_link_replace_refuses),
		T(test_fs_link_remove),
		T(test_fs_link_remove_tagged),
		T(test_fs_link_remove_refuses),
		T(test_fs_mkdir),
		T(test_fs_rmdir),
		T(test_fs_exchange),
		T(test_fs_move),
		T(test_fs_unlink_file),
		T(test_fs_open_dir_beneath),
		T(test_fs_open_dir_at),
		T(test_fs_stat_at),
		T(test_fs_stat_beneath_follow),
		T(test_fs_readlink_at),
		T(test_fs_list),
		T(test_fs_list_many),
		T(test_fs_list_scrambled_types),
		T(test_fs_list_short_end),
		T(test_fs_fills_listings),
		T(test_fs_open_dir_mount),
		T(test_fs_read_file_at),
		T(test_fs_read_config_file),
		T(test_fs_temp_name),
		T(test_fs_sync_and_close),
		T(test_fs_open_beneath_follow),
		T(test_fs_fd_batch),
		T(test_fs_lock_holder_at),
		T(test_fs_replace_file_at),
		T(test_fs_chase_dir),
		T(test_fs_chase_dir_owner),
		T(test_fs_stat_in_root),
		T(test_fs_root_reopen),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
