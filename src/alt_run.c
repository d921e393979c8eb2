/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove alt: update-alternatives' decisions on grove's engine, one logged transaction per command.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "grove/alt.h"
#include "grove/fs.h"
#include "grove/journal.h"
#include "grove/path.h"
#include "grove/plan.h"
#include "grove/session.h"
#include "util.h"

/* One path the command may change: what it was and what it should become. */
struct rec {
	char *abs; /* as written in the group (absolute) */
	char *rel; /* beneath the installation root */
	enum grove_ftype orig, want;
	char *orig_text, *want_text;
};

struct ctx {
	const struct grove_alt_request *req;
	struct grove_alt_result *res;
	struct grove_root inst;
	char *altdir; /* without trailing '/' */
	struct rec *recs;
	size_t n_recs;
	bool oom;
	/* Followers evolve added or moved: broken links of only these are an update
	 * ("has changed slave links"), not a repair. */
	const char **updated;
	size_t n_updated;
};

static void
mark_updated(struct ctx *c, const char *name)
{
	const char **nv = realloc(c->updated, (c->n_updated + 1) * sizeof(*nv));

	if (!nv) {
		c->oom = true;
		return;
	}
	c->updated = nv;
	c->updated[c->n_updated++] = name;
}

static bool
is_updated(const struct ctx *c, const char *name)
{
	for (size_t i = 0; i < c->n_updated; i++)
		if (strcmp(c->updated[i], name) == 0)
			return true;
	return false;
}

void
grove_alt_result_release(struct grove_alt_result *res)
{
	for (size_t i = 0; i < res->n_msgs; i++)
		free(res->msgs[i].text);
	free(res->msgs);
	grove_alt_group_release(&res->group);
	free(res->current);
	for (size_t i = 0; i < res->n_sel; i++) {
		free(res->sel[i].name);
		free(res->sel[i].current);
	}
	free(res->sel);
	memset(res, 0, sizeof(*res));
}

static void msg(struct ctx *c, enum grove_alt_msg_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
msg(struct ctx *c, enum grove_alt_msg_kind kind, const char *fmt, ...)
{
	struct grove_alt_result *res = c->res;
	va_list ap;
	char *text = NULL;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (!text) {
		c->oom = true;
		return;
	}
	if (res->n_msgs == res->cap_msgs) {
		size_t cap = res->cap_msgs ? res->cap_msgs * 2 : 8;
		struct grove_alt_msg *nv = realloc(res->msgs, cap * sizeof(*nv));

		if (!nv) {
			free(text);
			c->oom = true;
			return;
		}
		res->msgs = nv;
		res->cap_msgs = cap;
	}
	res->msgs[res->n_msgs].kind = kind;
	res->msgs[res->n_msgs++].text = text;
}

/* The path beneath the installation root for an absolute path, or NULL when it lies outside. */
/* A relative path without ".." components. */
static bool
rel_ok(const char *rel)
{
	size_t l = strlen(rel);

	return *rel && !strstr(rel, "/../") && strncmp(rel, "../", 3) != 0 &&
	       !(l >= 3 && !strcmp(rel + l - 3, "/..")) && strcmp(rel, "..") != 0;
}

/* path's part beneath root (both as the user gave them), canonical and without "..", or NULL when
 * path is not beneath root; malloc'd. */
static char *
under_root(const char *root, const char *path)
{
	size_t l = strlen(root);
	char *rel;

	while (l > 0 && root[l - 1] == '/')
		l--;
	if (strncmp(path, root, l) != 0 || path[l] != '/')
		return NULL;
	rel = grove_path_canon(path + l + 1);
	while (rel && rel[0] == '/')
		memmove(rel, rel + 1, strlen(rel));
	if (rel && (!*rel || !rel_ok(rel))) {
		free(rel);
		return NULL;
	}
	return rel;
}

/* What update-alternatives puts before a path in some messages: its --root. */
static const char *
rootp(const struct ctx *c)
{
	return c->req->root ? c->req->root : "";
}

static const char *
rel_of(const struct ctx *c, const char *abs)
{
	const char *prefixes[2] = { c->inst.real, c->inst.path };

	if (abs[0] != '/')
		return NULL;
	if (c->req->root) {
		/* --root: every path is taken inside the root, as in a chroot. */
		while (*abs == '/')
			abs++;
		return rel_ok(abs) ? abs : NULL;
	}
	for (int k = 0; k < 2; k++) {
		const char *p = prefixes[k];
		size_t l;

		if (!p)
			continue;
		l = strlen(p);
		while (l > 0 && p[l - 1] == '/')
			l--;
		if (strncmp(abs, p, l) != 0 || abs[l] != '/')
			continue;
		abs += l;
		while (*abs == '/')
			abs++;
		return rel_ok(abs) ? abs : NULL;
	}
	return NULL;
}

/* What is at abs on disk now: ENOENT and a missing parent are answers (NONE). */
static int
disk_state(struct ctx *c, const char *rel, enum grove_ftype *ret_type, char **ret_text,
	   struct grove_error *err)
{
	cleanup_free char *parent = strdup(rel);
	const char *base;
	char *slash;
	cleanup_fd int dfd = -1;
	struct grove_stat st;
	int r;

	*ret_type = GROVE_FT_NONE;
	*ret_text = NULL;
	if (!parent)
		return grove_error_set(err, -ENOMEM, "out of memory");
	slash = strrchr(parent, '/');
	if (slash) {
		*slash = '\0';
		base = rel + (slash - parent) + 1;
	} else {
		base = rel;
	}
	dfd = grove_fs_open_dir_beneath(c->inst.fd, slash ? parent : ".", err);
	if (dfd == -ENOENT || dfd == -ENOTDIR) {
		grove_error_clear(err);
		return 0;
	}
	if (dfd < 0)
		return dfd;
	r = grove_fs_stat_at(dfd, base, &st, err);
	if (r < 0)
		return r;
	*ret_type = st.type == GROVE_FT_LINK || st.type == GROVE_FT_NONE ? st.type : GROVE_FT_REG;
	if (st.type == GROVE_FT_LINK)
		return grove_fs_readlink_at(dfd, base, ret_text, err);
	return 0;
}

/* The record for abs, read from disk the first time. */
static int
rec_get(struct ctx *c, const char *abs, struct rec **ret, struct grove_error *err)
{
	const char *rel;
	struct rec *nv, *r;
	int rc;

	for (size_t i = 0; i < c->n_recs; i++) {
		if (strcmp(c->recs[i].abs, abs) == 0) {
			*ret = &c->recs[i];
			return 0;
		}
	}
	rel = rel_of(c, abs);
	if (!rel)
		return grove_error_set(err, -GROVE_E_ESCAPE,
				       "'%s' is outside the installation directory '%s'", abs,
				       c->inst.path);
	nv = realloc(c->recs, (c->n_recs + 1) * sizeof(*nv));
	if (!nv)
		return grove_error_set(err, -ENOMEM, "out of memory");
	c->recs = nv;
	r = &nv[c->n_recs];
	memset(r, 0, sizeof(*r));
	r->abs = strdup(abs);
	r->rel = strdup(rel);
	if (!r->abs || !r->rel) {
		free(r->abs);
		free(r->rel);
		return grove_error_set(err, -ENOMEM, "out of memory");
	}
	rc = disk_state(c, rel, &r->orig, &r->orig_text, err);
	if (rc < 0) {
		free(r->abs);
		free(r->rel);
		return rc;
	}
	r->want = r->orig;
	if (r->orig_text && !(r->want_text = strdup(r->orig_text)))
		c->oom = true;
	c->n_recs++;
	*ret = r;
	return 0;
}

/* The pending state of abs: its type and link text (valid until the next rec_get). */
static int
state(struct ctx *c, const char *abs, enum grove_ftype *type, const char **text,
      struct grove_error *err)
{
	struct rec *r;
	int rc = rec_get(c, abs, &r, err);

	if (rc < 0)
		return rc;
	*type = r->want;
	*text = r->want_text;
	return 0;
}

/* Wants abs to be a link to text (NULL: absent). */
static int
want(struct ctx *c, const char *abs, const char *text, struct grove_error *err)
{
	struct rec *r;
	int rc = rec_get(c, abs, &r, err);
	char *t = NULL;

	if (rc < 0)
		return rc;
	if (text && !(t = strdup(text)))
		return grove_error_set(err, -ENOMEM, "out of memory");
	free(r->want_text);
	r->want_text = t;
	r->want = text ? GROVE_FT_LINK : GROVE_FT_NONE;
	return 0;
}

static char *
alt_path(const struct ctx *c, const char *name)
{
	return grove_strdupf("%s/%s", c->altdir, name);
}

/* Whether file exists, following links, beneath the installation root (stat(2) as
 * update-alternatives does it). A path outside the root counts as missing. */
static bool
file_exists(struct ctx *c, const char *file)
{
	struct grove_error e = { 0 };
	struct grove_stat st;
	const char *rel = file ? rel_of(c, file) : NULL;
	int r;

	if (!rel)
		return false;
	r = grove_fs_stat_beneath_follow(c->inst.fd, rel, &st, &e);
	/* A link leaving the root cannot be checked: it exists as far as we can tell. */
	if (r == -EXDEV)
		return true;
	return r >= 0 && st.type != GROVE_FT_NONE;
}

/* update-alternatives' prepare_install_single: altdir/name -> file, link -> altdir/name. */
static int
install_single(struct ctx *c, const char *name, const char *link, const char *file,
	       struct grove_error *err)
{
	cleanup_free char *fn = alt_path(c, name);
	enum grove_ftype t;
	const char *text;
	int r;

	if (!fn)
		return grove_error_set(err, -ENOMEM, "out of memory");
	r = state(c, fn, &t, &text, err);
	if (r < 0)
		return r;
	if (t == GROVE_FT_REG)
		/* update-alternatives renames its link over whatever is there; grove
		 * never overwrites what is not a link. */
		msg(c, GROVE_ALT_WARNING, "not replacing %s with a link", fn);
	else if ((r = want(c, fn, file, err)) < 0)
		return r;
	r = state(c, link, &t, &text, err);
	if (r < 0)
		return r;
	if (t == GROVE_FT_REG) {
		msg(c, GROVE_ALT_WARNING, "not replacing %s with a link", link);
		return 0;
	}
	return want(c, link, fn, err);
}

/* Removes a link of the group if it is a link (anything else stays, with a warning if warn). */
static int
drop_link(struct ctx *c, const char *abs, bool warn, struct grove_error *err)
{
	enum grove_ftype t;
	const char *text;
	int r = state(c, abs, &t, &text, err);

	if (r < 0)
		return r;
	if (t == GROVE_FT_REG) {
		if (warn)
			msg(c, GROVE_ALT_WARNING, "not removing %s since it's not a symlink", abs);
		return 0;
	}
	return want(c, abs, NULL, err);
}

static int
drop_slave(struct ctx *c, const char *name, const char *link, bool warn_link,
	   struct grove_error *err)
{
	cleanup_free char *fn = alt_path(c, name);
	int r;

	if (!fn)
		return grove_error_set(err, -ENOMEM, "out of memory");
	r = drop_link(c, link, warn_link, err);
	return r < 0 ? r : drop_link(c, fn, true, err);
}

static int
prepare_install(struct ctx *c, const struct grove_alt_group *g, const char *choice,
		struct grove_error *err)
{
	ssize_t i = grove_alt_find_choice(g, choice);
	const struct grove_alt_choice *fs;
	int r;

	if (i < 0)
		return grove_error_set(err, -GROVE_E_INTERNAL, "can't install unknown choice %s",
				       choice);
	fs = &g->choices[i];
	r = install_single(c, g->name, g->link, choice, err);
	for (size_t k = 0; k < g->n_slaves && r >= 0; k++) {
		const struct grove_alt_slave *sl = &g->slaves[k];
		const char *file = grove_alt_choice_slave(fs, sl->name);

		if (file && file_exists(c, file)) {
			r = install_single(c, sl->name, sl->path, file, err);
			continue;
		}
		if (file)
			msg(c, GROVE_ALT_WARNING,
			    "skip creation of %s because associated file %s (of link group %s) "
			    "doesn't exist",
			    sl->path, file, g->name);
		r = drop_slave(c, sl->name, sl->path, true, err);
	}
	return r;
}

static int
remove_files(struct ctx *c, const struct grove_alt_group *g, struct grove_error *err)
{
	int r = drop_slave(c, g->name, g->link, false, err);

	for (size_t k = 0; k < g->n_slaves && r >= 0; k++)
		r = drop_slave(c, g->slaves[k].name, g->slaves[k].path, false, err);
	return r;
}

/* Reads the link text at abs (pending state), or NULL when it is not a link. */
static int
link_text(struct ctx *c, const char *abs, char **ret, struct grove_error *err)
{
	enum grove_ftype t;
	const char *text;
	int r = state(c, abs, &t, &text, err);

	*ret = NULL;
	if (r < 0)
		return r;
	if (t == GROVE_FT_LINK && !(*ret = strdup(text)))
		return grove_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* The current value (what ALTDIR/NAME points to). Like update-alternatives, anything there
 * that is not a link is an error ("cannot stat file '…': Invalid argument"). */
static int
current_of(struct ctx *c, const char *name, char **ret, struct grove_error *err)
{
	cleanup_free char *fn = alt_path(c, name);
	enum grove_ftype t;
	const char *text;
	int r;

	*ret = NULL;
	if (!fn)
		return grove_error_set(err, -ENOMEM, "out of memory");
	r = state(c, fn, &t, &text, err);
	if (r < 0)
		return r;
	if (t == GROVE_FT_REG)
		return grove_error_set(err, -EINVAL, "cannot stat file '%s': %s", fn,
				       strerror(EINVAL));
	if (t == GROVE_FT_LINK && !(*ret = strdup(text)))
		return grove_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* update-alternatives' needs_update: whether the group's links are as its current choice wants. */
enum { NOT_BROKEN, BROKEN, SLAVES_CHANGED };

static int
is_broken(struct ctx *c, const struct grove_alt_group *g, int *ret, struct grove_error *err)
{
	cleanup_free char *fn = alt_path(c, g->name);
	cleanup_free char *lnk = NULL, *cur = NULL;
	const struct grove_alt_choice *fs;
	ssize_t i;
	int r, reason = NOT_BROKEN;

	*ret = BROKEN;
	if (!fn)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if ((r = link_text(c, g->link, &lnk, err)) < 0)
		return r;
	if (!lnk || strcmp(lnk, fn) != 0)
		return 0;
	if ((r = link_text(c, fn, &cur, err)) < 0)
		return r;
	if (!cur)
		return 0;
	i = grove_alt_find_choice(g, cur);
	if (i < 0) {
		*ret = NOT_BROKEN;
		return 0;
	}
	fs = &g->choices[i];
	for (size_t k = 0; k < g->n_slaves; k++) {
		const struct grove_alt_slave *sl = &g->slaves[k];
		const char *file = grove_alt_choice_slave(fs, sl->name);
		cleanup_free char *sfn = alt_path(c, sl->name);
		cleanup_free char *a = NULL, *b = NULL;
		enum grove_ftype t;
		const char *text;

		if (!sfn)
			return grove_error_set(err, -ENOMEM, "out of memory");
		if (file && file_exists(c, file)) {
			if ((r = link_text(c, sl->path, &a, err)) < 0 ||
			    (r = link_text(c, sfn, &b, err)) < 0)
				return r;
			if (!a || strcmp(a, sfn) != 0 || !b || strcmp(b, file) != 0) {
				if (!is_updated(c, sl->name))
					return 0;
				reason = SLAVES_CHANGED;
			}
		} else {
			enum grove_ftype t2;

			if ((r = state(c, sl->path, &t, &text, err)) < 0 ||
			    (r = state(c, sfn, &t2, &text, err)) < 0)
				return r;
			if (t != GROVE_FT_NONE || t2 != GROVE_FT_NONE) {
				if (!is_updated(c, sl->name))
					return 0;
				reason = SLAVES_CHANGED;
			}
		}
	}
	*ret = reason;
	return 0;
}

static struct grove_alt_group *
find_group(struct grove_alt_group *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

/* update-alternatives' check of --install's arguments against every group. */
static int
check_install(struct ctx *c, struct grove_alt_group *all, size_t n, struct grove_error *err)
{
	const struct grove_alt_request *q = c->req;

	for (size_t i = 0; i < n; i++) {
		const struct grove_alt_group *o = &all[i];

		if (strcmp(o->name, q->name) == 0)
			continue;
		if (grove_alt_group_slave_link(o, q->name))
			return grove_error_set(
				err, -GROVE_E_BADINPUT,
				"alternative %s can't be master: it is a slave of %s", q->name,
				o->name);
	}
	for (size_t i = 0; i < n; i++) {
		const struct grove_alt_group *o = &all[i];

		if (strcmp(o->name, q->name) == 0)
			continue;
		if (strcmp(o->link, q->link) == 0)
			return grove_error_set(err, -GROVE_E_BADINPUT,
					       "alternative link %s is already managed by %s",
					       q->link, o->name);
		for (size_t k = 0; k < o->n_slaves; k++)
			if (strcmp(o->slaves[k].path, q->link) == 0)
				return grove_error_set(
					err, -GROVE_E_BADINPUT,
					"alternative link %s is already managed by %s", q->link,
					o->name);
	}
	if (!file_exists(c, q->path))
		return grove_error_set(err, -GROVE_E_BADINPUT,
				       "alternative path %s%s doesn't exist", rootp(c), q->path);
	for (size_t s = 0; s < q->n_slaves; s++) {
		const char *sname = q->slaves[s].name, *slink = q->slave_links[s];

		for (size_t i = 0; i < n; i++) {
			const struct grove_alt_group *o = &all[i];

			if (strcmp(o->name, q->name) == 0)
				continue;
			if (strcmp(o->name, sname) == 0)
				return grove_error_set(
					err, -GROVE_E_BADINPUT,
					"alternative %s can't be slave of %s: it is a "
					"master alternative",
					sname, q->name);
			if (grove_alt_group_slave_link(o, sname))
				return grove_error_set(
					err, -GROVE_E_BADINPUT,
					"alternative %s can't be slave of %s: it is a "
					"slave of %s",
					sname, q->name, o->name);
		}
		for (size_t i = 0; i < n; i++) {
			const struct grove_alt_group *o = &all[i];
			bool other = strcmp(o->name, q->name) != 0;

			if (other && strcmp(o->link, slink) == 0)
				return grove_error_set(
					err, -GROVE_E_BADINPUT,
					"alternative link %s is already managed by %s", slink,
					o->name);
			for (size_t k = 0; k < o->n_slaves; k++) {
				if (strcmp(o->slaves[k].path, slink) != 0)
					continue;
				if (other)
					return grove_error_set(
						err, -GROVE_E_BADINPUT,
						"alternative link %s is already managed by %s",
						slink, o->name);
				if (strcmp(o->slaves[k].name, sname) != 0)
					return grove_error_set(
						err, -GROVE_E_BADINPUT,
						"alternative link %s is already managed by %s "
						"(slave of %s)",
						slink, o->slaves[k].name, o->name);
			}
		}
	}
	return 0;
}

/* update-alternatives' evolve: a re-installed group takes the new links. */
static int
evolve(struct ctx *c, struct grove_alt_group *g, const char *cur, struct grove_error *err)
{
	const struct grove_alt_request *q = c->req;
	enum grove_ftype t;
	const char *text;
	int r;

	if (strcmp(g->link, q->link) != 0) {
		r = state(c, g->link, &t, &text, err);
		if (r < 0)
			return r;
		if (t == GROVE_FT_LINK) {
			cleanup_free char *keep = strdup(text);

			if (!keep)
				return grove_error_set(err, -ENOMEM, "out of memory");
			msg(c, GROVE_ALT_INFO, "renaming %s link from %s%s to %s%s", g->name,
			    rootp(c), g->link, rootp(c), q->link);
			if ((r = want(c, g->link, NULL, err)) < 0 ||
			    (r = want(c, q->link, keep, err)) < 0)
				return r;
		}
		free(g->link);
		if (!(g->link = strdup(q->link)))
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	for (size_t s = 0; s < q->n_slaves; s++) {
		const char *name = q->slaves[s].name, *nlink = q->slave_links[s];
		const char *old = grove_alt_group_slave_link(g, name);

		if (!old)
			mark_updated(c, name);
		if (old && strcmp(old, nlink) != 0) {
			cleanup_free char *new_file = NULL, *fn = alt_path(c, name);
			cleanup_free char *oldc = strdup(old);

			if (!fn || !oldc)
				return grove_error_set(err, -ENOMEM, "out of memory");
			if (cur && strcmp(cur, q->path) == 0) {
				new_file = q->slaves[s].path ? strdup(q->slaves[s].path) : NULL;
			} else if ((r = link_text(c, fn, &new_file, err)) < 0) {
				return r;
			}
			if ((r = state(c, oldc, &t, &text, err)) < 0)
				return r;
			if (t == GROVE_FT_LINK) {
				cleanup_free char *keep = strdup(text);

				if (!keep)
					return grove_error_set(err, -ENOMEM, "out of memory");
				mark_updated(c, name);
				if ((r = want(c, oldc, NULL, err)) < 0)
					return r;
				if (new_file && file_exists(c, new_file)) {
					msg(c, GROVE_ALT_INFO,
					    "renaming %s slave link from %s%s to %s%s", name,
					    rootp(c), oldc, rootp(c), nlink);
					if ((r = want(c, nlink, keep, err)) < 0)
						return r;
				}
			}
		}
		if (grove_alt_group_set_slave(g, name, nlink) < 0)
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

/* update-alternatives makes the alternatives directory when it is missing: MKDIR ops for every
 * missing folder of it, parents first, when a link is to be made inside it. */
static int
plan_altdir(struct ctx *c, struct grove_plan *plan, struct grove_error *err)
{
	cleanup_free char *rel = NULL;
	const char *r = rel_of(c, c->altdir);
	bool needed = false;
	size_t l;

	if (!r)
		return 0;
	l = strlen(r);
	for (size_t i = 0; i < c->n_recs && !needed; i++)
		needed = c->recs[i].want == GROVE_FT_LINK && c->recs[i].orig != GROVE_FT_LINK &&
			 !strncmp(c->recs[i].rel, r, l) && c->recs[i].rel[l] == '/';
	if (!needed)
		return 0;
	if (!(rel = strdup(r)))
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (char *p = rel;; p++) {
		if (*p == '/' || !*p) {
			char save = *p;
			enum grove_ftype t;
			cleanup_free char *text = NULL;
			int rc;

			*p = '\0';
			rc = disk_state(c, rel, &t, &text, err);
			if (rc < 0)
				return rc;
			if (t == GROVE_FT_NONE && grove_plan_add_op(plan, GROVE_OP_MKDIR, rel, NULL,
								    NULL, NULL, c->req->name) < 0)
				return grove_error_set(err, -ENOMEM, "out of memory");
			*p = save;
			if (!save)
				break;
		}
	}
	return 0;
}

static int
build_plan(struct ctx *c, struct grove_plan *plan, struct grove_error *err)
{
	int r0 = plan_altdir(c, plan, err);

	if (r0 < 0)
		return r0;
	for (size_t i = 0; i < c->n_recs; i++) {
		const struct rec *r = &c->recs[i];
		int rc = 0;

		if (r->orig == r->want &&
		    (r->orig != GROVE_FT_LINK || strcmp(r->orig_text, r->want_text) == 0))
			continue;
		if (r->orig == GROVE_FT_LINK && r->want == GROVE_FT_LINK)
			rc = grove_plan_add_op(plan, GROVE_OP_RELINK, r->rel, r->orig_text,
					       r->want_text, NULL, c->req->name);
		else if (r->orig == GROVE_FT_NONE && r->want == GROVE_FT_LINK)
			rc = grove_plan_add_op(plan, GROVE_OP_LINK, r->rel, NULL, r->want_text,
					       NULL, c->req->name);
		else if (r->orig == GROVE_FT_LINK && r->want == GROVE_FT_NONE)
			rc = grove_plan_add_op(plan, GROVE_OP_UNLINK, r->rel, r->orig_text, NULL,
					       NULL, c->req->name);
		else
			return grove_error_set(err, -GROVE_E_INTERNAL,
					       "'%s': no safe way from what is there to a link",
					       r->abs);
		if (rc < 0)
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

/* update-alternatives drops, when it loads a group, the choices whose file is gone. */
static void
prune(struct ctx *c, struct grove_alt_group *g)
{
	for (size_t i = 0; i < g->n_choices;) {
		const char *p = g->choices[i].path;

		if (file_exists(c, p)) {
			i++;
			continue;
		}
		if (!c->req->lax_load)
			msg(c, GROVE_ALT_WARNING,
			    "alternative %s (part of link group %s) doesn't exist; removing from "
			    "list of alternatives",
			    p, g->name);
		grove_alt_choice_release(&g->choices[i]);
		memmove(&g->choices[i], &g->choices[i + 1],
			(g->n_choices - i - 1) * sizeof(g->choices[0]));
		g->n_choices--;
	}
}

/* update-alternatives' set_status: a known group's change of mode is logged. */
static void
set_mode(struct ctx *c, struct grove_alt_group *w, bool known, bool manual)
{
	if (known && w->manual != manual)
		msg(c, GROVE_ALT_LOG, "status of link group %s set to %s", w->link,
		    manual ? "manual" : "auto");
	w->manual = manual;
}

/* update-alternatives' select_mode: a current link that is not a choice means dangling (auto) or
 * changed by hand (manual); no link at all means auto. */
static void
select_mode(struct ctx *c, const struct grove_alt_group *g, struct grove_alt_group *w,
	    const char *cur)
{
	if (g && cur && grove_alt_find_choice(w, cur) < 0) {
		if (!file_exists(c, cur)) {
			msg(c, GROVE_ALT_WARNING,
			    "%s%s/%s is dangling; it will be updated with best choice", rootp(c),
			    c->altdir, w->name);
			set_mode(c, w, g != NULL, false);
		} else if (!w->manual) {
			msg(c, GROVE_ALT_WARNING,
			    "%s%s/%s has been changed (manually or by a script); switching to "
			    "manual updates only",
			    rootp(c), c->altdir, w->name);
			set_mode(c, w, g != NULL, true);
		}
	} else if (g && !cur) {
		msg(c, GROVE_ALT_VERBOSE, "setting up automatic selection of %s", w->name);
		set_mode(c, w, true, false);
	} else if (!g && cur) {
		/* A new group: update-alternatives runs its select_mode on the empty group
		 * it loaded, so it warns, and then takes the new group in auto mode. */
		if (!file_exists(c, cur))
			msg(c, GROVE_ALT_WARNING,
			    "%s%s/%s is dangling; it will be updated with best choice", rootp(c),
			    c->altdir, w->name);
		else
			msg(c, GROVE_ALT_WARNING,
			    "%s%s/%s has been changed (manually or by a script); switching to "
			    "manual updates only",
			    rootp(c), c->altdir, w->name);
	} else if (!g) {
		msg(c, GROVE_ALT_VERBOSE, "setting up automatic selection of %s", w->name);
	}
}

/* Decides as update-alternatives does; fills the records and the saved group. */
static int
decide(struct ctx *c, struct grove_alt_group *all, size_t n, struct grove_alt_group *w,
       bool *ret_save, struct grove_error *err)
{
	const struct grove_alt_request *q = c->req;
	struct grove_alt_group *g = find_group(all, n, q->name);
	cleanup_free char *fn = alt_path(c, q->name);
	cleanup_free char *cur = NULL;
	const char *new_choice = NULL;
	int broken, r;

	*ret_save = false;
	if (!fn)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (q->action == GROVE_ALT_INSTALL) {
		r = check_install(c, all, n, err);
		if (r < 0)
			return r;
	}
	/* Loading the group drops its vanished choices (after --install's checks, which
	 * update-alternatives makes before it loads the group). */
	if (g)
		prune(c, g);
	if (!g) {
		if (q->action == GROVE_ALT_REMOVE) {
			msg(c, GROVE_ALT_VERBOSE, "no alternatives for %s", q->name);
			return 0;
		}
		if (q->action != GROVE_ALT_INSTALL)
			return grove_error_set(err, -GROVE_E_BADINPUT, "no alternatives for %s",
					       q->name);
		w->name = strdup(q->name);
		w->link = strdup(q->link);
		if (!w->name || !w->link)
			return grove_error_set(err, -ENOMEM, "out of memory");
		for (size_t s = 0; s < q->n_slaves; s++)
			if (grove_alt_group_set_slave(w, q->slaves[s].name, q->slave_links[s]) < 0)
				return grove_error_set(err, -ENOMEM, "out of memory");
	} else if (grove_alt_group_copy(w, g) < 0) {
		return grove_error_set(err, -ENOMEM, "out of memory");
	}
	if (q->log_args)
		msg(c, GROVE_ALT_LOG, "run with %s", q->log_args);
	if ((r = current_of(c, q->name, &cur, err)) < 0)
		return r;
	*ret_save = true;
	if (!q->selection)
		select_mode(c, g, w, cur);
	switch (q->action) {
	case GROVE_ALT_SET:
		if (grove_alt_find_choice(w, q->path) < 0)
			return grove_error_set(err, -GROVE_E_BADINPUT,
					       "alternative %s for %s not registered; not setting",
					       q->path, w->name);
		new_choice = q->path;
		set_mode(c, w, true, true);
		break;
	case GROVE_ALT_AUTO:
		set_mode(c, w, true, false);
		if (w->n_choices == 0)
			msg(c, GROVE_ALT_INFO, "there is no program which provides %s", w->name);
		else
			new_choice = w->choices[grove_alt_best(w, cur)].path;
		break;
	case GROVE_ALT_REMOVE:
		if (!grove_alt_remove_choice(w, q->path))
			msg(c, GROVE_ALT_VERBOSE,
			    "alternative %s for %s not registered; not removing", q->path, w->name);
		if (cur && strcmp(cur, q->path) == 0) {
			if (w->manual) {
				msg(c, GROVE_ALT_INFO,
				    "removing manually selected alternative - switching %s to auto "
				    "mode",
				    w->name);
				set_mode(c, w, true, false);
			}
			if (w->n_choices)
				new_choice = w->choices[grove_alt_best(w, cur)].path;
		}
		break;
	case GROVE_ALT_CONFIG: {
		enum grove_alt_answer ans = GROVE_ALT_ANSWER_KEEP;
		const char *path = NULL;

		if (w->n_choices == 0) {
			msg(c, GROVE_ALT_PLAIN, "There is no program which provides %s.", w->name);
			msg(c, GROVE_ALT_PLAIN, "Nothing to configure.");
			break;
		}
		if (!q->config_ask)
			return grove_error_set(err, -GROVE_E_INTERNAL, "--config without a prompt");
		r = q->config_ask(q->config_ctx, c->res, w, cur, q->skip_auto && !w->manual, &ans,
				  &path);
		if (r < 0)
			return grove_error_set(err, r, "read the selection: %s", strerror(-r));
		if (ans == GROVE_ALT_ANSWER_AUTO) {
			set_mode(c, w, true, false);
			new_choice = w->choices[grove_alt_best(w, cur)].path;
		} else if (ans == GROVE_ALT_ANSWER_PATH && path &&
			   grove_alt_find_choice(w, path) >= 0) {
			set_mode(c, w, true, true);
			new_choice = path;
		}
		break;
	}
	case GROVE_ALT_REMOVE_ALL:
		for (size_t i = 0; i < w->n_choices; i++)
			grove_alt_choice_release(&w->choices[i]);
		w->n_choices = 0;
		break;
	case GROVE_ALT_INSTALL: {
		struct grove_alt_choice ch = { 0 };

		if (g && (r = evolve(c, w, cur, err)) < 0)
			return r;
		ch.path = strdup(q->path);
		ch.priority = q->priority;
		if (!ch.path)
			return grove_error_set(err, -ENOMEM, "out of memory");
		for (size_t s = 0; s < q->n_slaves; s++)
			if (grove_alt_choice_set_slave(&ch, q->slaves[s].name, q->slaves[s].path) <
			    0) {
				grove_alt_choice_release(&ch);
				return grove_error_set(err, -ENOMEM, "out of memory");
			}
		if (grove_alt_add_choice(w, &ch) < 0) {
			grove_alt_choice_release(&ch);
			return grove_error_set(err, -ENOMEM, "out of memory");
		}
		if (!w->manual) {
			new_choice = w->choices[grove_alt_best(w, cur)].path;
		} else {
			msg(c, GROVE_ALT_VERBOSE,
			    "automatic updates of %s/%s are disabled; leaving it alone", c->altdir,
			    w->name);
			msg(c, GROVE_ALT_VERBOSE,
			    "to return to automatic updates use 'update-alternatives --auto %s'",
			    w->name);
		}
		break;
	}
	default:
		return grove_error_set(err, -GROVE_E_INTERNAL, "bad action");
	}
	/* --set-selections sets the mode first, then looks at the current link. */
	if (q->selection)
		select_mode(c, g, w, cur);
	/* update */
	if (w->n_choices == 0) {
		msg(c, GROVE_ALT_LOG, "link group %s fully removed", w->name);
		return remove_files(c, w, err);
	}
	if (new_choice && (!cur || strcmp(new_choice, cur) != 0)) {
		msg(c, GROVE_ALT_LOG, "link group %s updated to point to %s", w->name, new_choice);
		msg(c, GROVE_ALT_INFO, "using %s to provide %s (%s) in %s", new_choice, w->link,
		    w->name, w->manual ? "manual mode" : "auto mode");
		return prepare_install(c, w, new_choice, err);
	}
	if ((r = is_broken(c, w, &broken, err)) < 0)
		return r;
	if (broken == SLAVES_CHANGED) {
		msg(c, GROVE_ALT_LOG, "link group %s updated with changed slaves", w->name);
		msg(c, GROVE_ALT_INFO,
		    "updating alternative %s because link group %s has changed slave links",
		    cur ? cur : "(null)", w->name);
	} else if (broken) {
		msg(c, GROVE_ALT_LOG, "auto-repair link group %s", w->name);
		msg(c, GROVE_ALT_WARNING,
		    "forcing reinstallation of alternative %s because link group %s is broken",
		    cur ? cur : "(null)", w->name);
	}
	if (broken) {
		const char *choice = cur;

		if (cur && grove_alt_find_choice(w, cur) < 0) {
			choice = w->choices[grove_alt_best(w, cur)].path;
			msg(c, GROVE_ALT_WARNING,
			    "current alternative %s is unknown, switching to %s for link group %s",
			    cur, choice, w->name);
			set_mode(c, w, true, false);
		}
		if (choice)
			return prepare_install(c, w, choice, err);
	}
	return 0;
}

static void
recs_free(struct ctx *c)
{
	for (size_t i = 0; i < c->n_recs; i++) {
		free(c->recs[i].abs);
		free(c->recs[i].rel);
		free(c->recs[i].orig_text);
		free(c->recs[i].want_text);
	}
	free(c->recs);
	c->recs = NULL;
	c->n_recs = 0;
}

/* The group's change, for the session to log with the links and save with their commit (nothing
 * when the saved text stays the same). before is the saved text (NULL: no group). */
static int
group_change(struct grove_session *s, int64_t dir_id, char *before, struct grove_alt_group *w,
	     struct grove_error *err)
{
	struct grove_journal_alt_change *ch;
	cleanup_free char *after = NULL;

	grove_alt_group_normalize(w);
	if (w->n_choices && grove_alt_group_format(w, &after) < 0)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if ((!before && !after) || (before && after && strcmp(before, after) == 0))
		return 0;
	ch = calloc(1, sizeof(*ch));
	if (!ch || !(ch->name = strdup(w->name)) || (before && !(ch->before = strdup(before)))) {
		if (ch)
			free(ch->name);
		free(ch);
		return grove_error_set(err, -ENOMEM, "out of memory");
	}
	ch->dir_id = dir_id;
	ch->after = steal_ptr(after);
	grove_journal_alt_changes_free(s->alt, s->n_alt);
	s->alt = ch;
	s->n_alt = 1;
	return 0;
}

/* ---- --log FILE ---- */

/* Opens req->log for appending beneath its held folder: the fd, 0 when there is no log or it
 * may not be written (EACCES: update-alternatives then logs nothing either), or an error. */
static int
log_open(const struct grove_alt_request *req, const struct grove_root *inst,
	 struct grove_error *err)
{
	cleanup_free char *dir = NULL;
	struct grove_root root = { .fd = -1 };
	const char *base;
	char *slash;
	int fd, r;

	if (!req->log)
		return 0;
	/* Inside --root the log is too, as update-alternatives has it: opened
	 * beneath the held root, following no symlink on the way. */
	if (req->root) {
		cleanup_free char *rel = grove_path_canon(req->log);
		char *p = rel;

		while (p && *p == '/')
			p++;
		if (!rel)
			return grove_error_set(err, -ENOMEM, "out of memory");
		if (!*p || !rel_ok(p))
			return grove_error_set(err, -EINVAL,
					       "cannot append to '%s': not a file "
					       "inside '%s'",
					       req->log, req->root);
		slash = strrchr(p, '/');
		if (slash)
			*slash = '\0';
		r = slash ? grove_root_open_beneath(&root, inst, p, true, 0755, err) : 0;
		if (r >= 0)
			r = fd = grove_fs_open_file_at(slash ? root.fd : inst->fd,
						       slash ? slash + 1 : p,
						       O_WRONLY | O_APPEND | O_CREAT, 0644, err);
		grove_root_release(&root);
		if (r == -EACCES) {
			grove_error_clear(err);
			return 0;
		}
		if (r < 0)
			return grove_error_set(err, r, "cannot append to '%s': %s", req->log,
					       err->msg);
		return r;
	}
	dir = strdup(req->log);
	if (!dir)
		return grove_error_set(err, -ENOMEM, "out of memory");
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		base = slash + 1;
	} else {
		base = dir;
	}
	/* Its folder is made when missing, as update-alternatives does. */
	r = slash && *dir ? grove_fs_make_dirs(dir, 0755, err) : 0;
	if (r >= 0)
		r = grove_root_open(&root, slash ? (*dir ? dir : "/") : ".", err);
	if (r >= 0) {
		fd = grove_fs_open_file_at(root.fd, base, O_WRONLY | O_APPEND | O_CREAT, 0644, err);
		r = fd;
	}
	grove_root_release(&root);
	if (r == -EACCES) {
		grove_error_clear(err);
		return 0;
	}
	if (r < 0)
		return grove_error_set(err, r, "cannot append to '%s': %s", req->log, strerror(-r));
	return r;
}

static int
log_write(int fd, const struct grove_alt_request *req, const char *const *lines, size_t n,
	  struct grove_error *err)
{
	char stamp[64];
	time_t now = time(NULL);
	struct tm tm;

	if (!localtime_r(&now, &tm) || !strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm))
		return grove_error_set(err, -EINVAL, "cannot get local time to log into '%s'",
				       req->log);
	for (size_t i = 0; i < n; i++) {
		cleanup_free char *line = grove_strdupf("grove alt %s: %s\n", stamp, lines[i]);
		size_t len, off = 0;

		if (!line)
			return grove_error_set(err, -ENOMEM, "out of memory");
		len = strlen(line);
		while (off < len) {
			ssize_t w = write(fd, line + off, len - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return grove_error_set(err, -errno, "cannot append to '%s': %s",
						       req->log, strerror(errno));
			off += (size_t)w;
		}
	}
	return 0;
}

int
grove_alt_log(const struct grove_alt_request *req, const char *const *lines, size_t n,
	      struct grove_error *err)
{
	struct grove_root inst = { .fd = -1 };
	int fd, r;

	if (req->root && grove_root_open(&inst, req->root, err) < 0)
		return grove_error_prefix(err, "cannot append to '%s'", req->log);
	fd = log_open(req, &inst, err);
	grove_root_release(&inst);
	if (fd <= 0)
		return fd;
	r = log_write(fd, req, lines, n, err);
	grove_fd_close(fd);
	return r;
}

/* The LOG messages of res, in order, into the log. */
static int
log_flush(int fd, const struct grove_alt_request *req, const struct grove_alt_result *res,
	  struct grove_error *err)
{
	for (size_t i = 0; i < res->n_msgs; i++) {
		const char *line = res->msgs[i].text;
		int r;

		if (res->msgs[i].kind != GROVE_ALT_LOG)
			continue;
		r = log_write(fd, req, &line, 1, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int
get_selections(struct ctx *c, const struct grove_alt_group *all, size_t n, struct grove_error *err)
{
	struct grove_alt_result *res = c->res;

	res->sel = calloc(n ? n : 1, sizeof(*res->sel));
	if (!res->sel)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct grove_alt_selection *sel = &res->sel[res->n_sel++];

		sel->manual = all[i].manual;
		if (!(sel->name = strdup(all[i].name)))
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	/* The current values in order; the first that cannot be read ends the list there,
	 * as update-alternatives stops printing at it. */
	for (res->n_sel_read = 0; res->n_sel_read < n; res->n_sel_read++) {
		int r = current_of(c, all[res->n_sel_read].name, &res->sel[res->n_sel_read].current,
				   err);

		if (r < 0)
			return r;
	}
	return 0;
}

/* Appends the change of group name (before: its saved text, or NULL) to text after. */
static int
add_change(struct grove_session *s, int64_t dir_id, const char *name, char *before, char *after,
	   struct grove_error *err)
{
	struct grove_journal_alt_change *nv = realloc(s->alt, (s->n_alt + 1) * sizeof(*nv));

	if (!nv)
		return grove_error_set(err, -ENOMEM, "out of memory");
	s->alt = nv;
	memset(&nv[s->n_alt], 0, sizeof(nv[0]));
	nv[s->n_alt].dir_id = dir_id;
	if (!(nv[s->n_alt].name = strdup(name)) ||
	    (before && !(nv[s->n_alt].before = strdup(before))) ||
	    (after && !(nv[s->n_alt].after = strdup(after)))) {
		free(nv[s->n_alt].name);
		free(nv[s->n_alt].before);
		return grove_error_set(err, -ENOMEM, "out of memory");
	}
	s->n_alt++;
	return 0;
}

/*
 * grove alt import: every file of the admindir (update-alternatives' format)
 * becomes the saved group of that name, in one transaction without ops (so
 * `grove undo` forgets the import). Nothing on disk changes. A corrupt file
 * stops the import before anything is saved.
 */
static int
import_groups(struct ctx *c, struct grove_session *s, const struct grove_root *adm, int64_t dir_id,
	      const struct grove_alt_group *all, size_t n, struct grove_error *err)
{
	struct grove_dirent *ents = NULL;
	size_t n_ents = 0;
	int r = grove_fs_list(adm->fd, &ents, &n_ents, err);

	for (size_t i = 0; i < n_ents && r >= 0; i++) {
		const char *name = ents[i].name;
		size_t l = strlen(name);
		cleanup_free char *text = NULL, *src = NULL, *before = NULL, *after = NULL;
		struct grove_alt_group g = { 0 };
		size_t len = 0;

		/* update-alternatives skips its own temporary files. */
		if (l > 9 && !strcmp(name + l - 9, ".dpkg-tmp"))
			continue;
		if (ents[i].type != GROVE_FT_REG || !grove_alt_name_ok(name))
			continue;
		r = grove_fs_read_file_at(adm->fd, name, 16 << 20, &text, &len, err);
		if (r < 0)
			break;
		if (len == 0)
			continue; /* an empty file is no group for update-alternatives either */
		src = grove_strdupf("%s/%s", adm->path, name);
		if (!src) {
			r = grove_error_set(err, -ENOMEM, "out of memory");
			break;
		}
		r = grove_alt_group_parse(name, text, len, src, &g, err);
		if (r < 0)
			break;
		grove_alt_group_normalize(&g);
		if (g.n_choices && grove_alt_group_format(&g, &after) < 0)
			r = grove_error_set(err, -ENOMEM, "out of memory");
		grove_alt_group_release(&g);
		if (r < 0)
			break;
		for (size_t k = 0; k < n; k++)
			if (!strcmp(all[k].name, name) &&
			    grove_alt_group_format(&all[k], &before) < 0)
				r = grove_error_set(err, -ENOMEM, "out of memory");
		if (r < 0)
			break;
		c->res->n_imported++;
		if ((!before && !after) || (before && after && !strcmp(before, after)))
			continue;
		r = add_change(s, dir_id, name, before, after, err);
	}
	grove_dirents_free(ents, n_ents);
	return r;
}

int
grove_alt_run(const struct grove_alt_request *req, struct grove_alt_result *res,
	      struct grove_error *err)
{
	struct ctx c = { .req = req, .res = res, .inst = { .fd = -1 } };
	struct grove_root adm = { .fd = -1 };
	struct grove_session s = { .lock_fd = -1, .state = { .fd = -1 } };
	struct grove_session_opts so = { 0 };
	struct grove_alt_group *all = NULL, w = { 0 }, *g;
	struct grove_plan plan;
	struct grove_error lerr = { 0 };
	bool readonly = req->action == GROVE_ALT_QUERY || req->action == GROVE_ALT_DISPLAY ||
			req->action == GROVE_ALT_LIST || req->action == GROVE_ALT_GET_SELECTIONS;
	bool session = false, save = false;
	cleanup_free char *before = NULL, *adm_rel = NULL;
	size_t n = 0, len;
	int64_t dir_id = 0;
	int lock_fd = -1, log_fd = 0;
	int r;

	grove_plan_init(&plan);
	len = strlen(req->altdir);
	while (len > 1 && req->altdir[len - 1] == '/')
		len--;
	c.altdir = strndup(req->altdir, len);
	if (!c.altdir) {
		r = grove_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	r = grove_root_open(&c.inst, req->root ? req->root : req->instdir, err);
	if (r < 0)
		goto out;
	/* The admindir only names the state; holding it gives its canonical path.
	 * Inside --root it is opened beneath the held root, following no symlink
	 * (an image's /var may lead anywhere on the host). */
	adm_rel = req->root ? under_root(req->root, req->admindir) : NULL;
	if (adm_rel) {
		r = grove_root_open_beneath(&adm, &c.inst, adm_rel, true, 0755, err);
	} else {
		r = grove_fs_make_dirs(req->admindir, 0755, err);
		if (r >= 0)
			r = grove_root_open(&adm, req->admindir, err);
	}
	if (r < 0) {
		grove_error_prefix(err, "cannot create administrative directory '%s'",
				   req->admindir);
		goto out;
	}
	/* One writer per admindir, first: update-alternatives has no lock, so two
	 * of its runs can interleave their reads and writes of a group. */
	if (!readonly) {
		lock_fd = grove_lock_dir(&adm, req->wait_seconds, "administrative directory", err);
		if (lock_fd < 0) {
			r = lock_fd;
			goto out;
		}
	}
	so.state_opt = req->state_opt;
	so.wait_seconds = req->wait_seconds;
	so.no_lock = readonly;
	so.read_only = readonly;
	r = grove_session_open(&s, &c.inst, &so, err);
	if (r < 0)
		goto out;
	session = true;
	if (!readonly) {
		r = grove_session_recover(&s, NULL, false, NULL, err);
		if (r < 0)
			goto out;
	}
	r = grove_journal_alt_dir(s.journal, adm.real ? adm.real : adm.path, c.altdir, &dir_id,
				  err);
	if (r >= 0)
		r = grove_journal_alt_load(s.journal, dir_id, &all, &n, err);
	if (r < 0)
		goto out;
	if (req->action == GROVE_ALT_GET_SELECTIONS) {
		r = get_selections(&c, all, n, err);
		goto out;
	}
	if (req->action == GROVE_ALT_IMPORT) {
		r = import_groups(&c, &s, &adm, dir_id, all, n, err);
		if (r >= 0)
			r = grove_session_apply(&s, &plan, NULL, req->command_line, NULL, 0,
						&res->txn, err);
		goto out;
	}
	g = find_group(all, n, req->name);
	if (g && grove_alt_group_format(g, &before) < 0) {
		r = grove_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (readonly) {
		if (g)
			prune(&c, g);
		cleanup_free char *fn = alt_path(&c, req->name);

		if (!g) {
			r = grove_error_set(err, -GROVE_E_BADINPUT, "no alternatives for %s",
					    req->name);
			goto out;
		}
		if (!fn || grove_alt_group_copy(&res->group, g) < 0) {
			r = grove_error_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		r = current_of(&c, req->name, &res->current, err);
		if (r < 0 && req->action == GROVE_ALT_LIST) {
			grove_error_clear(err);
			r = 0;
		} else if (r < 0) {
			res->current_failed = true;
		}
		goto out;
	}
	log_fd = log_open(req, &c.inst, err);
	if (log_fd < 0) {
		r = log_fd;
		goto out;
	}
	r = decide(&c, all, n, &w, &save, err);
	if (r >= 0 && c.oom)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	if (r >= 0)
		r = build_plan(&c, &plan, err);
	if (r >= 0 && save)
		r = group_change(&s, dir_id, before, &w, err);
	if (r >= 0)
		r = grove_session_apply(&s, &plan, NULL, req->command_line, NULL, 0, &res->txn,
					err);
out:
	if (r >= 0 && c.oom)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	/* The log says what was attempted, also when it failed. */
	if (log_fd > 0) {
		if (log_flush(log_fd, req, res, &lerr) < 0 && r >= 0)
			r = grove_error_set(err, lerr.code, "%s", lerr.msg);
		grove_fd_close(log_fd);
	}
	if (session)
		grove_session_close(&s);
	if (lock_fd >= 0)
		grove_fd_close(lock_fd);
	grove_plan_release(&plan);
	grove_alt_group_release(&w);
	grove_alt_groups_free(all, n);
	recs_free(&c);
	free(c.updated);
	grove_root_release(&adm);
	grove_root_release(&c.inst);
	free(c.altdir);
	return r;
}
