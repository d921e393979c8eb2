/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The packages commands: stow, unstow, restow and plan, through GNU Stow's command line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grove/text.h"
#include "front.h"
#include "grove-config.h"

#include "../banned.h" /* last */

/* The plan document (docs/json.md): "plan" for plan and --simulate, "stow" for a change made. */
static void
print_json(const struct grove_stow_run *run, bool plan_only)
{
	struct json_t *doc = grove_json_doc(plan_only ? "plan" : "stow");

	grove_json_put_str(doc, "target", run->target_root.real);
	grove_json_put_str(doc, "stow_dir", run->stow_root.real);
	grove_json_put_bool(doc, "changed", run->plan.n_ops && !run->plan.n_conflicts);
	if (!plan_only)
		grove_json_put_int(doc, "transaction", run->txn);
	grove_json_print_plan(doc, &run->plan, run->stow_path);
}

/* One line for every package planned with options the log recorded (docs/stow.md, "Recorded
 * options"): "grove: vim was stowed with --dotfiles, tmux with --no-folding; using them again
 * (give --no-dotfiles or --folding to say otherwise; see grove(1))". */
static void
print_recorded(const struct grove_stow_run *run)
{
	size_t n_opts = 0;

	fputs("grove: ", stderr);
	for (size_t i = 0; i < run->n_recorded; i++) {
		const struct grove_stow_recorded *p = &run->recorded[i];

		if (i)
			fputs(", ", stderr);
		grove_fput_shown(p->package, stderr);
		fprintf(stderr, "%s with %s%s%s", i ? "" : " was stowed",
			p->dotfiles ? "--dotfiles" : "", p->dotfiles && p->no_folding ? " " : "",
			p->no_folding ? "--no-folding" : "");
		n_opts += p->dotfiles + p->no_folding;
	}
	fprintf(stderr, "; using %s again (see 'Recorded options' in grove(1))\n",
		n_opts > 1 ? "them" : "it");
}

/*
 * The exit status of GNU Stow's death (invoked as stow), which Perl's die takes from errno, else
 * 255: ENOENT when Stow's -d of the package failed (nothing there), or when a package was planned
 * before (its .stow-local-ignore looked for), else what the rc files' -r tests left (ENOENT
 * without a ./.stowrc, 0 with one: 255). Stow plans the unstows first, then the stows.
 */
static int
stow_death_status(const struct grove_stow_request *req, const struct grove_stow_cli *cli)
{
	int status = cli->rc_errno ? cli->rc_errno : 255;
	enum grove_stow_entry top;
	struct grove_error e0 = { 0 };

	/* A stow dir that cannot be opened: ENOENT. */
	if (!req->dir || grove_stow_dir_entry(req->dir, ".", &top, &e0) < 0)
		return ENOENT;
	for (size_t i = 0; i < req->n_unstow + req->n_stow; i++) {
		const char *name =
			i < req->n_unstow ? req->unstow[i] : req->stow[i - req->n_unstow];
		enum grove_stow_entry e;
		struct grove_error err = { 0 };

		/* (A name not there, or that cannot be looked at: ENOENT.) */
		if (grove_stow_dir_entry(req->dir, name, &e, &err) < 0 ||
		    e == GROVE_STOW_ENTRY_NONE)
			return ENOENT;
		if (e != GROVE_STOW_ENTRY_FOLDER)
			return i ? ENOENT : status;
	}
	return status;
}

/* A command line or .stowrc that could not be parsed: the error and the exit status. */
static int
parse_failed(const struct grove_error *err, int r, const struct grove_stow_cli *cli, bool as_stow)
{
	int status;

	if (as_stow && cli->rc_died) {
		/* Stow dies on an undefined variable in .stowrc, in its words, with errno's exit
		 * status (stow_death_status). */
		fprintf(stderr, "%s\n", err->msg);
		return cli->rc_errno ? cli->rc_errno : 255;
	}
	status = grove_report_error(err, r);
	/* Invoked as "stow": a bad command line or .stowrc exits 1, as Stow's usage() and its
	 * option errors do (grove's own spelling keeps 2 and 78: DESIGN.md's exit codes). */
	if (as_stow && (status == GROVE_EXIT_USAGE || status == GROVE_EXIT_CONFIG))
		status = GROVE_EXIT_REFUSED;
	return status;
}

/* The layout options of l, as the command line spells them ("--dotfiles --no-folding"), or the
 * defaults' words when it has neither. */
static void
fput_layout(const struct grove_pkg_layout *l, FILE *f)
{
	if (!l->dotfiles && !l->no_folding)
		fputs("the defaults", f);
	else
		fprintf(f, "%s%s%s", l->dotfiles ? "--dotfiles" : "",
			l->dotfiles && l->no_folding ? " " : "",
			l->no_folding ? "--no-folding" : "");
}

/* One line for each package a restow gives new options (issue 40 item 7): "grove: restowing
 * nvim with --no-folding; it was stowed with neither --dotfiles nor --no-folding". */
static void
print_changed(const struct grove_stow_run *run)
{
	for (size_t i = 0; i < run->n_changed; i++) {
		fputs("grove: restowing ", stderr);
		grove_fput_shown(run->changed[i].package, stderr);
		fputs(" with ", stderr);
		fput_layout(&run->changed[i].now, stderr);
		fputs("; it was stowed with ", stderr);
		fput_layout(&run->changed[i].was, stderr);
		fputs(" (its links are made anew in one transaction)\n", stderr);
	}
}

/* What a run notes before its plan: an interrupted transaction a dry run does not roll back, and
 * the recorded options used again. */
static void
print_notes(const struct grove_stow_run *run)
{
	if (run->interrupted)
		fprintf(stderr,
			"grove: warning: transaction %lld was interrupted: a real run rolls it back "
			"first (grove recover); this preview is of the target as it is now\n",
			(long long)run->interrupted);
	if (run->n_recorded)
		print_recorded(run);
	print_changed(run);
}

/* A request that could not be prepared: the error, then the hint that fits it. */
static int
report_prepare_error(const struct grove_stow_request *req, struct grove_error *err, int r)
{
	int status = grove_report_error(err, r);

	if (r == -GROVE_E_NOPACKAGE && grove_term_hints()) {
		grove_hint_packages(req->dir, req->stow, req->n_stow);
		grove_hint_packages(req->dir, req->unstow, req->n_unstow);
	} else if (r == -ENOENT && grove_term_hints()) {
		/* A mistyped -d or -t (grove_stow_open_roots names which). */
		if (!strncmp(err->msg, "stow directory", 14) && req->dir)
			grove_hint_folder(req->dir);
		else if (!strncmp(err->msg, "target", 6) && req->target)
			grove_hint_folder(req->target);
	}
	return status;
}

int
grove_cmd_stow(int argc, char **argv, enum grove_stow_action initial, bool plan_only,
	       const struct grove_global_opts *global)
{
	struct grove_stow_request req;
	struct grove_stow_run run = { 0 };
	struct grove_stow_cli cli;
	struct grove_session_opts so = { 0 };
	struct grove_error err = { 0 };
	struct grove_progress pg = { 0 };
	bool json = global && global->json;
	int status = GROVE_EXIT_OK;
	int r;

	grove_stow_request_init(&req);
	req.stow_words = req.ignore_recorded = !global; /* as "stow": GNU Stow's, nothing more */
	r = grove_stow_cli_parse(argc, argv, initial, getenv("HOME"), ".stowrc", true, &req, &cli,
				 &err);
	if (r < 0) {
		status = parse_failed(&err, r, &cli, !global);
		goto out;
	}
	if (cli.help) {
		if (global)
			grove_help(stdout);
		else
			grove_stow_usage(stdout);
		goto out;
	}
	if (cli.version) {
		printf("grove (GNU Stow compatible) version %s\n", GROVE_VERSION);
		goto out;
	}
	cli.plan_only = plan_only;
	if (global) {
		req.verbose += global->verbose;
		cli.simulate = cli.simulate || global->dry_run;
	}

	req.command = global && global->command_line ? strdup(global->command_line)
						     : grove_command_line(argc, argv);
	so.state_opt = global ? global->state_dir : NULL;
	so.wait_seconds = global ? global->wait_seconds : 0;
	so.command = req.command; /* the lock's holder record */
	/* A dry run only reads the log (for the options packages were stowed with). */
	so.no_lock = so.read_only = cli.plan_only || cli.simulate;
	/* -v and --json print the plan's ops: they need it whole in memory. */
	req.no_stream = json || req.verbose > 0;
	r = grove_stow_prepare(&req, &so, &run, &err);
	if (r == -GROVE_E_NOPACKAGE && !global) {
		/* Stow's error(): its words, and the exit status of its die. */
		fprintf(stderr, "stow: ERROR: %s\n", err.msg);
		status = stow_death_status(&req, &cli);
		goto out;
	}
	if (r < 0) {
		status = report_prepare_error(&req, &err, r);
		goto out;
	}
	if (run.recovered && !grove_term_quiet())
		fprintf(stderr, "grove: rolled back interrupted transaction %lld first\n",
			(long long)run.recovered);
	if (!grove_term_quiet()) {
		print_notes(&run);
		/* Shown once: the log remembers it (a dry run's notice is shown again). */
		r = grove_stow_note_told(&run, &err);
		if (r < 0) {
			status = grove_report_error(&err, r);
			goto release;
		}
	}
	/* As grove (Stow says nothing): a package of dot- names stowed without --dotfiles. */
	for (size_t i = 0; global && grove_term_hints() && i < run.n_dot_named; i++)
		grove_hint(stderr,
			   "'%s' has dot- names, linked as they are (dot-x, as GNU Stow does "
			   "without --dotfiles): did you mean --dotfiles?",
			   run.dot_named[i]);
	for (size_t i = 0; i < run.plan.n_warnings; i++)
		grove_print_warning(stderr, run.plan.warnings[i], !global);
	if (run.plan.n_conflicts) {
		/* Invoked as "stow": Stow's words only; as grove: with the hints. */
		if (global)
			grove_print_conflicts_hinted(&run.plan, run.stow_path, stderr);
		else
			grove_print_conflicts(&run.plan, stderr);
		status = GROVE_EXIT_REFUSED;
		if (json)
			print_json(&run, cli.plan_only || cli.simulate);
		goto release;
	}
	if (cli.plan_only) {
		if (json)
			print_json(&run, true);
		else
			grove_print_plan(&run.plan, stdout);
		goto release;
	}
	if (req.verbose > 0)
		grove_print_plan(&run.plan, stderr);
	if (cli.simulate) {
		fputs("WARNING: in simulation mode so not modifying filesystem.\n", stderr);
		if (json)
			print_json(&run, true);
		goto release;
	}
	if (run.journaled) {
		grove_progress_begin(&pg, "grove", run.plan.n_logged + run.plan.n_ops);
		grove_session_set_progress(&run.session, grove_progress_update, &pg);
	}
	r = grove_stow_execute(&run, &err);
	grove_progress_end(&pg);
	if (r < 0)
		status = grove_report_error(&err, r);
	else if (json)
		print_json(&run, false);
release:
	grove_stow_run_release(&run);
out:
	grove_stow_request_release(&req);
	if (fflush(stdout) != 0 && status == GROVE_EXIT_OK) {
		fprintf(stderr, "grove: write standard output: %s\n", grove_strerror(-errno));
		status = GROVE_EXIT_REFUSED;
	}
	return status;
}
