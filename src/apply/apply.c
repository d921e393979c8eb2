/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove apply for one target: the recorded packages from the log, then unstow and stow planned in
 * several planner passes over one world, so each package keeps its own options in one plan. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/apply.h"
#include "grove/journal.h"
#include "grove/path.h"
#include "plan/planner.h"
#include "grove/stow.h"
#include "plan/world.h"
#include "base/util.h"

#include "banned.h" /* last */

void
grove_apply_run_release(struct grove_apply_run *run)
{
	if (!run)
		return;
	if (run->session_open)
		grove_session_close(&run->session);
	run->session_open = false;
	grove_root_release(&run->stow_root);
	grove_root_release(&run->target_root);
	grove_plan_release(&run->plan);
	grove_names_free(run->recorded, run->n_recorded);
	grove_names_free(run->dropped, run->n_dropped);
	grove_names_free(run->added, run->n_added);
	free(run->command);
	run->recorded = run->dropped = run->added = NULL;
	run->n_recorded = run->n_dropped = run->n_added = 0;
	run->command = NULL;
}

static int
strv_add(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (!(nv[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

static bool
strv_has(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

static int
strcmp_p(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* How a recorded package was stowed, as far as its links tell: with
 * --dotfiles ("dot-x" linked as ".x"), without ("dot-x" as "dot-x"), or
 * unknown (no "dot-" entry among its links). */
enum dot_use { DOT_UNKNOWN, DOT_OFF, DOT_ON };

struct recorded {
	char *name;
	enum dot_use dot;
	bool gone; /* its folder is no longer in the stow dir */
};

/* The links of packages whose folder is gone: removed by the plan where they
 * are still as grove made them. */
struct gone_links {
	char **path, **text;
	size_t n;
};

static int
gone_add(struct gone_links *g, const char *path, const char *text)
{
	char **np = realloc(g->path, (g->n + 1) * sizeof(*np));
	char **nt;

	if (!np)
		return -ENOMEM;
	g->path = np;
	nt = realloc(g->text, (g->n + 1) * sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	g->text = nt;
	np[g->n] = strdup(path);
	nt[g->n] = strdup(text);
	g->n++; /* counted even when a copy failed: release frees what is there */
	return np[g->n - 1] && nt[g->n - 1] ? 0 : -ENOMEM;
}

static void
gone_links_release(struct gone_links *g)
{
	grove_names_free(g->path, g->n);
	grove_names_free(g->text, g->n);
	memset(g, 0, sizeof(*g));
}

/* How the link at target path `path`, whose destination is `sub` inside its package, was
 * stowed: the two paths name the same entries from the end, and any package component "dot-X"
 * shows it ("dot-config/nvim" at ".config/nvim": DOT_ON; at "dot-config/nvim": DOT_OFF). */
static enum dot_use
dot_use_of(const char *path, const char *sub)
{
	const char *pe = path + strlen(path), *se = sub + strlen(sub);

	while (pe > path && se > sub) {
		const char *pc = pe, *sc = se;
		size_t pl, sl;

		while (pc > path && pc[-1] != '/')
			pc--;
		while (sc > sub && sc[-1] != '/')
			sc--;
		pl = (size_t)(pe - pc);
		sl = (size_t)(se - sc);
		if (sl > 4 && !strncmp(sc, "dot-", 4)) {
			if (pl == sl && !strncmp(pc, sc, sl))
				return DOT_OFF;
			if (pl == sl - 3 && pc[0] == '.' && !strncmp(pc + 1, sc + 4, sl - 4))
				return DOT_ON;
		}
		pe = pc > path ? pc - 1 : pc;
		se = sc > sub ? sc - 1 : sc;
	}
	return DOT_UNKNOWN;
}

/* The packages of the links grove owns in the target that land in the stow
 * dir (lexically, as Stow decides ownership). */
static int
read_recorded(struct grove_apply_run *run, struct recorded **ret, size_t *ret_n,
	      struct gone_links *gone, struct grove_error *err)
{
	struct grove_owned *own = NULL;
	size_t n_own = 0, n = 0;
	struct recorded *rec = NULL;
	int r;

	r = grove_journal_owned(run->session.journal, run->session.target_id, &own, &n_own, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n_own; i++) {
		cleanup_free char *parent = NULL, *dirabs = NULL, *abs = NULL;
		const char *rest, *slash;
		size_t k;
		enum dot_use dot = DOT_UNKNOWN;

		if (!own[i].text || !own[i].package)
			continue;
		parent = grove_path_parent(own[i].path);
		dirabs = parent ? grove_path_join(run->target_root.real, parent) : NULL;
		abs = dirabs ? grove_path_join(dirabs, own[i].text) : NULL;
		if (!abs) {
			r = grove_error_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		rest = grove_path_strip_prefix(abs, run->stow_root.real);
		slash = rest ? strchr(rest, '/') : NULL;
		if (rest && rest[0] && !strcmp(own[i].package, GROVE_STOW_DIR_PACKAGE)) {
			/* The stow dir itself as one package (`stow .`): the whole of rest is the
			 * entry's path in it. */
			dot = dot_use_of(own[i].path, rest);
		} else if (!rest ||
			   strncmp(rest, own[i].package,
				   slash ? (size_t)(slash - rest) : strlen(rest)) != 0 ||
			   strlen(own[i].package) !=
				   (slash ? (size_t)(slash - rest) : strlen(rest))) {
			/* Not into this stow dir's package: not ours to converge. */
			own[i].package = NULL;
			continue;
		} else if (slash) {
			dot = dot_use_of(own[i].path, slash + 1);
		}
		for (k = 0; k < n && strcmp(rec[k].name, own[i].package) != 0; k++)
			;
		if (k == n) {
			struct recorded *nr = realloc(rec, (n + 1) * sizeof(*nr));

			if (!nr || !(nr[n].name = strdup(own[i].package))) {
				if (nr)
					rec = nr;
				r = grove_error_set(err, -ENOMEM, "out of memory");
				goto out;
			}
			rec = nr;
			rec[n].dot = DOT_UNKNOWN;
			n++;
		}
		if (dot != DOT_UNKNOWN)
			rec[k].dot = dot;
	}
	/* What the log recorded beats what the links show (a package without a "dot-" entry). */
	for (size_t k = 0; k < n; k++) {
		struct grove_pkg_layout l;
		bool found;

		r = grove_journal_pkg_recorded(run->session.journal, run->session.target_id,
					       run->stow_root.real, rec[k].name, 0, &l, &found,
					       err);
		if (r < 0)
			goto out;
		if (found && l.stowed)
			rec[k].dot = l.dotfiles ? DOT_ON : DOT_OFF;
	}
	/* A package whose folder is gone cannot be unstowed by its contents:
	 * its links (dangling now) are removed one by one instead. */
	for (size_t k = 0; k < n; k++) {
		struct grove_stat st;

		r = grove_fs_stat_beneath_follow(run->stow_root.fd, rec[k].name, &st, err);
		if (r == -EXDEV || r == -ELOOP) {
			/* A package that is a link the scan rebases (or refuses): not gone. */
			rec[k].gone = false;
			continue;
		}
		if (r < 0)
			goto out;
		rec[k].gone = st.type != GROVE_FT_DIR;
	}
	for (size_t i = 0; i < n_own; i++) {
		size_t k;

		if (!own[i].text || !own[i].package)
			continue;
		for (k = 0; k < n && strcmp(rec[k].name, own[i].package) != 0; k++)
			;
		if (k == n || !rec[k].gone)
			continue;
		if (gone_add(gone, own[i].path, own[i].text) < 0) {
			r = grove_error_set(err, -ENOMEM, "out of memory");
			goto out;
		}
	}
	*ret = steal_ptr(rec);
	*ret_n = n;
	r = 0;
out:
	if (rec) {
		for (size_t k = 0; k < n; k++)
			free(rec[k].name);
		free(rec);
	}
	grove_owned_free(own, n_own);
	return r;
}

static bool
same_opts(const struct grove_apply_pkg *a, const struct grove_apply_pkg *b)
{
	return a->no_folding == b->no_folding && a->dotfiles == b->dotfiles &&
	       a->adopt == b->adopt && a->ignore == b->ignore && a->defer == b->defer &&
	       a->override == b->override;
}

/*
 * Unstow passes first (each recorded package with the dotfiles setting its
 * links show, and no extra ignore patterns, so that everything it had is
 * reached), then a stow pass per group of packages with the same options.
 * The world carries each pass's result into the next; the plan is the
 * difference between the scanned target and the last pass's.
 */
struct plan_all_ctx {
	const struct grove_apply_target *t;
	const struct recorded *rec;
	size_t n_rec;
	const struct gone_links *gone;
};

static int
plan_all(struct grove_world *w, void *ctx, struct grove_plan *plan, struct grove_error *err)
{
	const struct plan_all_ctx *c = ctx;
	const struct grove_apply_target *t = c->t;
	const struct recorded *rec = c->rec;
	size_t n_rec = c->n_rec;
	const struct gone_links *gone = c->gone;
	cleanup_free char **names = calloc(n_rec + t->n_pkgs + 1, sizeof(char *));
	cleanup_free bool *done = calloc(t->n_pkgs + 1, sizeof(bool));
	int r;

	if (!names || !done)
		return grove_error_set(err, -ENOMEM, "out of memory");
	/* The links of packages whose folder is gone go where they are still
	 * grove's, as the log recorded them (a changed one is left alone). */
	for (size_t i = 0; i < gone->n; i++) {
		struct grove_node *n = grove_node_lookup(w->target, gone->path[i]);

		if (!n || n->orig_type != GROVE_FT_LINK || !n->orig_link ||
		    strcmp(n->orig_link, gone->text[i]) != 0)
			continue;
		if (grove_node_set_link(n, NULL) < 0)
			return grove_error_set(err, -ENOMEM, "out of memory");
		n->type = GROVE_FT_NONE;
	}
	for (int dot = DOT_UNKNOWN; dot <= DOT_ON; dot++) {
		struct grove_plan_opts po = { .other_stow_dirs = true };
		size_t n = 0;

		for (size_t i = 0; i < n_rec; i++) {
			enum dot_use d = rec[i].dot;

			if (rec[i].gone)
				continue;
			/* Unknown: as the manifest now wants it (or off). */
			if (d == DOT_UNKNOWN) {
				for (size_t k = 0; k < t->n_pkgs; k++)
					if (!strcmp(t->pkgs[k].name, rec[i].name))
						d = t->pkgs[k].dotfiles ? DOT_ON : DOT_OFF;
				if (d == DOT_UNKNOWN)
					d = DOT_OFF;
			}
			if ((int)d == dot)
				names[n++] = rec[i].name;
		}
		if (!n)
			continue;
		po.dotfiles = dot == DOT_ON;
		r = grove_planner_run_pass(w, &po, names, n, NULL, 0, plan, err);
		if (r != 0) /* an error, or GROVE_PLAN_NEEDS_SCAN */
			return r;
	}
	for (size_t i = 0; i < t->n_pkgs; i++) {
		const struct grove_apply_pkg *g = &t->pkgs[i];
		struct grove_plan_opts po = {
			.no_folding = g->no_folding,
			.adopt = g->adopt,
			.dotfiles = g->dotfiles,
			.ignore = g->ignore,
			.defer = g->defer,
			.override = g->override,
			.other_stow_dirs = true,
		};
		size_t n = 0;

		if (done[i])
			continue;
		for (size_t k = i; k < t->n_pkgs; k++) {
			if (!done[k] && same_opts(g, &t->pkgs[k])) {
				names[n++] = (char *)t->pkgs[k].name;
				done[k] = true;
			}
		}
		r = grove_planner_run_pass(w, &po, NULL, 0, names, n, plan, err);
		if (r != 0)
			return r;
	}
	if (plan->n_conflicts) {
		grove_plan_sort_conflicts(plan);
		return 0;
	}
	return grove_planner_diff(w, plan, err);
}

static int
check_packages(const struct grove_apply_run *run, const struct grove_apply_target *t,
	       struct grove_error *err)
{
	for (size_t i = 0; i < t->n_pkgs; i++) {
		struct grove_stat st;
		int r = grove_stow_check_package(t->pkgs[i].name, err);

		if (r < 0)
			return r;
		r = grove_fs_stat_beneath_follow(run->stow_root.fd, t->pkgs[i].name, &st, err);
		if (r < 0)
			return r;
		if (st.type != GROVE_FT_DIR) {
			grove_error_set(err, -GROVE_E_BADINPUT,
					"the stow directory '%s' does not contain package '%s'",
					t->dir, t->pkgs[i].name);
			return grove_error_path_in(err, run->stow_root.real, t->pkgs[i].name);
		}
	}
	return 0;
}

/* The packages the transaction logs (docs/stow.md, "Recorded options"): each wanted one stowed
 * with its options, each dropped one unstowed. */
static int
log_packages(struct grove_apply_run *run, const struct grove_apply_target *t,
	     const struct recorded *rec, size_t n_rec, struct grove_error *err)
{
	struct grove_journal_pkg *v = calloc(t->n_pkgs + n_rec + 1, sizeof(*v));
	size_t n = 0;

	if (!v)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < t->n_pkgs + n_rec; i++) {
		const char *name = i < t->n_pkgs ? t->pkgs[i].name : rec[i - t->n_pkgs].name;

		if (i >= t->n_pkgs && strv_has(run->recorded, run->n_recorded, name) &&
		    !strv_has(run->dropped, run->n_dropped, name))
			continue; /* wanted: logged above */
		v[n].stow_dir = strdup(run->stow_root.real);
		v[n].package = strdup(name);
		if (i < t->n_pkgs) {
			v[n].layout.stowed = true;
			v[n].layout.dotfiles = t->pkgs[i].dotfiles;
			v[n].layout.no_folding = t->pkgs[i].no_folding;
		} else {
			v[n].layout.dotfiles = rec[i - t->n_pkgs].dot == DOT_ON;
		}
		if (!v[n++].package || !v[n - 1].stow_dir) {
			grove_journal_pkgs_free(v, n);
			return grove_error_set(err, -ENOMEM, "out of memory");
		}
	}
	grove_session_take_pkgs(&run->session, v, n);
	return 0;
}

/* What changes, by package, for the report: recorded, added and dropped packages. */
static int
note_changes(struct grove_apply_run *run, const struct grove_apply_target *t,
	     const struct recorded *rec, size_t n_rec, struct grove_error *err)
{
	for (size_t i = 0; i < n_rec; i++) {
		bool wanted = false;

		for (size_t k = 0; k < t->n_pkgs && !wanted; k++)
			wanted = !strcmp(t->pkgs[k].name, rec[i].name);
		if (strv_add(&run->recorded, &run->n_recorded, rec[i].name) < 0 ||
		    (!wanted && strv_add(&run->dropped, &run->n_dropped, rec[i].name) < 0))
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	for (size_t k = 0; k < t->n_pkgs; k++) {
		if (!strv_has(run->recorded, run->n_recorded, t->pkgs[k].name) &&
		    strv_add(&run->added, &run->n_added, t->pkgs[k].name) < 0)
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	if (run->n_recorded)
		qsort(run->recorded, run->n_recorded, sizeof(char *), strcmp_p);
	return 0;
}

/* The interrupted transaction a real run would roll back first, for a check to say (a log whose
 * lock cannot be probed tells nothing: 0). */
static int64_t
interrupted_txn(struct grove_session *s)
{
	struct grove_session_pending p = { 0 };
	struct grove_error pe = { 0 };
	int64_t txn = 0;

	if (grove_session_pending(s, &p, &pe) >= 0 && p.state == GROVE_PENDING_INTERRUPTED)
		txn = p.txn;
	grove_session_pending_release(&p);
	return txn;
}

int
grove_apply_prepare(const struct grove_apply_target *t, const char *state_opt, double wait_seconds,
		    bool lock, struct grove_apply_run *run, struct grove_error *err)
{
	/* Unlocked (--check): the log is only read, as a dry run of grove stow reads it; a missing
	 * one reads as empty, and nothing is made. */
	struct grove_session_opts so = { .state_opt = state_opt,
					 .wait_seconds = wait_seconds,
					 .no_lock = !lock,
					 .read_only = !lock,
					 .no_create = !lock,
					 .absent_empty = !lock,
					 .command = t->command };
	struct grove_world w;
	struct grove_scan_opts sc = { 0 };
	struct recorded *rec = NULL;
	size_t n_rec = 0;
	struct gone_links gone = { 0 };
	cleanup_free char **all = NULL;
	size_t n_all = 0;
	int r;

	memset(run, 0, sizeof(*run));
	run->stow_root.fd = run->target_root.fd = -1;
	grove_plan_init(&run->plan);
	grove_world_init(&w);
	if (t->command && !(run->command = strdup(t->command))) {
		r = grove_error_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	r = grove_stow_open_roots(t->dir, t->target, &run->stow_root, &run->target_root, err);
	if (r < 0)
		goto fail;
	if (grove_path_strip_prefix(run->target_root.real, run->stow_root.real) ||
	    !strcmp(run->target_root.real, run->stow_root.real)) {
		r = grove_error_set(err, -GROVE_E_BADINPUT,
				    "target '%s' is inside the stow directory '%s'", t->target,
				    t->dir);
		goto fail;
	}
	r = check_packages(run, t, err);
	if (r < 0)
		goto fail;
	r = grove_session_open(&run->session, &run->target_root, &so, err);
	if (r < 0)
		goto fail;
	run->session_open = true;
	run->locked = lock;
	if (lock) {
		r = grove_session_recover(&run->session, &run->stow_root, false, &run->recovered,
					  err);
		if (r < 0)
			goto fail;
	} else {
		run->interrupted = interrupted_txn(&run->session);
	}
	r = read_recorded(run, &rec, &n_rec, &gone, err);
	if (r < 0)
		goto fail;

	r = note_changes(run, t, rec, n_rec, err);
	if (r >= 0)
		r = log_packages(run, t, rec, n_rec, err);
	if (r < 0)
		goto fail;
	w.stow_path = grove_path_abs2rel(run->stow_root.real, run->target_root.real);
	all = calloc(n_rec + t->n_pkgs + 1, sizeof(char *));
	if (!w.stow_path || !all) {
		r = grove_error_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < n_rec; i++) {
		if (rec[i].gone)
			continue;
		all[n_all++] = rec[i].name;
		sc.dotfiles = sc.dotfiles || rec[i].dot == DOT_ON;
	}
	for (size_t k = 0; k < t->n_pkgs; k++) {
		if (!strv_has(all, n_all, t->pkgs[k].name))
			all[n_all++] = (char *)t->pkgs[k].name;
		sc.dotfiles = sc.dotfiles || t->pkgs[k].dotfiles;
	}
	r = grove_stow_global_ignore(t->global_ignore_text, t->global_ignore_source,
				     &w.global_ignore, err);
	if (r < 0)
		goto fail;
	/* With dotfiles the scan reads both spellings, a superset of without. */
	r = grove_scan(&w, &run->stow_root, &run->target_root, all, n_all, &sc, err);
	if (r >= 0 && gone.n)
		r = grove_scan_target_paths(&w, &run->target_root, gone.path, gone.n, err);
	if (r < 0)
		goto fail;
	{
		struct plan_all_ctx ctx = { .t = t, .rec = rec, .n_rec = n_rec, .gone = &gone };

		r = grove_scan_plan(&w, &run->stow_root, &run->target_root, plan_all, &ctx,
				    &run->plan, err);
	}
	if (r < 0)
		goto fail;
	grove_world_release(&w);
	gone_links_release(&gone);
	for (size_t i = 0; i < n_rec; i++)
		free(rec[i].name);
	free(rec);
	return 0;
fail:
	grove_world_release(&w);
	gone_links_release(&gone);
	for (size_t i = 0; i < n_rec; i++)
		free(rec[i].name);
	free(rec);
	grove_apply_run_release(run);
	return r;
}

int
grove_apply_execute(struct grove_apply_run *run, struct grove_error *err)
{
	if (run->plan.n_conflicts)
		return grove_error_set(err, -GROVE_E_CONFLICT, "the plan has conflicts");
	if (!run->locked)
		return grove_error_set(err, -GROVE_E_INTERNAL, "apply: the target is not locked");
	return grove_session_apply(&run->session, &run->plan, &run->stow_root,
				   run->command ? run->command : "grove apply", run->stow_root.real,
				   0, &run->txn, err);
}
