// SPDX-License-Identifier: GPL-3.0-or-later
// For callgrind only, never for a real run: valgrind 3.19 does not know openat2 (syscall 437),
// so every grove command that changes a target stops at its first change. Preloaded, this
// answers openat2 with a plain openat of the same flags (the RESOLVE_* checks are dropped), so
// that a whole command runs and its user-space instructions can be counted.
//   cc -O2 -shared -fPIC -o vg-openat2.so bench/vg-openat2.c -ldl
//   LD_PRELOAD=$PWD/vg-openat2.so valgrind --tool=callgrind grove stow ...
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <sys/syscall.h>

long
syscall(long number, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_openat2) {
		const struct open_how *how = (const struct open_how *)a[2];

		return openat((int)a[0], (const char *)a[1], (int)how->flags, (mode_t)how->mode);
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
