/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fault injection for a unit test linked with -Wl,--wrap for the fs layer's mutating syscalls
 * (tests/meson.build: exec_wraps). Include it in one file of the test's binary: it defines the
 * __wrap_ functions. */
#ifndef GROVE_TEST_FAULT_H
#define GROVE_TEST_FAULT_H

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/types.h>

/*
 * Fault injection: this binary is linked with -Wl,--wrap for the fs layer's
 * mutating syscalls (see tests/meson.build). While armed, the k-th such call
 * (and, when sticky, every later one) fails with fi_errno.
 */
static bool fi_armed, fi_sticky, fi_hit;
static int fi_k, fi_count, fi_errno;
static const char *fi_only;  /* count only this function's calls (NULL: all) */
static const char *fi_never; /* never fail this function's calls (NULL: none); fi_arm keeps it */

static bool
fi_fail(const char *fn)
{
	if (!fi_armed || (fi_only && strcmp(fi_only, fn) != 0) ||
	    (fi_never && !strcmp(fi_never, fn)))
		return false;
	fi_count++;
	if (fi_count == fi_k || (fi_sticky && fi_count > fi_k)) {
		fi_hit = true;
		errno = fi_errno;
		return true;
	}
	return false;
}

static void
fi_arm(int k, int e, bool sticky)
{
	fi_armed = true;
	fi_only = NULL;
	fi_sticky = sticky;
	fi_hit = false;
	fi_k = k;
	fi_count = 0;
	fi_errno = e;
}

int __real_symlinkat(const char *text, int dirfd, const char *name);
int __wrap_symlinkat(const char *text, int dirfd, const char *name);
int __real_renameat2(int ofd, const char *o, int nfd, const char *n, unsigned int flags);
int __wrap_renameat2(int ofd, const char *o, int nfd, const char *n, unsigned int flags);
int __real_mkdirat(int dirfd, const char *name, mode_t mode);
int __wrap_mkdirat(int dirfd, const char *name, mode_t mode);
int __real_unlinkat(int dirfd, const char *name, int flags);
int __wrap_unlinkat(int dirfd, const char *name, int flags);
int __real_fsync(int fd);
int __wrap_fsync(int fd);

int
__wrap_symlinkat(const char *text, int dirfd, const char *name)
{
	return fi_fail("symlinkat") ? -1 : __real_symlinkat(text, dirfd, name);
}

/* Renames into a removal name (".grove-TAG.rm", grove_fs_removal_name), armed or not. */
static int fi_removal_renames;

int
__wrap_renameat2(int ofd, const char *o, int nfd, const char *n, unsigned int flags)
{
	size_t l = n ? strlen(n) : 0;

	if (l > 10 && !strncmp(n, ".grove-", 7) && !strcmp(n + l - 3, ".rm"))
		fi_removal_renames++;
	return fi_fail("renameat2") ? -1 : __real_renameat2(ofd, o, nfd, n, flags);
}

int
__wrap_mkdirat(int dirfd, const char *name, mode_t mode)
{
	return fi_fail("mkdirat") ? -1 : __real_mkdirat(dirfd, name, mode);
}

int
__wrap_unlinkat(int dirfd, const char *name, int flags)
{
	return fi_fail("unlinkat") ? -1 : __real_unlinkat(dirfd, name, flags);
}

int
__wrap_fsync(int fd)
{
	return fi_fail("fsync") ? -1 : __real_fsync(fd);
}

#endif
