/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove verify's checks: each entry the log says grove owns, looked at beneath the held target. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grove/fs.h"
#include "grove/journal.h"
#include "grove/path.h"
#include "grove/verify.h"
#include "base/util.h"

#include "banned.h" /* last */

struct stow_roots {
	struct grove_root *r;
	size_t n;
};

static void
stow_roots_release(struct stow_roots *sr)
{
	for (size_t i = 0; i < sr->n; i++)
		grove_root_release(&sr->r[i]);
	free(sr->r);
}

/* Opens every stow dir the target's transactions used (those still there); the others, and all
 * of them when the log cannot list them, are simply not looked into. */
static void
open_stow_roots(struct grove_session *s, struct stow_roots *sr)
{
	struct grove_txn *txns = NULL;
	struct grove_error err;
	size_t n = 0;

	memset(sr, 0, sizeof(*sr));
	if (grove_journal_list(s->journal, s->target_id, 0, &txns, &n, &err) < 0)
		return;
	sr->r = calloc(n ? n : 1, sizeof(*sr->r));
	for (size_t i = 0; sr->r && i < n; i++) {
		bool seen = false;

		if (!txns[i].stow_dir)
			continue;
		for (size_t k = 0; k < sr->n && !seen; k++)
			seen = !strcmp(sr->r[k].real, txns[i].stow_dir);
		if (!seen && grove_root_open(&sr->r[sr->n], txns[i].stow_dir, &err) == 0)
			sr->n++;
	}
	grove_txns_free(txns, n);
}

/*
 * The stow folder last looked into by link_resolves: a link's destination is found in its
 * listing, not by a lookup of its whole path per link (the links of one target folder mostly
 * point into one package folder).
 */
struct stow_dir_cache {
	size_t root; /* index in the stow roots */
	char *dir;   /* beneath that root; NULL: nothing cached */
	bool listed; /* false: the folder could not be opened without following a link */
	struct grove_dirent *ents;
	size_t n;
};

static void
stow_dir_cache_release(struct stow_dir_cache *c)
{
	free(c->dir);
	grove_dirents_free(c->ents, c->n);
	memset(c, 0, sizeof(*c));
}

static int
cmp_dirent_name(const void *key, const void *elem)
{
	return strcmp(key, ((const struct grove_dirent *)elem)->name);
}

/* What the stow-relative rest in stow root i is, from the cached listing of its folder: 1 it is
 * there (not a link), 0 it is not, -1 the listing cannot tell (a link, or a folder reached only
 * through links): the caller looks it up whole. */
static int
cached_answer(const struct stow_roots *sr, struct stow_dir_cache *c, size_t i, const char *rest)
{
	const char *slash = strrchr(rest, '/');
	size_t dlen = slash ? (size_t)(slash - rest) : 0;
	const char *name = slash ? slash + 1 : rest;
	const struct grove_dirent *e;

	if (!*name || strcmp(name, "..") == 0 || strcmp(name, ".") == 0)
		return -1;
	if (!c->dir || c->root != i || strlen(c->dir) != dlen || strncmp(c->dir, rest, dlen) != 0) {
		struct grove_error err;
		int fd;

		stow_dir_cache_release(c);
		c->dir = strndup(rest, dlen);
		if (!c->dir)
			return -1;
		c->root = i;
		fd = grove_fs_open_dir_beneath(sr->r[i].fd, dlen ? c->dir : ".", &err);
		if (fd >= 0) {
			c->listed = grove_fs_list(fd, &c->ents, &c->n, &err) == 0;
			grove_fd_close(fd);
		}
	}
	if (!c->listed)
		return -1;
	/* (an empty folder's listing has no array: bsearch must not see NULL) */
	e = c->n ? bsearch(name, c->ents, c->n, sizeof(*c->ents), cmp_dirent_name) : NULL;
	if (!e)
		return 0;
	return e->type == GROVE_FT_LINK ? -1 : 1;
}

/* Where the folder of a link's text lands, for the links of one target folder whose texts share
 * that folder (a target folder's links mostly point into one package folder): joined once. */
struct text_dir_cache {
	char *parent;   /* the target folder of the links */
	char *tdir;     /* the folder part of their text */
	size_t root;    /* the stow root it lands in... */
	char *rest_dir; /* ...and where beneath it; NULL: in none */
};

static void
text_dir_cache_release(struct text_dir_cache *c)
{
	free(c->parent);
	free(c->tdir);
	free(c->rest_dir);
	memset(c, 0, sizeof(*c));
}

/* Whether the stow-relative rest in stow root i resolves to something (true when it cannot be
 * told). */
static bool
rest_resolves(const struct stow_roots *sr, struct stow_dir_cache *cache, size_t i, const char *rest)
{
	struct grove_stat st;
	struct grove_error err;
	int known = *rest ? cached_answer(sr, cache, i, rest) : -1;

	if (known >= 0)
		return known == 1;
	if (grove_fs_stat_beneath_follow(sr->r[i].fd, rest, &st, &err) == 0)
		return st.type != GROVE_FT_NONE;
	return true;
}

/* Whether the link at path (text) resolves to something, when it points into a known stow dir;
 * true when it cannot be told (grove only looks beneath roots it holds). */
static bool
link_resolves(const struct grove_root *target, const struct stow_roots *sr,
	      struct stow_dir_cache *cache, struct text_dir_cache *tc, const char *path,
	      const char *text)
{
	const char *tslash = strrchr(text, '/');
	const char *name = tslash ? tslash + 1 : text;
	size_t tdlen = tslash ? (size_t)(tslash - text) : 0;
	const char *pslash = strrchr(path, '/');
	size_t pdlen = pslash ? (size_t)(pslash - path) : 0;
	char *parent, *dir, *abs;
	bool ok = true;

	/* The usual link (text "../../stow/pkg/a/name"): its folder joined once per target
	 * folder and text folder, its name looked up in that folder's listing. */
	if (tslash && *name && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
	    text[0] != '/') {
		if (!tc->parent || strlen(tc->parent) != pdlen ||
		    strncmp(tc->parent, path, pdlen) != 0 || strlen(tc->tdir) != tdlen ||
		    strncmp(tc->tdir, text, tdlen) != 0) {
			text_dir_cache_release(tc);
			tc->parent = strndup(path, pdlen);
			tc->tdir = strndup(text, tdlen);
			dir = tc->parent ? grove_path_join(target->real, tc->parent) : NULL;
			abs = dir && tc->tdir ? grove_path_join(dir, tc->tdir) : NULL;
			free(dir);
			if (!abs) {
				text_dir_cache_release(tc);
				goto whole;
			}
			for (size_t i = 0; i < sr->n; i++) {
				const char *rest = grove_path_strip_prefix(abs, sr->r[i].real);

				if (rest) {
					tc->root = i;
					tc->rest_dir = strdup(rest);
					break;
				}
			}
			free(abs);
		}
		if (!tc->rest_dir)
			return true; /* in no stow dir held */
		{
			size_t rl = strlen(tc->rest_dir), nl = strlen(name);
			char buf[PATH_MAX];

			if (rl + 1 + nl < sizeof(buf)) {
				if (rl) {
					memcpy(buf, tc->rest_dir, rl);
					buf[rl++] = '/';
				}
				memcpy(buf + rl, name, nl + 1);
				return rest_resolves(sr, cache, tc->root, buf);
			}
		}
	}
whole:
	parent = grove_path_parent(path);
	dir = parent ? grove_path_join(target->real, parent) : NULL;
	abs = dir ? grove_path_join(dir, text) : NULL;
	for (size_t i = 0; abs && i < sr->n; i++) {
		const char *rest = grove_path_strip_prefix(abs, sr->r[i].real);

		if (!rest)
			continue;
		ok = rest_resolves(sr, cache, i, rest);
		break;
	}
	free(parent);
	free(dir);
	free(abs);
	return ok;
}

/* Appends a finding (path taken over, expected copied), sorted later by (key, sub): the owned
 * entry it is of, and 0 for the entry itself or 1 + its place in its folder's listing for a
 * FOREIGN entry of a folder grove made (the order of grove_journal_owned's entries). */
struct keyed {
	char *key;
	size_t sub;
};

struct verify_run {
	struct grove_session *s;
	const struct stow_roots *sr;
	struct stow_dir_cache cache;
	struct text_dir_cache tcache;
	struct grove_verify_report rep;
	struct keyed *keys; /* one per finding */
	size_t cap;
	/* The target folders on the way to the entries being checked: levels 0 (the target)
	 * to depth - 1, each the folder of the next. */
	struct vdir {
		size_t len; /* of its path in path */
		int fd;     /* -1: not opened yet; -2: cannot be opened (its entries are missing) */
		bool listed; /* ents holds its listing */
		struct grove_dirent *ents;
		size_t n;
		/* the names of the entries grove owns in it (walk order: sorted bytewise) */
		char **kids;
		size_t n_kids, cap_kids;
	} * d;
	size_t depth, cap_d;
	char path[PATH_MAX + 1];
};

static int
add_finding(struct verify_run *v, enum grove_verify_issue issue, char *path, const char *expected,
	    const char *key, size_t sub)
{
	struct grove_verify_report *rep = &v->rep;
	char *exp = expected ? strdup(expected) : NULL;
	char *k = strdup(key);

	if (rep->n_findings == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 16;
		struct grove_verify_finding *nf = realloc(rep->findings, ncap * sizeof(*nf));
		struct keyed *nk = nf ? realloc(v->keys, ncap * sizeof(*nk)) : NULL;

		if (nf)
			rep->findings = nf;
		if (nk) {
			v->keys = nk;
			v->cap = ncap;
		}
	}
	if (rep->n_findings == v->cap || (expected && !exp) || !k) {
		free(exp);
		free(path);
		free(k);
		return -ENOMEM;
	}
	v->keys[rep->n_findings] = (struct keyed){ .key = k, .sub = sub };
	rep->findings[rep->n_findings++] = (struct grove_verify_finding){
		.issue = issue,
		.path = path,
		.expected = exp,
	};
	return 0;
}

static void
vdir_clear(struct vdir *d)
{
	if (d->fd >= 0 && d->len)
		grove_fd_close(d->fd);
	grove_dirents_free(d->ents, d->n);
	for (size_t i = 0; i < d->n_kids; i++)
		free(d->kids[i]);
	free(d->kids);
	memset(d, 0, sizeof(*d));
	d->fd = -1;
}

/* Makes the folders on the way the folder dir (its length dlen in p): levels below it left,
 * levels down to it entered (opened when first needed). */
static int
vdirs_to(struct verify_run *v, const char *p, size_t dlen)
{
	while (v->depth > 1) {
		const struct vdir *t = &v->d[v->depth - 1];

		if (t->len <= dlen && strncmp(v->path, p, t->len) == 0 &&
		    (t->len == dlen || p[t->len] == '/'))
			break;
		vdir_clear(&v->d[--v->depth]);
	}
	while (v->d[v->depth - 1].len < dlen) {
		size_t start = v->d[v->depth - 1].len, end;

		start += start ? 1 : 0;
		end = start + strcspn(p + start, "/");
		if (v->depth == v->cap_d) {
			size_t ncap = v->cap_d * 2;
			struct vdir *nd = realloc(v->d, ncap * sizeof(*nd));

			if (!nd)
				return -ENOMEM;
			v->d = nd;
			v->cap_d = ncap;
		}
		memset(&v->d[v->depth], 0, sizeof(v->d[0]));
		v->d[v->depth].fd = -1;
		v->d[v->depth].len = end;
		memcpy(v->path, p, end);
		v->path[end] = '\0';
		v->depth++;
	}
	return 0;
}

/* The fd of level k (opened, with the levels above, as needed), or -1. */
static int
vdir_fd(struct verify_run *v, size_t k)
{
	struct vdir *d = &v->d[k];
	struct grove_error err;
	int up;

	if (d->fd != -1)
		return d->fd < 0 ? -1 : d->fd;
	up = vdir_fd(v, k - 1);
	if (up >= 0) {
		size_t start = v->d[k - 1].len + (v->d[k - 1].len ? 1 : 0);
		char name[NAME_MAX + 1];
		size_t l = d->len - start;

		if (l <= NAME_MAX) {
			memcpy(name, v->path + start, l);
			name[l] = '\0';
			d->fd = grove_fs_open_dir_at(up, name, &err);
		}
	}
	if (d->fd < 0)
		d->fd = -2;
	return d->fd < 0 ? -1 : d->fd;
}

/* The listing of level k, or NULL (not a folder that can be read: its entries are looked up). */
static const struct vdir *
vdir_listed(struct verify_run *v, size_t k)
{
	struct vdir *d = &v->d[k];
	struct grove_error err;
	int fd = vdir_fd(v, k);

	if (fd >= 0 && !d->listed && !d->ents)
		d->listed = grove_fs_list(fd, &d->ents, &d->n, &err) == 0;
	return d->listed ? d : NULL;
}

static int
cmp_name(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

/* FOREIGN findings for the folder grove made at path (the owned entry key): what its listing
 * has that the log does not give grove (kids, sorted). A folder that cannot be read shows none. */
static int
find_foreign(struct verify_run *v, int dfd, const char *name, const char *path, char **kids,
	     size_t n_kids, const struct grove_dirent *ents, size_t n_ents)
{
	struct grove_dirent *own_ents = NULL;
	size_t n_own = 0;
	struct grove_error err;
	int r = 0;

	if (!ents) {
		int fd = dfd >= 0 ? grove_fs_open_dir_at(dfd, name, &err) : -1;

		if (fd < 0)
			return 0;
		if (grove_fs_list(fd, &own_ents, &n_own, &err) < 0)
			n_own = 0;
		grove_fd_close(fd);
		ents = own_ents;
		n_ents = n_own;
	}
	for (size_t k = 0; k < n_ents && r == 0; k++) {
		char *p;

		if (n_kids && bsearch(ents[k].name, kids, n_kids, sizeof(*kids), cmp_name))
			continue;
		p = grove_strdupf("%s/%s", path, ents[k].name);
		r = p ? add_finding(v, GROVE_VERIFY_FOREIGN, p, NULL, path, 1 + k) : -ENOMEM;
	}
	grove_dirents_free(own_ents, n_own);
	return r;
}

/* Checks one owned entry (grove_journal_owned_walk's order: a folder after its entries). */
static int
check_owned(void *arg, const struct grove_owned *o)
{
	struct verify_run *v = arg;
	const char *slash = strrchr(o->path, '/');
	size_t dlen = slash ? (size_t)(slash - o->path) : 0;
	const char *name = slash ? slash + 1 : o->path;
	size_t plen = strlen(o->path);
	char **kids = NULL;
	size_t n_kids = 0;
	struct grove_dirent *sub_ents = NULL;
	size_t n_sub = 0;
	const struct vdir *dir;
	struct grove_stat st = { 0 };
	struct grove_error err;
	enum grove_verify_issue issue = GROVE_VERIFY_CHANGED;
	bool bad = true, foreign_dir = false;
	char *text = NULL;
	int dfd, r = 0;

	v->rep.checked++;
	if (plen > PATH_MAX || dlen > PATH_MAX)
		return -ENAMETOOLONG;
	/* The folder at the entry's own path, when its entries were checked just before: what
	 * the log gives grove there, and its listing, for the FOREIGN check. */
	for (size_t k = v->depth; k-- > 1;) {
		struct vdir *t = &v->d[k];

		if (t->len < plen)
			break;
		if (t->len != plen || strncmp(v->path, o->path, plen) != 0)
			continue;

		kids = t->kids;
		n_kids = t->n_kids;
		t->kids = NULL;
		t->n_kids = t->cap_kids = 0;
		if (t->listed) {
			sub_ents = t->ents;
			n_sub = t->n;
			t->ents = NULL;
			t->n = 0;
		}
		break;
	}
	r = vdirs_to(v, o->path, dlen);
	if (r < 0)
		goto out;
	/* Its name, for its folder's FOREIGN check. */
	{
		struct vdir *d = &v->d[v->depth - 1];

		if (d->n_kids == d->cap_kids) {
			size_t ncap = d->cap_kids ? d->cap_kids * 2 : 16;
			char **nk = realloc(d->kids, ncap * sizeof(*nk));

			if (!nk) {
				r = -ENOMEM;
				goto out;
			}
			d->kids = nk;
			d->cap_kids = ncap;
		}
		if (!(d->kids[d->n_kids] = strdup(name))) {
			r = -ENOMEM;
			goto out;
		}
		d->n_kids++;
	}
	dir = vdir_listed(v, v->depth - 1);
	dfd = vdir_fd(v, v->depth - 1);
	if (dir) {
		const struct grove_dirent *e = dir->n ? bsearch(name, dir->ents, dir->n,
								sizeof(*dir->ents), cmp_dirent_name)
						      : NULL;

		st.type = e ? e->type : GROVE_FT_NONE;
	} else if (dfd < 0 || grove_fs_stat_at(dfd, name, &st, &err) < 0) {
		st.type = GROVE_FT_NONE;
	}
	if (st.type == GROVE_FT_NONE) {
		issue = GROVE_VERIFY_MISSING;
	} else if (!o->text) {
		bad = st.type != GROVE_FT_DIR;
		foreign_dir = !bad;
	} else if (st.type != GROVE_FT_LINK || grove_fs_readlink_at(dfd, name, &text, &err) < 0 ||
		   strcmp(text, o->text) != 0) {
		issue = GROVE_VERIFY_CHANGED;
	} else if (!link_resolves(v->s->target, v->sr, &v->cache, &v->tcache, o->path, o->text)) {
		issue = GROVE_VERIFY_BROKEN;
	} else {
		bad = false;
	}
	if (foreign_dir) {
		r = find_foreign(v, dfd, name, o->path, kids, n_kids, sub_ents, n_sub);
	} else if (bad) {
		char *p = strdup(o->path);

		r = p ? add_finding(v, issue, p, o->text, o->path, 0) : -ENOMEM;
	}
out:
	free(text);
	for (size_t i = 0; i < n_kids; i++)
		free(kids[i]);
	free(kids);
	grove_dirents_free(sub_ents, n_sub);
	return r;
}

/* Whether path is, or is a temporary entry of, one of txn's ops (plan). */
static bool
part_of(const struct grove_plan *ops, const char *tag, const char *path)
{
	const char *base = strrchr(path, '/');

	if (grove_fs_is_temp_of(base ? base + 1 : path, tag))
		return true;
	grove_plan_foreach_op (ops, op)
		if (!strcmp(op->path, path))
			return true;
	return false;
}

/* Marks the findings the log's unfinished transaction accounts for, and counts them all. */
static int
mark_unfinished(struct grove_session *s, struct grove_verify_report *rep, struct grove_error *err)
{
	struct grove_plan ops;
	char tag[32];
	int r = grove_journal_unfinished(s->journal, s->target_id, &rep->unfinished, err);

	grove_plan_init(&ops);
	if (r == 0 && rep->unfinished)
		r = grove_journal_ops(s->journal, rep->unfinished, &ops, err);
	snprintf(tag, sizeof(tag), "%lld", (long long)rep->unfinished);
	for (size_t i = 0; r == 0 && i < rep->n_findings; i++) {
		struct grove_verify_finding *f = &rep->findings[i];

		if (rep->unfinished && part_of(&ops, tag, f->path)) {
			f->txn = rep->unfinished;
			rep->unfinished_entries++;
			continue;
		}
		switch (f->issue) {
		case GROVE_VERIFY_MISSING:
			rep->missing++;
			break;
		case GROVE_VERIFY_CHANGED:
			rep->changed++;
			break;
		case GROVE_VERIFY_BROKEN:
			rep->broken++;
			break;
		case GROVE_VERIFY_FOREIGN:
			rep->foreign++;
			break;
		}
	}
	grove_plan_release(&ops);
	return r;
}

static int
cmp_finding_at(const void *a, const void *b, void *keys)
{
	const struct keyed *k = keys;
	const struct keyed *x = &k[*(const size_t *)a], *y = &k[*(const size_t *)b];
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return x->sub < y->sub ? -1 : x->sub > y->sub;
}

/* Puts the findings in grove_journal_owned's order of their entries (see add_finding). */
static int
sort_findings(struct verify_run *v)
{
	size_t n = v->rep.n_findings;
	size_t *ix = malloc((n ? n : 1) * sizeof(*ix));
	struct grove_verify_finding *f = malloc((n ? n : 1) * sizeof(*f));

	if (!ix || !f) {
		free(ix);
		free(f);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ix[i] = i;
	qsort_r(ix, n, sizeof(*ix), cmp_finding_at, v->keys);
	for (size_t i = 0; i < n; i++)
		f[i] = v->rep.findings[ix[i]];
	free(v->rep.findings);
	v->rep.findings = f;
	v->cap = n;
	free(ix);
	return 0;
}

int
grove_verify(struct grove_session *s, struct grove_verify_report *ret, struct grove_error *err)
{
	struct stow_roots sr;
	struct verify_run v = { .s = s, .sr = &sr, .cap_d = 16 };
	int r;

	open_stow_roots(s, &sr);
	v.d = calloc(v.cap_d, sizeof(*v.d));
	if (!v.d) {
		r = -ENOMEM;
	} else {
		v.d[0].fd = s->target->fd;
		v.depth = 1;
		r = grove_journal_owned_walk(s->journal, s->target_id, check_owned, &v, err);
	}
	while (v.depth > 1)
		vdir_clear(&v.d[--v.depth]);
	if (v.d) {
		grove_dirents_free(v.d[0].ents, v.d[0].n);
		for (size_t i = 0; i < v.d[0].n_kids; i++)
			free(v.d[0].kids[i]);
		free(v.d[0].kids);
	}
	free(v.d);
	stow_dir_cache_release(&v.cache);
	text_dir_cache_release(&v.tcache);
	stow_roots_release(&sr);
	if (r == 0)
		r = sort_findings(&v);
	for (size_t i = 0; i < v.rep.n_findings; i++)
		free(v.keys ? v.keys[i].key : NULL);
	free(v.keys);
	if (r == 0)
		r = mark_unfinished(s, &v.rep, err);
	if (r < 0) {
		grove_verify_report_release(&v.rep);
		if (r == -ENOMEM || r == -ENAMETOOLONG)
			return grove_error_set(err, -ENOMEM, "out of memory");
		return r;
	}
	*ret = v.rep;
	return 0;
}

void
grove_verify_report_release(struct grove_verify_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_findings; i++) {
		free(r->findings[i].path);
		free(r->findings[i].expected);
	}
	free(r->findings);
	memset(r, 0, sizeof(*r));
}

const char *
grove_verify_issue_name(enum grove_verify_issue issue)
{
	switch (issue) {
	case GROVE_VERIFY_MISSING:
		return "missing";
	case GROVE_VERIFY_CHANGED:
		return "changed";
	case GROVE_VERIFY_BROKEN:
		return "broken";
	case GROVE_VERIFY_FOREIGN:
		return "foreign";
	}
	return "?";
}
