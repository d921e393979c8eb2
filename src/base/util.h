/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Small internal helpers: scoped cleanup, string building. */
#ifndef GROVE_UTIL_H
#define GROVE_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "grove/names.h"

static inline void
grove_freep(void *p)
{
	free(*(void **)p);
}

static inline void
grove_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

#define cleanup_free __attribute__((cleanup(grove_freep)))
#define cleanup_fd   __attribute__((cleanup(grove_closep)))

static inline void *
grove_steal_ptr(void *pp)
{
	void **p = pp;
	void *v = *p;
	*p = NULL;
	return v;
}

static inline int
grove_steal_fd(int *fd)
{
	int v = *fd;
	*fd = -1;
	return v;
}

#define steal_ptr(p) grove_steal_ptr(&(p))
#define steal_fd(fd) grove_steal_fd(&(fd))

/* FNV-1a, the hash of grove's in-memory name and path sets: its start, and one byte more. */
#define GROVE_HASH_SEED       1469598103934665603ULL
#define grove_hash_step(h, c) (((h) ^ (unsigned char)(c)) * 1099511628211ULL)

/* FNV-1a of the n bytes at s. */
static inline uint64_t
grove_hash_bytes(const char *s, size_t n)
{
	uint64_t h = GROVE_HASH_SEED;

	for (size_t i = 0; i < n; i++)
		h = grove_hash_step(h, s[i]);
	return h;
}

/* FNV-1a of the string s (grove_hash_bytes of its strlen bytes, in one pass). */
static inline uint64_t
grove_hash_str(const char *s)
{
	uint64_t h = GROVE_HASH_SEED;

	for (; *s; s++)
		h = grove_hash_step(h, *s);
	return h;
}

/* asprintf that returns NULL on failure. */
char *grove_strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "dir/name", or "name" when dir is "" (no canonicalising: for walks that build paths per entry).
 */
char *grove_child_path(const char *dir, const char *name);

/* grove_child_path into buf when it fits (size bytes), else into *heap (malloc'd, replacing and
 * freeing what *heap held; the caller frees *heap when done). dir_len is strlen(dir). Returns
 * the path, or NULL when out of memory. For loops that make one child path per entry. */
const char *grove_child_path_buf(const char *dir, size_t dir_len, const char *name, char *buf,
				 size_t size, char **heap);

/* Sorts v bytewise ascending (strcmp order; equal strings in any order). Linear when v is
 * already sorted or reversed, as a folder's listing often is (tmpfs lists newest first), and a
 * merge sort otherwise. Returns 0, or -ENOMEM when v is long and no scratch could be had (v is
 * then unchanged). */
int grove_sort_names(const char **v, size_t n);

/* Makes room for more bytes past len in the growing buffer *buf of capacity *cap: the capacity,
 * first when there is none yet, doubles until they fit. Returns 0, or -ENOMEM (*buf and *cap
 * unchanged). */
int grove_bytes_reserve(unsigned char **buf, size_t *cap, size_t len, size_t more, size_t first);

/* Last: it must follow every system header a file includes. */
#include "banned.h"

#endif
