/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Replays fuzz corpus files through the fuzz target without libFuzzer, as an ordinary test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, k;

	if (!f) {
		perror(path);
		return -1;
	}
	do {
		if (len == cap) {
			char *nb = realloc(buf, cap ? cap * 2 : 4096);

			if (!nb) {
				fclose(f);
				free(buf);
				return -1;
			}
			buf = nb;
			cap = cap ? cap * 2 : 4096;
		}
		k = fread(buf + len, 1, cap - len, f);
		len += k;
	} while (k > 0);
	fclose(f);
	LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	int n = 0;

	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;

		if (!d) {
			if (replay_file(argv[i]) < 0)
				return 1;
			n++;
			continue;
		}
		while ((e = readdir(d))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (replay_file(path) < 0) {
				closedir(d);
				return 1;
			}
			n++;
		}
		closedir(d);
	}
	printf("replayed %d inputs\n", n);
	return n > 0 ? 0 : 1;
}
