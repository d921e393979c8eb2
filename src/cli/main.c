/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The grove program: global options, then a command, or GNU Stow's own command line. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "grove-config.h"

static const char *const not_yet[] = {
	"switch",   "status", "verify",  "log",   "undo",
	"rollback", "alt",    "profile", "apply", "recover",
};

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

int
main(int argc, char **argv)
{
	struct grove_global_opts global = { 0 };
	enum grove_stow_action action = GROVE_ACTION_STOW;
	const char *prog = argc > 0 ? strrchr(argv[0], '/') : NULL;
	const char *cmd;
	int i;

	prog = prog ? prog + 1 : argc > 0 ? argv[0] : "grove";
	/* Installed (or linked) as "stow": the whole command line is Stow's. */
	if (!strcmp(prog, "stow"))
		return grove_cmd_stow(argc, argv, GROVE_ACTION_STOW, false, NULL);

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--state")) {
			if (i + 1 >= argc) {
				fputs("grove: option '--state' requires a value\n", stderr);
				return GROVE_EXIT_USAGE;
			}
			global.state_dir = argv[++i];
		} else if (!strncmp(a, "--state=", 8)) {
			global.state_dir = a + 8;
		} else if (!strcmp(a, "--json")) {
			global.json = true;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			global.verbose++;
		} else if (!strcmp(a, "-n") || !strcmp(a, "--dry-run")) {
			global.dry_run = true;
		} else if (!strcmp(a, "--version")) {
			printf("grove (GNU Stow compatible) version %s\n", GROVE_VERSION);
			return GROVE_EXIT_OK;
		} else if (!strcmp(a, "--help")) {
			grove_stow_usage(stdout);
			return GROVE_EXIT_OK;
		} else {
			break;
		}
	}
	if (i >= argc) {
		fputs("grove: no command given (try 'grove --help')\n", stderr);
		return GROVE_EXIT_USAGE;
	}
	cmd = argv[i];
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
	for (size_t k = 0; k < sizeof(not_yet) / sizeof(not_yet[0]); k++) {
		if (!strcmp(cmd, not_yet[k])) {
			fprintf(stderr, "grove: '%s' is not implemented yet\n", cmd);
			return GROVE_EXIT_USAGE;
		}
	}
	fprintf(stderr, "grove: unknown command '%s' (try 'grove --help')\n", cmd);
	return GROVE_EXIT_USAGE;
}
