/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Test fixtures: throwaway roots and a tree builder/dumper from a compact spec. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

char *
tu_mkdtemp(void)
{
	const char *tmp = getenv("TMPDIR");
	char buf[PATH_MAX];
	char *p;

	snprintf(buf, sizeof(buf), "%s/grove-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	p = mkdtemp(buf);
	assert_non_null(p);
	p = realpath(buf, NULL);
	assert_non_null(p);
	return p;
}

char *
tu_path(const char *root, const char *rel)
{
	char *p;

	if (asprintf(&p, "%s/%s", root, rel) < 0)
		abort();
	return p;
}

static void
rm_at(int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			DIR *d = fdopendir(fd);
			struct dirent *de;
			while (d && (de = readdir(d))) {
				if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
					continue;
				rm_at(fd, de->d_name);
			}
			if (d)
				closedir(d);
		}
		unlinkat(dfd, name, AT_REMOVEDIR);
	} else {
		unlinkat(dfd, name, 0);
	}
}

void
tu_rmtree(const char *path)
{
	if (!path)
		return;
	rm_at(AT_FDCWD, path);
}

static void
mkparents(const char *path)
{
	char buf[PATH_MAX];
	char *s;

	snprintf(buf, sizeof(buf), "%s", path);
	for (s = buf + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(buf, 0777);
		*s = '/';
	}
}

void
tu_build(const char *root, const char *spec)
{
	char *copy = strdup(spec);
	char *save = NULL;

	assert_non_null(copy);
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char kind;
		char *rest, *arg, *full;

		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#')
			continue;
		kind = line[0];
		rest = line + 1;
		while (*rest == ' ')
			rest++;
		arg = strchr(rest, ' ');
		if (arg)
			*arg++ = '\0';
		full = tu_path(root, rest);
		mkparents(full);
		switch (kind) {
		case 'd':
			if (mkdir(full, 0777) < 0 && errno != EEXIST)
				fail_msg("mkdir %s: %s", full, strerror(errno));
			break;
		case 'f': {
			FILE *f = fopen(full, "w");
			if (!f)
				fail_msg("create %s: %s", full, strerror(errno));
			fputs(arg ? arg : rest, f);
			fclose(f);
			break;
		}
		case 'l':
			if (arg && strncmp(arg, "-> ", 3) == 0)
				arg += 3;
			if (!arg || symlink(arg, full) < 0)
				fail_msg("symlink %s: %s", full, strerror(errno));
			break;
		case 'p':
			if (mkfifo(full, 0666) < 0)
				fail_msg("mkfifo %s: %s", full, strerror(errno));
			break;
		default:
			fail_msg("bad spec line: %s", line);
		}
		free(full);
	}
	free(copy);
}

char *
tu_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	FILE *mem = open_memstream(&buf, &len);
	int c;
	while ((c = fgetc(f)) != EOF)
		fputc(c, mem);
	fclose(mem);
	fclose(f);
	return buf;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
dump_dir(const char *root, const char *rel, FILE *out)
{
	char *full = rel[0] ? tu_path(root, rel) : strdup(root);
	DIR *d = opendir(full);
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;

	if (!d) {
		free(full);
		return;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char *r, *p;
		struct stat st;

		if (rel[0]) {
			if (asprintf(&r, "%s/%s", rel, names[i]) < 0)
				abort();
		} else {
			r = strdup(names[i]);
		}
		p = tu_path(root, r);
		if (lstat(p, &st) == 0) {
			if (S_ISDIR(st.st_mode)) {
				fprintf(out, "d %s\n", r);
				dump_dir(root, r, out);
			} else if (S_ISLNK(st.st_mode)) {
				char buf[PATH_MAX];
				ssize_t k = readlink(p, buf, sizeof(buf) - 1);
				buf[k < 0 ? 0 : k] = '\0';
				fprintf(out, "l %s %s\n", r, buf);
			} else if (S_ISREG(st.st_mode)) {
				char *c = tu_read_file(p);
				fprintf(out, "f %s %s\n", r, c ? c : "");
				free(c);
			} else {
				fprintf(out, "p %s\n", r);
			}
		}
		free(p);
		free(r);
		free(names[i]);
	}
	free(names);
	free(full);
}

char *
tu_dump(const char *root)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	dump_dir(root, "", out);
	fclose(out);
	return buf;
}
