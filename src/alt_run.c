/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove alt: update-alternatives' decisions on grove's engine, one logged transaction per command.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/alt.h"
#include "grove/fs.h"
#include "grove/journal.h"
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
};

void
grove_alt_result_release(struct grove_alt_result *res)
{
	for (size_t i = 0; i < res->n_msgs; i++)
		free(res->msgs[i].text);
	free(res->msgs);
	grove_alt_group_release(&res->group);
	free(res->current);
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
static const char *
rel_of(const struct ctx *c, const char *abs)
{
	const char *prefixes[2] = { c->inst.real, c->inst.path };

	if (abs[0] != '/')
		return NULL;
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
		if (!*abs || strstr(abs, "/../") || !strncmp(abs, "../", 3) ||
		    (strlen(abs) >= 3 && !strcmp(abs + strlen(abs) - 3, "/..")) ||
		    !strcmp(abs, ".."))
			return NULL;
		return abs;
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

static int
is_broken(struct ctx *c, const struct grove_alt_group *g, bool *ret, struct grove_error *err)
{
	cleanup_free char *fn = alt_path(c, g->name);
	cleanup_free char *lnk = NULL, *cur = NULL;
	const struct grove_alt_choice *fs;
	ssize_t i;
	int r;

	*ret = true;
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
		*ret = false;
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
			if (!a || strcmp(a, sfn) != 0 || !b || strcmp(b, file) != 0)
				return 0;
		} else {
			if ((r = state(c, sl->path, &t, &text, err)) < 0)
				return r;
			if (t != GROVE_FT_NONE)
				return 0;
			if ((r = state(c, sfn, &t, &text, err)) < 0)
				return r;
			if (t != GROVE_FT_NONE)
				return 0;
		}
	}
	*ret = false;
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
		return grove_error_set(err, -GROVE_E_BADINPUT, "alternative path %s doesn't exist",
				       q->path);
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
			msg(c, GROVE_ALT_INFO, "renaming %s link from %s to %s", g->name, g->link,
			    q->link);
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
				if ((r = want(c, oldc, NULL, err)) < 0)
					return r;
				if (new_file && file_exists(c, new_file)) {
					msg(c, GROVE_ALT_INFO,
					    "renaming %s slave link from %s to %s", name, oldc,
					    nlink);
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

static int
build_plan(struct ctx *c, struct grove_plan *plan, struct grove_error *err)
{
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
	bool broken;
	int r;

	*ret_save = false;
	if (!fn)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (q->action == GROVE_ALT_INSTALL) {
		r = check_install(c, all, n, err);
		if (r < 0)
			return r;
	}
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
	if ((r = current_of(c, q->name, &cur, err)) < 0)
		return r;
	*ret_save = true;
	/* select_mode: a current link that is not a choice means dangling (auto) or changed by
	 * hand (manual); no link at all means auto. */
	if (g && cur && grove_alt_find_choice(w, cur) < 0) {
		if (!file_exists(c, cur)) {
			msg(c, GROVE_ALT_WARNING,
			    "%s/%s is dangling; it will be updated with best choice", c->altdir,
			    w->name);
			w->manual = false;
		} else if (!w->manual) {
			msg(c, GROVE_ALT_WARNING,
			    "%s/%s has been changed (manually or by a script); switching to "
			    "manual updates only",
			    c->altdir, w->name);
			w->manual = true;
		}
	} else if (g && !cur) {
		msg(c, GROVE_ALT_VERBOSE, "setting up automatic selection of %s", w->name);
		w->manual = false;
	}
	switch (q->action) {
	case GROVE_ALT_SET:
		if (grove_alt_find_choice(w, q->path) < 0)
			return grove_error_set(err, -GROVE_E_BADINPUT,
					       "alternative %s for %s not registered; not setting",
					       q->path, w->name);
		new_choice = q->path;
		w->manual = true;
		break;
	case GROVE_ALT_AUTO:
		w->manual = false;
		if (w->n_choices == 0)
			msg(c, GROVE_ALT_INFO, "There is no program which provides %s.", w->name);
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
				w->manual = false;
			}
			if (w->n_choices)
				new_choice = w->choices[grove_alt_best(w, cur)].path;
		}
		break;
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
	/* update */
	if (w->n_choices == 0)
		return remove_files(c, w, err);
	if (new_choice && (!cur || strcmp(new_choice, cur) != 0)) {
		msg(c, GROVE_ALT_INFO, "using %s to provide %s (%s) in %s", new_choice, w->link,
		    w->name, w->manual ? "manual mode" : "auto mode");
		return prepare_install(c, w, new_choice, err);
	}
	if ((r = is_broken(c, w, &broken, err)) < 0)
		return r;
	if (broken) {
		const char *choice = cur;

		msg(c, GROVE_ALT_WARNING,
		    "forcing reinstallation of alternative %s because link group %s is broken",
		    cur ? cur : "(null)", w->name);
		if (cur && grove_alt_find_choice(w, cur) < 0) {
			choice = w->choices[grove_alt_best(w, cur)].path;
			msg(c, GROVE_ALT_WARNING,
			    "current alternative %s is unknown, switching to %s for link group %s",
			    cur, choice, w->name);
			w->manual = false;
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
 * when the saved text stays the same). */
static int
group_change(struct grove_session *s, int64_t dir_id, const struct grove_alt_group *old,
	     struct grove_alt_group *w, struct grove_error *err)
{
	struct grove_journal_alt_change *ch;
	cleanup_free char *before = NULL, *after = NULL;

	grove_alt_group_normalize(w);
	if ((old && grove_alt_group_format(old, &before) < 0) ||
	    (w->n_choices && grove_alt_group_format(w, &after) < 0))
		return grove_error_set(err, -ENOMEM, "out of memory");
	if ((!before && !after) || (before && after && strcmp(before, after) == 0))
		return 0;
	ch = calloc(1, sizeof(*ch));
	if (!ch || !(ch->name = strdup(w->name))) {
		free(ch);
		return grove_error_set(err, -ENOMEM, "out of memory");
	}
	ch->dir_id = dir_id;
	ch->before = steal_ptr(before);
	ch->after = steal_ptr(after);
	grove_journal_alt_changes_free(s->alt, s->n_alt);
	s->alt = ch;
	s->n_alt = 1;
	return 0;
}

int
grove_alt_run(const struct grove_alt_request *req, struct grove_alt_result *res,
	      struct grove_error *err)
{
	struct ctx c = { .req = req, .res = res, .inst = { .fd = -1 } };
	struct grove_root adm = { .fd = -1 };
	struct grove_session s = { .lock_fd = -1, .state = { .fd = -1 } };
	struct grove_session_opts so = { 0 };
	struct grove_alt_group *all = NULL, w = { 0 };
	struct grove_plan plan;
	bool readonly = req->action == GROVE_ALT_QUERY || req->action == GROVE_ALT_DISPLAY ||
			req->action == GROVE_ALT_LIST;
	bool session = false, save = false;
	size_t n = 0, len;
	int64_t dir_id = 0;
	int lock_fd = -1;
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
	r = grove_root_open(&c.inst, req->instdir, err);
	if (r < 0)
		goto out;
	/* The admindir only names the state; holding it gives its canonical path. */
	r = grove_fs_make_dirs(req->admindir, 0755, err);
	if (r >= 0)
		r = grove_root_open(&adm, req->admindir, err);
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
	if (readonly) {
		struct grove_alt_group *g = find_group(all, n, req->name);
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
	r = decide(&c, all, n, &w, &save, err);
	if (r >= 0 && c.oom)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	if (r >= 0)
		r = build_plan(&c, &plan, err);
	if (r >= 0 && save)
		r = group_change(&s, dir_id, find_group(all, n, req->name), &w, err);
	if (r >= 0)
		r = grove_session_apply(&s, &plan, NULL, req->command_line, NULL, 0, &res->txn,
					err);
out:
	if (r >= 0 && c.oom)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	if (session)
		grove_session_close(&s);
	if (lock_fd >= 0)
		grove_fd_close(lock_fd);
	grove_plan_release(&plan);
	grove_alt_group_release(&w);
	grove_alt_groups_free(all, n);
	recs_free(&c);
	grove_root_release(&adm);
	grove_root_release(&c.inst);
	free(c.altdir);
	return r;
}
