/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The alternatives model: link groups, their choices and followers, and the choice rules. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/alt.h"
#include "formats/altfile.h"

#include "banned.h" /* last */

/* ---- a string index: names to positions, so that a group with thousands of followers is read,
 * copied, written and shown in linear time (update-alternatives' lists make each of these
 * quadratic) ---- */

struct strmap {
	const char **key;
	size_t *val;
	size_t cap, n;
};

static size_t
str_hash(const char *s)
{
	size_t h = 1469598103934665603u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

static void
strmap_release(struct strmap *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof(*m));
}

static size_t
strmap_slot(const struct strmap *m, const char *s)
{
	size_t i = str_hash(s) & (m->cap - 1);

	while (m->key[i] && strcmp(m->key[i], s) != 0)
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* The position stored for s, or -1. */
static ssize_t
strmap_get(const struct strmap *m, const char *s)
{
	size_t i;

	if (!m->cap)
		return -1;
	i = strmap_slot(m, s);
	return m->key[i] ? (ssize_t)m->val[i] : -1;
}

/* Stores s (borrowed: it must outlive the map) at position v, unless it is there already. */
static int
strmap_put(struct strmap *m, const char *s, size_t v)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		struct strmap b = { .cap = m->cap ? 2 * m->cap : 16 };

		b.key = calloc(b.cap, sizeof(*b.key));
		b.val = calloc(b.cap, sizeof(*b.val));
		if (!b.key || !b.val) {
			strmap_release(&b);
			return -ENOMEM;
		}
		for (size_t k = 0; k < m->cap; k++)
			if (m->key[k]) {
				size_t j = strmap_slot(&b, m->key[k]);

				b.key[j] = m->key[k];
				b.val[j] = m->val[k];
				b.n++;
			}
		strmap_release(m);
		*m = b;
	}
	i = strmap_slot(m, s);
	if (!m->key[i]) {
		m->key[i] = s;
		m->val[i] = v;
		m->n++;
	}
	return 0;
}

static void
slaves_free(struct grove_alt_slave *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].name);
		free(s[i].path);
	}
	free(s);
}

void
grove_alt_choice_release(struct grove_alt_choice *c)
{
	if (!c)
		return;
	free(c->path);
	free(c->priority_text);
	slaves_free(c->slaves, c->n_slaves);
	memset(c, 0, sizeof(*c));
}

void
grove_alt_group_release(struct grove_alt_group *g)
{
	if (!g)
		return;
	free(g->name);
	free(g->link);
	slaves_free(g->slaves, g->n_slaves);
	for (size_t i = 0; i < g->n_choices; i++)
		grove_alt_choice_release(&g->choices[i]);
	free(g->choices);
	memset(g, 0, sizeof(*g));
}

void
grove_alt_groups_free(struct grove_alt_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		grove_alt_group_release(&g[i]);
	free(g);
}

/* Sets (name -> path) in a follower list, replacing an existing name's path. */
static int
slave_set(struct grove_alt_slave **v, size_t *n, const char *name, const char *path)
{
	struct grove_alt_slave *nv;
	char *p = strdup(path), *nm;

	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < *n; i++) {
		if (strcmp((*v)[i].name, name) == 0) {
			free((*v)[i].path);
			(*v)[i].path = p;
			return 0;
		}
	}
	nm = strdup(name);
	nv = nm ? realloc(*v, (*n + 1) * sizeof(**v)) : NULL;
	if (!nv) {
		free(nm);
		free(p);
		return -ENOMEM;
	}
	nv[*n].name = nm;
	nv[*n].path = p;
	*v = nv;
	(*n)++;
	return 0;
}

static const char *
slave_get(const struct grove_alt_slave *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return v[i].path;
	return NULL;
}

int
grove_alt_group_set_slave(struct grove_alt_group *g, const char *name, const char *link)
{
	return slave_set(&g->slaves, &g->n_slaves, name, link);
}

int
grove_alt_choice_set_slave(struct grove_alt_choice *c, const char *name, const char *path)
{
	return slave_set(&c->slaves, &c->n_slaves, name, path);
}

const char *
grove_alt_choice_slave(const struct grove_alt_choice *c, const char *name)
{
	const char *p = slave_get(c->slaves, c->n_slaves, name);

	return p && *p ? p : NULL;
}

const char *
grove_alt_group_slave_link(const struct grove_alt_group *g, const char *name)
{
	return slave_get(g->slaves, g->n_slaves, name);
}

/* A copy of n followers (names and links or files), or NULL. */
static struct grove_alt_slave *
slaves_dup(const struct grove_alt_slave *v, size_t n)
{
	struct grove_alt_slave *d = calloc(n ? n : 1, sizeof(*d));

	for (size_t i = 0; d && i < n; i++) {
		d[i].name = strdup(v[i].name);
		d[i].path = strdup(v[i].path);
		if (!d[i].name || !d[i].path) {
			slaves_free(d, i + 1);
			return NULL;
		}
	}
	return d;
}

int
grove_alt_group_copy(struct grove_alt_group *dst, const struct grove_alt_group *src)
{
	struct grove_alt_group g = { 0 };

	g.name = strdup(src->name);
	g.link = src->link ? strdup(src->link) : NULL;
	g.manual = src->manual;
	if (!g.name || (src->link && !g.link))
		goto oom;
	if (!(g.slaves = slaves_dup(src->slaves, src->n_slaves)))
		goto oom;
	g.n_slaves = src->n_slaves;
	g.choices = calloc(src->n_choices ? src->n_choices : 1, sizeof(*g.choices));
	if (!g.choices)
		goto oom;
	for (size_t i = 0; i < src->n_choices; i++) {
		const struct grove_alt_choice *c = &src->choices[i];
		struct grove_alt_choice *d = &g.choices[g.n_choices++];

		d->priority = c->priority;
		d->path = strdup(c->path);
		d->slaves = slaves_dup(c->slaves, c->n_slaves);
		if (!d->path || !d->slaves ||
		    (c->priority_text && !(d->priority_text = strdup(c->priority_text))))
			goto oom;
		d->n_slaves = c->n_slaves;
	}
	*dst = g;
	return 0;
oom:
	grove_alt_group_release(&g);
	return -ENOMEM;
}

int
grove_alt_group_files(const struct grove_alt_group *g, const char ***ret)
{
	struct strmap m = { 0 };
	const char **v;

	*ret = NULL;
	if (!g->n_slaves || !g->n_choices)
		return 0;
	v = calloc(g->n_choices * g->n_slaves, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t k = 0; k < g->n_slaves; k++)
		if (strmap_put(&m, g->slaves[k].name, k) < 0)
			goto oom;
	for (size_t i = 0; i < g->n_choices; i++) {
		const struct grove_alt_choice *c = &g->choices[i];

		for (size_t j = 0; j < c->n_slaves; j++) {
			/* (the same follower's file twice in a choice: the last one, as
			 * grove_alt_choice_set_slave keeps it) */
			ssize_t k = strmap_get(&m, c->slaves[j].name);

			if (k >= 0 && *c->slaves[j].path)
				v[i * g->n_slaves + (size_t)k] = c->slaves[j].path;
		}
	}
	strmap_release(&m);
	*ret = v;
	return 0;
oom:
	strmap_release(&m);
	free(v);
	return -ENOMEM;
}

ssize_t
grove_alt_find_choice(const struct grove_alt_group *g, const char *path)
{
	if (!path)
		return -1;
	for (size_t i = 0; i < g->n_choices; i++)
		if (g->choices[i].path && strcmp(g->choices[i].path, path) == 0)
			return (ssize_t)i;
	return -1;
}

int
grove_alt_add_choice(struct grove_alt_group *g, struct grove_alt_choice *c)
{
	ssize_t i = grove_alt_find_choice(g, c->path);
	struct grove_alt_choice *nv;

	if (i >= 0) {
		/* update-alternatives replaces a re-installed path where it stands. */
		grove_alt_choice_release(&g->choices[i]);
		g->choices[i] = *c;
		memset(c, 0, sizeof(*c));
		return 0;
	}
	nv = realloc(g->choices, (g->n_choices + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	nv[g->n_choices++] = *c;
	g->choices = nv;
	memset(c, 0, sizeof(*c));
	return 0;
}

bool
grove_alt_remove_choice(struct grove_alt_group *g, const char *path)
{
	ssize_t i = grove_alt_find_choice(g, path);

	if (i < 0)
		return false;
	grove_alt_choice_release(&g->choices[i]);
	memmove(&g->choices[i], &g->choices[i + 1],
		(g->n_choices - (size_t)i - 1) * sizeof(*g->choices));
	g->n_choices--;
	return true;
}

ssize_t
grove_alt_best(const struct grove_alt_group *g, const char *current)
{
	ssize_t best = current ? grove_alt_find_choice(g, current) : -1;

	/* Strictly higher only: the current choice, then the earlier one in the list, wins a tie.
	 */
	for (size_t i = 0; i < g->n_choices; i++)
		if (best < 0 || g->choices[i].priority > g->choices[best].priority)
			best = (ssize_t)i;
	return best;
}

static int
cmp_choice(const void *a, const void *b)
{
	return strcmp(((const struct grove_alt_choice *)a)->path,
		      ((const struct grove_alt_choice *)b)->path);
}

static int
cmp_slave(const void *a, const void *b)
{
	return strcmp(((const struct grove_alt_slave *)a)->name,
		      ((const struct grove_alt_slave *)b)->name);
}

size_t
grove_alt_group_normalize(struct grove_alt_group *g)
{
	size_t dropped = 0, k = 0;
	const char **files = NULL;
	bool *used = calloc(g->n_slaves ? g->n_slaves : 1, sizeof(*used));

	/* Out of memory: every follower counts as used (the order below still holds). */
	if (used && grove_alt_group_files(g, &files) == 0) {
		for (size_t c = 0; c < g->n_choices; c++)
			for (size_t i = 0; i < g->n_slaves; i++)
				used[i] = used[i] || files[c * g->n_slaves + i];
	}
	for (size_t i = 0; i < g->n_slaves; i++) {
		if (used && (files || !g->n_choices) && !used[i]) {
			free(g->slaves[i].name);
			free(g->slaves[i].path);
			dropped++;
			continue;
		}
		g->slaves[k++] = g->slaves[i];
	}
	free(files);
	free(used);
	g->n_slaves = k;
	if (g->n_choices > 1)
		qsort(g->choices, g->n_choices, sizeof(*g->choices), cmp_choice);
	if (g->n_slaves > 1)
		qsort(g->slaves, g->n_slaves, sizeof(*g->slaves), cmp_slave);
	return dropped;
}

bool
grove_alt_name_ok(const char *name)
{
	return name && *name && !strchr(name, '/') && !strpbrk(name, " \t\n");
}

/* ---- update-alternatives' administrative file format ---- */

struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void
sb_add(struct sbuf *b, const char *text)
{
	size_t l = strlen(text);

	if (b->oom)
		return;
	if (b->len + l + 2 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *n;

		while (cap < b->len + l + 2)
			cap *= 2;
		n = realloc(b->s, cap);
		if (!n) {
			b->oom = true;
			return;
		}
		b->s = n;
		b->cap = cap;
	}
	memcpy(b->s + b->len, text, l);
	b->len += l;
	b->s[b->len++] = '\n';
	b->s[b->len] = '\0';
}

int
grove_alt_group_format(const struct grove_alt_group *g, char **ret)
{
	struct sbuf b = { 0 };
	const char **files = NULL;
	char prio[32];

	if (grove_alt_group_files(g, &files) < 0)
		return -ENOMEM;
	sb_add(&b, g->manual ? "manual" : "auto");
	sb_add(&b, g->link);
	for (size_t i = 0; i < g->n_slaves; i++) {
		sb_add(&b, g->slaves[i].name);
		sb_add(&b, g->slaves[i].path);
	}
	sb_add(&b, "");
	for (size_t i = 0; i < g->n_choices; i++) {
		const struct grove_alt_choice *c = &g->choices[i];

		sb_add(&b, c->path);
		snprintf(prio, sizeof(prio), "%d", c->priority);
		sb_add(&b, c->priority_text ? c->priority_text : prio);
		for (size_t k = 0; k < g->n_slaves; k++) {
			const char *file = files[i * g->n_slaves + k];

			sb_add(&b, file ? file : "");
		}
	}
	sb_add(&b, "");
	free(files);
	if (b.oom) {
		free(b.s);
		return -ENOMEM;
	}
	*ret = b.s;
	return 0;
}

/* The next line of text (without its newline) into *line: 0, or 1 at the end of the text, 2 for a
 * line update-alternatives finds not terminated (no newline, or a NUL byte before it: its fgets
 * loop reads up to the NUL), -ENOMEM. */
static int
next_line(const char **pos, const char *end, char **line)
{
	const char *p = *pos, *nl;

	*line = NULL;
	if (p >= end)
		return 1;
	nl = memchr(p, '\n', (size_t)(end - p));
	if (!nl || memchr(p, '\0', (size_t)(nl - p)))
		return 2;
	*line = strndup(p, (size_t)(nl - p));
	if (!*line)
		return -ENOMEM;
	*pos = nl + 1;
	return 0;
}

/* update-alternatives' words for a file it cannot read ("FILE corrupt: …"). */
#define CORRUPT(...)                                                                       \
	do {                                                                               \
		char why_[512];                                                            \
		snprintf(why_, sizeof(why_), __VA_ARGS__);                                 \
		r = grove_error_set(err, -GROVE_E_CONFIG, "%s corrupt: %s", source, why_); \
		goto fail;                                                                 \
	} while (0)

#define GET(var, what)                                                                   \
	do {                                                                             \
		int rl_ = next_line(&pos, end, &(var));                                  \
		if (rl_ < 0)                                                             \
			goto nomem;                                                      \
		if (rl_ == 1)                                                            \
			CORRUPT("unexpected end of file while trying to read %s", what); \
		if (rl_ == 2)                                                            \
			CORRUPT("line not terminated while trying to read %s", what);    \
	} while (0)

/* *p, leaving NULL in its place. */
static char *
steal_line(char **p)
{
	char *v = *p;

	*p = NULL;
	return v;
}

/* Appends a choice (taken: zeroed) as it stands, a path already there or not. */
static int
append_choice(struct grove_alt_group *g, struct grove_alt_choice *c, size_t *cap)
{
	if (g->n_choices == *cap) {
		size_t ncap = *cap ? 2 * *cap : 4;
		struct grove_alt_choice *nv = realloc(g->choices, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		g->choices = nv;
		*cap = ncap;
	}
	g->choices[g->n_choices++] = *c;
	memset(c, 0, sizeof(*c));
	return 0;
}

/* Appends follower (name, path), both taken, without looking for the name. */
static int
append_slave(struct grove_alt_slave **v, size_t *n, size_t *cap, char *name, char *path)
{
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 4;
		struct grove_alt_slave *nv = realloc(*v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	(*v)[*n].name = name;
	(*v)[*n].path = path;
	(*n)++;
	return 0;
}

/* With cut, an error in the list of choices keeps what was read before it (1). */
static int
parse(const char *name, const char *text, size_t len, const char *source, bool cut,
      struct grove_alt_group *ret, struct grove_error *err)
{
	bool in_choices = false;
	struct grove_alt_group g = { 0 };
	struct grove_alt_choice c = { 0 };
	struct strmap names = { 0 }, links = { 0 };
	const char *pos = text, *end = text + len;
	char *line = NULL, *line2 = NULL;
	size_t cap_slaves = 0, cap_choices = 0;
	int r;

	if (!(g.name = strdup(name)))
		goto nomem;
	GET(line, "status");
	if (strcmp(line, "auto") == 0)
		g.manual = false;
	else if (strcmp(line, "manual") == 0)
		g.manual = true;
	else
		CORRUPT("invalid status");
	free(line);
	line = NULL;
	GET(g.link, "master link");
	for (;;) {
		GET(line, "slave name");
		if (!*line)
			break;
		if (strmap_get(&names, line) >= 0)
			CORRUPT("duplicate slave name %s", line);
		GET(line2, "slave link");
		if (strcmp(line2, g.link) == 0)
			CORRUPT("slave link same as main link %s", g.link);
		if (strmap_get(&links, line2) >= 0)
			CORRUPT("duplicate slave link %s", line2);
		if (append_slave(&g.slaves, &g.n_slaves, &cap_slaves, line, line2) < 0)
			goto nomem;
		line = line2 = NULL;
		if (strmap_put(&names, g.slaves[g.n_slaves - 1].name, 0) < 0 ||
		    strmap_put(&links, g.slaves[g.n_slaves - 1].path, 0) < 0)
			goto nomem;
	}
	free(line);
	line = NULL;
	in_choices = true;
	for (;;) {
		size_t cap_files = 0;

		GET(line, "master file");
		if (!*line)
			break;
		c.path = line;
		line = NULL;
		GET(line2, "priority");
		if (grove_altfile_priority(line2, &c.priority) < 0)
			c.priority_text = steal_line(&line2);
		free(line2);
		line2 = NULL;
		for (size_t k = 0; k < g.n_slaves; k++) {
			GET(line2, "slave file");
			if (*line2) {
				char *nm = strdup(g.slaves[k].name);

				if (!nm || append_slave(&c.slaves, &c.n_slaves, &cap_files, nm,
							line2) < 0) {
					free(nm);
					goto nomem;
				}
				line2 = NULL;
			}
			free(line2);
			line2 = NULL;
		}
		if (append_choice(&g, &c, &cap_choices) < 0)
			goto nomem;
	}
	free(line);
	strmap_release(&names);
	strmap_release(&links);
	*ret = g;
	return 0;
nomem:
	r = grove_error_set(err, -ENOMEM, "out of memory");
fail:
	free(line);
	free(line2);
	strmap_release(&names);
	strmap_release(&links);
	if (cut && in_choices && r != -ENOMEM &&
	    (!c.path || append_choice(&g, &c, &cap_choices) == 0)) {
		*ret = g;
		return 1;
	}
	grove_alt_choice_release(&c);
	grove_alt_group_release(&g);
	return r;
}

int
grove_alt_group_parse(const char *name, const char *text, size_t len, const char *source,
		      struct grove_alt_group *ret, struct grove_error *err)
{
	return parse(name, text, len, source, false, ret, err);
}

int
grove_alt_group_parse_cut(const char *name, const char *text, size_t len, const char *source,
			  struct grove_alt_group *ret, struct grove_error *err)
{
	return parse(name, text, len, source, true, ret, err);
}
