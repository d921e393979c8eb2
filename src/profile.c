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
#include "grove/planner.h"
#include "grove/profile.h"
#include "grove/session.h"
#include "grove/stow.h"
#include "grove/world.h"
#include "util.h"

#define PLAN_ROUNDS_MAX 4096
#define RECORD_MAX      (1 << 20)
#define NAME_LEN_MAX    200
#define GEN_MAX         1000000000L

struct grove_profile {
	char *name;
	char *link_path; /* D/NAME as given, for messages */
	char *gens_name; /* NAME.generations */
	struct grove_root dir;
	struct grove_root gens; /* fd -1 when missing (read-only open of a new profile) */
	struct grove_session session;
	bool have_session;
	bool mutate;
	/* What this run made to open the profile, removed again at close when the
	 * run changed nothing (a refused first build leaves nothing behind). */
	char *dir_path;   /* D as opened */
	char *made_below; /* the deepest folder above D that existed, when D did not */
	bool made_gens;   /* NAME.generations did not exist */
	bool began;       /* a transaction was logged */
	/* The tag of the temporary entries the running transaction (or its
	 * recovery) makes: its id, as the executor's temp_tag. */
	char tag[32];
	bool dry_run;
	struct grove_plan planned;        /* the last changing call's summary ops */
	struct grove_plan planned_forest; /* and, for a build, the new generation's forest */
};

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

/* ---- names ---- */

/* A generation number as written in names: decimal, no sign, no leading zero. */
static bool
parse_number(const char *s, size_t len, long *ret)
{
	long n = 0;

	if (len == 0 || len > 10 || s[0] == '0')
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		n = n * 10 + (s[i] - '0');
	}
	if (n > GEN_MAX)
		return false;
	*ret = n;
	return true;
}

/* "PROFILE-<n>-link" -> n, for the profile named profile. */
static bool
parse_link_of(const char *profile, const char *name, long *ret)
{
	size_t nl = strlen(profile), l = strlen(name);

	if (l < nl + 7 || strncmp(name, profile, nl) != 0 || name[nl] != '-' ||
	    strcmp(name + l - 5, "-link") != 0)
		return false;
	return parse_number(name + nl + 1, l - nl - 6, ret);
}

/* "NAME-<n>-link" -> n. */
static bool
parse_gen_link(const struct grove_profile *p, const char *name, long *ret)
{
	return parse_link_of(p->name, name, ret);
}

static char *
gen_link_name(const struct grove_profile *p, long n)
{
	return grove_strdupf("%s-%ld-link", p->name, n);
}

static char *
gen_link_text(const struct grove_profile *p, long n)
{
	return grove_strdupf("%s/%ld", p->gens_name, n);
}

static int
oom(struct grove_error *err)
{
	return grove_error_set(err, -ENOMEM, "out of memory");
}

const char *
grove_profile_link_path(const struct grove_profile *p)
{
	return p->link_path;
}

const char *
grove_profile_name(const struct grove_profile *p)
{
	return p->name;
}

/* ---- records ---- */

void
grove_generation_release(struct grove_generation *g)
{
	if (!g)
		return;
	free(g->stow_dir);
	for (size_t i = 0; i < g->n_packages; i++)
		free(g->packages[i]);
	free(g->packages);
	memset(g, 0, sizeof(*g));
}

void
grove_generations_free(struct grove_generation *g, size_t n)
{
	for (size_t i = 0; g && i < n; i++)
		grove_generation_release(&g[i]);
	free(g);
}

static char *
record_format(const struct grove_generation *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f,
		"grove-generation 1\nnumber %ld\ntime %.3f\nstow %s\nfolding %s\ndotfiles %s\n"
		"txn %lld\n",
		g->number, g->time, g->stow_dir, g->no_folding ? "no" : "yes",
		g->dotfiles ? "yes" : "no", (long long)g->txn);
	for (size_t i = 0; i < g->n_packages; i++)
		fprintf(f, "package %s\n", g->packages[i]);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int
add_package(struct grove_generation *g, const char *name)
{
	char **n = realloc(g->packages, (g->n_packages + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	g->packages = n;
	if (!(g->packages[g->n_packages] = strdup(name)))
		return -ENOMEM;
	g->n_packages++;
	return 0;
}

/* Parses a record; unknown keys are skipped (a later grove may add some). */
static int
record_parse(char *buf, struct grove_generation *g)
{
	bool magic = false;

	for (char *line = buf, *next; line && *line; line = next) {
		char *sp;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp++ = '\0';
		if (!strcmp(line, "grove-generation"))
			magic = !strcmp(sp, "1");
		else if (!strcmp(line, "time"))
			g->time = strtod(sp, NULL);
		else if (!strcmp(line, "stow") && !g->stow_dir && !(g->stow_dir = strdup(sp)))
			return -ENOMEM;
		else if (!strcmp(line, "folding"))
			g->no_folding = !strcmp(sp, "no");
		else if (!strcmp(line, "dotfiles"))
			g->dotfiles = !strcmp(sp, "yes");
		else if (!strcmp(line, "txn"))
			g->txn = strtoll(sp, NULL, 10);
		else if (!strcmp(line, "package") && add_package(g, sp) < 0)
			return -ENOMEM;
	}
	if (!magic || !g->stow_dir)
		return -EINVAL;
	/* Nothing read back is trusted (DESIGN.md invariant 8): the stow dir an
	 * install or remove defaults to must be an absolute, canonical path, and
	 * every package a single name. */
	{
		cleanup_free char *canon = grove_path_canon(g->stow_dir);

		if (!canon)
			return -ENOMEM;
		if (g->stow_dir[0] != '/' || strcmp(canon, g->stow_dir) != 0 ||
		    strstr(g->stow_dir, "/../") || strlen(g->stow_dir) >= PATH_MAX ||
		    (strlen(g->stow_dir) >= 3 &&
		     !strcmp(g->stow_dir + strlen(g->stow_dir) - 3, "/..")))
			return -EINVAL;
	}
	for (size_t i = 0; i < g->n_packages; i++)
		if (!grove_path_is_name(g->packages[i]))
			return -EINVAL;
	return 0;
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
	ret->path = grove_strdupf("%s/%s", parent->path, name);
	ret->real = grove_strdupf("%s/%s", strcmp(parent->real, "/") ? parent->real : "", name);
	if (!ret->path || !ret->real) {
		grove_root_release(ret);
		return oom(err);
	}
	return 0;
}

static int recover(struct grove_profile *p, int64_t *ret_recovered, struct grove_error *err);

static int still_linked(struct grove_profile *p, struct grove_error *err);

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
	for (cleanup_free char *path = strdup(p->dir_path); path;) {
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

int
grove_profile_check_name(const char *name, struct grove_error *err)
{
	size_t l;

	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || strlen(name) > NAME_LEN_MAX ||
	    !strncmp(name, ".grove-", 7))
		return grove_error_set(err, -GROVE_E_BADINPUT, "profile name '%s': not allowed",
				       name);
	l = strlen(name);
	/* Names another profile in the same folder uses for its generations. */
	if ((l >= 12 && !strcmp(name + l - 12, ".generations")) ||
	    (l >= 5 && !strcmp(name + l - 5, "-link")))
		return grove_error_set(err, -GROVE_E_BADINPUT,
				       "profile name '%s': ends like a generation's name", name);
	for (const char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return grove_error_set(err, -GROVE_E_BADINPUT,
					       "profile name '%s': control character", name);
	return 0;
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
		size_t l;

		if (!(copy = strdup(spec)))
			goto nomem;
		l = strlen(copy);
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
		struct grove_session_opts so = {
			.state_opt = opts->state_opt,
			.wait_seconds = opts->wait_seconds,
			.profile_log = true,
		};

		r = grove_session_open(&p->session, &p->gens, &so, err);
		if (r == -EWOULDBLOCK)
			grove_error_set(err, r, "profile '%s' is locked by another grove run",
					p->link_path);
		if (r < 0)
			goto fail;
		p->have_session = true;
		/* A run that held the lock before us may have removed the folder it made
		 * (tidy_unused): open it again. */
		r = still_linked(p, err);
		if (r == 0 && retries++ < 8) {
			grove_session_close(&p->session);
			p->have_session = false;
			grove_root_release(&p->gens);
			grove_root_release(&p->dir);
			free(p->made_below);
			p->made_below = NULL;
			p->made_gens = false;
			goto again;
		}
		if (r == 0)
			r = grove_error_set(err, -GROVE_E_PRECONDITION,
					    "profile '%s': '%s' keeps changing under this run",
					    p->link_path, p->gens.path);
		if (r < 0)
			goto fail;
		r = recover(p, ret_recovered, err);
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

/* ---- reading the disk ---- */

/* The generation the profile link points at, or 0 when there is no link. */
static int
read_current(struct grove_profile *p, long *ret, char **ret_text, struct grove_error *err)
{
	struct grove_stat st;
	cleanup_free char *text = NULL;
	int r;

	*ret = 0;
	if (ret_text)
		*ret_text = NULL;
	if (p->dir.fd < 0)
		return 0;
	r = grove_fs_stat_at(p->dir.fd, p->name, &st, err);
	if (r < 0)
		return r;
	if (st.type == GROVE_FT_NONE)
		return 0;
	if (st.type != GROVE_FT_LINK)
		return grove_error_set(err, -GROVE_E_PRECONDITION,
				       "profile '%s' is not a link; leaving it alone",
				       p->link_path);
	r = grove_fs_readlink_at(p->dir.fd, p->name, &text, err);
	if (r < 0)
		return r;
	if (!parse_gen_link(p, text, ret))
		return grove_error_set(err, -GROVE_E_PRECONDITION,
				       "profile '%s' points to '%s', which is not one of its "
				       "generations",
				       p->link_path, text);
	if (ret_text)
		*ret_text = steal_ptr(text);
	return 0;
}

static int
cmp_gen(const void *a, const void *b)
{
	const struct grove_generation *x = a, *y = b;

	return (x->number > y->number) - (x->number < y->number);
}

static void
read_record(struct grove_profile *p, struct grove_generation *g, const char *text)
{
	cleanup_free char *want = gen_link_text(p, g->number);
	cleanup_free char *buf = NULL;
	cleanup_fd int fd = -1;
	struct grove_error ignore = { 0 };
	char num[32];
	size_t len = 0;

	if (!want || strcmp(want, text) != 0 || p->gens.fd < 0)
		return;
	snprintf(num, sizeof(num), "%ld", g->number);
	fd = grove_fs_open_dir_at(p->gens.fd, num, &ignore);
	if (fd < 0 ||
	    grove_fs_read_file_at(fd, GROVE_PROFILE_RECORD, RECORD_MAX, &buf, &len, &ignore) < 0)
		return;
	/* A record someone else could have written is no record: its generation
	 * counts as incomplete (install and remove then refuse to start from it). */
	{
		struct grove_stat st;

		if (grove_fs_stat_at(fd, GROVE_PROFILE_RECORD, &st, &ignore) < 0 ||
		    (st.uid != geteuid() && st.uid != 0) || (st.mode & (S_IWGRP | S_IWOTH)))
			return;
	}
	g->complete = record_parse(buf, g) == 0;
	if (!g->complete) {
		struct grove_generation keep = { .number = g->number, .current = g->current };

		grove_generation_release(g);
		*g = keep;
	}
}

int
grove_profile_generations(struct grove_profile *p, struct grove_generation **ret, size_t *ret_n,
			  long *ret_current, struct grove_error *err)
{
	struct grove_dirent *ents = NULL;
	struct grove_generation *gens = NULL;
	size_t n_ents = 0, n = 0;
	long cur = 0;
	int r;

	*ret = NULL;
	*ret_n = 0;
	*ret_current = 0;
	if (p->dir.fd < 0)
		return 0;
	r = read_current(p, &cur, NULL, err);
	if (r < 0)
		return r;
	r = grove_fs_list(p->dir.fd, &ents, &n_ents, err);
	if (r < 0)
		return grove_error_prefix(err, "profile '%s'", p->link_path);
	gens = calloc(n_ents ? n_ents : 1, sizeof(*gens));
	if (!gens) {
		grove_dirents_free(ents, n_ents);
		return oom(err);
	}
	for (size_t i = 0; i < n_ents && r >= 0; i++) {
		struct grove_generation *g = &gens[n];
		cleanup_free char *text = NULL;
		long num;

		if (ents[i].type != GROVE_FT_LINK || !parse_gen_link(p, ents[i].name, &num))
			continue;
		r = grove_fs_readlink_at(p->dir.fd, ents[i].name, &text, err);
		if (r == -ENOENT) {
			r = 0;
			continue;
		}
		if (r < 0)
			break;
		g->number = num;
		g->current = num == cur;
		read_record(p, g, text);
		n++;
	}
	grove_dirents_free(ents, n_ents);
	if (r < 0) {
		grove_generations_free(gens, n);
		return r;
	}
	qsort(gens, n, sizeof(*gens), cmp_gen);
	*ret = gens;
	*ret_n = n;
	*ret_current = cur;
	return 0;
}

/* The highest number any generation link or generation folder has. */
static int
highest_number(struct grove_profile *p, const struct grove_generation *gens, size_t n, long *ret,
	       struct grove_error *err)
{
	struct grove_dirent *ents = NULL;
	size_t n_ents = 0;
	long hi = 0, num;
	int r;

	for (size_t i = 0; i < n; i++)
		if (gens[i].number > hi)
			hi = gens[i].number;
	*ret = hi;
	if (p->gens.fd < 0) /* a dry run of a new profile */
		return 0;
	r = grove_fs_list(p->gens.fd, &ents, &n_ents, err);
	if (r < 0)
		return grove_error_prefix(err, "profile '%s'", p->link_path);
	for (size_t i = 0; i < n_ents; i++)
		if (parse_number(ents[i].name, strlen(ents[i].name), &num) && num > hi)
			hi = num;
	grove_dirents_free(ents, n_ents);
	*ret = hi;
	return 0;
}

/* ---- recognising a profile's log target ---- */

/* The profile name NAME when target's folder is called NAME.generations, or NULL. */
static char *
log_candidate(const struct grove_root *target)
{
	const char *base = strrchr(target->real, '/');
	size_t l;

	base = base ? base + 1 : target->real;
	l = strlen(base);
	if (l <= 12 || strcmp(base + l - 12, ".generations") != 0)
		return NULL;
	return strndup(base, l - 12);
}

/* "NAME.generations/<n>", a generation's folder seen from the profile dir. */
static bool
is_gen_folder_text(const char *name, const char *text)
{
	size_t nl = strlen(name);
	long num;

	return text && strncmp(text, name, nl) == 0 && !strncmp(text + nl, ".generations/", 13) &&
	       parse_number(text + nl + 13, strlen(text + nl + 13), &num);
}

/* The disk's evidence: the profile's links beside the folder, or a generation
 * (a numbered folder holding a record) inside it. */
static bool
log_on_disk(const struct grove_root *target, const char *name, const char *parent_path)
{
	struct grove_error ignore = { 0 };
	struct grove_root parent = { .fd = -1 };
	struct grove_dirent *ents = NULL;
	size_t n = 0;
	bool found = false;
	long num;

	if (grove_root_open(&parent, *parent_path ? parent_path : "/", &ignore) >= 0 &&
	    grove_fs_list(parent.fd, &ents, &n, &ignore) >= 0) {
		for (size_t i = 0; i < n && !found; i++) {
			cleanup_free char *text = NULL;
			bool profile_link = !strcmp(ents[i].name, name);

			if (ents[i].type != GROVE_FT_LINK ||
			    (!profile_link && !parse_link_of(name, ents[i].name, &num)) ||
			    grove_fs_readlink_at(parent.fd, ents[i].name, &text, &ignore) < 0)
				continue;
			found = profile_link ? parse_link_of(name, text, &num)
					     : is_gen_folder_text(name, text);
		}
	}
	grove_dirents_free(ents, n);
	grove_root_release(&parent);
	ents = NULL;
	n = 0;
	if (!found && grove_fs_list(target->fd, &ents, &n, &ignore) >= 0) {
		for (size_t i = 0; i < n && !found; i++) {
			cleanup_fd int fd = -1;
			struct grove_stat st;

			if (ents[i].type != GROVE_FT_DIR ||
			    !parse_number(ents[i].name, strlen(ents[i].name), &num))
				continue;
			fd = grove_fs_open_dir_at(target->fd, ents[i].name, &ignore);
			found = fd >= 0 &&
				grove_fs_stat_at(fd, GROVE_PROFILE_RECORD, &st, &ignore) >= 0 &&
				st.type == GROVE_FT_REG;
		}
	}
	grove_dirents_free(ents, n);
	return found;
}

/* The log's evidence: a transaction of the target with an op only a profile
 * makes (its link to a generation link, a generation link, a generation folder). */
static int
log_in_journal(struct grove_journal *j, int64_t target_id, const char *name, bool *ret,
	       struct grove_error *err)
{
	struct grove_txn *txns = NULL;
	size_t n = 0;
	int r = grove_journal_list(j, target_id, 0, &txns, &n, err);

	*ret = false;
	for (size_t i = n; i-- > 0 && r >= 0 && !*ret;) {
		struct grove_plan ops;

		grove_plan_init(&ops);
		r = grove_journal_ops(j, txns[i].id, &ops, err);
		for (size_t k = 0; k < ops.n_ops && r >= 0 && !*ret; k++) {
			const struct grove_op *op = &ops.ops[k];
			const char *text = op->text ? op->text : op->old_text;
			long num;

			switch (op->kind) {
			case GROVE_OP_MKDIR:
			case GROVE_OP_RMDIR:
				*ret = is_gen_folder_text(name, op->path);
				break;
			case GROVE_OP_LINK:
			case GROVE_OP_UNLINK:
			case GROVE_OP_RELINK:
				*ret = (!strcmp(op->path, name) && text &&
					parse_link_of(name, text, &num)) ||
				       (parse_link_of(name, op->path, &num) &&
					is_gen_folder_text(name, text));
				break;
			default:
				break;
			}
		}
		grove_plan_release(&ops);
	}
	grove_txns_free(txns, n);
	return r;
}

int
grove_profile_log_owner(const struct grove_root *target, struct grove_journal *j, int64_t target_id,
			char **ret_profile, struct grove_error *err)
{
	cleanup_free char *name = log_candidate(target);
	cleanup_free char *parent = NULL;
	bool found = false;
	int r;

	*ret_profile = NULL;
	if (!name || !*name)
		return 0;
	parent = grove_path_parent(target->real);
	if (!parent)
		return oom(err);
	if (j) {
		r = log_in_journal(j, target_id, name, &found, err);
		if (r < 0)
			return r;
	} else {
		found = log_on_disk(target, name, parent);
	}
	if (found && !(*ret_profile = grove_strdupf("%s/%s", parent, name)))
		return oom(err);
	return 0;
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

/* ---- removing what grove made ---- */

/*
 * Removes (or with check_only, checks) the folder name in dirfd holding only
 * links, folders and, at its top, the record file: a generation's forest.
 * Anything else is the user's, and stops it before it is touched.
 */
static int
remove_tree(int dirfd, const char *name, const char *where, bool top, bool check_only,
	    struct grove_error *err)
{
	cleanup_fd int fd = grove_fs_open_dir_at(dirfd, name, err);
	cleanup_free char *path = grove_strdupf("%s/%s", where, name);
	struct grove_dirent *ents = NULL;
	size_t n = 0;
	int r;

	if (fd < 0)
		return fd;
	if (!path)
		return oom(err);
	r = grove_fs_list(fd, &ents, &n, err);
	for (size_t i = 0; i < n && r >= 0; i++) {
		const struct grove_dirent *e = &ents[i];

		if (e->type == GROVE_FT_DIR)
			r = remove_tree(fd, e->name, path, false, check_only, err);
		else if (e->type == GROVE_FT_LINK ||
			 (top && e->type == GROVE_FT_REG && !strcmp(e->name, GROVE_PROFILE_RECORD)))
			r = check_only ? 0 : grove_fs_unlink_file(fd, e->name, err);
		else
			r = grove_error_set(err, -GROVE_E_PRECONDITION,
					    "'%s/%s' is not a link or folder grove made; leaving "
					    "the generation alone",
					    path, e->name);
	}
	grove_dirents_free(ents, n);
	if (r < 0 || check_only)
		return r;
	return grove_fs_rmdir(dirfd, name, err);
}

/* Renames the generation folder name aside (a private name tagged with the
 * transaction), so that it is never seen half-removed under its number, then
 * removes it. */
static int
remove_generation_folder(struct grove_profile *p, const char *name, struct grove_error *err)
{
	char aside[256];
	int r;

	grove_fs_temp_name(aside, sizeof(aside), p->tag, name);
	r = grove_fs_move(p->gens.fd, name, p->gens.fd, aside, RENAME_NOREPLACE, err);
	if (r < 0)
		return r;
	r = grove_fs_sync(p->gens.fd, err);
	if (r < 0)
		return r;
	return remove_tree(p->gens.fd, aside, p->gens.path, true, false, err);
}

/* ---- transactions ---- */

static int undo_txn(struct grove_profile *p, int64_t txn, bool *ret_forward,
		    struct grove_error *err);

static int
rollback_txn(void *ctx, int64_t txn, bool *ret_forward, struct grove_error *err)
{
	return undo_txn(ctx, txn, ret_forward, err);
}

/* Begins a transaction of the ops in summary (paths relative to the profile
 * dir) through the session's driver; its rollback is undo_txn, recovery's
 * own code. The temporary entries it makes carry its tag. */
static int
txn_begin(struct grove_profile *p, const struct grove_plan *summary, const char *command,
	  const struct grove_root *stow, struct grove_session_txn *t, struct grove_error *err)
{
	struct grove_session_txn_opts o = {
		.command = command ? command : "grove profile",
		.logged_stow = stow,
		.rollback = rollback_txn,
		.rollback_ctx = p,
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

/* After the last component of "NAME.generations/<n>": the folder's name. */
static const char *
gen_folder_of(const struct grove_profile *p, const char *path)
{
	size_t l = strlen(p->gens_name);

	if (strncmp(path, p->gens_name, l) != 0 || path[l] != '/')
		return NULL;
	return path + l + 1;
}

static int
link_text_is(int dirfd, const char *name, const char *text, bool *ret, struct grove_error *err)
{
	struct grove_stat st;
	cleanup_free char *have = NULL;
	int r = grove_fs_stat_at(dirfd, name, &st, err);

	*ret = false;
	if (r < 0 || st.type != GROVE_FT_LINK)
		return r;
	r = grove_fs_readlink_at(dirfd, name, &have, err);
	if (r < 0)
		return r;
	*ret = strcmp(have, text) == 0;
	return 0;
}

/* Removes the transaction's temporary entries: links in the profile dir (a
 * link being replaced or removed), folders in NAME.generations (a generation
 * being built or removed). */
static int
remove_temps(struct grove_profile *p, const char *tag, struct grove_error *err)
{
	struct grove_dirent *ents = NULL;
	size_t n = 0;
	int r = grove_fs_list(p->dir.fd, &ents, &n, err);

	for (size_t i = 0; i < n && r >= 0; i++) {
		if (!grove_fs_is_temp_of(ents[i].name, tag))
			continue;
		if (ents[i].type != GROVE_FT_LINK)
			r = grove_error_set(err, -GROVE_E_STUCK,
					    "temporary entry '%s/%s' is not a link grove made",
					    p->dir.path, ents[i].name);
		else
			r = grove_fs_unlink_file(p->dir.fd, ents[i].name, err);
	}
	grove_dirents_free(ents, n);
	if (r < 0)
		return r;
	r = grove_fs_list(p->gens.fd, &ents, &n, err);
	for (size_t i = 0; i < n && r >= 0; i++) {
		if (!grove_fs_is_temp_of(ents[i].name, tag))
			continue;
		if (ents[i].type != GROVE_FT_DIR)
			r = grove_fs_unlink_file(p->gens.fd, ents[i].name, err);
		else
			r = remove_tree(p->gens.fd, ents[i].name, p->gens.path, true, false, err);
	}
	grove_dirents_free(ents, n);
	return r;
}

/*
 * Puts the profile back to the state before transaction txn (a build, switch
 * or delete), or finishes it (a gc: its folders are unreferenced, and half
 * of one cannot be put back, so *ret_forward is set and they all go). Only
 * entries that are as the transaction would have left them are touched.
 * Safe to run again after a crash inside it.
 */
static int
undo_txn(struct grove_profile *p, int64_t txn, bool *ret_forward, struct grove_error *err)
{
	struct grove_plan ops;
	char tag[32];
	int r;

	*ret_forward = false;
	snprintf(tag, sizeof(tag), "%lld", (long long)txn);
	grove_plan_init(&ops);
	snprintf(p->tag, sizeof(p->tag), "%s", tag);
	r = grove_journal_ops(p->session.journal, txn, &ops, err);
	for (size_t i = 0; i < ops.n_ops; i++)
		if (ops.ops[i].kind == GROVE_OP_RMDIR)
			*ret_forward = true;
	if (r >= 0)
		r = remove_temps(p, tag, err);
	for (size_t i = ops.n_ops; i-- > 0 && r >= 0;) {
		const struct grove_op *op = &ops.ops[i];
		const char *folder = gen_folder_of(p, op->path);
		struct grove_stat st;
		bool is = false;

		switch (op->kind) {
		case GROVE_OP_RELINK:
			r = link_text_is(p->dir.fd, op->path, op->text, &is, err);
			if (r >= 0 && is)
				r = grove_fs_link_replace(p->dir.fd, op->path, op->text,
							  op->old_text, p->tag, err);
			break;
		case GROVE_OP_LINK:
			r = link_text_is(p->dir.fd, op->path, op->text, &is, err);
			if (r >= 0 && is)
				r = grove_fs_link_remove(p->dir.fd, op->path, op->text, p->tag,
							 err);
			break;
		case GROVE_OP_UNLINK:
			r = grove_fs_stat_at(p->dir.fd, op->path, &st, err);
			if (r >= 0 && st.type == GROVE_FT_NONE)
				r = grove_fs_link_create(p->dir.fd, op->path, op->old_text, err);
			break;
		case GROVE_OP_MKDIR:
		case GROVE_OP_RMDIR:
			if (!folder) {
				r = grove_error_set(err, -GROVE_E_STUCK,
						    "transaction %lld names '%s', which is not a "
						    "generation of profile '%s'",
						    (long long)txn, op->path, p->link_path);
				break;
			}
			r = grove_fs_stat_at(p->gens.fd, folder, &st, err);
			if (r >= 0 && st.type == GROVE_FT_DIR)
				r = remove_generation_folder(p, folder, err);
			break;
		default:
			r = grove_error_set(err, -GROVE_E_STUCK,
					    "transaction %lld has a '%s' op, which profiles never "
					    "make",
					    (long long)txn, grove_op_kind_name(op->kind));
		}
	}
	if (r >= 0)
		r = grove_fs_sync(p->gens.fd, err);
	if (r >= 0)
		r = grove_fs_sync(p->dir.fd, err);
	p->tag[0] = '\0';
	grove_plan_release(&ops);
	return r;
}

static int
recover(struct grove_profile *p, int64_t *ret_recovered, struct grove_error *err)
{
	struct grove_error jerr = { 0 };
	int64_t txn = 0;
	bool forward = false;
	int r;

	r = grove_journal_unfinished(p->session.journal, p->session.target_id, &txn, err);
	if (r < 0 || txn == 0)
		return r;
	r = undo_txn(p, txn, &forward, err);
	if (r < 0) {
		grove_error_prefix(err, "recover interrupted transaction %lld of profile '%s'",
				   (long long)txn, p->link_path);
		if (grove_journal_finish(p->session.journal, txn, GROVE_TXN_STUCK, err->msg,
					 &jerr) < 0)
			grove_error_prefix(err, "(the log could not record it: %s)", jerr.msg);
		err->code = r = -GROVE_E_STUCK;
		return r;
	}
	r = grove_journal_finish(p->session.journal, txn,
				 forward ? GROVE_TXN_COMMITTED : GROVE_TXN_ROLLED_BACK,
				 forward ? "interrupted; finished by recovery"
					 : "interrupted; rolled back by recovery",
				 err);
	if (r >= 0)
		r = grove_fs_sync(p->session.state.fd, err);
	if (r >= 0 && ret_recovered)
		*ret_recovered = txn;
	return r;
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

/* Points the profile link at generation n's link: a new link under a private
 * name renamed over the old one (or made, for the first generation). */
static int
point_profile(struct grove_profile *p, const char *old_text, long n, struct grove_error *err)
{
	cleanup_free char *text = gen_link_name(p, n);
	int r;

	if (!text)
		return oom(err);
	r = old_text ? grove_fs_link_replace(p->dir.fd, p->name, old_text, text, p->tag, err)
		     : grove_fs_link_create(p->dir.fd, p->name, text, err);
	if (r >= 0)
		r = grove_fs_sync(p->dir.fd, err);
	if (r < 0)
		return grove_error_prefix(err, "profile '%s'", p->link_path);
	return 0;
}

static int
add_switch_op(struct grove_profile *p, struct grove_plan *plan, const char *old_text, long n)
{
	cleanup_free char *text = gen_link_name(p, n);

	if (!text)
		return -ENOMEM;
	return grove_plan_add_op(plan, old_text ? GROVE_OP_RELINK : GROVE_OP_LINK, p->name,
				 old_text, text, NULL, NULL);
}

static const struct grove_generation *
find_generation(const struct grove_generation *gens, size_t n, long num)
{
	for (size_t i = 0; i < n; i++)
		if (gens[i].number == num)
			return &gens[i];
	return NULL;
}

static bool
has_generation(const struct grove_generation *gens, size_t n, long num)
{
	return find_generation(gens, n, num) != NULL;
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
		r = read_current(p, &cur, &old_text, err);
	if (r >= 0 && !has_generation(gens, n, num))
		r = grove_error_set(err, -GROVE_E_PRECONDITION,
				    "profile '%s' has no generation %ld", p->link_path, num);
	else if (r >= 0 && !find_generation(gens, n, num)->complete)
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
	r = point_profile(p, old_text, num, err);
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
	for (int round = 0; r >= 0; round++) {
		r = grove_planner_run(&w, &po, unstow, n_unstow, pkgs, n, plan, err);
		if (r != -EAGAIN)
			break;
		if (round >= PLAN_ROUNDS_MAX) {
			r = grove_error_set(err, -GROVE_E_INTERNAL,
					    "planning did not settle after %d rounds", round);
			break;
		}
		grove_plan_release(plan);
		grove_world_reset_plan(&w);
		r = grove_scan_needs(&w, stow, err);
	}
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

/* Makes the forest under a temporary name, writes the record, syncs, and
 * publishes it as NAME.generations/<num>. */
static int
make_generation(struct grove_profile *p, const struct grove_plan *forest,
		const struct grove_root *stow, const struct grove_generation *rec,
		struct grove_error *err)
{
	struct grove_exec_opts eo = { 0 };
	struct grove_root groot = { .fd = -1 };
	struct grove_stat st;
	cleanup_free char *text = record_format(rec);
	char tmp[256], num[32];
	int r;

	if (!text)
		return oom(err);
	snprintf(num, sizeof(num), "%ld", rec->number);
	grove_fs_temp_name(tmp, sizeof(tmp), p->tag, num);
	groot.fd = grove_fs_mkdir(p->gens.fd, tmp, 0755, err);
	r = groot.fd < 0 ? groot.fd : grove_fs_stat_fd(groot.fd, &st, err);
	if (r < 0)
		goto out;
	groot.dev = st.dev;
	groot.ino = st.ino;
	groot.path = grove_strdupf("%s/%s", p->gens.path, tmp);
	groot.real = grove_strdupf("%s/%s", p->gens.real, tmp);
	if (!groot.path || !groot.real) {
		r = oom(err);
		goto out;
	}
	r = grove_exec_apply(forest, &groot, stow, &eo, err);
	if (r >= 0)
		r = grove_fs_write_new_file(groot.fd, GROVE_PROFILE_RECORD, text, strlen(text),
					    0644, err);
	if (r >= 0)
		r = grove_fs_sync(groot.fd, err);
	if (r >= 0)
		r = grove_fs_move(p->gens.fd, tmp, p->gens.fd, num, RENAME_NOREPLACE, err);
	if (r >= 0)
		r = grove_fs_sync(p->gens.fd, err);
out:
	if (r < 0)
		grove_error_prefix(err, "build generation %ld of profile '%s'", rec->number,
				   p->link_path);
	grove_root_release(&groot);
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
	/* The packages, sorted, each once. */
	for (size_t i = 0; i < spec->n_packages && r >= 0; i++) {
		bool dup = false;

		r = grove_stow_check_package_name(spec->packages[i], err);
		for (size_t k = 0; k < rec.n_packages && !dup; k++)
			dup = !strcmp(rec.packages[k], spec->packages[i]);
		if (r >= 0 && !dup && add_package(&rec, spec->packages[i]) < 0)
			r = oom(err);
	}
	if (r < 0)
		goto out;
	if (rec.n_packages)
		qsort(rec.packages, rec.n_packages, sizeof(char *), cmp_str);
	r = grove_root_open(&stow, spec->stow_dir, err);
	if (r < 0) {
		grove_error_prefix(err, "stow directory");
		goto out;
	}
	r = dir_real(p, &dreal, err);
	if (r < 0)
		goto out;
	if (grove_path_strip_prefix(dreal, stow.real) || !strcmp(dreal, stow.real)) {
		r = grove_error_set(err, -GROVE_E_BADINPUT,
				    "profile '%s' is inside the stow directory '%s'", p->link_path,
				    spec->stow_dir);
		goto out;
	}
	for (size_t i = 0; i < rec.n_packages && r >= 0; i++) {
		struct grove_stat st;

		r = grove_fs_stat_at(stow.fd, rec.packages[i], &st, err);
		if (r >= 0 && st.type != GROVE_FT_DIR)
			r = grove_error_set(err, -GROVE_E_BADINPUT,
					    "package '%s' is not a folder in stow directory '%s'",
					    rec.packages[i], spec->stow_dir);
	}
	if (r < 0)
		goto out;
	r = grove_profile_generations(p, &gens, &n_gens, &cur, err);
	if (r >= 0)
		r = read_current(p, &cur, &old_text, err);
	if (r >= 0)
		r = highest_number(p, gens, n_gens, &hi, err);
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
	rec.number = hi + 1;
	rec.no_folding = spec->no_folding;
	rec.dotfiles = spec->dotfiles;
	rec.time = (double)time(NULL);
	{
		struct timespec ts;

		if (clock_gettime(CLOCK_REALTIME, &ts) == 0)
			rec.time = (double)ts.tv_sec + (double)(ts.tv_nsec / 1000000) / 1e3;
	}
	rec.stow_dir = strdup(stow.real);
	new_real = grove_strdupf("%s/%s/%ld", strcmp(dreal, "/") ? dreal : "", p->gens_name,
				 rec.number);
	lname = gen_link_name(p, rec.number);
	ltext = gen_link_text(p, rec.number);
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
	r = make_generation(p, &forest, &stow, &rec, err);
	if (r >= 0) {
		r = grove_fs_link_create(p->dir.fd, lname, ltext, err);
		if (r >= 0)
			r = grove_fs_sync(p->dir.fd, err);
		if (r < 0)
			grove_error_prefix(err, "profile '%s'", p->link_path);
	}
	if (r >= 0)
		r = point_profile(p, old_text, rec.number, err);
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

static int
push_number(long **v, size_t *n, long num)
{
	long *nv;

	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == num)
			return 0;
	nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	nv[(*n)++] = num;
	*v = nv;
	return 0;
}

int
grove_profile_select(const struct grove_generation *gens, size_t n, const char *spec, double now,
		     long **numbers, size_t *n_numbers, struct grove_error *err)
{
	size_t l = strlen(spec);
	long num = 0;
	int r = 0;

	if (!strcmp(spec, "+0")) {
		return grove_error_set(
			err, -GROVE_E_USAGE,
			"delete '+0': must keep at least one generation (the current "
			"one)");
	} else if (!strcmp(spec, "old")) {
		for (size_t i = 0; i < n && r >= 0; i++)
			if (!gens[i].current)
				r = push_number(numbers, n_numbers, gens[i].number);
	} else if (spec[0] == '+' && parse_number(spec + 1, l - 1, &num)) {
		/* As nix-env: every generation newer than the current one stays, and the
		 * current one with the num - 1 below it; the rest go. */
		size_t c = n;

		for (size_t i = 0; i < n; i++)
			if (gens[i].current)
				c = i;
		for (size_t i = 0; c < n && i + (size_t)num <= c && r >= 0; i++)
			r = push_number(numbers, n_numbers, gens[i].number);
	} else if (l > 1 && spec[l - 1] == 'd' && parse_number(spec, l - 1, &num)) {
		/* As nix-env: the newest generation built before the cutoff stays (it was
		 * the profile N days ago, so rolling back to it stays possible); the ones
		 * older than it go. */
		double cutoff = now - (double)num * 86400.0;
		size_t k = n;

		for (size_t i = n; i-- > 0 && k == n;)
			if (gens[i].time < cutoff)
				k = i;
		for (size_t i = 0; i < k && k < n && r >= 0; i++)
			if (!gens[i].current)
				r = push_number(numbers, n_numbers, gens[i].number);
	} else if (parse_number(spec, l, &num)) {
		/* As nix-env: a number that names no generation is ignored. */
		if (has_generation(gens, n, num))
			r = push_number(numbers, n_numbers, num);
	} else {
		return grove_error_set(err, -GROVE_E_USAGE,
				       "delete '%s': not a generation number, 'old', '+N' or 'Nd'",
				       spec);
	}
	return r < 0 ? oom(err) : 0;
}

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
		cleanup_free char *lname = gen_link_name(p, numbers[i]);
		cleanup_free char *ltext = gen_link_text(p, numbers[i]);

		if (!lname || !ltext)
			r = oom(err);
		else if (numbers[i] == cur)
			r = grove_error_set(err, -GROVE_E_PRECONDITION,
					    "profile '%s': generation %ld is the current one; "
					    "nothing deleted",
					    p->link_path, cur);
		else if (!has_generation(gens, n_gens, numbers[i]))
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
	grove_plan_foreach_op (&summary, op) {
		r = grove_fs_link_remove(p->dir.fd, op->path, op->old_text, p->tag, err);
		if (r < 0)
			break;
	}
	if (r >= 0)
		r = grove_fs_sync(p->dir.fd, err);
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
		    !parse_number(ents[i].name, strlen(ents[i].name), &num) ||
		    has_generation(gens, n_gens, num))
			continue;
		/* Refuse before the first change: a folder holding the user's files stays. */
		r = remove_tree(p->gens.fd, ents[i].name, p->gens.path, true, true, err);
		path = gen_link_text(p, num);
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
	grove_plan_foreach_op (&summary, op) {
		r = remove_generation_folder(p, gen_folder_of(p, op->path), err);
		if (r < 0)
			break;
	}
	if (r >= 0)
		r = grove_fs_sync(p->gens.fd, err);
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
