/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A farm GNU Stow made: its links recorded in the log (`grove import`), and its packages as the
 * disk shows them (`grove status`). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "grove/journal.h"
#include "grove/path.h"
#include "plan/planner.h"
#include "grove/stow.h"
#include "plan/world.h"
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

struct import_tally;

struct pkgs {
	char *const *v;
	size_t n;
	struct grove_farm_package *out; /* status */
	struct import_tally *tally;     /* import: what its sink learnt, or NULL */
};

static void tally_restart(struct import_tally *t, struct grove_plan *plan, int *r);

static int
plan_import(struct grove_world *w, void *ctx, struct grove_plan *plan, struct grove_error *err)
{
	const struct pkgs *p = ctx;
	int r = grove_planner_import(w, p->v, p->n, plan, err);

	/* A round that reached what the scan had not read is planned again: what its sink
	 * learnt and logged goes too (the import emits its ops as it goes). */
	if (r == GROVE_PLAN_NEEDS_SCAN && p->tally)
		tally_restart(p->tally, plan, &r);
	return r;
}

static int
plan_status(struct grove_world *w, void *ctx, struct grove_plan *plan, struct grove_error *err)
{
	const struct pkgs *p = ctx;

	(void)plan;
	return grove_planner_farm_status(w, p->v, p->n, p->out, err);
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
 * makes, and the first of each (path and text, copied: a streamed plan's ops are freed once
 * logged) for the words. */
struct made_with {
	size_t dotted, plain;
	char *dotted_path, *dotted_text, *plain_path, *plain_text;
};

/*
 * What the import learns from its ops as they are made, a batch at a time: its sink comes
 * before the stream's (docs/journal.md, "Streamed plans"), so that every op is looked at before
 * it is logged and freed. It drops the ops whose link the log already owns with the same text,
 * and counts, for each package (run->pkgs, in order of first sight), how its links were made.
 */
struct import_tally {
	struct grove_plan_sink sink;  /* first: the plan's sink */
	struct grove_plan_sink *next; /* the stream's, or NULL */
	struct grove_stow_run *run;
	struct grove_owned *own; /* what the log owns in the target, by path */
	size_t n_own;
	struct made_with *how; /* one per run->pkgs */
	size_t cap, last;
	size_t known;
};

static int
cmp_owned_key(const void *key, const void *elt)
{
	return strcmp(key, ((const struct grove_owned *)elt)->path);
}

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

/* Frees the counts (not run->pkgs, which the run keeps). */
static void
tally_free(struct import_tally *t)
{
	for (size_t k = 0; k < t->run->n_pkgs && t->how; k++) {
		free(t->how[k].dotted_path);
		free(t->how[k].dotted_text);
		free(t->how[k].plain_path);
		free(t->how[k].plain_text);
	}
	free(t->how);
	t->how = NULL;
}

static void
tally_reset(struct import_tally *t)
{
	tally_free(t);
	t->cap = t->last = t->known = 0;
	grove_journal_pkgs_free(t->run->pkgs, t->run->n_pkgs);
	t->run->pkgs = NULL;
	t->run->n_pkgs = 0;
}

/* Forgets what the sink learnt and, when a batch was logged, the stream's batches, for planning
 * again; *r becomes the stream's error when a batch could not be logged. */
static void
tally_restart(struct import_tally *t, struct grove_plan *plan, int *r)
{
	if (t->next) {
		int rs = grove_session_stream_restart(&t->run->streaming, plan);

		if (rs < 0)
			*r = rs;
		plan->sink = &t->sink;
	}
	tally_reset(t);
}

/* The index of package pkg in run->pkgs, added when first seen; -1 when out of memory. */
static ssize_t
tally_pkg(struct import_tally *t, const char *pkg)
{
	struct grove_stow_run *run = t->run;
	struct grove_journal_pkg *p;

	if (t->last < run->n_pkgs && !strcmp(run->pkgs[t->last].package, pkg))
		return (ssize_t)t->last;
	for (size_t k = 0; k < run->n_pkgs; k++)
		if (!strcmp(run->pkgs[k].package, pkg))
			return (ssize_t)(t->last = k);
	if (run->n_pkgs == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		struct grove_journal_pkg *v = realloc(run->pkgs, cap * sizeof(*v));
		struct made_with *h;

		if (!v)
			return -1;
		run->pkgs = v;
		h = realloc(t->how, cap * sizeof(*h));
		if (!h)
			return -1;
		t->how = h;
		t->cap = cap;
	}
	p = &run->pkgs[run->n_pkgs];
	memset(p, 0, sizeof(*p));
	memset(&t->how[run->n_pkgs], 0, sizeof(t->how[0]));
	run->n_pkgs++;
	p->stow_dir = strdup(run->stow_root.real);
	p->package = strdup(pkg);
	if (!p->stow_dir || !p->package)
		return -1;
	return (ssize_t)(t->last = run->n_pkgs - 1);
}

/* Counts how op's link was made, for its package (added when first seen). */
static int
tally_op(struct import_tally *t, const struct grove_op *op, struct grove_error *err)
{
	ssize_t x = tally_pkg(t, op->package);
	struct made_with *h;

	if (x < 0)
		return grove_error_set(err, -ENOMEM, "out of memory");
	h = &t->how[x];
	switch (link_made_with(t->run, op)) {
	case GROVE_LANDS_DOTTED:
		if (!h->dotted++ &&
		    (!(h->dotted_path = strdup(op->path)) || !(h->dotted_text = strdup(op->text))))
			return grove_error_set(err, -ENOMEM, "out of memory");
		break;
	case GROVE_LANDS_PLAIN:
		if (!h->plain++ &&
		    (!(h->plain_path = strdup(op->path)) || !(h->plain_text = strdup(op->text))))
			return grove_error_set(err, -ENOMEM, "out of memory");
		break;
	default:
		break;
	}
	return 0;
}

/* Looks at the ops plan holds: drops those the log owns already, tallies the others. */
static int
tally_ops(struct import_tally *t, struct grove_plan *plan, struct grove_error *err)
{
	size_t k = 0, i = 0;
	int r = 0;

	for (; i < plan->n_ops && r >= 0; i++) {
		struct grove_op *op = &plan->ops[i];
		const struct grove_owned *o = t->n_own ? bsearch(op->path, t->own, t->n_own,
								 sizeof(*t->own), cmp_owned_key)
						       : NULL;

		if (o && o->text && !strcmp(o->text, op->text)) {
			free(op->path);
			free(op->old_text);
			free(op->text);
			free(op->stow_path);
			free(op->package);
			t->known++;
			continue;
		}
		plan->ops[k++] = *op;
		if (op->package)
			r = tally_op(t, op, err);
	}
	/* (Out of memory: the ops not looked at stay, for the plan's release to free.) */
	while (i < plan->n_ops)
		plan->ops[k++] = plan->ops[i++];
	plan->n_ops = k;
	return r;
}

static int
tally_flush(struct grove_plan_sink *sink, struct grove_plan *plan)
{
	struct import_tally *t = (struct import_tally *)sink;
	int r = tally_ops(t, plan, &sink->err);

	if (r >= 0 && plan->n_ops && t->next) {
		r = t->next->flush(t->next, plan);
		if (r < 0)
			sink->err = t->next->err;
	} else if (r < 0 && t->next) {
		t->next->err = sink->err; /* for the stream's end to report */
	}
	return r;
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
import_layouts(const struct grove_stow_request *req, const struct import_tally *t,
	       struct grove_stow_run *run, struct grove_error *err)
{
	if (run->n_pkgs && !t->how) /* (tally_pkg adds a package with its counts) */
		return grove_error_set(err, -GROVE_E_INTERNAL,
				       "import: a package without its counts");
	run->imported = calloc(run->n_pkgs + 1, sizeof(*run->imported));
	if (!run->imported)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t k = 0; k < run->n_pkgs; k++) {
		struct grove_journal_pkg *p = &run->pkgs[k];
		const struct made_with *h = &t->how[k];
		bool dotfiles = h->dotted ? true : h->plain ? false : req->dotfiles;
		const char *path = h->dotted ? h->dotted_path : h->plain_path;
		const char *text = h->dotted ? h->dotted_text : h->plain_text;
		cleanup_free char *msg = NULL;

		if (!(run->imported[run->n_imported] = strdup(p->package)))
			return grove_error_set(err, -ENOMEM, "out of memory");
		run->n_imported++;
		if (h->dotted && h->plain)
			return grove_error_set(
				err, -GROVE_E_BADINPUT,
				"package '%s' has links made with --dotfiles ('%s' links to '%s') and "
				"links made without it ('%s' links to '%s'): no one layout unstows "
				"both; import it after removing one of them",
				p->package, h->dotted_path, h->dotted_text, h->plain_path,
				h->plain_text);
		p->layout = (struct grove_pkg_layout){ .stowed = true, .dotfiles = dotfiles };
		if (dotfiles == req->dotfiles || !path)
			continue; /* (path is set whenever the links decided) */
		msg = grove_strdupf("%s: its links were made with %s ('%s' links to '%s'): "
				    "recorded as stowed with %s, so that 'grove unstow %s' finds "
				    "them",
				    p->package, spelled(dotfiles), path, text, spelled(dotfiles),
				    p->package);
		if (!msg || grove_plan_add_warning(&run->plan, msg) < 0)
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

/* The import planned over the whole scan of w; a named package the stow dir lacks is refused,
 * as stow refuses it. */
static int
plan_scanned(struct grove_world *w, const struct grove_stow_request *req, struct pkgs *p,
	     struct grove_stow_run *run, struct grove_error *err)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < req->n_stow; i++) {
		struct grove_node *pn = grove_node_child(w->stow, req->stow[i]);

		if (!pn || !pn->listed) {
			r = grove_error_set(err, -GROVE_E_NOPACKAGE,
					    "the stow directory '%s' does not contain package '%s'",
					    run->stow_path, req->stow[i]);
			grove_error_path_in(err, run->stow_root.real, req->stow[i]);
		}
	}
	if (r >= 0)
		r = grove_scan_plan(w, &run->stow_root, &run->target_root, plan_import, p,
				    &run->plan, err);
	return r;
}

/*
 * Scans and plans the import. A run that logs (not a dry run) streams its plan as stow does
 * (docs/journal.md, "Streamed plans"): packages of more entries than the budget are planned
 * folder by folder (grove_planner_import_walk) and anything the walk does not take is planned
 * again with the whole scan, the batches logged so far rolled back.
 */
static int
plan_import_run(struct grove_world *w, const struct grove_stow_request *req,
		const struct grove_session_opts *sopts, struct pkgs *p, struct import_tally *t,
		struct grove_stow_run *run, struct grove_error *err)
{
	/* Both spellings read: the links tell which one each package was stowed with. */
	struct grove_scan_opts so = { .dotfiles = true };
	struct grove_session_txn_opts to = {
		.command = run->command ? run->command : "grove",
		.logged_stow = &run->stow_root,
		.stow = &run->stow_root,
	};
	bool stream = run->journaled && sopts && !sopts->no_lock;
	int r;

	t->sink.batch = grove_session_plan_budget();
	t->sink.flush = tally_flush;
	if (stream) {
		grove_session_stream_arm(&run->session, &run->streaming, &run->plan, &to, NULL, 0);
		t->next = &run->streaming.sink;
		so.walk_above = grove_session_plan_budget();
	}
	/* The sink sees the ops a batch at a time: only a streamed plan has batches. */
	run->plan.sink = stream ? &t->sink : NULL;
	p->tally = t;
	r = grove_scan(w, &run->stow_root, &run->target_root, p->v, p->n, &so, err);
	if (r == -ECANCELED && w->too_big) {
		grove_error_clear(err);
		grove_world_reset_trees(w);
		r = grove_scan_import_walk(w, &run->stow_root, &run->target_root, p->v, p->n,
					   &run->plan, err);
		if (r == 0) {
			run->walked = true;
		} else {
			r = 0;
			tally_restart(t, &run->plan, &r);
			grove_error_clear(err);
			grove_world_reset_trees(w);
			so.walk_above = 0;
			if (r >= 0)
				r = grove_scan(w, &run->stow_root, &run->target_root, p->v, p->n,
					       &so, err);
			if (r >= 0)
				r = plan_scanned(w, req, p, run, err);
		}
	} else if (r >= 0) {
		r = plan_scanned(w, req, p, run, err);
	}
	run->plan.sink = stream ? &run->streaming.sink : NULL;
	if (r >= 0)
		r = tally_ops(t, &run->plan, err);
	if (r >= 0)
		r = import_layouts(req, t, run, err);
	if (stream) {
		grove_session_stream_pkgs(&run->streaming, run->pkgs, run->n_pkgs);
		r = grove_session_stream_end(&run->streaming, &run->stream, &run->plan, r, err);
	}
	return r;
}

int
grove_stow_import_prepare(const struct grove_stow_request *req,
			  const struct grove_session_opts *sopts, struct grove_stow_run *run,
			  size_t *ret_known, struct grove_error *err)
{
	struct import_tally t = { .run = run };
	struct grove_world w;
	char **all = NULL;
	size_t n_all = 0;
	struct pkgs p = { 0 };
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
	/* What the log owns in the target already: its links are left out of the import. */
	if (r >= 0 && run->journaled)
		r = grove_journal_owned(run->session.journal, run->session.target_id, &t.own,
					&t.n_own, err);
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
		r = plan_import_run(&w, req, sopts, &p, &t, run, err);
	if (r < 0)
		goto fail;
	*ret_known = t.known;
	grove_owned_free(t.own, t.n_own);
	tally_free(&t);
	grove_names_free(all, n_all);
	grove_world_release(&w);
	return 0;
fail:
	grove_owned_free(t.own, t.n_own);
	tally_free(&t);
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
