/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A farm GNU Stow made: its links recorded in the log (`grove import`), and its packages as the
 * disk shows them (`grove status`). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/journal.h"
#include "grove/path.h"
#include "grove/planner.h"
#include "grove/stow.h"
#include "grove/world.h"
#include "base/util.h"

#include "banned.h" /* last */

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every package of the held stow dir: '.' (the stow dir itself, `stow .`: its links are told
 * from the others' by where they land), then its folders and links (a package may be a link
 * to a folder; the scan checks where it leads), names not starting with '.', sorted. */
static int
list_packages(const struct grove_root *stow, char ***ret, size_t *ret_n, struct grove_error *err)
{
	cleanup_fd int fd = grove_fs_open_dir_beneath(stow->fd, ".", err);
	struct grove_dirent *ents = NULL;
	char **v = NULL;
	size_t n = 0, k = 0;
	int r;

	if (fd < 0)
		return grove_error_prefix(err, "read stow directory '%s'", stow->path);
	r = grove_fs_list(fd, &ents, &n, err);
	if (r < 0)
		return grove_error_prefix(err, "read stow directory '%s'", stow->path);
	v = calloc(n + 2, sizeof(*v));
	if (v && !(v[k++] = strdup(GROVE_STOW_DIR_PACKAGE))) {
		free(v);
		v = NULL;
	}
	for (size_t i = 0; v && i < n; i++) {
		if (ents[i].name[0] == '.' ||
		    (ents[i].type != GROVE_FT_DIR && ents[i].type != GROVE_FT_LINK))
			continue;
		if (!(v[k] = strdup(ents[i].name))) {
			grove_names_free(v, k);
			v = NULL;
		} else {
			k++;
		}
	}
	grove_dirents_free(ents, n);
	if (!v)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (k > 1)
		qsort(v + 1, k - 1, sizeof(*v), cmp_name);
	*ret = v;
	*ret_n = k;
	return 0;
}

struct pkgs {
	char *const *v;
	size_t n;
	struct grove_farm_package *out; /* status */
};

static int
plan_import(struct grove_world *w, void *ctx, struct grove_plan *plan, struct grove_error *err)
{
	const struct pkgs *p = ctx;

	return grove_planner_import(w, p->v, p->n, plan, err);
}

static int
plan_status(struct grove_world *w, void *ctx, struct grove_plan *plan, struct grove_error *err)
{
	const struct pkgs *p = ctx;

	(void)plan;
	return grove_planner_farm_status(w, p->v, p->n, p->out, err);
}

static int
cmp_owned_key(const void *key, const void *elt)
{
	return strcmp(key, ((const struct grove_owned *)elt)->path);
}

/* Drops the ops whose link the log already owns with the same text; *ret_known counts them. */
static int
drop_known(struct grove_stow_run *run, size_t *ret_known, struct grove_error *err)
{
	struct grove_owned *own = NULL;
	size_t n_own = 0, k = 0;
	int r = grove_journal_owned(run->session.journal, run->session.target_id, &own, &n_own,
				    err);

	if (r < 0)
		return r;
	for (size_t i = 0; i < run->plan.n_ops; i++) {
		struct grove_op *op = &run->plan.ops[i];
		const struct grove_owned *o =
			n_own ? bsearch(op->path, own, n_own, sizeof(*own), cmp_owned_key) : NULL;

		if (!o || !o->text || strcmp(o->text, op->text) != 0) {
			run->plan.ops[k++] = *op;
			continue;
		}
		free(op->path);
		free(op->old_text);
		free(op->text);
		free(op->stow_path);
		free(op->package);
		(*ret_known)++;
	}
	run->plan.n_ops = k;
	grove_owned_free(own, n_own);
	return 0;
}

/* Opens the log as sopts says: locked and recovered, or (no_lock) only read, where a log that
 * does not exist yet is an empty one (run->journaled false). */
static int
open_log(const struct grove_session_opts *sopts, struct grove_stow_run *run,
	 struct grove_error *err)
{
	int r = grove_session_open(&run->session, &run->target_root, sopts, err);

	if (r == -ENOENT && sopts->no_lock) {
		grove_error_clear(err);
		return 0;
	}
	if (r < 0)
		return r;
	run->journaled = true;
	if (sopts->no_lock)
		return 0;
	return grove_session_recover(&run->session, &run->stow_root, false, &run->recovered, err);
}

/* How a package's links were made: links only --dotfiles makes, links only a stow without it
 * makes, and one of each for the words. */
struct made_with {
	size_t dotted, plain;
	const struct grove_op *a_dotted, *a_plain;
};

/* Where op's link lands in its package (its text joined to its folder, the stow dir and the
 * package taken off), and so whether only --dotfiles or only its absence makes it. */
static int
link_made_with(const struct grove_stow_run *run, const struct grove_op *op)
{
	cleanup_free char *parent = grove_path_parent(op->path);
	cleanup_free char *dest = parent ? grove_path_join(parent, op->text) : NULL;
	const char *rest = dest ? grove_path_strip_prefix(dest, run->stow_path) : NULL;
	size_t lp = strlen(op->package);

	if (!rest)
		return 0;
	if (strcmp(op->package, GROVE_STOW_DIR_PACKAGE) != 0) {
		if (strncmp(rest, op->package, lp) != 0 || rest[lp] != '/')
			return 0;
		rest += lp + 1;
	}
	return grove_path_lands_as(op->path, rest);
}

/* The "dot-X" spelling a layout's links show: "--dotfiles" or "no --dotfiles". */
static const char *
spelled(bool dotfiles)
{
	return dotfiles ? "--dotfiles" : "no --dotfiles";
}

/*
 * The packages the import records links of, each as stowed with the --dotfiles its links were
 * made with (issue 40 item 2): a link '.config' to 'kitty/dot-config' only --dotfiles makes, a
 * link 'dot-config' to it only a stow without it; a package whose links tell neither is recorded
 * with the request's --dotfiles (a farm stowed with --no-folding cannot be told from the disk:
 * recorded as folding). A package whose links were made both ways is refused: no one layout
 * unstows them all. So a later `grove unstow PKG` uses the option the farm was made with
 * (stow.md), and a package recorded otherwise than the command said is a warning naming one
 * of its links.
 */
static int
import_layouts(const struct grove_stow_request *req, struct grove_stow_run *run,
	       struct grove_error *err)
{
	cleanup_free struct made_with *how = NULL;

	run->pkgs = calloc(run->plan.n_ops + 1, sizeof(*run->pkgs));
	how = calloc(run->plan.n_ops + 1, sizeof(*how));
	if (!run->pkgs || !how)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < run->plan.n_ops; i++) {
		const struct grove_op *op = &run->plan.ops[i];
		const char *pkg = op->package;
		struct grove_journal_pkg *p;
		size_t k = 0;

		while (pkg && k < run->n_pkgs &&
		       (!run->pkgs[k].package || strcmp(run->pkgs[k].package, pkg) != 0))
			k++;
		if (!pkg)
			continue;
		if (k == run->n_pkgs) {
			p = &run->pkgs[run->n_pkgs++];
			p->stow_dir = strdup(run->stow_root.real);
			p->package = strdup(pkg);
			if (!p->stow_dir || !p->package)
				return grove_error_set(err, -ENOMEM, "out of memory");
		}
		switch (link_made_with(run, op)) {
		case GROVE_LANDS_DOTTED:
			if (!how[k].dotted++)
				how[k].a_dotted = op;
			break;
		case GROVE_LANDS_PLAIN:
			if (!how[k].plain++)
				how[k].a_plain = op;
			break;
		default:
			break;
		}
	}
	for (size_t k = 0; k < run->n_pkgs; k++) {
		struct grove_journal_pkg *p = &run->pkgs[k];
		const struct grove_op *shown = how[k].dotted ? how[k].a_dotted : how[k].a_plain;
		bool dotfiles = how[k].dotted ? true : how[k].plain ? false : req->dotfiles;
		cleanup_free char *msg = NULL;

		if (how[k].dotted && how[k].plain)
			return grove_error_set(
				err, -GROVE_E_BADINPUT,
				"package '%s' has links made with --dotfiles ('%s' links to '%s') and "
				"links made without it ('%s' links to '%s'): no one layout unstows "
				"both; import it after removing one of them",
				p->package, how[k].a_dotted->path, how[k].a_dotted->text,
				how[k].a_plain->path, how[k].a_plain->text);
		p->layout = (struct grove_pkg_layout){ .stowed = true, .dotfiles = dotfiles };
		if (dotfiles == req->dotfiles || !shown)
			continue; /* (shown is set whenever the links decided) */
		msg = grove_strdupf("%s: its links were made with %s ('%s' links to '%s'): "
				    "recorded as stowed with %s, so that 'grove unstow %s' finds "
				    "them",
				    p->package, spelled(dotfiles), shown->path, shown->text,
				    spelled(dotfiles), p->package);
		if (!msg || grove_plan_add_warning(&run->plan, msg) < 0)
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

int
grove_stow_import_prepare(const struct grove_stow_request *req,
			  const struct grove_session_opts *sopts, struct grove_stow_run *run,
			  size_t *ret_known, struct grove_error *err)
{
	/* Both spellings read: the links tell which one each package was stowed with. */
	struct grove_scan_opts so = { .dotfiles = true };
	struct grove_world w;
	char **all = NULL;
	size_t n_all = 0;
	struct pkgs p;
	int r;

	*ret_known = 0;
	memset(run, 0, sizeof(*run));
	run->stow_root.fd = run->target_root.fd = -1;
	if (req->command && !(run->command = strdup(req->command)))
		return grove_error_set(err, -ENOMEM, "out of memory");
	grove_plan_init(&run->plan);
	grove_world_init(&w);
	for (size_t i = 0; i < req->n_stow; i++) {
		r = grove_stow_check_package(req->stow[i], err);
		if (r < 0)
			goto fail;
	}
	r = grove_stow_open_roots(req->dir, req->target, &run->stow_root, &run->target_root, err);
	if (r >= 0)
		r = grove_stow_check_target(req, run, err);
	if (r >= 0 && sopts)
		r = open_log(sopts, run, err);
	if (r >= 0 && !req->n_stow)
		r = list_packages(&run->stow_root, &all, &n_all, err);
	if (r < 0)
		goto fail;
	p.v = req->n_stow ? req->stow : all;
	p.n = req->n_stow ? req->n_stow : n_all;
	run->stow_path = grove_path_abs2rel(run->stow_root.real, run->target_root.real);
	w.stow_path = run->stow_path ? strdup(run->stow_path) : NULL;
	if (!w.stow_path) {
		r = grove_error_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	r = grove_stow_global_ignore(req->global_ignore_text, req->global_ignore_source,
				     &w.global_ignore, err);
	if (r >= 0)
		r = grove_scan(&w, &run->stow_root, &run->target_root, p.v, p.n, &so, err);
	/* A named package the stow dir lacks is refused, as stow refuses it. */
	for (size_t i = 0; r >= 0 && i < req->n_stow; i++) {
		struct grove_node *pn = grove_node_child(w.stow, req->stow[i]);

		if (!pn || !pn->listed) {
			r = grove_error_set(err, -GROVE_E_NOPACKAGE,
					    "the stow directory '%s' does not contain package '%s'",
					    run->stow_path, req->stow[i]);
			grove_error_path_in(err, run->stow_root.real, req->stow[i]);
		}
	}
	if (r >= 0)
		r = grove_scan_plan(&w, &run->stow_root, &run->target_root, plan_import, &p,
				    &run->plan, err);
	if (r >= 0 && run->journaled)
		r = drop_known(run, ret_known, err);
	if (r >= 0)
		r = import_layouts(req, run, err);
	if (r < 0)
		goto fail;
	grove_names_free(all, n_all);
	grove_world_release(&w);
	return 0;
fail:
	grove_names_free(all, n_all);
	grove_world_release(&w);
	grove_stow_run_release(run);
	return r;
}

void
grove_stow_farm_free(struct grove_stow_farm_pkg *v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

int
grove_stow_farm(const struct grove_root *stow, const struct grove_root *target,
		const char *global_ignore_text, const char *source,
		struct grove_stow_farm_pkg **ret, size_t *ret_n, struct grove_error *err)
{
	/* Dotfiles on: a package's "dot-X" folder is matched against ".X" in the target too. */
	struct grove_scan_opts so = { .dotfiles = true };
	struct grove_stow_farm_pkg *out = NULL;
	struct grove_farm_package *counts = NULL;
	struct grove_plan scratch;
	struct grove_world w;
	char **all = NULL;
	size_t n_all = 0, m = 0;
	struct pkgs p = { 0 };
	int r;

	grove_world_init(&w);
	grove_plan_init(&scratch);
	r = list_packages(stow, &all, &n_all, err);
	if (r < 0)
		return r;
	counts = calloc(n_all + 1, sizeof(*counts));
	out = calloc(n_all + 1, sizeof(*out));
	w.stow_path = grove_path_abs2rel(stow->real, target->real);
	if (!counts || !out || !w.stow_path) {
		r = grove_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	p = (struct pkgs){ .v = all, .n = n_all, .out = counts };
	r = grove_stow_global_ignore(global_ignore_text, source, &w.global_ignore, err);
	if (r >= 0)
		r = grove_scan(&w, stow, target, all, n_all, &so, err);
	if (r >= 0)
		r = grove_scan_plan(&w, stow, target, plan_status, &p, &scratch, err);
	/* '.' (the whole stow dir as one package) is listed only when the target reaches it. */
	for (size_t i = 0; r >= 0 && i < n_all; i++) {
		if (!strcmp(all[i], GROVE_STOW_DIR_PACKAGE) && !counts[i].reached)
			continue;
		out[m].name = steal_ptr(all[i]);
		out[m].files = counts[i].files;
		out[m++].reached = counts[i].reached;
	}
	if (r >= 0) {
		*ret = steal_ptr(out);
		*ret_n = m;
	}
out:
	grove_stow_farm_free(out, n_all);
	grove_names_free(all, n_all);
	free(counts);
	grove_plan_release(&scratch);
	grove_world_release(&w);
	return r < 0 ? r : 0;
}
