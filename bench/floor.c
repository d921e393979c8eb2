/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Benchmark floor, run by hand: makes exactly the changes an op list names, under one held target
 * fd, and nothing else — the syscall floor grove is measured against. With -s, it first makes the
 * reads the op list names (package folders listed, target links read): the floor of any tool with
 * Stow's semantics, which must read what it links before it links it. */
#include <errno.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Usage: floor [-s STOW-DIR] TARGET OPS-FILE
 *
 * OPS-FILE holds one op per line, paths relative to TARGET, already ordered (removals deepest
 * first, then additions parents first; bench/treeops.py writes it from grove's own result):
 *
 *     M <path>                mkdirat(tfd, path, 0777)
 *     L <path>\t<link text>   symlinkat(text, tfd, path)
 *     U <path>                unlinkat(tfd, path, 0)
 *     R <path>                unlinkat(tfd, path, AT_REMOVEDIR)
 *
 * and, with -s (bench/treeops.py's "reads" writes them, before the changes):
 *
 *     D <path>                a package folder listed: openat beneath the held stow dir fd,
 *                             getdents64 until it returns 0, or on ext4, tmpfs, XFS and btrfs
 *                             until a read leaves room for the longest entry (their getdents64
 *                             fills the buffer while entries are left: docs/architecture.md,
 *                             "Reading folders"), close
 *     K <path>                readlinkat(tfd, path): a target link read, as a tool must before it
 *                             removes a link or keeps it as it is
 *
 * The op list is read whole with one read loop before the first change, so the timed work is the
 * open of the target plus one syscall per op. No fsync: the floor promises no durability, grove
 * does (see docs/performance.md).
 */

static char *
slurp(const char *path, size_t *ret_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;
	size_t off = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return NULL;
	while (off < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + off, (size_t)st.st_size - off);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	*ret_len = off;
	return buf;
}

/* Whether the stow dir's filesystem fills a getdents64 buffer while entries are left. */
static bool fills;

/* Lists the folder PATH beneath SFD to its end; -1 with errno on failure. */
static int
list_folder(int sfd, const char *path)
{
	static char buf[32768];
	int fd = openat(sfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	long n;

	if (fd < 0)
		return -1;
	do
		n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
	while (n > 0 && !(fills && (size_t)n + 280 <= sizeof(buf)));
	close(fd);
	return n < 0 ? -1 : 0;
}

int
main(int argc, char **argv)
{
	size_t len, n = 0;
	char *ops, *line, *next;
	int tfd, sfd = -1;
	char lbuf[4096];

	if (argc == 5 && strcmp(argv[1], "-s") == 0) {
		struct statfs sf;

		sfd = open(argv[2], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sfd < 0) {
			fprintf(stderr, "floor: open '%s': %s\n", argv[2], strerror(errno));
			return 1;
		}
		fills = fstatfs(sfd, &sf) == 0 &&
			(sf.f_type == EXT4_SUPER_MAGIC || sf.f_type == TMPFS_MAGIC ||
			 sf.f_type == XFS_SUPER_MAGIC || sf.f_type == BTRFS_SUPER_MAGIC);
		argv += 2;
		argc -= 2;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: floor [-s STOW-DIR] TARGET OPS-FILE\n");
		return 2;
	}
	ops = slurp(argv[2], &len);
	if (!ops) {
		fprintf(stderr, "floor: read '%s': %s\n", argv[2], strerror(errno));
		return 1;
	}
	tfd = open(argv[1], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tfd < 0) {
		fprintf(stderr, "floor: open '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (line = ops; line && *line; line = next) {
		char *path = line + 2, *text;
		int r;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (line[0] == '\0' || line[1] != ' ')
			continue;
		switch (line[0]) {
		case 'M':
			r = mkdirat(tfd, path, 0777);
			break;
		case 'L':
			text = strchr(path, '\t');
			if (!text) {
				fprintf(stderr, "floor: bad op '%s'\n", line);
				return 1;
			}
			*text++ = '\0';
			r = symlinkat(text, tfd, path);
			break;
		case 'U':
			r = unlinkat(tfd, path, 0);
			break;
		case 'R':
			r = unlinkat(tfd, path, AT_REMOVEDIR);
			break;
		case 'D':
			if (sfd < 0) {
				fprintf(stderr, "floor: '%s' needs -s STOW-DIR\n", line);
				return 1;
			}
			r = list_folder(sfd, path);
			break;
		case 'K':
			r = readlinkat(tfd, path, lbuf, sizeof(lbuf)) < 0 ? -1 : 0;
			break;
		default:
			fprintf(stderr, "floor: bad op '%s'\n", line);
			return 1;
		}
		if (r < 0) {
			fprintf(stderr, "floor: %c '%s': %s\n", line[0], path, strerror(errno));
			return 1;
		}
		n++;
	}
	(void)n;
	return 0;
}
