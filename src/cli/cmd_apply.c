/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove apply: converge the targets and alternatives a manifest declares, one logged transaction
 * per target; --check, --diff and --json report the difference. The steps are the library's
 * (grove/apply.h); this file reads argv and the environment, prints and picks the exit status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "front.h"
#include "grove/alt.h"
#include "grove/apply.h"
#include "grove/manifest.h"
#include "grove/path.h"
#include "grove/text.h"
#include "../banned.h" /* last */

struct apply_args {
	const char *file;
	bool check, diff, json;
	struct grove_strlist tags;
	const char *host;
	struct grove_stow_settings flags; /* -d, --no-folding, --dotfiles, --adopt, --ignore, ... */
};

struct apply {
	struct apply_args a;
	const struct grove_global_opts *global;
	struct grove_apply g; /* the library's run: the manifest, its layers, its steps */
};

static void
usage(FILE *out)
{
	fputs("Usage: grove apply [-f FILE] [--check] [--diff] [--tag TAG ...] [--host NAME]\n"
	      "                   [-d DIR] [--no-folding] [--dotfiles] [--adopt]\n"
	      "                   [--ignore REGEX] [--defer REGEX] [--override REGEX]\n"
	      "The manifest: -f FILE, else $GROVE_MANIFEST, else config.yaml's, else ./grove.yaml,\n"
	      "else $XDG_CONFIG_HOME/grove/grove.yaml.\n"
	      "Exit status: 0 done or nothing to change; 1 conflicts (nothing changed), or with\n"
	      "--check something would change; 6 with --check, conflicts; 78 a bad manifest.\n",
	      out);
}

static int
parse_args(int argc, char **argv, struct apply_args *a, bool *ret_help, struct grove_error *err)
{
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		const char *eq = strchr(o, '=');
		size_t olen = eq && o[0] == '-' && o[1] == '-' ? (size_t)(eq - o) : strlen(o);
		const char *val = NULL;
		bool takes = false;
		static const char *const valued[] = { "-f",       "--file",  "--tag",
						      "--host",   "-d",      "--dir",
						      "--ignore", "--defer", "--override" };

		for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++)
			if (strlen(valued[k]) == olen && !strncmp(o, valued[k], olen))
				takes = true;
		if (takes) {
			val = olen < strlen(o) ? o + olen + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (!val)
				return grove_error_set(err, -GROVE_E_USAGE,
						       "option '%.*s' requires a value", (int)olen,
						       o);
		}
		if (!strcmp(o, "-h") || !strcmp(o, "--help"))
			*ret_help = true;
		else if (!strcmp(o, "--check"))
			a->check = true;
		else if (!strcmp(o, "--diff"))
			a->diff = true;
		else if (!strcmp(o, "--json"))
			a->json = true;
		else if (!strcmp(o, "--no-folding"))
			a->flags.folding = 0;
		else if (!strcmp(o, "--dotfiles"))
			a->flags.dotfiles = 1;
		else if (!strcmp(o, "--adopt"))
			a->flags.adopt = 1;
		else if (takes && (!strncmp(o, "-f", 2) || !strncmp(o, "--file", 6)))
			a->file = val;
		else if (takes && !strncmp(o, "--tag", 5)) {
			if (grove_strlist_add(&a->tags, val, NULL) < 0)
				return grove_error_set(err, -ENOMEM, "out of memory");
		} else if (takes && !strncmp(o, "--host", 6))
			a->host = val;
		else if (takes && (!strncmp(o, "-d", 2) || !strncmp(o, "--dir", 5))) {
			free(a->flags.dir);
			if (!(a->flags.dir = strdup(val)))
				return grove_error_set(err, -ENOMEM, "out of memory");
		} else if (takes) {
			struct grove_strlist *l = !strncmp(o, "--ignore", 8)  ? &a->flags.ignore
						  : !strncmp(o, "--defer", 7) ? &a->flags.defer
									      : &a->flags.override;
			struct grove_pattern_set *set = grove_pattern_set_new(GROVE_ANCHOR_END);
			int r = set ? grove_pattern_set_add(set, val, err) : -ENOMEM;

			grove_pattern_set_free(set);
			if (r < 0)
				return r == -ENOMEM ? grove_error_set(err, r, "out of memory") : r;
			if (grove_strlist_add(l, val, NULL) < 0)
				return grove_error_set(err, -ENOMEM, "out of memory");
		} else
			return grove_error_set(err, -GROVE_E_USAGE,
					       o[0] == '-' ? "apply: unknown option '%s'"
							   : "apply: unexpected argument '%s'",
					       o);
	}
	return 0;
}

static const char *
action_name(enum grove_alt_action a)
{
	switch (a) {
	case GROVE_ALT_INSTALL:
		return "install";
	case GROVE_ALT_REMOVE:
		return "remove";
	case GROVE_ALT_SET:
		return "set";
	case GROVE_ALT_AUTO:
		return "auto";
	default:
		return "?";
	}
}

/* ---- profiles ---- */

/* ---- output ---- */

static void
print_diff(const struct grove_apply_target_step *t, FILE *f)
{
	const char *root = t->run.target_root.real;
	const char *sep = strcmp(root, "/") ? "/" : "";

	grove_plan_foreach_op (&t->run.plan, op) {
		switch (op->kind) {
		case GROVE_OP_MKDIR:
			fprintf(f, "+ %s%s%s/\n", root, sep, op->path);
			break;
		case GROVE_OP_LINK:
			fprintf(f, "+ %s%s%s -> %s\n", root, sep, op->path, op->text);
			break;
		case GROVE_OP_UNLINK:
			fprintf(f, "- %s%s%s -> %s\n", root, sep, op->path, op->old_text);
			break;
		case GROVE_OP_RELINK:
			fprintf(f, "- %s%s%s -> %s\n+ %s%s%s -> %s\n", root, sep, op->path,
				op->old_text, root, sep, op->path, op->text);
			break;
		case GROVE_OP_RMDIR:
			fprintf(f, "- %s%s%s/\n", root, sep, op->path);
			break;
		case GROVE_OP_UNFOLD:
			fprintf(f, "- %s%s%s -> %s\n+ %s%s%s/\n", root, sep, op->path, op->old_text,
				root, sep, op->path);
			break;
		case GROVE_OP_FOLD:
			fprintf(f, "- %s%s%s/\n+ %s%s%s -> %s\n", root, sep, op->path, root, sep,
				op->path, op->text);
			break;
		case GROVE_OP_ADOPT:
			fprintf(f, "+ %s%s%s -> %s (file adopted into the package)\n", root, sep,
				op->path, op->text);
			break;
		default: /* (grove's own entries: never in a target's plan) */
			break;
		}
	}
}

/* The manifest line behind a conflict: the package's entry, else (a package the manifest no
 * longer lists, being unstowed) the target's. */
static struct grove_manifest_loc
conflict_loc(const struct grove_apply_target_step *t, const struct grove_conflict *c)
{
	for (size_t i = 0; c->package && i < t->mt->n_pkgs; i++)
		if (!strcmp(t->mt->pkgs[i].name, c->package))
			return t->mt->pkgs[i].loc;
	return t->mt->loc;
}

static void
print_json(const struct apply *ap, bool applied)
{
	const struct grove_apply_steps *st = &ap->g.st;
	struct json_t *doc = grove_json_doc("apply");
	struct json_t *alts = grove_json_list();
	struct json_t *profiles = grove_json_obj();
	struct json_t *list = grove_json_list();

	grove_json_put_bool(doc, "changed", grove_apply_steps_changed(st));
	grove_json_put_bool(doc, "applied", applied);
	grove_json_put_str(doc, "manifest",
			   ap->g.manifest_abs ? ap->g.manifest_abs : ap->g.manifest_path);
	grove_json_put_str(doc, "host", ap->g.ctx.host);
	grove_json_put_strv(doc, "tags", ap->g.ctx.tags.v, ap->g.ctx.tags.n);
	/* Streamed: a target's plan of a million ops is not also a million JSON objects. */
	grove_json_stream_begin(doc);
	grove_json_stream_list("targets");
	for (size_t i = 0; i < st->n_targets; i++) {
		const struct grove_apply_target_step *t = &st->targets[i];
		struct json_t *o = grove_json_obj();
		struct json_t *conflicts = grove_json_list();

		grove_json_put_str(o, "target", t->run.target_root.real);
		grove_json_put_str(o, "dir", t->run.stow_root.real);
		grove_json_put_int(o, "txn", t->run.txn);
		grove_json_put_strv(o, "stow", t->run.added, t->run.n_added);
		grove_json_put_strv(o, "unstow", t->run.dropped, t->run.n_dropped);
		grove_json_stream_object(NULL, o);
		grove_json_stream_ops("ops", &t->run.plan);
		for (size_t k = 0; k < t->run.plan.n_conflicts; k++) {
			const struct grove_conflict *c = &t->run.plan.conflicts[k];
			char buf[512];

			grove_json_append(conflicts,
					  grove_json_conflict(
						  c, grove_conflict_hint(c, NULL, buf, sizeof(buf)),
						  conflict_loc(t, c).line));
		}
		grove_json_stream_put("conflicts", conflicts);
		grove_json_stream_end();
	}
	grove_json_stream_end();
	for (size_t i = 0; i < st->n_alts; i++) {
		const struct grove_apply_alt_step *as = &st->alts[i];
		struct json_t *o = grove_json_obj();

		grove_json_put_str(o, "op", action_name(as->action));
		grove_json_put_str(o, "group", as->group->name);
		grove_json_put_str(o, "path", as->path);
		if (as->action == GROVE_ALT_INSTALL)
			grove_json_put_int(o, "priority", as->priority);
		grove_json_put_int(o, "txn", as->txn);
		grove_json_append(alts, o);
	}
	grove_json_stream_put("alternatives", alts);
	grove_json_put_int(profiles, "declared", (long long)st->n_profiles);
	grove_json_put_bool(profiles, "changed", grove_apply_steps_profiles_changed(st));
	for (size_t i = 0; i < st->n_profiles; i++) {
		const struct grove_apply_profile_step *ps = &st->profiles[i];
		struct json_t *o = grove_json_obj();

		grove_json_put_str(o, "name", ps->mp->name);
		grove_json_put_bool(o, "changed", ps->changed);
		grove_json_put_int(o, "number", ps->generation);
		grove_json_put_strv(o, "packages", ps->pkgs, ps->n);
		grove_json_append(list, o);
	}
	grove_json_put(profiles, "list", list);
	grove_json_stream_put("profiles", profiles);
	grove_json_stream_end();
}

static void
print_text(const struct apply *ap, bool applied, bool conflicts)
{
	const struct grove_apply_steps *st = &ap->g.st;
	size_t n_ops = 0, n_txn = 0, n_gen = 0;

	for (size_t i = 0; i < st->n_targets; i++) {
		const struct grove_apply_target_step *t = &st->targets[i];

		n_ops += t->run.plan.n_ops;
		n_txn += t->run.txn != 0;
		if (!t->run.plan.n_ops && !t->run.plan.n_conflicts)
			continue;
		printf("target %s:", t->run.target_root.real);
		for (size_t k = 0; k < t->run.n_added; k++)
			printf(" +%s", t->run.added[k]);
		for (size_t k = 0; k < t->run.n_dropped; k++)
			printf(" -%s", t->run.dropped[k]);
		printf(" (%zu change%s", t->run.plan.n_ops, t->run.plan.n_ops == 1 ? "" : "s");
		if (t->run.plan.n_conflicts)
			printf(", %zu conflict%s", t->run.plan.n_conflicts,
			       t->run.plan.n_conflicts == 1 ? "" : "s");
		if (t->run.txn)
			printf(", transaction %lld", (long long)t->run.txn);
		puts(")");
		if (ap->a.diff)
			print_diff(t, stdout);
	}
	for (size_t i = 0; i < st->n_alts; i++) {
		const struct grove_apply_alt_step *as = &st->alts[i];

		printf("alternatives %s: %s%s%s", as->group->name, action_name(as->action),
		       as->path ? " " : "", as->path ? as->path : "");
		if (as->action == GROVE_ALT_INSTALL)
			printf(" (priority %d)", as->priority);
		if (as->txn)
			printf(" (transaction %lld)", (long long)as->txn);
		putchar('\n');
		/* The steps of one group share its transaction. */
		n_txn += as->txn != 0 && (i == 0 || st->alts[i - 1].txn != as->txn);
	}
	for (size_t i = 0; i < st->n_profiles; i++) {
		const struct grove_apply_profile_step *ps = &st->profiles[i];

		if (!ps->changed)
			continue;
		if (applied)
			printf("profile %s: generation %ld is current\n", ps->mp->name,
			       ps->generation);
		else if (ps->conflicted)
			printf("profile %s: would build a new generation (%zu conflict%s)\n",
			       ps->mp->name, ps->conflicts.n_conflicts,
			       ps->conflicts.n_conflicts == 1 ? "" : "s");
		else
			printf("profile %s: would build a new generation (%ld)\n", ps->mp->name,
			       ps->generation);
	}
	for (size_t i = 0; i < st->n_profiles; i++)
		n_gen += st->profiles[i].changed;
	if (conflicts)
		return; /* apply would change nothing: the conflicts follow, on stderr */
	if (!grove_apply_steps_changed(st))
		printf("nothing to change: %s is already applied\n", ap->g.manifest_path);
	else if (applied)
		printf("applied %zu change%s to %zu target%s, %zu alternatives request%s and %zu "
		       "profile generation%s (%zu target transaction%s)\n",
		       n_ops, n_ops == 1 ? "" : "s", st->n_targets, st->n_targets == 1 ? "" : "s",
		       st->n_alts, st->n_alts == 1 ? "" : "s", n_gen, n_gen == 1 ? "" : "s", n_txn,
		       n_txn == 1 ? "" : "s");
	else
		printf("would make %zu change%s to links, %zu alternatives request%s and %zu profile "
		       "generation%s\n",
		       n_ops, n_ops == 1 ? "" : "s", st->n_alts, st->n_alts == 1 ? "" : "s", n_gen,
		       n_gen == 1 ? "" : "s");
}

/* ---- the command ---- */

/* ---- the command ---- */

/*
 * With no -f, $GROVE_MANIFEST or config.yaml's manifest: ./grove.yaml, else grove.yaml in
 * $XDG_CONFIG_HOME/grove (~/.config/grove); none is an error naming both places.
 */
static void
apply_release(struct apply *ap)
{
	grove_apply_release(&ap->g);
	grove_strlist_release(&ap->a.tags);
	grove_stow_settings_release(&ap->a.flags);
}

/* Every target's conflicts on stderr, each after the manifest line that caused it:
 *   grove: target '/home/u' (grove.yaml:3) has conflicts:
 *     grove.yaml:4: stow 'bash': cannot stow … over existing target .bashrc since …
 */
static void
print_conflicts_located(const struct apply *ap)
{
	for (size_t i = 0; i < ap->g.st.n_targets; i++) {
		const struct grove_apply_target_step *t = &ap->g.st.targets[i];
		const struct grove_plan *plan = &t->run.plan;
		char *stow_path;

		if (!plan->n_conflicts)
			continue;
		fprintf(stderr, "grove: target '%s' (%s:%u) has conflicts:\n",
			t->run.target_root.real, ap->g.manifest_path, t->mt->loc.line);
		for (size_t k = 0; k < plan->n_conflicts; k++) {
			const struct grove_conflict *c = &plan->conflicts[k];
			struct grove_manifest_loc loc = conflict_loc(t, c);

			fprintf(stderr, "  %s:%u: %s '%s': ", ap->g.manifest_path, loc.line,
				c->action ? c->action : "stow", c->package ? c->package : "?");
			grove_fput_shown(c->message, stderr);
			fputc('\n', stderr);
		}
		/* The hints grove stow gives for the same conflicts. */
		stow_path = grove_path_abs2rel(t->run.stow_root.real, t->run.target_root.real);
		grove_print_conflict_hints(plan, stow_path, stderr);
		free(stow_path);
	}
	for (size_t i = 0; i < ap->g.st.n_profiles; i++) {
		const struct grove_apply_profile_step *ps = &ap->g.st.profiles[i];

		if (!ps->conflicted)
			continue;
		fprintf(stderr, "grove: profile '%s' (%s:%u) has conflicts:\n", ps->mp->name,
			ap->g.manifest_path, ps->mp->loc.line);
		for (size_t k = 0; k < ps->conflicts.n_conflicts; k++) {
			const struct grove_conflict *c = &ps->conflicts.conflicts[k];

			fprintf(stderr, "  %s:%u: %s '%s': ", ap->g.manifest_path, ps->mp->loc.line,
				c->action ? c->action : "stow", c->package ? c->package : "?");
			grove_fput_shown(c->message, stderr);
			fputc('\n', stderr);
		}
		grove_print_conflict_hints(&ps->conflicts, NULL, stderr);
	}
	fputs("All operations aborted.\n", stderr);
}

/* What a profile's build would fail with, other than conflicts: with --check, reported as the
 * real run would report it; the exit status, or GROVE_EXIT_OK when none would fail. */
/* ---- what the library's run tells, printed as it happens ---- */

static void
on_recovered(void *ctx, const char *target, int64_t txn)
{
	(void)ctx;
	(void)target;
	fprintf(stderr, "grove: rolled back interrupted transaction %lld first\n", (long long)txn);
}

static void
on_interrupted(void *ctx, const char *target, int64_t txn)
{
	(void)ctx;
	if (!grove_term_quiet())
		fprintf(stderr,
			"grove: warning: target '%s': transaction %lld was interrupted: a real run "
			"rolls it back first (grove recover); this check is of the target as it is "
			"now\n",
			target, (long long)txn);
}

static void
on_warning(void *ctx, const char *text)
{
	(void)ctx;
	grove_print_warning(stderr, text, false);
}

static void
on_alt_warning(void *ctx, const char *text)
{
	(void)ctx;
	fprintf(stderr, "grove: alternatives: warning: %s\n", text);
}

static void
on_profile_conflicts(void *ctx, const struct grove_plan *conflicts)
{
	(void)ctx;
	grove_print_conflicts(conflicts, stderr);
}

static const struct grove_apply_events events = {
	.recovered = on_recovered,
	.interrupted = on_interrupted,
	.warning = on_warning,
	.alt_warning = on_alt_warning,
	.profile_conflicts = on_profile_conflicts,
};

/* The run's failure, and the targets it had applied before it (each undoable on its own with
 * `grove undo -t TARGET`). */
static int
report_run_failure(const struct apply *ap, const struct grove_error *err, int r)
{
	int status = grove_report_error(err, r);

	for (size_t k = 0; k < ap->g.failed_target && k < ap->g.st.n_targets; k++)
		if (ap->g.st.targets[k].run.txn)
			fprintf(stderr, "grove: target '%s' was applied (transaction %lld)\n",
				ap->g.st.targets[k].run.target_root.real,
				(long long)ap->g.st.targets[k].run.txn);
	return status;
}

/* The request: the command line's, the environment's and the host's. */
static int
load(struct apply *ap, char *host, size_t host_size, char *cwd, size_t cwd_size,
     struct grove_error *err)
{
	const struct grove_global_opts *g = ap->global;
	struct grove_apply_request rq = {
		.file = ap->a.file,
		.tags = &ap->a.tags,
		.host = ap->a.host,
		.flags = &ap->a.flags,
		.check = ap->a.check,
		.state_opt = g ? g->state_dir : NULL,
		.wait_seconds = g ? g->wait_seconds : 0,
		.command = g && g->command_line ? g->command_line : "grove apply",
		.home = getenv("HOME"),
		.xdg_config_home = getenv("XDG_CONFIG_HOME"),
		.env_manifest = getenv("GROVE_MANIFEST"),
		.env_host = getenv("GROVE_HOST"),
		.env_tags = getenv("GROVE_TAGS"),
		.dpkg_admindir = getenv("DPKG_ADMINDIR"),
		.default_host = gethostname(host, host_size - 1) == 0 ? host : "",
		.cwd = getcwd(cwd, cwd_size),
	};

	return grove_apply_load(&ap->g, &rq, err);
}

int
grove_cmd_apply(int argc, char **argv, const struct grove_global_opts *global)
{
	struct apply ap = { 0 };
	struct grove_error err = { 0 };
	char host[256] = "", cwd[4096];
	bool help = false;
	int status = GROVE_EXIT_OK, r;

	ap.global = global;
	grove_stow_settings_init(&ap.a.flags);
	grove_apply_init(&ap.g);
	r = parse_args(argc, argv, &ap.a, &help, &err);
	if (r < 0) {
		status = grove_report_error(&err, r);
		goto out;
	}
	if (help) {
		usage(stdout);
		goto out;
	}
	ap.a.json = ap.a.json || (global && global->json);
	ap.a.check = ap.a.check || (global && global->dry_run);
	r = load(&ap, host, sizeof(host), cwd, sizeof(cwd), &err);
	if (r >= 0)
		r = grove_apply_plan(&ap.g, &events, &err);
	if (r < 0) {
		status = grove_report_error(&err, r);
		goto out;
	}
	if (ap.g.conflicts) {
		/* Nothing changes: the document (or with --check or --diff, the text) shows
		 * everything the manifest asks for, then the conflicts with their lines. */
		if (ap.a.json)
			print_json(&ap, false);
		else if (ap.a.check || ap.a.diff)
			print_text(&ap, false, true);
		print_conflicts_located(&ap);
		status = ap.a.check ? GROVE_EXIT_CONFLICT : GROVE_EXIT_REFUSED;
		goto out;
	}
	if (ap.a.check) {
		if (ap.a.json)
			print_json(&ap, false);
		else
			print_text(&ap, false, false);
		status = grove_apply_steps_changed(&ap.g.st) ? GROVE_EXIT_REFUSED : GROVE_EXIT_OK;
		goto out;
	}
	r = grove_apply_run(&ap.g, &events, &err);
	if (r < 0) {
		status = report_run_failure(&ap, &err, r);
		goto out;
	}
	if (ap.a.json)
		print_json(&ap, true);
	else
		print_text(&ap, true, false);
out:
	apply_release(&ap);
	if (fflush(stdout) != 0 && status == GROVE_EXIT_OK) {
		fprintf(stderr, "grove: write standard output: %s\n", grove_strerror(-errno));
		status = GROVE_EXIT_REFUSED;
	}
	return status;
}
