/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove alt's stamps of the admin files it took in: which files need not be read again. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alt_int.h"
#include "grove/fs.h"
#include "util.h"

#define STAMPS_MAX (64u << 20)
/* The file: this head, then per entry the line "NAME_LEN TEXT_LEN DEV INO SIZE MTIME_NS
 * CTIME_NS" and the name and the text, each with its NUL (read in place). */
#define STAMPS_HEAD "grove alt stamps 1\n"

void
grove_alt_stamps_release(struct grove_alt_stamps *s)
{
	free(s->v);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

static char *
file_name(int64_t dir_id, const char *suffix)
{
	return grove_strdupf("alt-stamps-%" PRId64 "%s", dir_id, suffix);
}

/* Room for one more entry. */
static int
grow(struct grove_alt_stamps *s)
{
	struct grove_alt_stamp *nv;
	size_t cap = s->cap ? 2 * s->cap : 64;

	if (s->n < s->cap)
		return 0;
	if (!(nv = realloc(s->v, cap * sizeof(*nv))))
		return -ENOMEM;
	s->v = nv;
	s->cap = cap;
	return 0;
}

/* One number of a record's head, ending in end ('\n' for the last). */
static bool
number(const char **p, const char *stop, char end, uint64_t *ret)
{
	uint64_t v = 0;
	const char *q = *p;

	if (q >= stop || *q < '0' || *q > '9')
		return false;
	for (; q < stop && *q >= '0' && *q <= '9'; q++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*q - '0');
	}
	if (q >= stop || *q != end)
		return false;
	*p = q + 1;
	*ret = v;
	return true;
}

void
grove_alt_stamps_load(int state_fd, int64_t dir_id, struct grove_alt_stamps *ret)
{
	cleanup_free char *name = file_name(dir_id, "");
	struct grove_error err = { 0 };
	size_t len = 0, hl = strlen(STAMPS_HEAD);
	const char *p, *stop;

	memset(ret, 0, sizeof(*ret));
	if (!name || grove_fs_read_file_at(state_fd, name, STAMPS_MAX, &ret->buf, &len, &err) < 0)
		return;
	if (len < hl || memcmp(ret->buf, STAMPS_HEAD, hl) != 0)
		goto bad;
	for (p = ret->buf + hl, stop = ret->buf + len; p < stop;) {
		uint64_t nl, tl, mt, ct;
		struct grove_alt_stamp e = { 0 };
		if (!number(&p, stop, ' ', &nl) || !number(&p, stop, ' ', &tl) ||
		    !number(&p, stop, ' ', &e.st.dev) || !number(&p, stop, ' ', &e.st.ino) ||
		    !number(&p, stop, ' ', &e.st.size) || !number(&p, stop, ' ', &mt) ||
		    !number(&p, stop, '\n', &ct) || nl == 0 || nl >= (uint64_t)(stop - p) ||
		    tl >= (uint64_t)(stop - p) - nl - 1 || mt > INT64_MAX || ct > INT64_MAX ||
		    p[nl] != '\0' || p[nl + 1 + tl] != '\0')
			goto bad;
		e.st.mtime_ns = (int64_t)mt;
		e.st.ctime_ns = (int64_t)ct;
		if (grow(ret) < 0)
			goto bad;
		e.name = p;
		e.text = p + nl + 1;
		p += nl + tl + 2;
		ret->v[ret->n++] = e;
		/* (sorted by name, each once: bsearch finds them) */
		if (strlen(e.name) != nl || strlen(e.text) != tl ||
		    (ret->n > 1 && strcmp(ret->v[ret->n - 2].name, e.name) >= 0))
			goto bad;
	}
	return;
bad:
	grove_alt_stamps_release(ret);
}

static int
cmp_name(const void *key, const void *e)
{
	return strcmp(key, ((const struct grove_alt_stamp *)e)->name);
}

const struct grove_alt_stamp *
grove_alt_stamps_find(const struct grove_alt_stamps *s, const char *name)
{
	return s->n ? bsearch(name, s->v, s->n, sizeof(*s->v), cmp_name) : NULL;
}

int
grove_alt_stamps_add(struct grove_alt_stamps *s, const char *name, const char *text,
		     const struct grove_fs_stamp *st)
{
	/* Added in name order; one out of order (never, from the walk) is left out. */
	if (s->n && strcmp(s->v[s->n - 1].name, name) >= 0)
		return 0;
	if (grow(s) < 0)
		return -ENOMEM;
	s->v[s->n++] = (struct grove_alt_stamp){ .name = name, .text = text, .st = *st };
	return 0;
}

bool
grove_alt_stamp_eq(const struct grove_fs_stamp *a, const struct grove_fs_stamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

/* Writes v in decimal and then end; returns the end. */
static char *
put_number(char *p, uint64_t v, char end)
{
	char d[20];
	size_t n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*p++ = d[--n];
	*p++ = end;
	return p;
}

static bool
same(const struct grove_alt_stamps *a, const struct grove_alt_stamps *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].name, b->v[i].name) || strcmp(a->v[i].text, b->v[i].text) ||
		    !grove_alt_stamp_eq(&a->v[i].st, &b->v[i].st))
			return false;
	return true;
}

void
grove_alt_stamps_save(int state_fd, int64_t dir_id, const struct grove_alt_stamps *old,
		      const struct grove_alt_stamps *s)
{
	cleanup_free char *name = file_name(dir_id, ""), *tmp = file_name(dir_id, ".tmp");
	cleanup_free char *buf = NULL;
	struct grove_error err = { 0 };
	size_t len = strlen(STAMPS_HEAD), cap = len;
	char *p;

	if (!name || !tmp || same(old, s))
		return;
	for (size_t i = 0; i < s->n; i++)
		cap += 7 * 21 + strlen(s->v[i].name) + strlen(s->v[i].text) + 2;
	if (!(buf = malloc(cap)))
		return;
	memcpy(buf, STAMPS_HEAD, len);
	p = buf + len;
	for (size_t i = 0; i < s->n; i++) {
		const struct grove_alt_stamp *e = &s->v[i];
		size_t nl = strlen(e->name), tl = strlen(e->text);

		p = put_number(p, nl, ' ');
		p = put_number(p, tl, ' ');
		p = put_number(p, e->st.dev, ' ');
		p = put_number(p, e->st.ino, ' ');
		p = put_number(p, e->st.size, ' ');
		/* (never negative: grove alt keeps no stamp from before 1970) */
		p = put_number(p, (uint64_t)e->st.mtime_ns, ' ');
		p = put_number(p, (uint64_t)e->st.ctime_ns, '\n');
		memcpy(p, e->name, nl + 1);
		p += nl + 1;
		memcpy(p, e->text, tl + 1);
		p += tl + 1;
	}
	len = (size_t)(p - buf);
	/* A cache: when it cannot be written, the next command reads the files. */
	(void)grove_fs_write_cache_file(state_fd, name, tmp, buf, len, &err);
}
