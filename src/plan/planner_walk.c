/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The bounded walk: a plan made, checked and emitted one folder at a time, so that the model in
 * memory is one path from the root with its folders' entries, not the whole tree. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/path.h"
#include "plan/planner.h"
#include "planner_int.h"
#include "base/util.h"

#include "banned.h" /* last */

/*
 * Why the plan is the whole model's. Stow's algorithm visits a folder's entries for one package
 * after the other (unstows first), each visit of an entry that is a folder going on into it
 * (stow_contents, unstow_contents). Without folding (or when nothing is unstowed, so nothing
 * folds), what a visit decides at an entry reads and changes that entry and what lies beneath
 * it, and nothing else of the target's planned state (its other reads are of the scanned state
 * and the stow dir, which planning never changes): the visits of different entries commute, and
 * the visits of one folder's entries (its "descents", in their order) leave the same state
 * whether each runs its sub-folders at once or after the folder's other visits. So the walk
 * runs a folder's descents, each recording the descents of its sub-folders instead of running
 * them, and then takes the sub-folders in name order, one at a time: each read (package
 * folders, then the target folder), planned, emitted and dropped before the next. The ops come
 * in the whole model's order: the diff walks the target depth-first in name order, and so does
 * the walk. A folder's op (MKDIR, UNFOLD) is emitted before its entries are planned: its state
 * is final once its parent's descents have run.
 *
 * Whatever the walk does not take falls back to the whole model (GROVE_SCAN_BAIL, and the
 * caller starts again with grove_scan): a conflict or warning (their order and the checks
 * before planning are the whole model's), a part of the stow dir or target the walk did not
 * read (a need), a second stow dir, a package entry only the whole scan takes (scan_lazy.c),
 * an error. The whole scan reads every folder of the requested packages (and of a folder
 * another package's link unfolds) before planning, for its checks and errors: package folders
 * the walk does not enter are read and dropped (the reader's check_pkg). The walk reads
 * nothing itself: its reader (struct grove_walk_reader, supplied by the scan→plan loop) does.
 */

struct descent {
	struct grove_node *tnode; /* the target entry: a folder of the folder being planned */
	const char *package;      /* the package record's name (stable) */
	size_t seq;               /* the order in which the descents were recorded */
	bool unstow;
};

struct walk {
	const struct grove_walk_reader *rd;
	const char *cur; /* the folder being planned */
	const struct grove_node *cur_node;
	struct descent *d; /* the descents recorded while planning cur */
	size_t n, cap;
	bool bail;
};

bool
grove_walk_defer(struct planner *p, bool unstow, const char *package, const char *pkg_dir,
		 const char *tdir)
{
	struct walk *wk = p->walk;
	struct grove_node *t;
	struct grove_world_pkg *pkg;

	if (wk->bail)
		return true;
	if (p->src_stow || strcmp(pkg_dir, tdir) != 0) {
		wk->bail = true;
		return true;
	}
	if (strcmp(tdir, wk->cur) == 0)
		return false;
	t = grove_view_tnode(p, tdir);
	pkg = grove_world_pkg_add(p->w, package);
	p->pkg_name = NULL; /* the records may have moved */
	if (!t || t->parent != wk->cur_node || !pkg) {
		wk->bail = true;
		return true;
	}
	if (wk->n == wk->cap) {
		size_t cap = wk->cap ? wk->cap * 2 : 16;
		struct descent *d = realloc(wk->d, cap * sizeof(*d));

		if (!d) {
			wk->bail = true;
			return true;
		}
		wk->d = d;
		wk->cap = cap;
	}
	wk->d[wk->n] = (struct descent){
		.tnode = t, .package = pkg->name, .seq = wk->n, .unstow = unstow
	};
	wk->n++;
	return true;
}

static bool
failed(const struct planner *p)
{
	return p->walk->bail || p->rc || p->incomplete || p->plan->n_conflicts ||
	       p->plan->n_warnings;
}

static int
descent_cmp(const void *a, const void *b)
{
	const struct descent *x = a, *y = b;
	int c = strcmp(x->tnode->name, y->tnode->name);

	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The stow-relative path of package's folder dir. */
static char *
pkg_rel(const char *package, const char *dir)
{
	return strcmp(dir, ".") == 0 ? strdup(package) : grove_child_path(package, dir);
}

/* Whether ds[0..i) names package already (package names are the records' pointers). */
static bool
seen(const struct descent *ds, size_t i, const char *package)
{
	while (i-- > 0)
		if (ds[i].package == package)
			return true;
	return false;
}

/* Reads what planning dir needs: each package's folder (and ignore list), then the target's. */
static int
walk_load(struct planner *p, const char *dir, const char *const *pkgs, size_t n)
{
	struct walk *wk = p->walk;
	struct grove_node *t;
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		cleanup_free char *rel = pkg_rel(pkgs[i], dir);

		if (!rel)
			return -ENOMEM;
		r = wk->rd->read_ignore(wk->rd->ctx, p->w, pkgs[i], p->err);
		p->pkg_name = NULL; /* the records may have moved */
		if (r == 0)
			r = wk->rd->list_pkg(wk->rd->ctx, p->w, rel, p->err);
	}
	t = grove_view_tnode(p, dir);
	if (r == 0 && t && t->orig_type == GROVE_FT_DIR && !t->listed)
		r = wk->rd->list_target(wk->rd->ctx, p->w, strcmp(dir, ".") == 0 ? "" : dir,
					p->err);
	return r;
}

/* The first of ds[0..n) (sorted) for the entry called name, or n. */
static size_t
find_descent(const struct descent *ds, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ds[mid].tnode->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Reads and drops the package folders beneath dir that no descent enters (ds: dir's descents;
 * kd: the sorted descents of its entries). */
static int
walk_check(struct planner *p, const char *dir, const struct descent *ds, size_t nd,
	   const struct descent *kd, size_t nk)
{
	for (size_t i = 0; i < nd; i++) {
		struct grove_node *pn;

		if (seen(ds, i, ds[i].package))
			continue;
		pn = grove_view_pkg_node(p, ds[i].package, dir);
		if (!pn || !pn->listed)
			return GROVE_SCAN_BAIL;
		for (size_t k = 0; k < pn->n_kids; k++) {
			const struct grove_node *kid = pn->kids[k];
			cleanup_free char *sub = NULL;
			cleanup_free char *rel = NULL;
			bool entered = false;
			int r;

			if (kid->type != GROVE_FT_DIR)
				continue;
			for (size_t x = find_descent(kd, nk, kid->name);
			     x < nk && strcmp(kd[x].tnode->name, kid->name) == 0 && !entered; x++)
				entered = kd[x].package == ds[i].package;
			if (entered)
				continue;
			sub = strcmp(dir, ".") == 0 ? strdup(kid->name)
						    : grove_child_path(dir, kid->name);
			rel = sub ? pkg_rel(ds[i].package, sub) : NULL;
			if (!rel)
				return -ENOMEM;
			r = p->walk->rd->check_pkg(p->walk->rd->ctx, p->w, rel, p->err);
			if (r)
				return r;
		}
	}
	return 0;
}

static int
kid_cmp(const void *a, const void *b)
{
	return strcmp((*(struct grove_node *const *)a)->name,
		      (*(struct grove_node *const *)b)->name);
}

static int walk_folder(struct planner *p, const char *dir, struct descent *ds, size_t nd);

/* Emits dir's entries in name order, each folder with descents planned (walk_folder), emitted
 * and dropped before the next entry. */
static int
walk_emit(struct planner *p, const char *dir, struct grove_node *tn, struct descent *kd, size_t nk)
{
	cleanup_free struct grove_node **kids = malloc((tn->n_kids + 1) * sizeof(*kids));
	size_t m = 0, used = 0;

	if (!kids)
		return -ENOMEM;
	for (size_t i = 0; i < tn->n_kids; i++)
		if (!grove_planner_unchanged_leaf(tn->kids[i]))
			kids[m++] = tn->kids[i];
	qsort(kids, m, sizeof(*kids), kid_cmp);
	for (size_t i = 0; i < m; i++) {
		struct grove_node *k = kids[i];
		cleanup_free char *path =
			strcmp(dir, ".") == 0 ? strdup(k->name) : grove_child_path(dir, k->name);
		size_t x = find_descent(kd, nk, k->name), e = x;
		int r;

		if (!path)
			return -ENOMEM;
		while (e < nk && kd[e].tnode == k)
			e++;
		if (e == x) {
			r = grove_planner_emit_diff(p, k, path);
		} else {
			r = grove_planner_emit_folder(p, k, path);
			if (r == 0)
				r = walk_folder(p, path, kd + x, e - x);
			p->walk->rd->forget(p->walk->rd->ctx, k);
			for (size_t j = x; j < e; j++)
				p->walk->rd->forget(p->walk->rd->ctx,
						    grove_view_pkg_node(p, kd[j].package, path));
			used += e - x;
		}
		if (r)
			return r;
		if (failed(p))
			return GROVE_SCAN_BAIL;
	}
	/* Every descent is of a folder the plan makes or keeps: one the diff passed is a bug. */
	return used == nk ? 0 : GROVE_SCAN_BAIL;
}

/* Plans the folder dir: runs its descents ds (in order), checks what none enters, then emits
 * its entries, walking their folders. */
static int
walk_folder(struct planner *p, const char *dir, struct descent *ds, size_t nd)
{
	struct walk *wk = p->walk;
	const char *saved_cur = wk->cur;
	const struct grove_node *saved_node = wk->cur_node;
	cleanup_free const char **pkgs = calloc(nd ? nd : 1, sizeof(*pkgs));
	cleanup_free struct descent *kd = NULL;
	struct grove_node *tn;
	size_t np = 0, nk;
	int r;

	if (!pkgs)
		return -ENOMEM;
	for (size_t i = 0; i < nd; i++)
		if (!seen(ds, i, ds[i].package))
			pkgs[np++] = ds[i].package;
	r = walk_load(p, dir, pkgs, np);
	tn = grove_view_tnode(p, dir);
	if (r || !tn)
		return r ? r : GROVE_SCAN_BAIL;
	wk->cur = dir;
	wk->cur_node = tn;
	wk->d = NULL;
	wk->n = wk->cap = 0;
	for (size_t i = 0; i < nd && !failed(p); i++) {
		p->action = ds[i].unstow ? "unstow" : "stow";
		if (ds[i].unstow)
			grove_planner_unstow_contents(p, ds[i].package, dir);
		else
			grove_planner_stow_contents(p, ds[i].package, dir);
	}
	kd = wk->d;
	nk = wk->n;
	wk->d = NULL;
	wk->cur = saved_cur;
	wk->cur_node = saved_node;
	if (failed(p))
		return GROVE_SCAN_BAIL;
	if (nk)
		qsort(kd, nk, sizeof(*kd), descent_cmp);
	r = walk_check(p, dir, ds, nd, kd, nk);
	if (r == 0)
		r = walk_emit(p, dir, tn, kd, nk);
	return r;
}

int
grove_planner_walk(struct grove_world *w, const struct grove_walk_reader *rd,
		   const struct grove_plan_opts *opts, char *const *unstow, size_t n_unstow,
		   char *const *pkgs, size_t n_stow, struct grove_plan *plan,
		   struct grove_error *err)
{
	struct walk wk = { .rd = rd, .cur = "" };
	struct planner p = { .w = w, .o = opts, .plan = plan, .err = err, .walk = &wk };
	cleanup_free struct descent *top = calloc(n_unstow + n_stow + 1, sizeof(*top));
	size_t nt = 0;
	int r;

	if (!top)
		return GROVE_SCAN_BAIL;
	if (!w->stow)
		w->stow = grove_node_new("", GROVE_FT_DIR, NULL);
	if (!w->target)
		w->target = grove_node_new("", GROVE_FT_DIR, NULL);
	if (!w->stow || !w->target)
		return GROVE_SCAN_BAIL;
	/* The top folder's descents: every package, unstows first, as grove_planner_run. */
	for (size_t i = 0; i < n_unstow + n_stow; i++) {
		const char *name = i < n_unstow ? unstow[i] : pkgs[i - n_unstow];
		struct grove_world_pkg *rec = grove_world_pkg_add(w, name);

		if (!rec)
			return GROVE_SCAN_BAIL;
		top[nt++] = (struct descent){
			.tnode = w->target, .package = rec->name, .seq = i, .unstow = i < n_unstow
		};
	}
	{
		cleanup_free const char **names = calloc(nt + 1, sizeof(*names));
		size_t nn = 0;

		if (!names)
			return GROVE_SCAN_BAIL;
		for (size_t i = 0; i < nt; i++)
			if (!seen(top, i, top[i].package))
				names[nn++] = top[i].package;
		r = walk_load(&p, ".", names, nn);
		if (r)
			return GROVE_SCAN_BAIL;
	}
	for (size_t i = 0; i < nt; i++) {
		p.action = top[i].unstow ? "unstow" : "stow";
		if (!grove_planner_check_package(&p, top[i].package))
			return GROVE_SCAN_BAIL;
	}
	r = walk_folder(&p, ".", top, nt);
	free(wk.d);
	grove_planner_release(&p);
	if (r || failed(&p))
		return GROVE_SCAN_BAIL;
	return 0;
}
