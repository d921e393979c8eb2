/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `grove profile`: build, install, remove, switch, rollback, list, diff, delete, gc, recover. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "front.h"
#include "grove/profile.h"
#include "../banned.h" /* last */

struct profile_args {
	const char *profile;
	const char *dir;
	const char *link;
	bool no_link;
	bool no_folding;
	bool dotfiles;
	bool json;
	const char *sub;
	char **pos;
	size_t n_pos;
};

static void
profile_usage(FILE *out)
{
	fputs("Usage: grove profile [-p PROFILE] COMMAND ...\n"
	      "    build [-d DIR] [--no-folding] [--dotfiles] [--link PATH|--no-link] PACKAGE ...\n"
	      "    install [-d DIR] [OPTION ...] PACKAGE ...\n"
	      "                           the current generation's packages and PACKAGE ...\n"
	      "    remove PACKAGE ...     the current generation's packages but PACKAGE ...\n"
	      "    switch N | rollback | list [--json] | diff A B\n"
	      "    delete N ...|old|+N|Nd | gc | recover\n"
	      "grove -n profile ... prints what would change and changes nothing; --json prints\n"
	      "one document (docs/json.md).\n",
	      out);
}

static int
usage_error(const char *fmt, const char *arg)
{
	char line[512];

	snprintf(line, sizeof(line), fmt, arg);
	grove_fail(-GROVE_E_USAGE, "%s", line);
	return GROVE_EXIT_USAGE;
}

static int
parse_args(int argc, char **argv, struct profile_args *a)
{
	bool opts_done = false;

	a->pos = calloc((size_t)argc + 1, sizeof(char *));
	if (!a->pos)
		return GROVE_EXIT_REFUSED;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		const char **val = NULL;

		if (!opts_done && s[0] == '-' && s[1]) {
			if (!strcmp(s, "--")) {
				opts_done = true;
				continue;
			}
			if (!strcmp(s, "-p") || !strcmp(s, "--profile"))
				val = &a->profile;
			else if (!strcmp(s, "-d") || !strcmp(s, "--dir"))
				val = &a->dir;
			else if (!strcmp(s, "--link"))
				val = &a->link;
			else if (!strcmp(s, "--no-link"))
				a->no_link = true;
			else if (!strcmp(s, "--no-folding"))
				a->no_folding = true;
			else if (!strcmp(s, "--dotfiles"))
				a->dotfiles = true;
			else if (!strcmp(s, "--json"))
				a->json = true;
			else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
				profile_usage(stdout);
				return -1;
			} else if (!strncmp(s, "--profile=", 10))
				a->profile = s + 10;
			else if (!strncmp(s, "--dir=", 6))
				a->dir = s + 6;
			else if (!strncmp(s, "--link=", 7))
				a->link = s + 7;
			else
				return usage_error("profile: unknown option '%s'", s);
			if (val) {
				if (i + 1 >= argc)
					return usage_error("profile: option '%s' requires a value",
							   s);
				*val = argv[++i];
			}
			continue;
		}
		if (!a->sub)
			a->sub = s;
		else
			a->pos[a->n_pos++] = argv[i];
	}
	if (!a->sub) {
		profile_usage(stderr);
		return GROVE_EXIT_USAGE;
	}
	return 0;
}

/* A new document with the envelope and the profile: {"grove", "command": "profile SUB",
 * "profile"}. */
static struct json_t *
json_head(const char *sub, struct grove_profile *p)
{
	char command[32];
	struct json_t *doc;

	snprintf(command, sizeof(command), "profile %s", sub);
	doc = grove_json_doc(command);
	grove_json_put_str(doc, "profile", grove_profile_link_path(p));
	return doc;
}

/* doc[key]: the plan's conflicts as docs/json.md's conflict objects. */
static void
json_conflicts(struct json_t *doc, const char *key, const struct grove_plan *plan)
{
	struct json_t *list = grove_json_list();

	for (size_t i = 0; i < plan->n_conflicts; i++)
		grove_json_append(list, grove_json_conflict(&plan->conflicts[i], NULL, 0));
	grove_json_put(doc, key, list);
}

/* One generation as `profile list --json` shows it (docs/grove.schema.json). */
static struct json_t *
json_generation(const struct grove_generation *g)
{
	struct json_t *o = grove_json_obj();

	grove_json_put_int(o, "number", g->number);
	if (g->complete && g->time > 0)
		grove_json_put_time(o, "time", g->time);
	else
		grove_json_put_null(o, "time");
	grove_json_put_bool(o, "current", g->current);
	grove_json_put_bool(o, "complete", g->complete);
	grove_json_put_str(o, "stow_dir", g->stow_dir);
	grove_json_put_bool(o, "folding", !g->no_folding);
	grove_json_put_bool(o, "dotfiles", g->dotfiles);
	grove_json_put_strv(o, "packages", g->packages, g->n_packages);
	return o;
}

/* Text: what a changing command did or would do, its ops as `grove plan` prints them. */
static void
print_planned(struct grove_profile *p, int verbose)
{
	const struct grove_plan *forest = NULL;
	const struct grove_plan *summary = grove_profile_planned(p, &forest);

	if (!grove_profile_dry_run(p) && verbose <= 0)
		return;
	grove_print_plan(summary, stdout);
	if (verbose > 0 && forest->n_ops) {
		printf("the new generation's forest (%zu op%s):\n", forest->n_ops,
		       forest->n_ops == 1 ? "" : "s");
		grove_print_plan(forest, stdout);
	}
}

static void
fmt_time(double t, char *buf, size_t size)
{
	time_t secs = (time_t)t;
	struct tm tm;

	if (t <= 0 || !localtime_r(&secs, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, size, "%-19s", "?");
}

static int
parse_gen(const char *s, long *ret)
{
	char *end = NULL;
	long n;

	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || *end || n <= 0)
		return -1;
	*ret = n;
	return 0;
}

static int
cmd_list(struct grove_profile *p, bool json)
{
	struct grove_error err = { 0 };
	struct grove_generation *gens = NULL;
	struct json_t *doc = NULL, *list = NULL;
	size_t n = 0;
	long cur = 0;
	int r = grove_profile_generations(p, &gens, &n, &cur, &err);

	if (r < 0)
		return grove_report_error(&err, r);
	if (json) {
		doc = json_head("list", p);
		grove_json_put_int(doc, "current", cur);
		list = grove_json_list();
	}
	for (size_t i = 0; i < n; i++) {
		const struct grove_generation *g = &gens[i];
		char when[64];

		if (json) {
			grove_json_append(list, json_generation(g));
			continue;
		}
		fmt_time(g->time, when, sizeof(when));
		printf("%5ld   %s   ", g->number, when);
		if (!g->complete)
			fputs("(incomplete)", stdout);
		for (size_t k = 0; k < g->n_packages; k++)
			printf("%s%s", k ? " " : "", g->packages[k]);
		puts(g->current ? "   (current)" : "");
	}
	if (json) {
		grove_json_put(doc, "generations", list);
		grove_json_print(doc);
	}
	grove_generations_free(gens, n);
	return GROVE_EXIT_OK;
}

static const struct grove_generation *
find_gen(const struct grove_generation *gens, size_t n, long num)
{
	for (size_t i = 0; i < n; i++)
		if (gens[i].number == num)
			return &gens[i];
	return NULL;
}

static bool
has_pkg(const struct grove_generation *g, const char *name)
{
	for (size_t i = 0; i < g->n_packages; i++)
		if (!strcmp(g->packages[i], name))
			return true;
	return false;
}

static int
cmd_diff(struct grove_profile *p, char **pos, size_t n_pos, bool json)
{
	struct grove_error err = { 0 };
	struct grove_generation *gens = NULL;
	const struct grove_generation *a, *b;
	size_t n = 0;
	long cur = 0, na, nb;
	int r;

	if (n_pos != 2 || parse_gen(pos[0], &na) < 0 || parse_gen(pos[1], &nb) < 0)
		return usage_error("%s", "profile diff: needs two generation numbers A B");
	r = grove_profile_generations(p, &gens, &n, &cur, &err);
	if (r < 0)
		return grove_report_error(&err, r);
	a = find_gen(gens, n, na);
	b = find_gen(gens, n, nb);
	if (!a || !b || !a->complete || !b->complete) {
		grove_fail(-GROVE_E_BADINPUT, "profile '%s' has no complete generation %ld",
			   grove_profile_link_path(p), !a || !a->complete ? na : nb);
		grove_fail_path(grove_profile_link_path(p));
		grove_generations_free(gens, n);
		return GROVE_EXIT_REFUSED;
	}
	if (json) {
		/* from, to: the generations as list shows them; added, removed: packages. */
		struct json_t *doc = json_head("diff", p);
		char **added = calloc(b->n_packages + 1, sizeof(*added));
		char **removed = calloc(a->n_packages + 1, sizeof(*removed));
		size_t n_added = 0, n_removed = 0;
		bool oom = !added || !removed;

		for (size_t i = 0; added && i < b->n_packages; i++)
			if (!has_pkg(a, b->packages[i]))
				added[n_added++] = b->packages[i];
		for (size_t i = 0; removed && i < a->n_packages; i++)
			if (!has_pkg(b, a->packages[i]))
				removed[n_removed++] = a->packages[i];
		grove_json_put(doc, "from", json_generation(a));
		grove_json_put(doc, "to", json_generation(b));
		grove_json_put_strv(doc, "added", added, n_added);
		grove_json_put_strv(doc, "removed", removed, n_removed);
		free(added);
		free(removed);
		if (oom) {
			grove_json_free(doc);
			grove_generations_free(gens, n);
			grove_fail(-ENOMEM, "out of memory");
			return GROVE_EXIT_REFUSED;
		}
		grove_json_print(doc);
		grove_generations_free(gens, n);
		return GROVE_EXIT_OK;
	}
	if (strcmp(a->stow_dir, b->stow_dir) != 0)
		printf("stow dir: %s -> %s\n", a->stow_dir, b->stow_dir);
	if (a->no_folding != b->no_folding)
		printf("folding: %s -> %s\n", a->no_folding ? "no" : "yes",
		       b->no_folding ? "no" : "yes");
	if (a->dotfiles != b->dotfiles)
		printf("dotfiles: %s -> %s\n", a->dotfiles ? "yes" : "no",
		       b->dotfiles ? "yes" : "no");
	for (size_t i = 0; i < a->n_packages; i++)
		if (!has_pkg(b, a->packages[i]))
			printf("- %s\n", a->packages[i]);
	for (size_t i = 0; i < b->n_packages; i++)
		if (!has_pkg(a, b->packages[i]))
			printf("+ %s\n", b->packages[i]);
	grove_generations_free(gens, n);
	return GROVE_EXIT_OK;
}

static int
cmd_build(struct grove_profile *p, const struct profile_args *a,
	  const struct grove_global_opts *global, bool default_profile)
{
	struct grove_error err = { 0 };
	struct grove_profile_changed ch;
	bool json = a->json || global->json, dry = global->dry_run;
	struct grove_profile_change rq = {
		.kind = !strcmp(a->sub, "install")  ? GROVE_PROFILE_INSTALL
			: !strcmp(a->sub, "remove") ? GROVE_PROFILE_REMOVE
						    : GROVE_PROFILE_BUILD,
		.packages = a->pos,
		.n_packages = a->n_pos,
		.stow_dir = a->dir,
		.env_stow_dir = getenv("STOW_DIR"),
		.no_folding = a->no_folding,
		.dotfiles = a->dotfiles,
		.command = global->command_line,
	};
	char **pkgs;
	size_t n_pkgs;
	long cur, num;
	int r, status = GROVE_EXIT_OK;

	if (a->n_pos == 0) {
		grove_fail(-GROVE_E_USAGE, "profile %s: no packages given", a->sub);
		return GROVE_EXIT_USAGE;
	}
	r = grove_profile_change(p, &rq, &ch, &err);
	pkgs = ch.packages;
	n_pkgs = ch.n_packages;
	cur = ch.previous;
	num = ch.generation;
	if (r == -GROVE_E_CONFLICT) {
		if (!json)
			grove_print_conflicts(&ch.conflicts, stderr);
		status = grove_report_error(&err, r);
	} else if (r < 0) {
		status = grove_report_error(&err, r);
	} else if (json) {
	} else if (num == 0) {
		printf("nothing to do: generation %ld of profile '%s' already holds these "
		       "packages\n",
		       cur, grove_profile_link_path(p));
	} else if (dry) {
		printf("profile '%s': would build generation %ld (", grove_profile_link_path(p),
		       num);
		for (size_t i = 0; i < n_pkgs; i++)
			printf("%s%s", i ? " " : "", pkgs[i]);
		printf(") and make it current\n");
		print_planned(p, global->verbose);
	} else {
		printf("profile '%s': generation %ld is current\n", grove_profile_link_path(p),
		       num);
		print_planned(p, global->verbose);
	}
	/* --json: the document, also for conflicts (then changed is false). */
	if (json && (r >= 0 || r == -GROVE_E_CONFLICT)) {
		const struct grove_plan *forest = NULL;
		const struct grove_plan *summary = grove_profile_planned(p, &forest);
		bool built = r >= 0 && num != 0;

		struct json_t *doc = json_head(a->sub, p);

		grove_json_put_bool(doc, "dry_run", dry);
		grove_json_put_bool(doc, "changed", built);
		grove_json_put_int(doc, "previous", cur);
		grove_json_put_int(doc, "generation", built ? num : cur);
		grove_json_put_strv(doc, "packages", pkgs, n_pkgs);
		grove_json_put_ops(doc, "ops", built ? summary : &ch.conflicts);
		grove_json_put_int(doc, "forest_ops", built ? (long long)forest->n_ops : 0);
		json_conflicts(doc, "conflicts", &ch.conflicts);
		grove_json_print(doc);
	}
	/* The user's link, once the profile exists: ~/.grove-profile for the default profile. */
	if (r >= 0 && !a->no_link && !dry) {
		const char *home = getenv("HOME");
		char *path = a->link ? strdup(a->link) : NULL;

		if (!a->link && default_profile && home && *home &&
		    asprintf(&path, "%s/.grove-profile", home) < 0)
			path = NULL;

		if (path && grove_profile_make_user_link(p, path, &err) < 0)
			fprintf(stderr, "grove: warning: %s\n", err.msg);
		free(path);
	}
	grove_profile_changed_release(&ch);
	return status;
}

/* profile switch N, profile rollback. */
static int
cmd_switch(struct grove_profile *p, const char *sub, const struct profile_args *a,
	   const struct grove_global_opts *global, bool json, bool dry)
{
	struct grove_error err = { 0 };
	int status = GROVE_EXIT_OK, r;
	struct grove_generation *gens = NULL;
	size_t n = 0;
	long num = 0, before = 0;
	bool changed = false;

	/* The generation current before, for the document. */
	r = grove_profile_generations(p, &gens, &n, &before, &err);
	grove_generations_free(gens, n);
	if (r < 0)
		before = 0;
	if (!strcmp(sub, "rollback")) {
		r = grove_profile_rollback(p, global->command_line, &num, &err);
		changed = r >= 0;
	} else if (a->n_pos != 1 || parse_gen(a->pos[0], &num) < 0) {
		return usage_error("%s", "profile switch: needs one generation number");
	} else {
		r = grove_profile_switch(p, num, global->command_line, &changed, &err);
	}
	if (r < 0) {
		status = grove_report_error(&err, r);
	} else if (json) {
		struct json_t *doc = json_head(sub, p);

		grove_json_put_bool(doc, "dry_run", dry);
		grove_json_put_bool(doc, "changed", changed);
		grove_json_put_int(doc, "previous", before);
		grove_json_put_int(doc, "generation", num);
		grove_json_put_ops(doc, "ops", grove_profile_planned(p, NULL));
		grove_json_print(doc);
	} else {
		printf(!changed ? "nothing to do: profile '%s' is on generation %ld\n"
		       : dry    ? "profile '%s': would make generation %ld current\n"
				: "profile '%s': generation %ld is current\n",
		       grove_profile_link_path(p), num);
		if (changed)
			print_planned(p, global->verbose);
	}
	return status;
}

/* profile delete N…|old|+N|Nd. */
static int
cmd_delete(struct grove_profile *p, const struct profile_args *a,
	   const struct grove_global_opts *global, bool json, bool dry)
{
	struct grove_error err = { 0 };
	int status = GROVE_EXIT_OK, r;
	struct grove_generation *gens = NULL;
	long *nums = NULL, cur = 0;
	size_t n = 0, n_nums = 0;

	r = a->n_pos ? grove_profile_generations(p, &gens, &n, &cur, &err)
		     : grove_error_set(&err, -GROVE_E_USAGE,
				       "profile delete: needs N ..., 'old', '+N' or 'Nd'");
	for (size_t i = 0; i < a->n_pos && r >= 0; i++)
		r = grove_profile_select(gens, n, a->pos[i], (double)time(NULL), &nums, &n_nums,
					 &err);
	if (r >= 0)
		r = grove_profile_delete(p, nums, n_nums, global->command_line, &err);
	if (r < 0) {
		status = grove_report_error(&err, r);
	} else if (json) {
		struct json_t *doc = json_head("delete", p);
		struct json_t *deleted = grove_json_list();

		grove_json_put_bool(doc, "dry_run", dry);
		grove_json_put_bool(doc, "changed", n_nums);
		for (size_t i = 0; i < n_nums; i++)
			grove_json_append_int(deleted, nums[i]);
		grove_json_put(doc, "deleted", deleted);
		grove_json_put_ops(doc, "ops", grove_profile_planned(p, NULL));
		grove_json_print(doc);
	} else if (n_nums == 0) {
		printf("nothing to do: no generation of profile '%s' matches\n",
		       grove_profile_link_path(p));
	} else {
		printf("profile '%s': %s generation%s", grove_profile_link_path(p),
		       dry ? "would delete" : "deleted", n_nums > 1 ? "s" : "");
		for (size_t i = 0; i < n_nums; i++)
			printf(" %ld", nums[i]);
		putchar('\n');
		print_planned(p, global->verbose);
	}
	free(nums);
	grove_generations_free(gens, n);
	return status;
}

/* profile gc. */
static int
cmd_gc(struct grove_profile *p, const struct grove_global_opts *global, bool json, bool dry)
{
	struct grove_error err = { 0 };
	int status = GROVE_EXIT_OK, r;
	size_t removed = 0;

	r = grove_profile_gc(p, global->command_line, &removed, &err);
	if (r < 0) {
		status = grove_report_error(&err, r);
	} else if (json) {
		struct json_t *doc = json_head("gc", p);

		grove_json_put_bool(doc, "dry_run", dry);
		grove_json_put_bool(doc, "changed", removed);
		grove_json_put_int(doc, "removed", (long long)removed);
		grove_json_put_ops(doc, "ops", grove_profile_planned(p, NULL));
		grove_json_print(doc);
	} else {
		printf("profile '%s': %s %zu generation folder%s\n", grove_profile_link_path(p),
		       dry ? "would remove" : "removed", removed, removed == 1 ? "" : "s");
		print_planned(p, global->verbose);
	}
	return status;
}

/* Whether sub names a profile command (after the nix-env spellings are mapped). */
static bool
is_subcommand(const char *sub)
{
	static const char *const subs[] = { "build", "install", "remove", "switch", "rollback",
					    "list",  "diff",    "delete", "gc",     "recover" };

	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		if (!strcmp(sub, subs[i]))
			return true;
	return false;
}

int
grove_cmd_profile(int argc, char **argv, const struct grove_global_opts *global)
{
	struct profile_args a = { 0 };
	struct grove_profile_opts po = { 0 };
	struct grove_profile *p = NULL;
	struct grove_error err = { 0 };
	const char *sub;
	bool read_only, json, dry;
	int64_t recovered = 0;
	int status, r;

	status = parse_args(argc, argv, &a);
	if (status) {
		free(a.pos);
		return status < 0 ? GROVE_EXIT_OK : status;
	}
	sub = a.sub;
	if (!strcmp(sub, "switch-generation"))
		sub = "switch";
	if (!strcmp(sub, "list-generations"))
		sub = "list";
	if (!strcmp(sub, "delete-generations"))
		sub = "delete";
	if (!is_subcommand(sub)) {
		free(a.pos);
		return usage_error("profile: unknown command '%s'", a.sub);
	}
	read_only = !strcmp(sub, "list") || !strcmp(sub, "diff");
	if (global->dry_run && !strcmp(sub, "recover")) {
		free(a.pos);
		return usage_error("%s", "profile recover: --dry-run is not supported (a dry run "
					 "of any other command shows the profile as it is)");
	}
	json = a.json || global->json;
	dry = global->dry_run && !read_only;
	po.state_opt = global->state_dir;
	po.profile = a.profile;
	po.wait_seconds = global->wait_seconds;
	po.mutate = !read_only;
	po.dry_run = dry;
	po.command = global->command_line;
	r = grove_profile_open(&po, &p, &recovered, &err);
	if (r < 0) {
		free(a.pos);
		return grove_report_error(&err, r);
	}
	if (!strcmp(sub, "list")) {
		status = cmd_list(p, json);
	} else if (!strcmp(sub, "diff")) {
		status = cmd_diff(p, a.pos, a.n_pos, json);
	} else if (!strcmp(sub, "build") || !strcmp(sub, "install") || !strcmp(sub, "remove")) {
		status = cmd_build(p, &a, global, !a.profile);
	} else if (!strcmp(sub, "switch") || !strcmp(sub, "rollback")) {
		status = cmd_switch(p, sub, &a, global, json, dry);
	} else if (!strcmp(sub, "delete")) {
		status = cmd_delete(p, &a, global, json, dry);
	} else if (!strcmp(sub, "gc")) {
		status = cmd_gc(p, global, json, dry);
	}
	/* recover: opening the profile for change has recovered it. */
	if (!strcmp(sub, "recover") && json) {
		struct json_t *doc = json_head("recover", p);

		grove_json_put_int(doc, "recovered", recovered);
		grove_json_print(doc);
	} else if (!strcmp(sub, "recover")) {
		printf(recovered ? "profile '%s': interrupted transaction %lld recovered\n"
				 : "profile '%s': nothing to recover\n",
		       grove_profile_link_path(p), (long long)recovered);
	}
	grove_profile_close(p);
	free(a.pos);
	return status;
}
