/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The grove program: global options, then a command, or GNU Stow's own command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "front.h"
#include "grove-config.h"

#include "../banned.h" /* last */

static const char *const txn_cmds[] = {
	"log", "status", "verify", "undo", "rollback", "recover",
};

/* `grove switch [OPTIONS] OLD NEW` is `-D OLD -S NEW` in one transaction: a file both
 * packages provide is replaced in place (renamed over), never missing. */
static int
cmd_switch(int argc, char **argv, const struct grove_global_opts *global)
{
	char **v = calloc((size_t)argc + 3, sizeof(char *));
	const char *pos[2];
	int n = 0, np = 0, status;

	if (!v)
		return GROVE_EXIT_REFUSED;
	v[n++] = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool takes_value = !strcmp(a, "-d") || !strcmp(a, "-t") || !strcmp(a, "--dir") ||
				   !strcmp(a, "--target") || !strcmp(a, "--ignore") ||
				   !strcmp(a, "--defer") || !strcmp(a, "--override");

		if (a[0] == '-' && a[1]) {
			v[n++] = argv[i];
			if (takes_value && i + 1 < argc)
				v[n++] = argv[++i];
		} else if (np < 2) {
			pos[np++] = a;
		} else {
			np = 3;
		}
	}
	if (np != 2) {
		fputs("grove: usage: grove switch [OPTIONS] OLD NEW\n", stderr);
		free(v);
		return GROVE_EXIT_USAGE;
	}
	v[n++] = "-D";
	v[n++] = (char *)pos[0];
	v[n++] = "-S";
	v[n++] = (char *)pos[1];
	status = grove_cmd_stow(n, v, GROVE_ACTION_STOW, false, global);
	free(v);
	return status;
}

/* Whether word names a package (a folder, or a link to one beneath it) in the stow dir the
 * packages commands would use: -d from .stowrc, else $STOW_DIR, else the current folder. */
static bool
names_package(const char *word)
{
	char *argv[] = { "grove", "-S", (char *)word, NULL };
	struct grove_stow_request req;
	struct grove_stow_cli cli;
	struct grove_root root = { 0 };
	struct grove_stat st;
	struct grove_error err = { 0 };
	bool yes = false;

	if (!word[0] || strchr(word, '/') || !strcmp(word, ".") || !strcmp(word, ".."))
		return false;
	grove_stow_request_init(&req);
	if (grove_stow_cli_parse(3, argv, GROVE_ACTION_STOW, getenv("HOME"), ".stowrc", true, &req,
				 &cli, &err) == 0 &&
	    req.dir && grove_root_open(&root, req.dir, &err) == 0) {
		yes = grove_fs_stat_beneath_follow(root.fd, word, &st, &err) == 0 &&
		      st.type == GROVE_FT_DIR;
		grove_root_release(&root);
	}
	grove_stow_request_release(&req);
	return yes;
}

static int
stow_action(const char *name, enum grove_stow_action *ret)
{
	if (!strcmp(name, "stow"))
		*ret = GROVE_ACTION_STOW;
	else if (!strcmp(name, "unstow"))
		*ret = GROVE_ACTION_UNSTOW;
	else if (!strcmp(name, "restow"))
		*ret = GROVE_ACTION_RESTOW;
	else
		return -1;
	return 0;
}

/* grove's global options, before the command: the command's index in argv, or -1 - the exit
 * status when they end the run (--version, --help, a usage error). */
static int
parse_global(int argc, char **argv, struct grove_global_opts *g, enum grove_color_mode *color,
	     bool *quiet)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--state")) {
			if (i + 1 >= argc) {
				fputs("grove: option '--state' requires a value\n", stderr);
				return -GROVE_EXIT_USAGE - 1;
			}
			g->state_dir = argv[++i];
		} else if (!strncmp(a, "--state=", 8)) {
			g->state_dir = a + 8;
		} else if (!strcmp(a, "--json")) {
			g->json = true;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			g->verbose++;
		} else if (!strcmp(a, "-n") || !strcmp(a, "--dry-run")) {
			g->dry_run = true;
		} else if (!strcmp(a, "--wait") || !strncmp(a, "--wait=", 7)) {
			const char *val = a[6] == '=' ? a + 7 : (i + 1 < argc ? argv[++i] : NULL);
			char *end = NULL;

			if (!val || !*val || (g->wait_seconds = strtod(val, &end), *end) ||
			    g->wait_seconds < 0) {
				fputs("grove: option '--wait' needs a number of seconds\n", stderr);
				return -GROVE_EXIT_USAGE - 1;
			}
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			*quiet = true;
		} else if (!strcmp(a, "--color") || !strncmp(a, "--color=", 8) ||
			   !strcmp(a, "--colour") || !strncmp(a, "--colour=", 9)) {
			const char *val = strchr(a, '=') ? strchr(a, '=') + 1 : "always";

			if (grove_color_parse(val, color) < 0) {
				fprintf(stderr,
					"grove: option '--color' takes auto, always or never, not "
					"'%s'\n",
					val);
				return -GROVE_EXIT_USAGE - 1;
			}
		} else if (!strcmp(a, "--version")) {
			printf("grove (GNU Stow compatible) version %s\n", GROVE_VERSION);
			return -GROVE_EXIT_OK - 1;
		} else if (!strcmp(a, "--help")) {
			grove_help(stdout);
			return -GROVE_EXIT_OK - 1;
		} else {
			break;
		}
	}
	return i;
}

static int
dispatch(int argc, char **argv, const char *whole)
{
	struct grove_global_opts global = { 0 };
	enum grove_stow_action action = GROVE_ACTION_STOW;
	const char *prog = argc > 0 ? strrchr(argv[0], '/') : NULL;
	enum grove_color_mode color = GROVE_COLOR_AUTO;
	bool quiet = false;
	char *help_argv[] = { NULL, "--help", NULL };
	const char *cmd;
	int i;

	prog = prog ? prog + 1 : argc > 0 ? argv[0] : "grove";
	global.command_line = whole;
	/* Installed (or linked) as "stow": the whole command line is Stow's. */
	if (!strcmp(prog, "stow"))
		return grove_cmd_stow(argc, argv, GROVE_ACTION_STOW, false, NULL);
	if (!strcmp(prog, "update-alternatives"))
		return grove_cmd_update_alternatives(argc, argv);

	i = parse_global(argc, argv, &global, &color, &quiet);
	if (i < 0)
		return -i - 1;
	if (i >= argc) {
		fputs("grove: no command given (try 'grove --help')\n", stderr);
		return GROVE_EXIT_USAGE;
	}
	grove_term_setup(color, quiet);
	cmd = argv[i];
	/* help: `grove help [CMD]`, `grove CMD --help` (alt, profile, apply print their own). */
	if (!strcmp(cmd, "help")) {
		if (i + 1 >= argc || argv[i + 1][0] == '-') {
			grove_help(stdout);
			return GROVE_EXIT_OK;
		}
		if (grove_help_command(stdout, argv[i + 1]) == 0)
			return GROVE_EXIT_OK;
		help_argv[0] = argv[i + 1];
		argc = 2, argv = help_argv, i = 0, cmd = argv[0];
	} else if (grove_help_wanted(argc - i, argv + i) && grove_help_command(stdout, cmd) == 0) {
		return GROVE_EXIT_OK;
	}
	/* GNU Stow's spelling: "grove -d DIR -S a -D b". argv[i - 1] stands in for the program
	 * name. */
	if (cmd[0] == '-')
		return grove_cmd_stow(argc - i + 1, argv + i - 1, GROVE_ACTION_STOW, false,
				      &global);
	if (!stow_action(cmd, &action))
		return grove_cmd_stow(argc - i, argv + i, action, false, &global);
	if (!strcmp(cmd, "plan")) {
		if (i + 1 < argc && !stow_action(argv[i + 1], &action))
			i++;
		return grove_cmd_stow(argc - i, argv + i, action, true, &global);
	}
	if (!strcmp(cmd, "alt")) {
		/* update-alternatives has no dry run: refuse -n rather than ignore it and change
		 * links. */
		if (global.dry_run) {
			fputs("grove: 'alt' has no dry run (-n); see 'grove alt --query'\n",
			      stderr);
			return GROVE_EXIT_USAGE;
		}
		return grove_cmd_alt(argc - i, argv + i, &global);
	}
	if (!strcmp(cmd, "profile"))
		return grove_cmd_profile(argc - i, argv + i, &global);
	if (!strcmp(cmd, "apply"))
		return grove_cmd_apply(argc - i, argv + i, &global);
	if (!strcmp(cmd, "switch"))
		return cmd_switch(argc - i, argv + i, &global);
	for (size_t k = 0; k < sizeof(txn_cmds) / sizeof(txn_cmds[0]); k++)
		if (!strcmp(cmd, txn_cmds[k]))
			return grove_cmd_txn(argc - i, argv + i, cmd, &global);
	/* `stow PKG…` spelled with grove's name: say how grove spells it. */
	if (names_package(cmd)) {
		fprintf(stderr,
			"grove: unknown command '%s' ('%s' is a package: to stow, run 'grove stow",
			cmd, cmd);
		for (int k = i; k < argc; k++)
			fprintf(stderr, " %s", argv[k]);
		fputs("')\n", stderr);
		return GROVE_EXIT_USAGE;
	}
	fprintf(stderr, "grove: unknown command '%s' (try 'grove --help')\n", cmd);
	return GROVE_EXIT_USAGE;
}

int
main(int argc, char **argv)
{
	char *whole = grove_command_line(argc, argv);
	int status = dispatch(argc, argv, whole);

	free(whole);
	return status;
}
