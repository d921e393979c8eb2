/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Benchmark, run by hand: what the kernel charges per link for the calls a big stow and unstow
 * make (issue 18 goal 4), so that a command's time per link can be set against what its calls
 * alone cost: making a link, removing it blindly (rm -r), and removing it as grove must. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * Usage: linkcost [DIR [LINKS]]
 *
 * DIR (default /dev/shm) must be writable; LINKS (default 100000) links are made in folders of
 * 100 (as bench/gen.py's big packages have), one round after another, and removed. Prints, per
 * link, the median over 5 rounds of the CPU time (user + sys, getrusage) and the wall time, in
 * microseconds, as "name cpu wall" lines:
 *
 *   symlinkat        make the link (what cp -rs and a stow pay per link, less the reads)
 *   unlinkat         remove it blindly (what rm -r pays per link, less the reads)
 *   readlinkat       read its text (a scan's check that a target link is grove's)
 *   safe-remove      renameat2(RENAME_NOREPLACE) to the transaction's removal name (the same
 *                    name for every link), readlinkat of the moved link, unlinkat: grove's
 *                    removal of one link (DESIGN.md invariant 6)
 *   fresh-remove     the same with a fresh private name per link (.grove-1.N.NAME): grove's
 *                    removal before schema 12's pass, and its fallback when the name is taken
 */

#define ROUNDS 5
#define PER    100

static double
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static double
cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v)
{
	qsort(v, ROUNDS, sizeof(*v), cmp_double);
	return v[ROUNDS / 2];
}

enum step { MAKE, UNLINK, READ, SAFE, FRESH };

/* Runs one step over every link of the folders (fds), returns 0 or -1. */
static int
run(enum step s, const int *fds, size_t folders)
{
	char name[32], tmp[64], text[128], buf[256];
	static unsigned long counter; /* fresh names across rounds too */

	for (size_t d = 0; d < folders; d++) {
		for (int i = 0; i < PER; i++) {
			snprintf(name, sizeof(name), "f%02d", i);
			snprintf(text, sizeof(text), "../../../stow/big/share/big/d%04zu/f%02d", d,
				 i);
			switch (s) {
			case MAKE:
				if (symlinkat(text, fds[d], name) < 0)
					return -1;
				break;
			case UNLINK:
				if (unlinkat(fds[d], name, 0) < 0)
					return -1;
				break;
			case READ:
				if (readlinkat(fds[d], name, buf, sizeof(buf)) < 0)
					return -1;
				break;
			case SAFE:
				if (renameat2(fds[d], name, fds[d], ".grove-1.rm",
					      RENAME_NOREPLACE) < 0 ||
				    readlinkat(fds[d], ".grove-1.rm", buf, strlen(text) + 1) < 0 ||
				    unlinkat(fds[d], ".grove-1.rm", 0) < 0)
					return -1;
				break;
			case FRESH:
				snprintf(tmp, sizeof(tmp), ".grove-1.%lu.%s", counter++, name);
				if (renameat2(fds[d], name, fds[d], tmp, RENAME_NOREPLACE) < 0 ||
				    readlinkat(fds[d], tmp, buf, strlen(text) + 1) < 0 ||
				    unlinkat(fds[d], tmp, 0) < 0)
					return -1;
				break;
			}
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/dev/shm";
	size_t links = argc > 2 ? strtoul(argv[2], NULL, 10) : 100000;
	size_t folders = (links + PER - 1) / PER;
	static const char *const names[] = { "symlinkat", "unlinkat", "readlinkat", "safe-remove",
					     "fresh-remove" };
	double cpu[5][ROUNDS], wall[5][ROUNDS];
	char path[4096], sub[32];
	int root, *fds = calloc(folders, sizeof(int));

	snprintf(path, sizeof(path), "%s/linkcost.%d", dir, (int)getpid());
	if (!fds || mkdir(path, 0700) < 0 || (root = open(path, O_RDONLY | O_DIRECTORY)) < 0) {
		perror(path);
		return 1;
	}
	for (size_t d = 0; d < folders; d++) {
		snprintf(sub, sizeof(sub), "d%04zu", d);
		if (mkdirat(root, sub, 0700) < 0 ||
		    (fds[d] = openat(root, sub, O_RDONLY | O_DIRECTORY)) < 0) {
			perror("linkcost: make the folders");
			return 1;
		}
	}
	/* Each round: make, read, remove blindly; make again, remove safely; make again, remove
	 * safely under fresh names. A fresh name per round, so that no round finds the last one's.
	 */
	for (int r = 0; r < ROUNDS; r++) {
		static const enum step order[] = { MAKE, READ, UNLINK, MAKE, SAFE, MAKE, FRESH };

		for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
			double c = cpu_us(), w = now_us();

			if (run(order[k], fds, folders) < 0) {
				perror(names[order[k]]);
				return 1;
			}
			if (k == 3 || k == 5) /* (the later MAKEs are not counted again) */
				continue;
			cpu[order[k]][r] = (cpu_us() - c) / (double)(folders * PER);
			wall[order[k]][r] = (now_us() - w) / (double)(folders * PER);
		}
	}
	for (int s = 0; s < 5; s++)
		printf("%s %.2f %.2f\n", names[s], median(cpu[s]), median(wall[s]));
	for (size_t d = 0; d < folders; d++) {
		snprintf(sub, sizeof(sub), "d%04zu", d);
		close(fds[d]);
		unlinkat(root, sub, AT_REMOVEDIR);
	}
	close(root);
	rmdir(path);
	free(fds);
	return 0;
}
