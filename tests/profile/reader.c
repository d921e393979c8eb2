/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Test helper: reads a path through a profile as fast as it can until a flag file appears, and
 * counts the reads that failed or found content other than the expected ones. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	unsigned long reads = 0, misses = 0, wrong = 0;
	char buf[256];

	if (argc < 4) {
		fprintf(stderr, "usage: reader PATH FLAG EXPECTED…\n");
		return 2;
	}
	/* The flag is checked every 64 reads: the loop ends a bounded while after it appears. */
	while (reads % 64 != 0 || access(argv[2], F_OK) != 0) {
		int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
		ssize_t n;
		int ok = 0;

		reads++;
		if (fd < 0) {
			if (misses++ == 0)
				fprintf(stderr, "reader: open '%s': %s\n", argv[1],
					strerror(errno));
			continue;
		}
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n < 0) {
			misses++;
			continue;
		}
		buf[n] = '\0';
		for (int i = 3; i < argc && !ok; i++)
			ok = strcmp(buf, argv[i]) == 0;
		if (!ok)
			wrong++;
	}
	printf("%lu %lu %lu\n", reads, misses, wrong);
	return 0;
}
