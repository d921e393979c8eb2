/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The packages commands: stow, unstow, restow and plan, through GNU Stow's command line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grove-config.h"

int
grove_cmd_stow(int argc, char **argv, enum grove_stow_action initial, bool plan_only,
	       const struct grove_global_opts *global)
{
	struct grove_stow_request req;
	struct grove_stow_run run = { 0 };
	struct grove_stow_cli cli;
	struct grove_session_opts so = { 0 };
	struct grove_error err = { 0 };
	int status = GROVE_EXIT_OK;
	int r;

	grove_stow_request_init(&req);
	r = grove_stow_cli_parse(argc, argv, initial, getenv("HOME"), ".stowrc", true, &req, &cli,
				 &err);
	if (r < 0) {
		status = grove_report_error(&err, r);
		goto out;
	}
	if (cli.help) {
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
	if (!cli.plan_only && !cli.simulate) {
		so.state_opt = global ? global->state_dir : NULL;
		so.wait_seconds = global ? global->wait_seconds : 0;
	}
	r = grove_stow_prepare(&req, cli.plan_only || cli.simulate ? NULL : &so, &run, &err);
	if (r < 0) {
		status = grove_report_error(&err, r);
		goto out;
	}
	if (run.recovered)
		fprintf(stderr, "grove: rolled back interrupted transaction %lld first\n",
			(long long)run.recovered);
	for (size_t i = 0; i < run.plan.n_warnings; i++)
		fprintf(stderr, "WARNING: %s\n", run.plan.warnings[i]);
	if (run.plan.n_conflicts) {
		grove_print_conflicts(&run.plan, stderr);
		status = GROVE_EXIT_REFUSED;
		goto release;
	}
	if (cli.plan_only) {
		grove_plan_print(&run.plan, stdout);
		goto release;
	}
	if (req.verbose > 0)
		grove_plan_print(&run.plan, stderr);
	if (cli.simulate) {
		fputs("WARNING: in simulation mode so not modifying filesystem.\n", stderr);
		goto release;
	}
	r = grove_stow_execute(&run, &err);
	if (r < 0)
		status = grove_report_error(&err, r);
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
