/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Profiles: generations built aside as symlink forests, published by rename, switched by rename. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "grove/exec.h"
#include "grove/path.h"
#include "plan/planner.h"
#include "grove/profile.h"
#include "grove/session.h"
#include "grove/stow.h"
#include "plan/world.h"
#include "profile_private.h"
#include "base/util.h"

#include "banned.h" /* last */

/* Keeps summary (and forest) as what the last changing call did or would do. */
static void
keep_plan(struct grove_profile *p, struct grove_plan *summary, struct grove_plan *forest)
{
	grove_plan_release(&p->planned);
	grove_plan_release(&p->planned_forest);
	p->planned = *summary;
	grove_plan_init(summary);
	if (forest) {
		p->planned_forest = *forest;
		grove_plan_init(forest);
	}
}

const struct grove_plan *
grove_profile_planned(const struct grove_profile *p, const struct grove_plan **ret_forest)
{
	if (ret_forest)
		*ret_forest = &p->planned_forest;
	return &p->planned;
}

bool
grove_profile_dry_run(const struct grove_profile *p)
{
	return p->dry_run;
}

/* ---- opening ---- */

/* A root for the folder name inside parent (no symlink followed). */
static int
sub_root(const struct grove_root *parent, const char *name, bool make, struct grove_root *ret,
	 struct grove_error *err)
{
	struct grove_stat st;
	int fd = make ? grove_fs_open_or_make_dir(parent->fd, name, 0755, err)
		      : grove_fs_open_dir_at(parent->fd, name, err);
	int r;

	if (fd < 0)
		return fd;
	r = grove_fs_stat_fd(fd, &st, err);
	if (r < 0) {
		grove_fd_close(fd);
		return r;
	}
	memset(ret, 0, sizeof(*ret));
	ret->fd = fd;
	ret->dev = st.dev;
	ret->ino = st.ino;
	ret->born = grove_fd_born(fd);
	ret->path = grove_strdupf("%s/%s", parent->path, name);
	ret->real = grove_strdupf("%s/%s", strcmp(parent->real, "/") ? parent->real : "", name);
	if (!ret->path || !ret->real) {
		grove_root_release(ret);
		return oom(err);
	}
	return 0;
}

static int still_linked(struct grove_profile *p, struct grove_error *err);
static int rollback_txn(void *ctx, int64_t txn, bool *ret_forward, struct grove_error *err);

/*
 * Removes what opening the profile made when this run logged no transaction
 * and the profile is still empty: NAME.generations (with the lock held), then
 * D and the folders above it that did not exist, each only while empty.
 */
static void
tidy_unused(struct grove_profile *p)
{
	struct grove_error ignore = { 0 };
	struct grove_dirent *ents = NULL;
	struct grove_stat st;
	size_t n = 0;

	if (!p->made_gens || p->began || p->gens.fd < 0 || p->dir.fd < 0 ||
	    grove_fs_list(p->gens.fd, &ents, &n, &ignore) < 0)
		return;
	grove_dirents_free(ents, n);
	/* (Only the folder this run made and locked, still under its name.) */
	if (n != 0 || still_linked(p, &ignore) != 1 ||
	    grove_fs_stat_at(p->dir.fd, p->name, &st, &ignore) < 0 || st.type != GROVE_FT_NONE ||
	    grove_fs_rmdir(p->dir.fd, p->gens_name, &ignore) < 0)
		return;
	(void)grove_fs_sync(p->dir.fd, &ignore);
	if (!p->made_below)
		return;
	/* D and its new parents, deepest first, while each is empty. */
	for (cleanup_free char *path = p->dir_path ? strdup(p->dir_path) : NULL; path;) {
		struct grove_root parent = { .fd = -1 };
		cleanup_free char *up = grove_path_parent(path);
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		int r;

		if (!up || !strcmp(path, p->made_below) || !*base)
			break;
		r = grove_root_open(&parent, *up ? up : path[0] == '/' ? "/" : ".", &ignore);
		if (r >= 0)
			r = grove_fs_rmdir(parent.fd, base, &ignore);
		if (r >= 0)
			(void)grove_fs_sync(parent.fd, &ignore);
		grove_root_release(&parent);
		if (r < 0)
			break;
		free(path);
		path = steal_ptr(up);
	}
}

struct grove_profile *
grove_profile_close(struct grove_profile *p)
{
	if (!p)
		return NULL;
	if (p->have_session)
		tidy_unused(p);
	if (p->have_session)
		grove_session_close(&p->session);
	grove_root_release(&p->gens);
	grove_root_release(&p->dir);
	free(p->name);
	free(p->link_path);
	free(p->gens_name);
	free(p->dir_path);
	free(p->made_below);
	grove_plan_release(&p->planned);
	grove_plan_release(&p->planned_forest);
	free(p);
	return NULL;
}

/* Notes in p->made_below the deepest existing folder above dir when dir
 * does not exist (what tidy_unused may remove is below it). */
static int
find_existing(struct grove_profile *p, const char *dir, struct grove_error *err)
{
	struct grove_error ignore = { 0 };
	cleanup_free char *path = strdup(dir);

	if (!path)
		return oom(err);
	for (bool first = true; *path; first = false) {
		struct grove_root root = { .fd = -1 };
		int r = grove_root_open(&root, path, &ignore);
		char *up;

		grove_root_release(&root);
		if (r != -ENOENT) {
			if (!first && !(p->made_below = strdup(path)))
				return oom(err);
			return 0;
		}
		if (!(up = grove_path_parent(path)))
			return oom(err);
		if (!*up && path[0] == '/') {
			free(up);
			if (!(up = strdup("/")))
				return oom(err);
		}
		free(path);
		path = up;
	}
	/* A relative dir below the current folder. */
	if (dir[0] != '/' && !(p->made_below = strdup("")))
		return oom(err);
	return 0;
}

/* 1 when D/NAME.generations is still the folder p->gens holds, else 0. */
static int
still_linked(struct grove_profile *p, struct grove_error *err)
{
	struct grove_error ignore = { 0 };
	cleanup_fd int fd = grove_fs_open_dir_at(p->dir.fd, p->gens_name, &ignore);
	struct grove_stat st;
	int r;

	if (fd < 0)
		return fd == -ENOENT ? 0
				     : grove_error_set(err, fd, "profile '%s': %s", p->link_path,
						       ignore.msg);
	r = grove_fs_stat_fd(fd, &st, err);
	if (r < 0)
		return r;
	return st.dev == p->gens.dev && st.ino == p->gens.ino;
}

/* Takes the profile's session (the lock and the log of NAME.generations) and
 * recovers an interrupted transaction. 1 when NAME.generations is no longer
 * the folder p->gens holds (open it again). */
static int
lock_and_recover(struct grove_profile *p, const struct grove_profile_opts *opts,
		 int64_t *ret_recovered, struct grove_error *err)
{
	struct grove_session_opts so = {
		.state_opt = opts->state_opt,
		.wait_seconds = opts->wait_seconds,
		.profile_log = true,
		.command = opts->command,
	};
	int r = grove_session_open(&p->session, &p->gens, &so, err);

	if (r == -EWOULDBLOCK)
		grove_error_set(err, r, "profile '%s' is locked by another grove run",
				p->link_path);
	if (r < 0)
		return r;
	p->have_session = true;
	r = still_linked(p, err);
	if (r <= 0)
		return r < 0 ? r : 1;
	/* One recovery for every target: the session's, with the profile's undo as
	 * the rollback (its ops are relative to the profile dir, not the target). */
	grove_session_set_rollback(&p->session, rollback_txn, p);
	r = grove_session_recover(&p->session, NULL, false, ret_recovered, err);
	if (r < 0)
		return grove_error_prefix(err, "profile '%s'", p->link_path);
	return 0;
}

int
grove_profile_open(const struct grove_profile_opts *opts, struct grove_profile **ret,
		   int64_t *ret_recovered, struct grove_error *err)
{
	struct grove_profile *p = calloc(1, sizeof(*p));
	const char *spec = opts->profile && *opts->profile ? opts->profile : "default";
	cleanup_free char *dir = NULL;
	cleanup_free char *copy = NULL;
	int retries = 0;
	int r;

	if (ret_recovered)
		*ret_recovered = 0;
	if (!p)
		return oom(err);
	p->dir.fd = p->gens.fd = -1;
	grove_plan_init(&p->planned);
	grove_plan_init(&p->planned_forest);
	/* A dry run opens as list does: nothing made, no lock, no recovery. */
	p->dry_run = opts->mutate && opts->dry_run;
	p->mutate = opts->mutate && !opts->dry_run;
	if (strchr(spec, '/')) {
		char *slash;
		size_t l = strlen(spec);

		if (!(copy = strdup(spec)))
			goto nomem;
		while (l > 1 && copy[l - 1] == '/')
			copy[--l] = '\0';
		slash = strrchr(copy, '/');
		if (!slash) {
			dir = strdup(".");
			p->name = strdup(copy);
		} else {
			p->name = strdup(slash + 1);
			*slash = '\0';
			dir = strdup(slash == copy ? "/" : copy);
		}
	} else {
		cleanup_free char *state = NULL;

		r = grove_journal_state_dir(opts->state_opt, &state, err);
		if (r < 0)
			goto fail;
		dir = grove_strdupf("%s/profiles", state);
		p->name = strdup(spec);
	}
	if (!dir || !p->name)
		goto nomem;
	r = grove_profile_check_name(p->name, err);
	if (r < 0)
		goto fail;
	p->link_path = grove_strdupf("%s/%s", strcmp(dir, "/") ? dir : "", p->name);
	p->gens_name = grove_strdupf("%s.generations", p->name);
	if (!p->link_path || !p->gens_name)
		goto nomem;
	if (!(p->dir_path = strdup(dir)))
		goto nomem;
again:
	if (p->mutate) {
		r = find_existing(p, dir, err);
		if (r >= 0)
			r = grove_fs_make_dirs(dir, 0755, err);
		if (r < 0) {
			grove_error_prefix(err, "profile '%s'", p->link_path);
			goto fail;
		}
	}
	r = grove_root_open(&p->dir, dir, err);
	if (r == -ENOENT && !p->mutate) {
		*ret = p;
		return 0;
	}
	if (r < 0) {
		grove_error_prefix(err, "profile '%s'", p->link_path);
		goto fail;
	}
	r = sub_root(&p->dir, p->gens_name, false, &p->gens, err);
	if (r == -ENOENT && p->mutate) {
		p->made_gens = true;
		r = sub_root(&p->dir, p->gens_name, true, &p->gens, err);
	}
	if (r == -ENOENT && !p->mutate) {
		p->gens.fd = -1;
		*ret = p;
		return 0;
	}
	if (r < 0) {
		grove_error_prefix(err, "profile '%s'", p->link_path);
		goto fail;
	}
	if (p->mutate) {
		r = lock_and_recover(p, opts, ret_recovered, err);
		/* A run that held the lock before us may have removed the folder it made
		 * (tidy_unused): open it again. */
		if (r == 1 && retries++ < 8) {
			grove_session_close(&p->session);
			p->have_session = false;
			grove_root_release(&p->gens);
			grove_root_release(&p->dir);
			free(p->made_below);
			p->made_below = NULL;
			p->made_gens = false;
			goto again;
		}
		if (r == 1)
			r = grove_error_set(err, -GROVE_E_PRECONDITION,
					    "profile '%s': '%s' keeps changing under this run",
					    p->link_path, p->gens.path);
		if (r < 0)
			goto fail;
	}
	*ret = p;
	return 0;
nomem:
	r = oom(err);
fail:
	grove_profile_close(p);
	return r;
}

/* The canonical path of D, which a dry run may find missing: then its
 * deepest existing folder's canonical path and the rest as given. */
static int
dir_real(struct grove_profile *p, char **ret, struct grove_error *err)
{
	struct grove_error ignore = { 0 };
	cleanup_free char *path = NULL;
	cleanup_free char *rest = strdup("");

	if (p->dir.fd >= 0)
		return (*ret = strdup(p->dir.real)) ? 0 : oom(err);
	if (!rest || !(path = strdup(p->dir_path)))
		return oom(err);
	while (*path) {
		struct grove_root root = { .fd = -1 };
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		char *up, *more;

		if (grove_root_open(&root, path, &ignore) >= 0) {
			*ret = grove_strdupf("%s%s", strcmp(root.real, "/") ? root.real : "", rest);
			grove_root_release(&root);
			return *ret ? 0 : oom(err);
		}
		more = grove_strdupf("/%s%s", base, rest);
		up = grove_path_parent(path);
		if (up && !*up && path[0] == '/') {
			free(up);
			up = strdup("/");
		}
		if (!more || !up) {
			free(more);
			free(up);
			return oom(err);
		}
		free(rest);
		rest = more;
		free(path);
		path = up;
	}
	/* A relative path below the current folder. */
	{
		struct grove_root root = { .fd = -1 };
		int r = grove_root_open(&root, ".", err);

		if (r < 0)
			return r;
		*ret = grove_strdupf("%s%s", strcmp(root.real, "/") ? root.real : "", rest);
		grove_root_release(&root);
		return *ret ? 0 : oom(err);
	}
}

/* ---- transactions ---- */

/* The session's rollback for the profile's log target. */
static int
rollback_txn(void *ctx, int64_t txn, bool *ret_forward, struct grove_error *err)
{
	return grove_profile_undo_txn(ctx, txn, ret_forward, err);
}

/* Begins a transaction of the ops in summary (paths relative to the profile
 * dir) through the session's driver; the session's rollback (set at open) is
 * grove_profile_undo_txn. The temporary entries it makes carry its tag. */
static int
txn_begin(struct grove_profile *p, const struct grove_plan *summary, const char *command,
	  const struct grove_root *stow, struct grove_session_txn *t, struct grove_error *err)
{
	struct grove_session_txn_opts o = {
		.command = command ? command : "grove profile",
		.logged_stow = stow,
	};
	int r = grove_session_begin(&p->session, t, summary, &o, err);

	if (r < 0)
		return r;
	p->began = true;
	snprintf(p->tag, sizeof(p->tag), "%s", t->tag);
	return 0;
}

/* Ends transaction t: r >= 0 commits it; a failure undoes what was done and
 * records why (grove_session_commit and grove_session_abort). */
static int
txn_end(struct grove_profile *p, struct grove_session_txn *t, int r, struct grove_error *err)
{
	p->tag[0] = '\0';
	return r >= 0 ? grove_session_commit(t, err) : grove_session_abort(t, r, err);
}

/* ---- switching ---- */

static int
need_mutate(const struct grove_profile *p, struct grove_error *err)
{
	if (p->dry_run)
		return 0;
	if (!p->mutate || !p->have_session)
		return grove_error_set(err, -GROVE_E_INTERNAL, "profile '%s' was opened read-only",
				       p->link_path);
	return 0;
}

/* Runs the link ops summary[from, to) (paths relative to the profile dir: make
 * a generation link, point the profile link at one by a new link under a
 * private name renamed over the old one, remove a generation link) through
 * the executor as a step of transaction t: each op's precondition is checked
 * at the moment of change, and the profile dir is synced once they are done.
 * On a failure the executor has undone its ops; t's rollback checks again. */
static int
run_link_ops(struct grove_profile *p, const struct grove_session_txn *t,
	     const struct grove_plan *summary, size_t from, size_t to, struct grove_error *err)
{
	struct grove_plan ops;
	int r = 0;

	grove_plan_init(&ops);
	for (size_t i = from; i < to && r >= 0; i++) {
		const struct grove_op *op = &summary->ops[i];

		if (grove_plan_add_op(&ops, op->kind, op->path, op->old_text, op->text, NULL,
				      NULL) < 0)
			r = oom(err);
	}
	if (r >= 0)
		r = grove_session_exec(t, &ops, &p->dir, NULL, err);
	grove_plan_release(&ops);
	return r;
}

static int
add_switch_op(struct grove_profile *p, struct grove_plan *plan, const char *old_text, long n)
{
	cleanup_free char *text = grove_profile_record_link_name(p, n);

	if (!text)
		return -ENOMEM;
	return grove_plan_add_op(plan, old_text ? GROVE_OP_RELINK : GROVE_OP_LINK, p->name,
				 old_text, text, NULL, NULL);
}

static int
switch_to(struct grove_profile *p, long num, const char *command, bool *ret_changed,
	  struct grove_error *err)
{
	struct grove_generation *gens = NULL;
	struct grove_plan summary;
	cleanup_free char *old_text = NULL;
	size_t n = 0;
	long cur = 0;
	struct grove_session_txn txn;
	int r;

	*ret_changed = false;
	grove_plan_init(&summary);
	r = grove_profile_generations(p, &gens, &n, &cur, err);
	if (r >= 0)
		r = grove_profile_read_current(p, &cur, &old_text, err);
	if (r >= 0 && !grove_profile_read_has(gens, n, num))
		r = grove_error_set(err, -GROVE_E_PRECONDITION,
				    "profile '%s' has no generation %ld", p->link_path, num);
	else if (r >= 0 && !grove_profile_read_find(gens, n, num)->complete)
		r = grove_error_set(err, -GROVE_E_PRECONDITION,
				    "generation %ld of profile '%s' is incomplete (its folder or "
				    "record '%s/%ld/" GROVE_PROFILE_RECORD
				    "' is missing or unreadable)",
				    num, p->link_path, p->gens.path, num);
	if (r < 0 || num == cur)
		goto out;
	if (add_switch_op(p, &summary, old_text, num) < 0) {
		r = oom(err);
		goto out;
	}
	if (p->dry_run) {
		*ret_changed = true;
		goto out;
	}
	r = txn_begin(p, &summary, command, NULL, &txn, err);
	if (r < 0)
		goto out;
	r = run_link_ops(p, &txn, &summary, 0, summary.n_ops, err);
	if (r < 0)
		grove_error_prefix(err, "profile '%s'", p->link_path);
	r = txn_end(p, &txn, r, err);
	*ret_changed = r >= 0;
out:
	if (r >= 0)
		keep_plan(p, &summary, NULL);
	grove_plan_release(&summary);
	grove_generations_free(gens, n);
	return r;
}

int
grove_profile_switch(struct grove_profile *p, long number, const char *command, bool *ret_changed,
		     struct grove_error *err)
{
	int r = need_mutate(p, err);

	return r < 0 ? r : switch_to(p, number, command, ret_changed, err);
}

int
grove_profile_rollback(struct grove_profile *p, const char *command, long *ret_number,
		       struct grove_error *err)
{
	struct grove_generation *gens = NULL;
	size_t n = 0;
	long cur = 0, target = 0;
	bool changed;
	int r = need_mutate(p, err);

	if (r < 0)
		return r;
	r = grove_profile_generations(p, &gens, &n, &cur, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if (gens[i].number < cur && gens[i].number > target)
			target = gens[i].number;
	grove_generations_free(gens, n);
	if (cur == 0)
		return grove_error_set(err, -GROVE_E_PRECONDITION,
				       "profile '%s' has no generation to roll back from",
				       p->link_path);
	if (target == 0)
		return grove_error_set(
			err, -GROVE_E_PRECONDITION,
			"profile '%s': generation %ld is the oldest; nothing to roll "
			"back to",
			p->link_path, cur);
	r = switch_to(p, target, command, &changed, err);
	if (r >= 0)
		*ret_number = target;
	return r;
}

/* ---- building ---- */

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Plans the forest of packages in target (as `grove stow` would, with the
 * stow dir seen from target_real). With empty_target the target's scanned
 * state is replaced by an empty folder: the new generation's folder does not
 * exist yet when it is planned (nothing is made before the intent is logged).
 */
static int
plan_forest(const struct grove_root *stow, const struct grove_root *target, const char *target_real,
	    bool empty_target, char *const *unstow, size_t n_unstow, char *const *pkgs, size_t n,
	    const struct grove_profile_spec *spec, struct grove_plan *plan, struct grove_error *err)
{
	struct grove_world w;
	struct grove_scan_opts so = { .dotfiles = spec->dotfiles };
	struct grove_plan_opts po = { .no_folding = spec->no_folding, .dotfiles = spec->dotfiles };
	int r;

	grove_world_init(&w);
	w.stow_path = grove_path_abs2rel(stow->real, target_real);
	if (!w.stow_path) {
		r = oom(err);
		goto out;
	}
	r = grove_ignore_list_default(&w.global_ignore, err);
	if (r >= 0)
		r = grove_scan(&w, stow, target, pkgs, n, &so, err);
	if (r >= 0 && empty_target) {
		grove_node_free(w.target);
		w.target = grove_node_new("", GROVE_FT_DIR, NULL);
		if (!w.target) {
			r = oom(err);
			goto out;
		}
		w.target->listed = true;
	}
	if (r >= 0)
		r = grove_scan_plan_packages(&w, stow, target, &po, unstow, n_unstow, pkgs, n, plan,
					     err);
out:
	grove_world_release(&w);
	return r < 0 ? r : 0;
}

static bool
same_packages(const struct grove_generation *g, char *const *pkgs, size_t n)
{
	if (g->n_packages != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(g->packages[i], pkgs[i]) != 0)
			return false;
	return true;
}

/* True when the current generation was built from the same spec and its
 * forest is what planning the spec again gives (no package changed). */
static int
identical(struct grove_profile *p, const struct grove_generation *cur,
	  const struct grove_root *stow, char *const *pkgs, size_t n,
	  const struct grove_profile_spec *spec, bool *ret, struct grove_error *err)
{
	struct grove_root groot = { .fd = -1 };
	struct grove_plan plan;
	char num[32];
	int r;

	*ret = false;
	if (!cur->complete || strcmp(cur->stow_dir, stow->real) != 0 ||
	    cur->no_folding != spec->no_folding || cur->dotfiles != spec->dotfiles ||
	    !same_packages(cur, pkgs, n))
		return 0;
	snprintf(num, sizeof(num), "%ld", cur->number);
	r = sub_root(&p->gens, num, false, &groot, err);
	if (r < 0)
		return r;
	grove_plan_init(&plan);
	r = plan_forest(stow, &groot, groot.real, false, pkgs, n, pkgs, n, spec, &plan, err);
	*ret = r >= 0 && plan.n_ops == 0 && plan.n_conflicts == 0;
	grove_plan_release(&plan);
	grove_root_release(&groot);
	return r;
}

static void
move_conflicts(struct grove_plan *from, struct grove_plan *to)
{
	if (!to)
		return;
	for (size_t i = 0; i < from->n_conflicts; i++) {
		const struct grove_conflict *c = &from->conflicts[i];

		(void)grove_plan_add_conflict(to, c->action, c->package, c->path, c->message);
	}
}

/* Makes the generation as one executor plan beneath NAME.generations: its
 * folder under a temporary name, the forest in it, the record, then the folder
 * published as <num> (its contents made durable first). */
static int
make_generation(struct grove_profile *p, const struct grove_plan *forest,
		const struct grove_generation *rec, struct grove_error *err)
{
	struct grove_plan plan;
	cleanup_free char *text = grove_profile_record_format(rec);
	cleanup_free char *record = NULL;
	char tmp[256], num[32];
	int r = 0;

	if (!text)
		return oom(err);
	grove_plan_init(&plan);
	snprintf(num, sizeof(num), "%ld", rec->number);
	grove_fs_temp_name(tmp, sizeof(tmp), p->tag, num);
	record = grove_strdupf("%s/%s", tmp, GROVE_PROFILE_RECORD);
	if (!record || grove_plan_add_op(&plan, GROVE_OP_MKDIR, tmp, NULL, NULL, NULL, NULL) < 0)
		r = oom(err);
	grove_plan_foreach_op (forest, op) {
		cleanup_free char *path = r < 0 ? NULL : grove_strdupf("%s/%s", tmp, op->path);

		if (r >= 0 &&
		    (!path || grove_plan_add_op(&plan, op->kind, path, op->old_text, op->text,
						op->stow_path, op->package) < 0))
			r = oom(err);
	}
	if (r >= 0 &&
	    (grove_plan_add_op(&plan, GROVE_OP_WRITE, record, NULL, text, NULL, NULL) < 0 ||
	     grove_plan_add_op(&plan, GROVE_OP_MOVE, tmp, NULL, num, NULL, NULL) < 0))
		r = oom(err);
	if (r >= 0)
		r = grove_profile_undo_run_gens(p, &plan, err);
	if (r < 0)
		grove_error_prefix(err, "build generation %ld of profile '%s'", rec->number,
				   p->link_path);
	grove_plan_release(&plan);
	return r;
}

/* The new generation's number, options, time and stow dir (rec->stow_dir
 * stays NULL when out of memory). */
static void
stamp_record(struct grove_generation *rec, long number, const struct grove_profile_spec *spec,
	     const char *stow_real)
{
	struct timespec ts;

	rec->number = number;
	rec->no_folding = spec->no_folding;
	rec->dotfiles = spec->dotfiles;
	rec->time = (double)time(NULL);
	if (clock_gettime(CLOCK_REALTIME, &ts) == 0) {
		long ms = ts.tv_nsec / 1000000; /* the record keeps milliseconds */

		rec->time = (double)ts.tv_sec + (double)ms / 1e3;
	}
	rec->stow_dir = strdup(stow_real);
}

/* The new generation's packages (sorted, each once) from spec, the stow dir
 * opened and *ret_dreal the profile dir's canonical path; refuses a profile
 * inside the stow dir and a package that is not a folder there. */
static int
check_spec(struct grove_profile *p, const struct grove_profile_spec *spec,
	   struct grove_generation *rec, struct grove_root *stow, char **ret_dreal,
	   struct grove_error *err)
{
	int r = 0;

	for (size_t i = 0; i < spec->n_packages && r >= 0; i++) {
		bool dup = false;

		r = grove_stow_check_package_name(spec->packages[i], err);
		for (size_t k = 0; k < rec->n_packages && !dup; k++)
			dup = !strcmp(rec->packages[k], spec->packages[i]);
		if (r >= 0 && !dup && grove_profile_record_add_package(rec, spec->packages[i]) < 0)
			r = oom(err);
	}
	if (r < 0)
		return r;
	if (rec->n_packages)
		qsort(rec->packages, rec->n_packages, sizeof(char *), cmp_str);
	r = grove_root_open(stow, spec->stow_dir, err);
	if (r < 0) {
		grove_error_prefix(err, "stow directory");
		return r;
	}
	r = dir_real(p, ret_dreal, err);
	if (r < 0)
		return r;
	if (grove_path_strip_prefix(*ret_dreal, stow->real) || !strcmp(*ret_dreal, stow->real))
		return grove_error_set(err, -GROVE_E_BADINPUT,
				       "profile '%s' is inside the stow directory '%s'",
				       p->link_path, spec->stow_dir);
	for (size_t i = 0; i < rec->n_packages && r >= 0; i++) {
		struct grove_stat st;

		r = grove_fs_stat_at(stow->fd, rec->packages[i], &st, err);
		if (r >= 0 && st.type != GROVE_FT_DIR) {
			r = grove_error_set(err, -GROVE_E_BADINPUT,
					    "package '%s' is not a folder in stow directory '%s'",
					    rec->packages[i], spec->stow_dir);
			grove_error_path_in(err, stow->real, rec->packages[i]);
		}
	}
	return r;
}

int
grove_profile_build(struct grove_profile *p, const struct grove_profile_spec *spec,
		    long *ret_number, struct grove_plan *conflicts, struct grove_error *err)
{
	struct grove_root stow = { .fd = -1 };
	struct grove_generation *gens = NULL, rec = { 0 };
	struct grove_plan forest, summary;
	cleanup_free char *old_text = NULL, *new_real = NULL, *lname = NULL, *ltext = NULL;
	cleanup_free char *dreal = NULL;
	size_t n_gens = 0;
	long cur = 0, hi = 0;
	struct grove_session_txn txn;
	int r = need_mutate(p, err);

	*ret_number = 0;
	grove_plan_init(&forest);
	grove_plan_init(&summary);
	if (r < 0)
		return r;
	r = check_spec(p, spec, &rec, &stow, &dreal, err);
	if (r < 0)
		goto out;
	r = grove_profile_generations(p, &gens, &n_gens, &cur, err);
	if (r >= 0)
		r = grove_profile_read_current(p, &cur, &old_text, err);
	if (r >= 0)
		r = grove_profile_read_highest(p, gens, n_gens, &hi, err);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < n_gens && cur; i++) {
		bool same = false;

		if (gens[i].number != cur)
			continue;
		r = identical(p, &gens[i], &stow, rec.packages, rec.n_packages, spec, &same, err);
		if (r < 0 || same)
			goto out; /* nothing to do: *ret_number stays 0 */
	}
	if (hi >= GEN_MAX) {
		r = grove_error_set(err, -GROVE_E_BADINPUT, "profile '%s' has too many generations",
				    p->link_path);
		goto out;
	}
	stamp_record(&rec, hi + 1, spec, stow.real);
	new_real = grove_strdupf("%s/%s/%ld", strcmp(dreal, "/") ? dreal : "", p->gens_name,
				 rec.number);
	lname = grove_profile_record_link_name(p, rec.number);
	ltext = grove_profile_record_link_text(p, rec.number);
	if (!rec.stow_dir || !new_real || !lname || !ltext) {
		r = oom(err);
		goto out;
	}
	/* (A dry run of a new profile scans a stand-in: the scanned target is dropped.) */
	r = plan_forest(&stow,
			p->gens.fd >= 0  ? &p->gens
			: p->dir.fd >= 0 ? &p->dir
					 : &stow,
			new_real, true, NULL, 0, rec.packages, rec.n_packages, spec, &forest, err);
	if (r < 0)
		goto out;
	grove_plan_foreach_op (&forest, op) {
		if (grove_path_under(op->path, GROVE_PROFILE_RECORD) &&
		    grove_plan_add_conflict(&forest, "stow", op->package, op->path,
					    "'" GROVE_PROFILE_RECORD
					    "' is the name of grove's generation record") < 0) {
			r = oom(err);
			goto out;
		}
	}
	if (forest.n_conflicts) {
		grove_plan_sort_conflicts(&forest);
		move_conflicts(&forest, conflicts);
		r = grove_error_set(err, -GROVE_E_CONFLICT,
				    "profile '%s': package '%s' conflicts: %s", p->link_path,
				    forest.conflicts[0].package ? forest.conflicts[0].package : "",
				    forest.conflicts[0].message);
		goto out;
	}
	/* The log names what the transaction makes, relative to the profile dir. */
	if (grove_plan_add_op(&summary, GROVE_OP_MKDIR, ltext, NULL, NULL, NULL, NULL) < 0 ||
	    grove_plan_add_op(&summary, GROVE_OP_LINK, lname, NULL, ltext, NULL, NULL) < 0 ||
	    add_switch_op(p, &summary, old_text, rec.number) < 0) {
		r = oom(err);
		goto out;
	}
	if (p->dry_run) {
		*ret_number = rec.number;
		keep_plan(p, &summary, &forest);
		goto out;
	}
	r = txn_begin(p, &summary, spec->command, &stow, &txn, err);
	if (r < 0)
		goto out;
	rec.txn = txn.id;
	r = make_generation(p, &forest, &rec, err);
	/* The generation's link, synced, before the profile link points at it. */
	if (r >= 0) {
		r = run_link_ops(p, &txn, &summary, 1, 2, err);
		if (r >= 0)
			r = run_link_ops(p, &txn, &summary, 2, 3, err);
		if (r < 0)
			grove_error_prefix(err, "profile '%s'", p->link_path);
	}
	r = txn_end(p, &txn, r, err);
	if (r >= 0) {
		*ret_number = rec.number;
		keep_plan(p, &summary, &forest);
	}
out:
	p->tag[0] = '\0';
	grove_generations_free(gens, n_gens);
	grove_generation_release(&rec);
	grove_plan_release(&forest);
	grove_plan_release(&summary);
	grove_root_release(&stow);
	return r;
}

/* ---- deleting and collecting ---- */

int
grove_profile_delete(struct grove_profile *p, const long *numbers, size_t n, const char *command,
		     struct grove_error *err)
{
	struct grove_generation *gens = NULL;
	struct grove_plan summary;
	size_t n_gens = 0;
	long cur = 0;
	struct grove_session_txn txn;
	int r = need_mutate(p, err);

	if (r < 0)
		return r;
	grove_plan_init(&summary);
	r = grove_profile_generations(p, &gens, &n_gens, &cur, err);
	for (size_t i = 0; i < n && r >= 0; i++) {
		cleanup_free char *lname = grove_profile_record_link_name(p, numbers[i]);
		cleanup_free char *ltext = grove_profile_record_link_text(p, numbers[i]);

		if (!lname || !ltext) {
			r = oom(err);
			break;
		}
		if (numbers[i] == cur)
			r = grove_error_set(err, -GROVE_E_PRECONDITION,
					    "profile '%s': generation %ld is the current one; "
					    "nothing deleted",
					    p->link_path, cur);
		else if (!grove_profile_read_has(gens, n_gens, numbers[i]))
			r = grove_error_set(err, -GROVE_E_PRECONDITION,
					    "profile '%s' has no generation %ld; nothing deleted",
					    p->link_path, numbers[i]);
		else if (grove_plan_add_op(&summary, GROVE_OP_UNLINK, lname, ltext, NULL, NULL,
					   NULL) < 0)
			r = oom(err);
	}
	grove_generations_free(gens, n_gens);
	if (r < 0 || summary.n_ops == 0 || p->dry_run)
		goto out;
	r = txn_begin(p, &summary, command, NULL, &txn, err);
	if (r < 0)
		goto out;
	r = run_link_ops(p, &txn, &summary, 0, summary.n_ops, err);
	if (r < 0)
		grove_error_prefix(err, "profile '%s': delete", p->link_path);
	r = txn_end(p, &txn, r, err);
out:
	if (r >= 0)
		keep_plan(p, &summary, NULL);
	grove_plan_release(&summary);
	return r;
}

int
grove_profile_gc(struct grove_profile *p, const char *command, size_t *ret_removed,
		 struct grove_error *err)
{
	struct grove_generation *gens = NULL;
	struct grove_dirent *ents = NULL;
	struct grove_plan summary;
	size_t n_gens = 0, n_ents = 0;
	long cur = 0, num;
	struct grove_session_txn txn;
	int r = need_mutate(p, err);

	*ret_removed = 0;
	if (r < 0)
		return r;
	grove_plan_init(&summary);
	r = grove_profile_generations(p, &gens, &n_gens, &cur, err);
	if (r >= 0 && p->gens.fd >= 0) /* (none in a dry run of a new profile) */
		r = grove_fs_list(p->gens.fd, &ents, &n_ents, err);
	for (size_t i = 0; i < n_ents && r >= 0; i++) {
		cleanup_free char *path = NULL;

		if (ents[i].type != GROVE_FT_DIR ||
		    !grove_profile_record_number(ents[i].name, strlen(ents[i].name), &num) ||
		    grove_profile_read_has(gens, n_gens, num))
			continue;
		/* Refuse before the first change: a folder holding the user's files stays. */
		{
			struct grove_plan check;

			grove_plan_init(&check);
			r = grove_profile_undo_plan_removal(p, ents[i].name, NULL, &check, err);
			grove_plan_release(&check);
		}
		path = grove_profile_record_link_text(p, num);
		if (r >= 0 && (!path || grove_plan_add_op(&summary, GROVE_OP_RMDIR, path, NULL,
							  NULL, NULL, NULL) < 0))
			r = oom(err);
	}
	grove_dirents_free(ents, n_ents);
	grove_generations_free(gens, n_gens);
	if (r >= 0 && p->dry_run)
		*ret_removed = summary.n_ops;
	if (r < 0 || summary.n_ops == 0 || p->dry_run)
		goto out;
	r = txn_begin(p, &summary, command, NULL, &txn, err);
	if (r < 0)
		goto out;
	/* One executor plan: each folder moved aside, then emptied and removed. */
	{
		struct grove_plan plan;

		grove_plan_init(&plan);
		grove_plan_foreach_op (&summary, op) {
			const char *folder = grove_profile_undo_folder_of(p, op->path);
			char aside[256];

			grove_fs_temp_name(aside, sizeof(aside), p->tag, folder);
			r = grove_profile_undo_plan_removal(p, folder, aside, &plan, err);
			if (r < 0)
				break;
		}
		if (r >= 0)
			r = grove_profile_undo_run_gens(p, &plan, err);
		grove_plan_release(&plan);
	}
	if (r < 0)
		grove_error_prefix(err, "profile '%s': gc", p->link_path);
	/* A failure part-way is finished by txn_end (the folders are unreferenced). */
	r = txn_end(p, &txn, r, err);
	if (r >= 0)
		*ret_removed = summary.n_ops;
out:
	if (r >= 0)
		keep_plan(p, &summary, NULL);
	grove_plan_release(&summary);
	return r;
}

/* ---- the user's link ---- */

int
grove_profile_make_user_link(const struct grove_profile *p, const char *link_path,
			     struct grove_error *err)
{
	struct grove_root parent = { .fd = -1 };
	cleanup_free char *dir = grove_path_parent(link_path);
	cleanup_free char *text = NULL;
	cleanup_free char *have = NULL;
	const char *base = strrchr(link_path, '/') ? strrchr(link_path, '/') + 1 : link_path;
	struct grove_stat st;
	int r;

	if (!dir)
		return oom(err);
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return grove_error_set(err, -GROVE_E_BADINPUT, "link '%s': not a file name",
				       link_path);
	if (p->dir.fd < 0)
		return grove_error_set(err, -GROVE_E_PRECONDITION,
				       "profile '%s' does not exist yet", p->link_path);
	text = grove_strdupf("%s/%s", strcmp(p->dir.real, "/") ? p->dir.real : "", p->name);
	if (!text)
		return oom(err);
	r = grove_root_open(&parent, link_path[0] == '/' && !*dir ? "/" : (*dir ? dir : "."), err);
	if (r >= 0)
		r = grove_fs_stat_at(parent.fd, base, &st, err);
	if (r >= 0 && st.type == GROVE_FT_NONE)
		r = grove_fs_link_create(parent.fd, base, text, err);
	else if (r >= 0 && st.type == GROVE_FT_LINK) {
		r = grove_fs_readlink_at(parent.fd, base, &have, err);
		if (r >= 0 && strcmp(have, text) != 0)
			r = grove_error_set(err, -GROVE_E_PRECONDITION,
					    "link '%s' points to '%s', not to profile '%s'; "
					    "leaving it",
					    link_path, have, text);
	} else if (r >= 0) {
		r = grove_error_set(err, -GROVE_E_PRECONDITION,
				    "'%s' exists and is not a link; leaving it", link_path);
	}
	if (r >= 0)
		r = grove_fs_sync(parent.fd, err);
	grove_root_release(&parent);
	return r;
}
