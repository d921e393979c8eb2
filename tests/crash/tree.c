/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The crash harnesses' tree tool (tests/crash/lib.sh): lists a tree and restores a saved one, in
 * one process each. A crash point used to run find | sort for each listing and find -delete plus
 * tar for each restore; on a 2-core VM every process started costs several milliseconds, which
 * was most of a point's time.
 *
 * usage:
 *   crash-tree list [-m] [-s] [-i] [-c PREFIX] DIR
 *       Every entry beneath DIR (DIR itself too with -i), one line each, sorted by path (bytes):
 *       "TYPE PATH", then " -> TEXT" for a link, " mode=OOOO" with -m (not for links), " size=N
 *       mtime=S.NNNNNNNNN" for a file with -s, " ino=N mtime=S.NNNNNNNNN" for every entry with -i.
 *       TYPE is d, f, l, p, s, c or b. With -c, then every regular file's content, line by line,
 *       as "PATH:LINE" with bytes outside printable ASCII as \xNN, lines beginning with PREFIX
 *       left out (PREFIX may be empty: none left out).
 *   crash-tree save SNAP ROOT NAME...
 *       Copies ROOT/NAME (each a folder) into SNAP/NAME: types, contents, link texts, modes and
 *       times (nanoseconds).
 *   crash-tree restore SNAP ROOT KEEP...
 *       For each NAME in SNAP, makes ROOT/NAME what SNAP/NAME is: first removes everything beneath
 *       ROOT/NAME except the folders KEEP (absolute paths) and the folders on the way to them,
 *       which are kept (same inode) and emptied; then copies SNAP/NAME over it.
 *
 * Test code: path strings and plain recursion on purpose; the trees are small and nobody else
 * changes them while this runs. Exits 1 with a message on any error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void
die(const char *what, const char *path)
{
	fprintf(stderr, "crash-tree: %s '%s': %s\n", what, path, strerror(errno));
	exit(1);
}

static void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (p == NULL) {
		fputs("crash-tree: out of memory\n", stderr);
		exit(1);
	}
	return p;
}

static char *
join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = xrealloc(NULL, la + lb + 2);

	memcpy(s, a, la);
	s[la] = '/';
	memcpy(s + la + 1, b, lb + 1);
	return s;
}

/* The names in folder path, sorted (bytes), without . and ..; *n their count. */
static char **
names_of(const char *path, size_t *n)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char **v = NULL;
	size_t cap = 0;

	if (d == NULL)
		die("open folder", path);
	*n = 0;
	while ((errno = 0, e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[(*n)++] = strdup(e->d_name);
	}
	if (errno != 0)
		die("read folder", path);
	closedir(d);
	return v;
}

static void
free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* ---------------------------------------------------------------- list */

struct lines {
	char **v;
	size_t n, cap;
};

static void
add_line(struct lines *l, char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = s;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct list_opts {
	bool mode, size, meta;
	const char *prefix; /* NULL: no contents */
};

static char
type_of(mode_t m)
{
	if (S_ISDIR(m))
		return 'd';
	if (S_ISREG(m))
		return 'f';
	if (S_ISLNK(m))
		return 'l';
	if (S_ISFIFO(m))
		return 'p';
	if (S_ISSOCK(m))
		return 's';
	if (S_ISCHR(m))
		return 'c';
	return 'b';
}

static void
list_entry(const struct list_opts *o, const char *path, const char *rel, struct lines *entries,
	   struct lines *files)
{
	struct stat st;
	char buf[PATH_MAX * 2 + 256], text[PATH_MAX];
	size_t len = 0;

	if (lstat(path, &st) != 0)
		die("stat", path);
	len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%c %s", type_of(st.st_mode), rel);
	if (S_ISLNK(st.st_mode)) {
		ssize_t r = readlink(path, text, sizeof(text) - 1);

		if (r < 0)
			die("read link", path);
		text[r] = '\0';
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, " -> %s", text);
	} else if (o->mode) {
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, " mode=%04o",
					(unsigned)(st.st_mode & 07777));
	}
	if (o->size && S_ISREG(st.st_mode))
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, " size=%lld mtime=%lld.%09ld",
					(long long)st.st_size, (long long)st.st_mtim.tv_sec,
					st.st_mtim.tv_nsec);
	if (o->meta)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, " ino=%llu mtime=%lld.%09ld",
					(unsigned long long)st.st_ino, (long long)st.st_mtim.tv_sec,
					st.st_mtim.tv_nsec);
	if (len >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		die("list", path);
	}
	add_line(entries, strdup(buf));
	if (S_ISREG(st.st_mode) && o->prefix != NULL)
		add_line(files, strdup(rel));
	if (S_ISDIR(st.st_mode)) {
		size_t n;
		char **v = names_of(path, &n);

		for (size_t i = 0; i < n; i++) {
			char *p = join(path, v[i]);
			char *r = strcmp(rel, ".") == 0 ? strdup(v[i]) : join(rel, v[i]);

			list_entry(o, p, r, entries, files);
			free(p);
			free(r);
		}
		free_names(v, n);
	}
}

static void
print_contents(const char *dir, const char *rel, const char *prefix)
{
	char *path = join(dir, rel);
	FILE *f = fopen(path, "rb");
	char *line = NULL;
	size_t cap = 0;
	ssize_t r;

	if (f == NULL)
		die("open", path);
	while ((r = getline(&line, &cap, f)) > 0) {
		if (line[r - 1] == '\n')
			line[--r] = '\0';
		if (*prefix != '\0' && strncmp(line, prefix, strlen(prefix)) == 0)
			continue;
		printf("%s:", rel);
		for (ssize_t i = 0; i < r; i++) {
			unsigned char c = (unsigned char)line[i];

			if (c >= 0x20 && c < 0x7f && c != '\\')
				putchar(c);
			else
				printf("\\x%02x", c);
		}
		putchar('\n');
	}
	if (ferror(f))
		die("read", path);
	fclose(f);
	free(line);
	free(path);
}

static int
cmd_list(int argc, char **argv)
{
	struct list_opts o = { 0 };
	struct lines entries = { 0 }, files = { 0 };
	int c;

	while ((c = getopt(argc, argv, "msic:")) != -1) {
		switch (c) {
		case 'm':
			o.mode = true;
			break;
		case 's':
			o.size = true;
			break;
		case 'i':
			o.meta = true;
			break;
		case 'c':
			o.prefix = optarg;
			break;
		default:
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fputs("usage: crash-tree list [-m] [-s] [-i] [-c PREFIX] DIR\n", stderr);
		return 2;
	}
	const char *dir = argv[optind];

	if (o.meta) {
		list_entry(&o, dir, ".", &entries, &files);
	} else {
		size_t n;
		char **v = names_of(dir, &n);

		for (size_t i = 0; i < n; i++) {
			char *p = join(dir, v[i]);

			list_entry(&o, p, v[i], &entries, &files);
			free(p);
		}
		free_names(v, n);
	}
	qsort(entries.v, entries.n, sizeof(*entries.v), cmp_str);
	for (size_t i = 0; i < entries.n; i++) {
		puts(entries.v[i]);
		free(entries.v[i]);
	}
	qsort(files.v, files.n, sizeof(*files.v), cmp_str);
	for (size_t i = 0; i < files.n; i++) {
		print_contents(dir, files.v[i], o.prefix);
		free(files.v[i]);
	}
	free(entries.v);
	free(files.v);
	if (fflush(stdout) != 0)
		die("write", "stdout");
	return 0;
}

/* ---------------------------------------------------------------- save and restore */

/* Copies the entry src (lstat'ed into *st) to dst, which does not exist, or is a folder when src
 * is one (then kept, its mode and times set from src). */
static void
copy_entry(const char *src, const char *dst, const struct stat *st)
{
	struct timespec times[2] = { st->st_atim, st->st_mtim };

	if (S_ISDIR(st->st_mode)) {
		struct stat dst_st;
		size_t n;
		char **v;

		if (lstat(dst, &dst_st) != 0) {
			if (errno != ENOENT || mkdir(dst, 0700) != 0)
				die("make folder", dst);
		} else if (!S_ISDIR(dst_st.st_mode)) {
			errno = ENOTDIR;
			die("copy over", dst);
		}
		v = names_of(src, &n);
		for (size_t i = 0; i < n; i++) {
			char *s = join(src, v[i]), *d = join(dst, v[i]);
			struct stat child;

			if (lstat(s, &child) != 0)
				die("stat", s);
			copy_entry(s, d, &child);
			free(s);
			free(d);
		}
		free_names(v, n);
		if (chmod(dst, st->st_mode & 07777) != 0)
			die("chmod", dst);
	} else if (S_ISLNK(st->st_mode)) {
		char text[PATH_MAX];
		ssize_t r = readlink(src, text, sizeof(text) - 1);

		if (r < 0)
			die("read link", src);
		text[r] = '\0';
		if (symlink(text, dst) != 0)
			die("make link", dst);
	} else if (S_ISREG(st->st_mode)) {
		char buf[65536];
		int in = open(src, O_RDONLY | O_CLOEXEC);
		int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		ssize_t r;

		if (in < 0)
			die("open", src);
		if (out < 0)
			die("create", dst);
		while ((r = read(in, buf, sizeof(buf))) > 0) {
			for (ssize_t done = 0; done < r;) {
				ssize_t w = write(out, buf + done, (size_t)(r - done));

				if (w < 0)
					die("write", dst);
				done += w;
			}
		}
		if (r < 0)
			die("read", src);
		if (fchmod(out, st->st_mode & 07777) != 0)
			die("chmod", dst);
		close(in);
		if (close(out) != 0)
			die("write", dst);
	} else {
		errno = EINVAL;
		die("copy (not a folder, file or link)", src);
	}
	if (utimensat(AT_FDCWD, dst, times, AT_SYMLINK_NOFOLLOW) != 0)
		die("set times of", dst);
}

static void
remove_all(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		die("stat", path);
	if (S_ISDIR(st.st_mode)) {
		size_t n;
		char **v = names_of(path, &n);

		for (size_t i = 0; i < n; i++) {
			char *p = join(path, v[i]);

			remove_all(p);
			free(p);
		}
		free_names(v, n);
		if (rmdir(path) != 0)
			die("remove folder", path);
	} else if (unlink(path) != 0) {
		die("remove", path);
	}
}

/* Whether folder path is one of keep or on the way to one (keep[i] beneath path). */
static bool
kept(const char *path, char **keep, int n_keep)
{
	size_t len = strlen(path);

	for (int i = 0; i < n_keep; i++)
		if (strncmp(keep[i], path, len) == 0 &&
		    (keep[i][len] == '\0' || keep[i][len] == '/'))
			return true;
	return false;
}

/* Empties folder path, keeping the kept folders beneath it (emptied in turn). */
static void
empty_folder(const char *path, char **keep, int n_keep)
{
	size_t n;
	char **v = names_of(path, &n);

	for (size_t i = 0; i < n; i++) {
		char *p = join(path, v[i]);
		struct stat st;

		if (lstat(p, &st) != 0)
			die("stat", p);
		if (S_ISDIR(st.st_mode) && kept(p, keep, n_keep))
			empty_folder(p, keep, n_keep);
		else
			remove_all(p);
		free(p);
	}
	free_names(v, n);
}

static int
cmd_save(int argc, char **argv)
{
	if (argc < 4) {
		fputs("usage: crash-tree save SNAP ROOT NAME...\n", stderr);
		return 2;
	}
	if (mkdir(argv[1], 0700) != 0)
		die("make folder", argv[1]);
	for (int i = 3; i < argc; i++) {
		char *s = join(argv[2], argv[i]), *d = join(argv[1], argv[i]);
		struct stat st;

		if (lstat(s, &st) != 0)
			die("stat", s);
		copy_entry(s, d, &st);
		free(s);
		free(d);
	}
	return 0;
}

static int
cmd_restore(int argc, char **argv)
{
	size_t n;
	char **v;

	if (argc < 3) {
		fputs("usage: crash-tree restore SNAP ROOT KEEP...\n", stderr);
		return 2;
	}
	v = names_of(argv[1], &n);
	for (size_t i = 0; i < n; i++) {
		char *s = join(argv[1], v[i]), *d = join(argv[2], v[i]);
		struct stat st;

		if (lstat(d, &st) == 0) {
			if (S_ISDIR(st.st_mode) && kept(d, argv + 3, argc - 3))
				empty_folder(d, argv + 3, argc - 3);
			else
				remove_all(d);
		} else if (errno != ENOENT) {
			die("stat", d);
		}
		if (lstat(s, &st) != 0)
			die("stat", s);
		copy_entry(s, d, &st);
		free(s);
		free(d);
	}
	free_names(v, n);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		return cmd_list(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "save") == 0)
		return cmd_save(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "restore") == 0)
		return cmd_restore(argc - 1, argv + 1);
	fputs("usage: crash-tree list|save|restore ...\n", stderr);
	return 2;
}
