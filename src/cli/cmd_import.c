/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `grove import`: the links GNU Stow made, recorded in the log as grove's (docs/stow.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "front.h"
#include "grove/text.h"

#include "../banned.h" /* last */

/* A placeholder package name closing the command line, so that Stow's parser, which wants one,
 * takes a command line naming none (import then takes every package of the stow dir). */
#define NO_PACKAGE "\x01"

/* Parses Stow's options (-d, -t, --dotfiles, -n, -v, and .stowrc's) and the package names. */
static int
parse(int argc, char **argv, struct grove_stow_request *req, struct grove_stow_cli *cli,
      struct grove_error *err)
{
	char **v = calloc((size_t)argc + 3, sizeof(char *));
	int n = 0, r;

	if (!v)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (int i = 0; i < argc; i++)
		v[n++] = argv[i];
	v[n++] = "--";
	v[n++] = NO_PACKAGE;
	r = grove_stow_cli_parse(n, v, GROVE_ACTION_STOW, getenv("HOME"), ".stowrc", true, req, cli,
				 err);
	free(v);
	if (r < 0 || cli->help || cli->version)
		return r;
	if (req->n_unstow || !req->n_stow || strcmp(req->stow[req->n_stow - 1], NO_PACKAGE) != 0)
		return grove_error_set(err, -GROVE_E_USAGE,
				       "'import' takes package names, not -D, -R or -S "
				       "(try 'grove import --help')");
	free(req->stow[--req->n_stow]);
	req->stow[req->n_stow] = NULL;
	/* A "--" right before the placeholder is the one added above: the command line's own "--"
	 * ended the options first, so it came in as a package name. (Before options end, a bare
	 * "--" is never a package; a package "--" the user names after their own "--" comes
	 * before the added one and stays.) */
	if (req->n_stow && !strcmp(req->stow[req->n_stow - 1], "--")) {
		free(req->stow[--req->n_stow]);
		req->stow[req->n_stow] = NULL;
	}
	return 0;
}

static void
print_json(const struct grove_stow_run *run, bool dry_run, size_t known)
{
	struct json_t *doc = grove_json_doc("import");

	grove_json_put_str(doc, "target", run->target_root.real);
	grove_json_put_str(doc, "stow_dir", run->stow_root.real);
	grove_json_put_bool(doc, "dry_run", dry_run);
	grove_json_put_bool(doc, "changed", run->plan.n_ops + run->plan.n_logged);
	grove_json_put_int(doc, "transaction", run->txn);
	grove_json_put_int(doc, "known", (long long)known);
	grove_json_print_plan(doc, &run->plan, run->stow_path);
}

/* "3 links (git, vim)": how many links of which packages (in order of first sight). */
static void
print_summary(const struct grove_stow_run *run)
{
	size_t n = run->plan.n_ops + run->plan.n_logged;

	printf("%zu link%s (", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < run->n_imported; i++) {
		fputs(i ? ", " : "", stdout);
		grove_fput_shown(run->imported[i], stdout);
	}
	putchar(')');
}

int
grove_cmd_import(int argc, char **argv, const struct grove_global_opts *global)
{
	struct grove_stow_request req;
	struct grove_stow_run run = { 0 };
	struct grove_stow_cli cli = { 0 };
	struct grove_session_opts so = { 0 };
	struct grove_error err = { 0 };
	size_t known = 0;
	bool dry;
	int status = GROVE_EXIT_OK, r;

	grove_stow_request_init(&req);
	r = parse(argc, argv, &req, &cli, &err);
	if (r < 0) {
		status = grove_report_error(&err, r);
		goto out;
	}
	if (cli.help || cli.version) {
		(void)grove_help_command(stdout, "import");
		goto out;
	}
	dry = cli.simulate || global->dry_run;
	req.command = global->command_line ? strdup(global->command_line)
					   : grove_command_line(argc, argv);
	so.state_opt = global->state_dir;
	so.wait_seconds = global->wait_seconds;
	/* A dry run reads the log (to leave out what grove owns already), locks and writes nothing.
	 */
	so.no_lock = so.read_only = so.no_create = dry;
	r = grove_stow_import_prepare(&req, &so, &run, &known, &err);
	if (r < 0) {
		status = grove_report_error(&err, r);
		if (r == -GROVE_E_NOPACKAGE && grove_term_hints())
			grove_hint_packages(req.dir, req.stow, req.n_stow);
		goto out;
	}
	if (run.recovered && !grove_term_quiet())
		fprintf(stderr, "grove: rolled back interrupted transaction %lld first\n",
			(long long)run.recovered);
	for (size_t i = 0; i < run.plan.n_warnings; i++)
		grove_print_warning(stderr, run.plan.warnings[i], false);
	if (!dry && run.plan.n_ops + run.plan.n_logged) {
		r = grove_stow_execute(&run, &err);
		if (r < 0) {
			status = grove_report_error(&err, r);
			goto release;
		}
	}
	if (global->json) {
		print_json(&run, dry, known);
	} else if (run.plan.n_ops + run.plan.n_logged) {
		if (dry || req.verbose + global->verbose > 0)
			grove_print_plan(&run.plan, dry ? stdout : stderr);
		fputs(dry ? "would record " : "recorded ", stdout);
		print_summary(&run);
		if (!dry)
			printf(" as transaction %lld", (long long)run.txn);
		if (known)
			printf("; %zu more %s grove's already", known, known == 1 ? "was" : "were");
		putchar('\n');
	} else if (known) {
		printf("nothing to import: the %zu link%s found %s grove's already\n", known,
		       known == 1 ? "" : "s", known == 1 ? "is" : "are");
	} else {
		puts("nothing to import: no link into these packages was found");
	}
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
