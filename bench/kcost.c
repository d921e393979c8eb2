/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Benchmark, run by hand: what the machine charges for the kernel work a short command cannot
 * avoid — entering the kernel, the calls a scan makes, a fresh page — so that a command's CPU
 * time can be split into its counts (strace -c, perf stat -e page-faults) times these costs. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Usage: kcost [DIR [FILE]]
 *
 * DIR (default /dev/shm) must be writable: a folder of 3 entries is made in it for the
 * per-folder costs, and removed. FILE (default libc) is mapped for the file-fault cost. Every
 * figure is a median of 9 rounds, in microseconds per call or per page, and is printed as "name
 * value" lines:
 *
 *   syscall           getppid (the cost of entering and leaving the kernel)
 *   fstatat-enoent    fstatat of a missing name beneath a held fd (a target lookup)
 *   openat-dir        openat(O_DIRECTORY) + close of a small folder
 *   getdents-small    one getdents64 of a 3-entry folder (from offset 0)
 *   folder-read       openat + getdents64 until 0 + close (what a scan pays per folder)
 *   symlinkat         symlinkat + unlinkat, halved
 *   fault-anon        first write to a page of fresh anonymous memory (a heap page)
 *   fault-file        first read of a 16-page window of a file mapping (the kernel's
 *                     fault-around maps the window at once; this is one fault)
 */

#define ROUNDS 9

static double
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
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

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/dev/shm";
	const char *file = argc > 2 ? argv[2] : "/usr/lib/x86_64-linux-gnu/libc.so.6";
	char path[4096], buf[32768];
	double v[ROUNDS], t, sys;
	struct stat st;
	int dfd, sub;

	snprintf(path, sizeof(path), "%s/kcost.%d", dir, (int)getpid());
	if (mkdir(path, 0700) < 0 || (dfd = open(path, O_RDONLY | O_DIRECTORY)) < 0) {
		perror(path);
		return 1;
	}
	if (mkdirat(dfd, "d", 0700) < 0 || (sub = openat(dfd, "d", O_RDONLY | O_DIRECTORY)) < 0 ||
	    symlinkat("x", sub, "a") < 0 || symlinkat("y", sub, "b") < 0 ||
	    symlinkat("z", sub, "c") < 0) {
		perror("kcost: make the folder");
		return 1;
	}

	for (int r = 0; r < ROUNDS; r++) {
		t = now_us();
		for (int i = 0; i < 20000; i++)
			syscall(SYS_getppid);
		v[r] = (now_us() - t) / 20000;
	}
	sys = median(v);
	printf("syscall %.2f\n", sys);

	for (int r = 0; r < ROUNDS; r++) {
		t = now_us();
		for (int i = 0; i < 5000; i++)
			fstatat(dfd, "missing", &st, AT_SYMLINK_NOFOLLOW);
		v[r] = (now_us() - t) / 5000;
	}
	printf("fstatat-enoent %.2f\n", median(v));

	for (int r = 0; r < ROUNDS; r++) {
		t = now_us();
		for (int i = 0; i < 5000; i++)
			close(openat(dfd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
		v[r] = (now_us() - t) / 5000;
	}
	printf("openat-dir %.2f\n", median(v));

	for (int r = 0; r < ROUNDS; r++) {
		t = now_us();
		for (int i = 0; i < 5000; i++) {
			lseek(sub, 0, SEEK_SET);
			syscall(SYS_getdents64, sub, buf, sizeof(buf));
		}
		v[r] = (now_us() - t) / 5000;
	}
	/* less the lseek, a bare syscall */
	printf("getdents-small %.2f\n", median(v) - sys);

	for (int r = 0; r < ROUNDS; r++) {
		t = now_us();
		for (int i = 0; i < 5000; i++) {
			int fd = openat(dfd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			while (syscall(SYS_getdents64, fd, buf, sizeof(buf)) > 0)
				;
			close(fd);
		}
		v[r] = (now_us() - t) / 5000;
	}
	printf("folder-read %.2f\n", median(v));

	for (int r = 0; r < ROUNDS; r++) {
		t = now_us();
		for (int i = 0; i < 2000; i++) {
			symlinkat("target", dfd, "l");
			unlinkat(dfd, "l", 0);
		}
		v[r] = (now_us() - t) / 4000;
	}
	printf("symlinkat %.2f\n", median(v));

	for (int r = 0; r < ROUNDS; r++) {
		size_t pages = 256;
		char *m = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return 1;
		t = now_us();
		for (size_t i = 0; i < pages; i++)
			m[i * 4096] = 1;
		v[r] = (now_us() - t) / (double)pages;
		munmap(m, pages * 4096);
	}
	printf("fault-anon %.2f\n", median(v));

	for (int r = 0; r < ROUNDS; r++) {
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		size_t len, windows;
		volatile char sum = 0;
		char *m;

		if (fd < 0 || fstat(fd, &st) < 0)
			return 1;
		len = (size_t)st.st_size & ~(size_t)4095;
		windows = len / (16 * 4096);
		if (windows == 0)
			return 1;
		m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (m == MAP_FAILED)
			return 1;
		t = now_us();
		for (size_t i = 0; i < windows; i++)
			sum += m[i * 16 * 4096];
		v[r] = (now_us() - t) / (double)windows;
		munmap(m, len);
	}
	printf("fault-file %.2f\n", median(v));

	unlinkat(sub, "a", 0);
	unlinkat(sub, "b", 0);
	unlinkat(sub, "c", 0);
	close(sub);
	unlinkat(dfd, "d", AT_REMOVEDIR);
	close(dfd);
	rmdir(path);
	return 0;
}
