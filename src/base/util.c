/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Small internal helpers shared by the library's modules. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#include "banned.h" /* last */

char *
grove_strdupf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return r < 0 ? NULL : s;
}

char *
grove_child_path(const char *dir, const char *name)
{
	size_t ld = strlen(dir), ln = strlen(name);
	char *s = malloc(ld + ln + 2);

	if (!s)
		return NULL;
	if (ld) {
		memcpy(s, dir, ld);
		s[ld++] = '/';
	}
	memcpy(s + ld, name, ln);
	s[ld + ln] = '\0';
	return s;
}

const char *
grove_child_path_buf(const char *dir, size_t dir_len, const char *name, char *buf, size_t size,
		     char **heap)
{
	size_t ln = strlen(name);

	if ((dir_len ? dir_len + 1 : 0) + ln + 1 > size) {
		free(*heap);
		*heap = grove_child_path(dir, name);
		return *heap;
	}
	if (dir_len) {
		memcpy(buf, dir, dir_len);
		buf[dir_len++] = '/';
	}
	memcpy(buf + dir_len, name, ln + 1);
	return buf;
}

/* Below this many, insertion sort: few compares, and no scratch. */
#define SORT_SMALL 12

static void
insertion_sort(const char **v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		const char *x = v[i];
		size_t j = i;

		while (j > 0 && strcmp(v[j - 1], x) > 0) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

/* Sorts v[0..n) through tmp[0..n): sorted halves, then one merge (skipped when the halves are
 * already in order). */
static void
merge_sort(const char **v, const char **tmp, size_t n)
{
	size_t h = n / 2, i = 0, j = h, k = 0;

	if (n <= SORT_SMALL) {
		insertion_sort(v, n);
		return;
	}
	merge_sort(v, tmp, h);
	merge_sort(v + h, tmp, n - h);
	if (strcmp(v[h - 1], v[h]) <= 0)
		return;
	memcpy(tmp, v, h * sizeof(*v));
	/* tmp holds the left half; the right half is merged in place from v + h. */
	while (i < h && j < n)
		v[k++] = strcmp(tmp[i], v[j]) <= 0 ? tmp[i++] : v[j++];
	while (i < h)
		v[k++] = tmp[i++];
}

int
grove_sort_names(const char **v, size_t n)
{
	const char *stack[256];
	const char **tmp = stack;
	size_t i = 1;

	while (i < n && strcmp(v[i - 1], v[i]) <= 0)
		i++;
	if (i >= n)
		return 0;
	if (i == 1) {
		while (i < n && strcmp(v[i - 1], v[i]) > 0)
			i++;
		if (i == n) {
			for (size_t a = 0, b = n - 1; a < b; a++, b--) {
				const char *x = v[a];
				v[a] = v[b];
				v[b] = x;
			}
			return 0;
		}
	}
	if (n / 2 > sizeof(stack) / sizeof(stack[0]) && !(tmp = malloc(n / 2 * sizeof(*tmp))))
		return -ENOMEM;
	merge_sort(v, tmp, n);
	if (tmp != stack)
		free(tmp);
	return 0;
}

int
grove_bytes_reserve(unsigned char **buf, size_t *cap, size_t len, size_t more, size_t first)
{
	size_t ncap = *cap ? *cap : first;
	unsigned char *nb;

	if (*cap - len >= more)
		return 0;
	while (ncap - len < more)
		ncap *= 2;
	nb = realloc(*buf, ncap);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = ncap;
	return 0;
}
