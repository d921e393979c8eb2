/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove alt's stamps of the admin files it took in: which files need not be read again. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alt_int.h"
#include "grove/fs.h"
#include "base/util.h"

#include "banned.h" /* last */

#define STAMPS_MAX (64u << 20)
/* The file: a head of 24 bytes (the magic, then the number 1 in the machine's byte order: a
 * cache carried to another machine reads as none), then per entry its head (struct rec, in the
 * machine's order) and the name and the text, each with its NUL (read in place). */
#define STAMPS_HEAD_LEN 24
static const unsigned char stamps_magic[16] = "grove alt stamp\n"; /* (no NUL) */

struct rec {
	uint64_t name_len, text_len, dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

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

/* The head: the text and the number 1. */
static void
head(char buf[STAMPS_HEAD_LEN])
{
	uint64_t one = 1;

	memcpy(buf, stamps_magic, sizeof(stamps_magic));
	memcpy(buf + sizeof(stamps_magic), &one, sizeof(one));
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

void
grove_alt_stamps_load(int state_fd, int64_t dir_id, struct grove_alt_stamps *ret)
{
	cleanup_free char *name = file_name(dir_id, "");
	struct grove_error err = { 0 };
	char h[STAMPS_HEAD_LEN];
	size_t len = 0;
	const char *p, *stop;

	memset(ret, 0, sizeof(*ret));
	if (!name || grove_fs_read_file_at(state_fd, name, STAMPS_MAX, &ret->buf, &len, &err) < 0)
		return;
	head(h);
	if (len < sizeof(h) || memcmp(ret->buf, h, sizeof(h)) != 0)
		goto bad;
	for (p = ret->buf + sizeof(h), stop = ret->buf + len; p < stop;) {
		struct grove_alt_stamp e = { 0 };
		struct rec rc;
		size_t left = (size_t)(stop - p);

		if (left < sizeof(rc))
			goto bad;
		memcpy(&rc, p, sizeof(rc));
		p += sizeof(rc);
		left -= sizeof(rc);
		/* name NUL text NUL, within the file */
		if (rc.name_len == 0 || rc.name_len >= left ||
		    rc.text_len >= left - rc.name_len - 1 || p[rc.name_len] != '\0' ||
		    p[rc.name_len + 1 + rc.text_len] != '\0')
			goto bad;
		e.name = p;
		e.text = p + rc.name_len + 1;
		e.st = (struct grove_fs_stamp){ .dev = rc.dev,
						.ino = rc.ino,
						.size = rc.size,
						.mtime_ns = rc.mtime_ns,
						.ctime_ns = rc.ctime_ns };
		p += rc.name_len + rc.text_len + 2;
		/* (no NUL inside; sorted by name, each once: bsearch finds them) */
		if (strlen(e.name) != rc.name_len || strlen(e.text) != rc.text_len ||
		    (ret->n && strcmp(ret->v[ret->n - 1].name, e.name) >= 0) || grow(ret) < 0)
			goto bad;
		ret->v[ret->n++] = e;
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

static bool
same(const struct grove_alt_stamps *a, const struct grove_alt_stamps *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].name, b->v[i].name) != 0 ||
		    strcmp(a->v[i].text, b->v[i].text) != 0 ||
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
	size_t len = STAMPS_HEAD_LEN;
	char *p;

	if (!name || !tmp || same(old, s))
		return;
	for (size_t i = 0; i < s->n; i++)
		len += sizeof(struct rec) + strlen(s->v[i].name) + strlen(s->v[i].text) + 2;
	if (!(buf = malloc(len)))
		return;
	head(buf);
	p = buf + STAMPS_HEAD_LEN;
	for (size_t i = 0; i < s->n; i++) {
		const struct grove_alt_stamp *e = &s->v[i];
		struct rec rc = { .name_len = strlen(e->name),
				  .text_len = strlen(e->text),
				  .dev = e->st.dev,
				  .ino = e->st.ino,
				  .size = e->st.size,
				  .mtime_ns = e->st.mtime_ns,
				  .ctime_ns = e->st.ctime_ns };

		memcpy(p, &rc, sizeof(rc));
		p += sizeof(rc);
		memcpy(p, e->name, rc.name_len + 1);
		p += rc.name_len + 1;
		memcpy(p, e->text, rc.text_len + 1);
		p += rc.text_len + 1;
	}
	/* A cache: when it cannot be written, the next command reads the files. */
	(void)grove_fs_write_cache_file(state_fd, name, tmp, buf, len, &err);
}
