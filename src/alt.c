/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The alternatives model: link groups, their choices and followers, and the choice rules. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/alt.h"

#include "banned.h" /* last */

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

int
grove_alt_group_copy(struct grove_alt_group *dst, const struct grove_alt_group *src)
{
	struct grove_alt_group g = { 0 };

	g.name = strdup(src->name);
	g.link = src->link ? strdup(src->link) : NULL;
	g.manual = src->manual;
	if (!g.name || (src->link && !g.link))
		goto oom;
	for (size_t i = 0; i < src->n_slaves; i++)
		if (grove_alt_group_set_slave(&g, src->slaves[i].name, src->slaves[i].path) < 0)
			goto oom;
	g.choices = calloc(src->n_choices ? src->n_choices : 1, sizeof(*g.choices));
	if (!g.choices)
		goto oom;
	for (size_t i = 0; i < src->n_choices; i++) {
		const struct grove_alt_choice *c = &src->choices[i];
		struct grove_alt_choice *d = &g.choices[g.n_choices++];

		d->priority = c->priority;
		d->path = strdup(c->path);
		if (!d->path)
			goto oom;
		for (size_t k = 0; k < c->n_slaves; k++)
			if (grove_alt_choice_set_slave(d, c->slaves[k].name, c->slaves[k].path) < 0)
				goto oom;
	}
	*dst = g;
	return 0;
oom:
	grove_alt_group_release(&g);
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

	if (g->n_choices > 1)
		qsort(g->choices, g->n_choices, sizeof(*g->choices), cmp_choice);
	for (size_t i = 0; i < g->n_slaves; i++) {
		bool used = false;

		for (size_t c = 0; c < g->n_choices && !used; c++)
			used = grove_alt_choice_slave(&g->choices[c], g->slaves[i].name) != NULL;
		if (!used) {
			free(g->slaves[i].name);
			free(g->slaves[i].path);
			dropped++;
			continue;
		}
		g->slaves[k++] = g->slaves[i];
	}
	g->n_slaves = k;
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
	char prio[32];

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
		sb_add(&b, prio);
		for (size_t k = 0; k < g->n_slaves; k++) {
			const char *file = grove_alt_choice_slave(c, g->slaves[k].name);

			sb_add(&b, file ? file : "");
		}
	}
	sb_add(&b, "");
	if (b.oom) {
		free(b.s);
		return -ENOMEM;
	}
	*ret = b.s;
	return 0;
}

/* The next line of text (without its newline) into *line: 0, or 1 at the end of the text, 2 for a
 * last line without its newline, -ENOMEM. */
static int
next_line(const char **pos, const char *end, char **line)
{
	const char *p = *pos, *nl;

	*line = NULL;
	if (p >= end)
		return 1;
	nl = memchr(p, '\n', (size_t)(end - p));
	if (!nl)
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

int
grove_alt_group_parse(const char *name, const char *text, size_t len, const char *source,
		      struct grove_alt_group *ret, struct grove_error *err)
{
	struct grove_alt_group g = { 0 };
	struct grove_alt_choice c = { 0 };
	const char *pos = text, *end = text + len;
	char *line = NULL, *line2 = NULL;
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
		if (grove_alt_group_slave_link(&g, line))
			CORRUPT("duplicate slave name %s", line);
		GET(line2, "slave link");
		if (strcmp(line2, g.link) == 0)
			CORRUPT("slave link same as main link %s", g.link);
		for (size_t i = 0; i < g.n_slaves; i++)
			if (strcmp(g.slaves[i].path, line2) == 0)
				CORRUPT("duplicate slave link %s", line2);
		if (grove_alt_group_set_slave(&g, line, line2) < 0)
			goto nomem;
		free(line);
		free(line2);
		line = line2 = NULL;
	}
	free(line);
	line = NULL;
	for (;;) {
		GET(line, "master file");
		if (!*line)
			break;
		if (grove_alt_find_choice(&g, line) >= 0)
			CORRUPT("duplicate path %s", line);
		GET(line2, "priority");
		{
			char *e;
			long v;

			errno = 0;
			v = strtol(line2, &e, 10);
			if (e == line2 || *e)
				CORRUPT("priority of %s: %s", line, line2);
			if (errno == ERANGE || v < INT_MIN || v > INT_MAX)
				CORRUPT("priority of %s is out of range: %s", line, line2);
			c.priority = (int)v;
		}
		free(line2);
		line2 = NULL;
		c.path = line;
		line = NULL;
		for (size_t k = 0; k < g.n_slaves; k++) {
			GET(line2, "slave file");
			if (*line2 && grove_alt_choice_set_slave(&c, g.slaves[k].name, line2) < 0)
				goto nomem;
			free(line2);
			line2 = NULL;
		}
		if (grove_alt_add_choice(&g, &c) < 0)
			goto nomem;
	}
	free(line);
	*ret = g;
	return 0;
nomem:
	r = grove_error_set(err, -ENOMEM, "out of memory");
fail:
	free(line);
	free(line2);
	grove_alt_choice_release(&c);
	grove_alt_group_release(&g);
	return r;
}
