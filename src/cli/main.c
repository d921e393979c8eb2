/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The grove program: a command (argv.c reads global options wherever they are), or GNU Stow's own
 * command line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grove/grove.h"
#include "front.h"

#include "../banned.h" /* last */

static const char *const txn_cmds[] = {
	"log", "show", "status", "verify", "undo", "rollback", "recover",
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

		if (!strcmp(a, "--")) { /* OLD and NEW follow */
			while (++i < argc)
				if (np < 2)
					pos[np++] = argv[i];
				else
					np = 3;
			break;
		}
		if (a[0] == '-' && a[1]) {
			v[n++] = argv[i];
			/* Stow's value options as its parser reads them (-nt DIR, --ta DIR). */
			if (grove_stow_opt_takes_next(a, true) && i + 1 < argc)
				v[n++] = argv[++i];
		} else if (np < 2) {
			pos[np++] = a;
		} else {
			np = 3;
		}
	}
	if (np != 2) {
		grove_fail(-GROVE_E_USAGE, "usage: grove switch [OPTION ...] OLD NEW");
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
 * packages commands would use: -d from .stowrc, else $STOW_DIR, else the current folder. When
 * it does not and ret_dir is given, that stow dir (a copy, or NULL) for a hint. */
static bool
names_package(const char *word, char **ret_dir)
{
	char *argv[] = { "grove", "-S", (char *)word, NULL };
	struct grove_stow_request req;
	struct grove_stow_cli cli;
	enum grove_stow_entry e = GROVE_STOW_ENTRY_NONE;
	struct grove_error err = { 0 };
	bool yes = false;

	if (!word[0] || strchr(word, '/') || !strcmp(word, ".") || !strcmp(word, ".."))
		return false;
	grove_stow_request_init(&req);
	if (grove_stow_cli_parse(3, argv, GROVE_ACTION_STOW, getenv("HOME"), ".stowrc", true, &req,
				 &cli, &err) == 0 &&
	    req.dir && grove_stow_dir_entry(req.dir, word, &e, &err) == 0)
		yes = e == GROVE_STOW_ENTRY_FOLDER;
	if (ret_dir)
		*ret_dir = !yes && req.dir ? strdup(req.dir) : NULL;
	grove_stow_request_release(&req);
	return yes;
}

/* GNU Stow's spelling for a command line whose first word is a package: argv[0] is that word,
 * and Stow's parser takes argv[0] for the program's name. */
static int
stow_spelled(int argc, char **argv, const struct grove_global_opts *global)
{
	char **v = calloc((size_t)argc + 2, sizeof(char *));
	int status;

	if (!v) {
		grove_fail(-ENOMEM, "out of memory");
		return GROVE_EXIT_REFUSED;
	}
	v[0] = "grove";
	memcpy(v + 1, argv, (size_t)argc * sizeof(char *));
	status = grove_cmd_stow(argc + 1, v, GROVE_ACTION_STOW, false, global);
	free(v);
	return status;
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

/* Runs the command line's command: argv[0] is the command, or the program for GNU Stow's
 * spelling. */
static int
run(const struct grove_cmdline *line, const struct grove_global_opts *g)
{
	struct grove_global_opts global = *g;
	enum grove_stow_action action = GROVE_ACTION_STOW;
	char *help_argv[] = { NULL, "--help", NULL };
	char **argv = line->v;
	int argc = line->n, i = 0;
	const char *cmd = line->cmd;
	char *dir = NULL;

	/* GNU Stow's spelling: "grove -d DIR -S a -D b", "grove -d DIR -t DIR a b". */
	if (!cmd)
		return grove_cmd_stow(argc, argv, GROVE_ACTION_STOW, false, &global);
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
	if (!stow_action(cmd, &action))
		return grove_cmd_stow(argc - i, argv + i, action, false, &global);
	if (!strcmp(cmd, "plan")) {
		if (i + 1 < argc && !stow_action(argv[i + 1], &action))
			i++;
		return grove_cmd_stow(argc - i, argv + i, action, true, &global);
	}
	if (!strcmp(cmd, "alt")) /* (-n is alt's --dry-run: a prediction, nothing changed) */
		return grove_cmd_alt(argc - i, argv + i, &global);
	if (!strcmp(cmd, "profile"))
		return grove_cmd_profile(argc - i, argv + i, &global);
	if (!strcmp(cmd, "apply"))
		return grove_cmd_apply(argc - i, argv + i, &global);
	if (!strcmp(cmd, "switch"))
		return cmd_switch(argc - i, argv + i, &global);
	if (!strcmp(cmd, "import"))
		return grove_cmd_import(argc - i, argv + i, &global);
	if (!strcmp(cmd, "targets"))
		return grove_cmd_targets(argc - i, argv + i, &global);
	for (size_t k = 0; k < sizeof(txn_cmds) / sizeof(txn_cmds[0]); k++)
		if (!strcmp(cmd, txn_cmds[k]))
			return grove_cmd_txn(argc - i, argv + i, cmd, &global);
	/* `stow PKG…` spelled with grove's name (a README written for `stow vim`): GNU Stow's
	 * spelling, as `grove --dotfiles vim` already is, so that an option in front changes
	 * nothing but the option. A command's name is the command (grove(1), COMMAND LINE). */
	if (names_package(cmd, &dir))
		return stow_spelled(argc - i, argv + i, &global);
	if (grove_nearest_command(cmd)) {
		grove_fail(-GROVE_E_USAGE, "unknown command '%s' (did you mean '%s'?)", cmd,
			   grove_nearest_command(cmd));
	} else {
		grove_fail(-GROVE_E_USAGE, "unknown command '%s' (try 'grove --help')", cmd);
		/* A mistyped package (`grove vmi`, meaning Stow's `stow vim`). */
		if (dir && grove_term_hints())
			grove_hint_packages(dir, &argv[i], 1);
	}
	free(dir);
	return GROVE_EXIT_USAGE;
}

/* Whether the command line asks for JSON: --json wherever it is an option (the command line's
 * parse takes it out before and after the command, never as an option's value: "-t --json" names
 * a target). */
static bool
wants_json(const struct grove_global_opts *g)
{
	return g->json;
}

static void
json_error(const char *cmd, int status)
{
	const char *message = NULL, *path = NULL;
	int code = grove_last_error(&message, &path);

	grove_json_error_doc(cmd, status, code, message, path);
}

static int
dispatch(int argc, char **argv, const char *whole)
{
	struct grove_global_opts global = { 0 };
	struct grove_cmdline line;
	const char *prog = argc > 0 ? strrchr(argv[0], '/') : NULL;
	enum grove_color_mode color = GROVE_COLOR_AUTO;
	bool quiet = false;
	int r;

	prog = prog ? prog + 1 : argc > 0 ? argv[0] : "grove";
	global.command_line = whole;
	/* Installed (or linked) as "stow": the whole command line is Stow's. */
	if (!strcmp(prog, "stow"))
		return grove_cmd_stow(argc, argv, GROVE_ACTION_STOW, false, NULL);
	/* Installed as "update-alternatives" (docs/alternatives.md): grove alt, speaking as it. */
	if (!strcmp(prog, "update-alternatives"))
		return grove_cmd_update_alternatives(argc, argv);

	r = grove_cmdline_parse(argc, argv, &global, &color, &quiet, &line);
	if (r < 0) {
		if (global.json && -r - 1 != GROVE_EXIT_OK)
			json_error(NULL, -r - 1);
		return -r - 1;
	}
	grove_term_setup(color, quiet);
	r = run(&line, &global);
	/* Every command given --json prints one document, also when it fails before printing its
	 * own (docs/json.md, "Errors"). grove alt speaks update-alternatives' language instead. */
	if (r != GROVE_EXIT_OK && wants_json(&global) && !grove_json_printed() &&
	    !(line.cmd && !strcmp(line.cmd, "alt")))
		json_error(line.cmd, r);
	grove_cmdline_release(&line);
	return r;
}

int
main(int argc, char **argv)
{
	char *whole;
	int status;

	grove_process_start();
	whole = grove_command_line(argc, argv);
	status = dispatch(argc, argv, whole);

	free(whole);
	return status;
}
