/* SPDX-License-Identifier: GPL-3.0-or-later */
/* update-alternatives' administrative files as update-alternatives reads them: their meaning,
 * compared by the take-in (alt_admin.c) and the commit (session_alt.c) instead of their bytes. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/altfile.h"

#include "banned.h" /* last */

int
grove_altfile_priority(const char *text, int *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (end == text || *end)
		return -EINVAL;
	if (errno == ERANGE || v < INT_MIN || v > INT_MAX)
		return -ERANGE;
	*ret = (int)v;
	return 0;
}

struct reader {
	const char *pos, *end;
	char *out;
	size_t len, cap;
	bool oom;
};

/* The next line as update-alternatives' fgets loop takes it: ended by a newline, no NUL inside.
 * Its start and length, or false. */
static bool
line(struct reader *rd, const char **ret, size_t *ret_len)
{
	const char *nl;

	if (rd->pos >= rd->end)
		return false;
	nl = memchr(rd->pos, '\n', (size_t)(rd->end - rd->pos));
	if (!nl || memchr(rd->pos, '\0', (size_t)(nl - rd->pos)))
		return false;
	*ret = rd->pos;
	*ret_len = (size_t)(nl - rd->pos);
	rd->pos = nl + 1;
	return true;
}

static void
put(struct reader *rd, const char *s, size_t n)
{
	if (rd->oom)
		return;
	if (rd->len + n + 2 > rd->cap) {
		size_t cap = rd->cap ? rd->cap : 256;
		char *p;

		while (cap < rd->len + n + 2)
			cap *= 2;
		p = realloc(rd->out, cap);
		if (!p) {
			rd->oom = true;
			return;
		}
		rd->out = p;
		rd->cap = cap;
	}
	memcpy(rd->out + rd->len, s, n);
	rd->len += n;
	rd->out[rd->len++] = '\n';
	rd->out[rd->len] = '\0';
}

/* Copies the next line; false when there is none (update-alternatives' "corrupt"). */
static bool
copy(struct reader *rd, size_t *ret_len)
{
	const char *s;
	size_t n;

	if (!line(rd, &s, &n))
		return false;
	put(rd, s, n);
	if (ret_len)
		*ret_len = n;
	return true;
}

int
grove_altfile_meaning(const char *file, size_t len, char **ret)
{
	struct reader rd = { .pos = file, .end = file + len };
	size_t n_slaves = 0, n;
	const char *s;
	bool ok;

	ok = line(&rd, &s, &n) &&
	     ((n == 4 && !memcmp(s, "auto", 4)) || (n == 6 && !memcmp(s, "manual", 6)));
	if (ok)
		put(&rd, s, n);
	ok = ok && copy(&rd, NULL);
	/* The followers: name and link, until an empty name. */
	while (ok && (ok = copy(&rd, &n)) && n) {
		ok = copy(&rd, NULL);
		n_slaves++;
	}
	/* The choices: path, priority, a file per follower, until an empty path. */
	while (ok && (ok = copy(&rd, &n)) && n) {
		char buf[32];
		int prio;

		ok = line(&rd, &s, &n);
		if (ok) {
			char *p = strndup(s, n);

			if (!p) {
				rd.oom = true;
				break;
			}
			if (grove_altfile_priority(p, &prio) == 0) {
				snprintf(buf, sizeof(buf), "%d", prio);
				put(&rd, buf, strlen(buf));
			} else {
				put(&rd, s, n);
			}
			free(p);
		}
		for (size_t k = 0; ok && k < n_slaves; k++)
			ok = copy(&rd, NULL);
	}
	if (rd.oom || !ok) {
		free(rd.out);
		return rd.oom ? -ENOMEM : -EINVAL;
	}
	*ret = rd.out;
	return 0;
}
