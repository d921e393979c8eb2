/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove alt: the altdir and the installation root as a command sees them (what each link is
 * and should become) and the plan that makes them so. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alt_int.h"
#include "grove/alt.h"
#include "grove/fs.h"
#include "grove/journal.h"
#include "grove/path.h"
#include "grove/plan.h"
#include "grove/session.h"
#include "base/util.h"

#include "banned.h" /* last */

void
grove_alt_disk_mark_updated(struct grove_alt_ctx *c, const char *name)
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
is_updated(const struct grove_alt_ctx *c, const char *name)
{
	for (size_t i = 0; i < c->n_updated; i++)
		if (strcmp(c->updated[i], name) == 0)
			return true;
	return false;
}

/* The path beneath the installation root for an absolute path, or NULL when it lies outside. */
/* A relative path without ".." components. */
bool
grove_alt_disk_rel_ok(const char *rel)
{
	size_t l = strlen(rel);

	return *rel && !strstr(rel, "/../") && strncmp(rel, "../", 3) != 0 &&
	       !(l >= 3 && !strcmp(rel + l - 3, "/..")) && strcmp(rel, "..") != 0;
}

/* path's part beneath root (both as the user gave them), canonical and without "..", or NULL when
 * path is not beneath root; malloc'd. */
char *
grove_alt_disk_under_root(const char *root, const char *path)
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
	if (rel && (!*rel || !grove_alt_disk_rel_ok(rel))) {
		free(rel);
		return NULL;
	}
	return rel;
}

/* What update-alternatives puts before a path in some messages: its --root. */
const char *
grove_alt_disk_rootp(const struct grove_alt_ctx *c)
{
	return c->req->root ? c->req->root : "";
}

static const char *
rel_of(const struct grove_alt_ctx *c, const char *abs)
{
	const char *prefixes[2] = { c->inst.real, c->inst.path };

	if (abs[0] != '/')
		return NULL;
	if (c->req->root) {
		/* --root: every path is taken inside the root, as in a chroot. */
		while (*abs == '/')
			abs++;
		return grove_alt_disk_rel_ok(abs) ? abs : NULL;
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
		return grove_alt_disk_rel_ok(abs) ? abs : NULL;
	}
	return NULL;
}

int
grove_alt_disk_set_altdir(struct grove_alt_ctx *c, const char *altdir)
{
	size_t len = strlen(altdir);

	while (len > 1 && altdir[len - 1] == '/')
		len--;
	c->altdir = strndup(altdir, len);
	return c->altdir ? 0 : -ENOMEM;
}

int
grove_alt_disk_place_altdir(struct grove_alt_ctx *c, struct grove_error *err)
{
	struct grove_root cwd = { .fd = -1 };
	const char *in;
	size_t l;
	int r;

	if (c->altdir[0] == '/')
		return 0;
	/* update-alternatives takes a relative altdir against the current folder (its links'
	 * folders and the generic links' text "altdir/name" alike); grove holds that folder once,
	 * and the links are still made beneath the installation root. */
	r = grove_root_open(&cwd, ".", err);
	if (r < 0)
		return grove_error_prefix(err, "alternatives directory '%s'", c->altdir);
	in = cwd.real;
	if (c->req->root) {
		/* --root: the current folder's place inside the root, if it is inside. */
		l = c->inst.real ? strlen(c->inst.real) : 0;
		while (l > 0 && c->inst.real[l - 1] == '/')
			l--;
		in = c->inst.real && !strncmp(in, c->inst.real, l) && (!in[l] || in[l] == '/')
			     ? in + l
			     : NULL;
	}
	if (in) {
		cleanup_free char *base = strdup(in), *rel = grove_path_canon(c->altdir);
		const char *p = rel;
		char *slash;

		/* Leading ".." from the current folder's real path (the kernel's walk): one
		 * folder up each, never above the root. */
		while (p && base && (!strcmp(p, "..") || !strncmp(p, "../", 3))) {
			p += p[2] ? 3 : 2;
			slash = strrchr(base, '/');
			if (slash)
				*slash = '\0';
		}
		if (p && base) {
			cleanup_free char *j = grove_strdupf("%s/%s", base, p);

			c->altdir_abs = j ? grove_path_canon(j) : NULL;
		}
		if (!c->altdir_abs)
			r = grove_error_set(err, -ENOMEM, "out of memory");
	}
	grove_root_release(&cwd);
	return r < 0 ? r : 0;
}

/* Where abs is found (absolute, as rel_of takes it): a path in a relative altdir is at the
 * current folder's place; *owned frees it. */
static const char *
placed(const struct grove_alt_ctx *c, const char *abs, char **owned)
{
	size_t l = strlen(c->altdir);

	*owned = NULL;
	if (abs[0] == '/' || !c->altdir_abs)
		return abs;
	if (!strcmp(abs, c->altdir))
		return c->altdir_abs;
	if (strncmp(abs, c->altdir, l) != 0 || abs[l] != '/')
		return abs;
	*owned = grove_strdupf("%s%s", c->altdir_abs, abs + l);
	return *owned ? *owned : abs;
}

/* What name in the folder dfd is: a link (with its text), nothing, or something else (REG). */
static int
disk_state_at(int dfd, const char *base, enum grove_ftype *ret_type, char **ret_text,
	      struct grove_error *err)
{
	struct grove_stat st;
	int r = grove_fs_stat_at(dfd, base, &st, err);

	if (r < 0)
		return r;
	*ret_type = st.type == GROVE_FT_LINK || st.type == GROVE_FT_NONE ? st.type : GROVE_FT_REG;
	if (st.type == GROVE_FT_LINK)
		return grove_fs_readlink_at(dfd, base, ret_text, err);
	return 0;
}

/* What is at the physical path rel on disk now (no symlink followed): ENOENT and a missing
 * parent are answers (NONE). */
static int
disk_state(struct grove_alt_ctx *c, const char *rel, enum grove_ftype *ret_type, char **ret_text,
	   struct grove_error *err)
{
	cleanup_free char *parent = strdup(rel);
	const char *base;
	char *slash;
	cleanup_fd int dfd = -1;

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
	return disk_state_at(dfd, base, ret_type, ret_text, err);
}

const char *
grove_alt_disk_chase_root(const struct grove_alt_request *req, const struct grove_root *inst)
{
	return req->root ? NULL : inst->real ? inst->real : inst->path;
}

/*
 * Where the link rel (beneath the root, as written in the group) lies with no symlink on the
 * way: its folder is walked as update-alternatives' lookup walks it, following the links in the
 * root that root or the root's owner made (merged /usr's bin -> usr/bin), never out of the root.
 * The plan, the log and every replay then name the physical path, which they reach with
 * RESOLVE_NO_SYMLINKS; *ret_dfd is the folder when it exists (else -1), held by c->dirs.
 */
static int
phys_of(struct grove_alt_ctx *c, const char *abs, const char *rel, char **ret_phys, int *ret_dfd,
	struct grove_error *err)
{
	cleanup_free char *parent = strdup(rel);
	char *slash = parent ? strrchr(parent, '/') : NULL;
	const char *base = slash ? rel + (slash - parent) + 1 : rel;
	const struct grove_alt_dir *d = NULL;
	char *phys;

	if (!parent)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (slash)
		*slash = '\0';
	else
		*parent = '\0';
	for (size_t i = 0; i < c->n_dirs && !d; i++)
		if (!strcmp(c->dirs[i].rel, parent))
			d = &c->dirs[i];
	if (!d) {
		struct grove_alt_dir *nv = realloc(c->dirs, (c->n_dirs + 1) * sizeof(*nv));
		struct grove_chase ch;
		int r;

		if (!nv)
			return grove_error_set(err, -ENOMEM, "out of memory");
		c->dirs = nv;
		r = grove_fs_chase_dir(c->inst.fd, grove_alt_disk_chase_root(c->req, &c->inst),
				       parent, false, 0, &ch, err);
		if (r < 0)
			return grove_error_prefix(err, "link '%s'", abs);
		nv[c->n_dirs].rel = steal_ptr(parent);
		nv[c->n_dirs].phys = ch.phys;
		nv[c->n_dirs].fd = ch.fd;
		d = &nv[c->n_dirs++];
	}
	if (!d->phys)
		phys = strdup(rel); /* no place: the executor's lookup fails as it must */
	else if (!*d->phys)
		phys = strdup(base);
	else
		phys = grove_strdupf("%s/%s", d->phys, base);
	if (!phys)
		return grove_error_set(err, -ENOMEM, "out of memory");
	*ret_phys = phys;
	*ret_dfd = d->fd;
	return 0;
}

/* The record for abs, read from disk the first time; two paths of one file share one. */
static int
rec_get(struct grove_alt_ctx *c, const char *abs, struct grove_alt_rec **ret,
	struct grove_error *err)
{
	const char *rel, *base;
	struct grove_alt_rec *nv, *r;
	cleanup_free char *phys = NULL, *where = NULL;
	int dfd = -1;
	size_t same = 0;
	int rc;

	for (size_t i = 0; i < c->n_recs; i++) {
		if (strcmp(c->recs[i].abs, abs) == 0) {
			*ret = &c->recs[c->recs[i].same ? c->recs[i].same - 1 : i];
			return 0;
		}
	}
	rel = rel_of(c, placed(c, abs, &where));
	if (!rel)
		return grove_error_set(err, -GROVE_E_ESCAPE,
				       "'%s' is outside the installation directory '%s'", abs,
				       c->inst.path);
	rc = phys_of(c, abs, rel, &phys, &dfd, err);
	if (rc < 0)
		return rc;
	if (!phys)
		return grove_error_set(err, -GROVE_E_INTERNAL, "link '%s': no path", abs);
	for (size_t i = 0; i < c->n_recs && !same; i++)
		if (!c->recs[i].same && strcmp(c->recs[i].rel, phys) == 0)
			same = i + 1;
	nv = realloc(c->recs, (c->n_recs + 1) * sizeof(*nv));
	if (!nv)
		return grove_error_set(err, -ENOMEM, "out of memory");
	c->recs = nv;
	r = &nv[c->n_recs];
	memset(r, 0, sizeof(*r));
	r->abs = strdup(abs);
	r->rel = steal_ptr(phys);
	r->same = same;
	r->nodir = !same && dfd < 0;
	if (!r->abs) {
		free(r->rel);
		return grove_error_set(err, -ENOMEM, "out of memory");
	}
	base = strrchr(r->rel, '/') ? strrchr(r->rel, '/') + 1 : r->rel;
	rc = same || dfd < 0 ? 0 : disk_state_at(dfd, base, &r->orig, &r->orig_text, err);
	if (rc < 0) {
		free(r->abs);
		free(r->rel);
		return rc;
	}
	r->want = r->orig;
	if (r->orig_text && !(r->want_text = strdup(r->orig_text)))
		c->oom = true;
	c->n_recs++;
	*ret = same ? &c->recs[same - 1] : r;
	return 0;
}

void
grove_alt_disk_release(struct grove_alt_ctx *c)
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
	for (size_t i = 0; i < c->n_dirs; i++) {
		free(c->dirs[i].rel);
		free(c->dirs[i].phys);
		grove_fd_close(c->dirs[i].fd);
	}
	free(c->dirs);
	c->dirs = NULL;
	c->n_dirs = 0;
	free(c->altdir_abs);
	c->altdir_abs = NULL;
}

/* The pending state of abs: its type and link text (valid until the next rec_get). */
int
grove_alt_disk_state(struct grove_alt_ctx *c, const char *abs, enum grove_ftype *type,
		     const char **text, struct grove_error *err)
{
	struct grove_alt_rec *r;
	int rc = rec_get(c, abs, &r, err);

	if (rc < 0)
		return rc;
	*type = r->want;
	*text = r->want_text;
	return 0;
}

/* Wants abs to be a link to text (NULL: absent). */
int
grove_alt_disk_want(struct grove_alt_ctx *c, const char *abs, const char *text,
		    struct grove_error *err)
{
	struct grove_alt_rec *r;
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

char *
grove_alt_disk_path(const struct grove_alt_ctx *c, const char *name)
{
	return grove_strdupf("%s/%s", c->altdir, name);
}

/* Whether file exists, following links, beneath the installation root (stat(2) as
 * update-alternatives does it). A path outside the root counts as missing. */
bool
grove_alt_disk_file_exists(struct grove_alt_ctx *c, const char *file)
{
	struct grove_error e = { 0 };
	struct grove_stat st;
	const char *rel = file ? rel_of(c, file) : NULL;
	int r;

	if (!rel)
		return false;
	/* A chroot's view (--root, or an instdir that is /): links are followed as the system in
	 * the root will follow them, absolute ones from its /. */
	if (!grove_alt_disk_chase_root(c->req, &c->inst) ||
	    !strcmp(grove_alt_disk_chase_root(c->req, &c->inst), "/"))
		r = grove_fs_stat_in_root(c->inst.fd, rel, &st, &e);
	else
		r = grove_fs_stat_beneath_follow(c->inst.fd, rel, &st, &e);
	/* A link leaving the root cannot be checked: it exists as far as we can tell. */
	if (r == -EXDEV)
		return true;
	return r >= 0 && st.type != GROVE_FT_NONE;
}

/* update-alternatives' prepare_install_single: altdir/name -> file, link -> altdir/name. */
static int
install_single(struct grove_alt_ctx *c, const char *name, const char *link, const char *file,
	       struct grove_error *err)
{
	cleanup_free char *fn = grove_alt_disk_path(c, name);
	enum grove_ftype t;
	const char *text;
	int r;

	if (!fn)
		return grove_error_set(err, -ENOMEM, "out of memory");
	r = grove_alt_disk_state(c, fn, &t, &text, err);
	if (r < 0)
		return r;
	if (t == GROVE_FT_REG)
		/* update-alternatives renames its link over whatever is there; grove
		 * never overwrites what is not a link. */
		grove_alt_run_msg(c, GROVE_ALT_WARNING, "%s %s with a link",
				  grove_alt_verb(c, "not replacing", "would not replace"), fn);
	else if ((r = grove_alt_disk_want(c, fn, file, err)) < 0)
		return r;
	r = grove_alt_disk_state(c, link, &t, &text, err);
	if (r < 0)
		return r;
	if (t == GROVE_FT_REG) {
		grove_alt_run_msg(c, GROVE_ALT_WARNING, "%s %s with a link",
				  grove_alt_verb(c, "not replacing", "would not replace"), link);
		return 0;
	}
	return grove_alt_disk_want(c, link, fn, err);
}

/* Removes a link of the group if it is a link (anything else stays, with a warning if warn). */
static int
drop_link(struct grove_alt_ctx *c, const char *abs, bool warn, struct grove_error *err)
{
	enum grove_ftype t;
	const char *text;
	int r = grove_alt_disk_state(c, abs, &t, &text, err);

	if (r < 0)
		return r;
	if (t == GROVE_FT_REG) {
		if (warn)
			grove_alt_run_msg(c, GROVE_ALT_WARNING, "%s %s since it's not a symlink",
					  grove_alt_verb(c, "not removing", "would not remove"),
					  abs);
		return 0;
	}
	return grove_alt_disk_want(c, abs, NULL, err);
}

static int
drop_slave(struct grove_alt_ctx *c, const char *name, const char *link, bool warn_link,
	   struct grove_error *err)
{
	cleanup_free char *fn = grove_alt_disk_path(c, name);
	int r;

	if (!fn)
		return grove_error_set(err, -ENOMEM, "out of memory");
	r = drop_link(c, link, warn_link, err);
	return r < 0 ? r : drop_link(c, fn, true, err);
}

int
grove_alt_disk_prepare_install(struct grove_alt_ctx *c, const struct grove_alt_group *g,
			       const char *choice, struct grove_error *err)
{
	ssize_t i = grove_alt_find_choice(g, choice);
	const struct grove_alt_choice *fs;
	int r;

	grove_alt_run_msg(c, GROVE_ALT_DEBUG, "prepare_install(%s)", choice);
	if (i < 0)
		return grove_error_set(err, -GROVE_E_INTERNAL, "can't install unknown choice %s",
				       choice);
	fs = &g->choices[i];
	r = install_single(c, g->name, g->link, choice, err);
	for (size_t k = 0; k < g->n_slaves && r >= 0; k++) {
		const struct grove_alt_slave *sl = &g->slaves[k];
		const char *file = grove_alt_choice_slave(fs, sl->name);

		if (file && grove_alt_disk_file_exists(c, file)) {
			r = install_single(c, sl->name, sl->path, file, err);
			continue;
		}
		if (file)
			grove_alt_run_msg(
				c, GROVE_ALT_WARNING,
				"%s creation of %s because associated file %s (of link group %s) "
				"doesn't exist",
				grove_alt_verb(c, "skip", "would skip"), sl->path, file, g->name);
		r = drop_slave(c, sl->name, sl->path, true, err);
	}
	return r;
}

int
grove_alt_disk_remove_files(struct grove_alt_ctx *c, const struct grove_alt_group *g,
			    struct grove_error *err)
{
	int r = drop_slave(c, g->name, g->link, false, err);

	for (size_t k = 0; k < g->n_slaves && r >= 0; k++)
		r = drop_slave(c, g->slaves[k].name, g->slaves[k].path, false, err);
	return r;
}

/* Reads the link text at abs (pending state), or NULL when it is not a link. */
int
grove_alt_disk_link_text(struct grove_alt_ctx *c, const char *abs, char **ret,
			 struct grove_error *err)
{
	enum grove_ftype t;
	const char *text;
	int r = grove_alt_disk_state(c, abs, &t, &text, err);

	*ret = NULL;
	if (r < 0)
		return r;
	if (t == GROVE_FT_LINK && !(*ret = strdup(text)))
		return grove_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* Why the missing folder of the link at rel (beneath the root) is missing: -ENOTDIR (a file on
 * the way) or -ENOENT; -ENOMEM. */
static int
folder_errno(struct grove_alt_ctx *c, const char *rel)
{
	cleanup_free char *parent = strdup(rel);
	struct grove_root dir = { .fd = -1 };
	struct grove_error ignore = { 0 };
	char *slash = parent ? strrchr(parent, '/') : NULL;
	int e;

	if (!parent)
		return -ENOMEM;
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	e = grove_root_open_beneath(&dir, &c->inst, parent, false, 0, &ignore);
	grove_root_release(&dir);
	grove_error_clear(&ignore);
	return e == -ENOTDIR ? e : -ENOENT;
}

/* The current value (what ALTDIR/NAME points to). Like update-alternatives, anything there
 * that is not a link is an error ("cannot stat file '…': Invalid argument"). */
int
grove_alt_disk_current_of(struct grove_alt_ctx *c, const char *name, char **ret,
			  struct grove_error *err)
{
	cleanup_free char *fn = grove_alt_disk_path(c, name);
	struct grove_alt_rec *rec;
	enum grove_ftype t;
	const char *text;
	int r;

	*ret = NULL;
	if (!fn)
		return grove_error_set(err, -ENOMEM, "out of memory");
	r = rec_get(c, fn, &rec, err);
	if (r < 0)
		return r;
	/* A file where the altdir should be: update-alternatives' lstat(2) of the link fails. */
	if (rec->nodir && folder_errno(c, rec->rel) == -ENOTDIR)
		return grove_error_set(err, -ENOTDIR, "cannot stat file '%s': %s", fn,
				       strerror(ENOTDIR));
	r = grove_alt_disk_state(c, fn, &t, &text, err);
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
int
grove_alt_disk_is_broken(struct grove_alt_ctx *c, const struct grove_alt_group *g, int *ret,
			 struct grove_error *err)
{
	cleanup_free char *fn = grove_alt_disk_path(c, g->name);
	cleanup_free char *lnk = NULL, *cur = NULL;
	const struct grove_alt_choice *fs;
	ssize_t i;
	int r, reason = GROVE_ALT_NOT_BROKEN;

	*ret = GROVE_ALT_BROKEN;
	if (!fn)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if ((r = grove_alt_disk_link_text(c, g->link, &lnk, err)) < 0)
		return r;
	if (!lnk || strcmp(lnk, fn) != 0)
		return 0;
	if ((r = grove_alt_disk_link_text(c, fn, &cur, err)) < 0)
		return r;
	if (!cur)
		return 0;
	i = grove_alt_find_choice(g, cur);
	if (i < 0) {
		*ret = GROVE_ALT_NOT_BROKEN;
		return 0;
	}
	fs = &g->choices[i];
	for (size_t k = 0; k < g->n_slaves; k++) {
		const struct grove_alt_slave *sl = &g->slaves[k];
		const char *file = grove_alt_choice_slave(fs, sl->name);
		cleanup_free char *sfn = grove_alt_disk_path(c, sl->name);
		cleanup_free char *a = NULL, *b = NULL;
		enum grove_ftype t;
		const char *text;

		if (!sfn)
			return grove_error_set(err, -ENOMEM, "out of memory");
		if (file && grove_alt_disk_file_exists(c, file)) {
			if ((r = grove_alt_disk_link_text(c, sl->path, &a, err)) < 0 ||
			    (r = grove_alt_disk_link_text(c, sfn, &b, err)) < 0)
				return r;
			if (!a || strcmp(a, sfn) != 0 || !b || strcmp(b, file) != 0) {
				if (!is_updated(c, sl->name))
					return 0;
				reason = GROVE_ALT_SLAVES_CHANGED;
			}
		} else {
			enum grove_ftype t2;

			if ((r = grove_alt_disk_state(c, sl->path, &t, &text, err)) < 0 ||
			    (r = grove_alt_disk_state(c, sfn, &t2, &text, err)) < 0)
				return r;
			if (t != GROVE_FT_NONE || t2 != GROVE_FT_NONE) {
				if (!is_updated(c, sl->name))
					return 0;
				reason = GROVE_ALT_SLAVES_CHANGED;
			}
		}
	}
	*ret = reason;
	return 0;
}

/* update-alternatives makes the alternatives directory when it is missing: MKDIR ops for every
 * missing folder of it, parents first, when a link is to be made inside it. */
static int
plan_altdir(struct grove_alt_ctx *c, struct grove_plan *plan, struct grove_error *err)
{
	cleanup_free char *rel = NULL;
	struct grove_chase ch = { .fd = -1 };
	const char *r = rel_of(c, c->altdir_abs ? c->altdir_abs : c->altdir);
	bool needed = false;
	size_t l;
	int rc0;

	if (!r)
		return 0;
	/* The altdir's physical path (the records' paths are physical too). */
	rc0 = grove_fs_chase_dir(c->inst.fd, grove_alt_disk_chase_root(c->req, &c->inst), r, false,
				 0, &ch, err);
	if (rc0 < 0)
		return grove_error_prefix(err, "alternatives directory '%s'", c->altdir);
	grove_fd_close(ch.fd);
	if (!ch.phys || !*ch.phys) {
		free(ch.phys);
		return 0;
	}
	rel = ch.phys;
	r = rel;
	l = strlen(r);
	for (size_t i = 0; i < c->n_recs && !needed; i++)
		needed = c->recs[i].want == GROVE_FT_LINK && c->recs[i].orig != GROVE_FT_LINK &&
			 !strncmp(c->recs[i].rel, r, l) && c->recs[i].rel[l] == '/';
	if (!needed)
		return 0;
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

/* Whether the plan makes the folder that rel is in (a missing altdir). */
static bool
plan_makes_parent(const struct grove_plan *plan, const char *rel)
{
	const char *slash = strrchr(rel, '/');
	size_t l = slash ? (size_t)(slash - rel) : 0;

	for (size_t i = 0; i < plan->n_ops; i++)
		if (plan->ops[i].kind == GROVE_OP_MKDIR && strlen(plan->ops[i].path) == l &&
		    !strncmp(plan->ops[i].path, rel, l))
			return true;
	return false;
}

/* A link to be made in a folder that is missing (and that the plan does not make): refused
 * before anything is done, in update-alternatives' words for the same cause, then grove's note
 * (update-alternatives leaves its temporary links behind). The first such link in
 * update-alternatives' order (the records' order) is named: a file on the way fails its lstat(2)
 * ("cannot stat file"), a missing folder the link's making, where update-alternatives names the
 * temporary link it makes beside it ("….dpkg-tmp"), which grove never makes. */
static int
check_folders(struct grove_alt_ctx *c, const struct grove_plan *plan, struct grove_error *err)
{
	for (size_t i = 0; i < c->n_recs; i++) {
		const struct grove_alt_rec *r = &c->recs[i];
		int e;

		if (!r->nodir || r->want != GROVE_FT_LINK || plan_makes_parent(plan, r->rel))
			continue;
		e = folder_errno(c, r->rel);
		if (e == -ENOMEM)
			return grove_error_set(err, e, "out of memory");
		if (e == -ENOTDIR)
			return grove_error_set(err, e,
					       "cannot stat file '%s%s': %s; nothing was changed",
					       grove_alt_disk_rootp(c), r->abs, strerror(ENOTDIR));
		return grove_error_set(
			err, e, "error creating symbolic link '%s%s': %s; nothing was changed",
			grove_alt_disk_rootp(c), r->abs, strerror(ENOENT));
	}
	return 0;
}

int
grove_alt_disk_build_plan(struct grove_alt_ctx *c, struct grove_plan *plan, struct grove_error *err)
{
	int r0 = plan_altdir(c, plan, err);

	if (r0 >= 0)
		r0 = check_folders(c, plan, err);
	if (r0 < 0)
		return r0;
	for (size_t i = 0; i < c->n_recs; i++) {
		const struct grove_alt_rec *r = &c->recs[i];
		int rc = 0;

		if (r->same || (r->orig == r->want && (r->orig != GROVE_FT_LINK ||
						       strcmp(r->orig_text, r->want_text) == 0)))
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

const char *
grove_alt_disk_rel_of(const struct grove_alt_ctx *c, const char *abs)
{
	return rel_of(c, abs);
}
