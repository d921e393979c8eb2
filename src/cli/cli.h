/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The command line's internal interface: Stow-style argument parsing, .stowrc, output helpers. */
#ifndef GROVE_CLI_H
#define GROVE_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "grove/error.h"
#include "grove/journal.h"
#include "grove/names.h"
#include "grove/plan.h"
#include "grove/stow.h"

/* Exit statuses (DESIGN.md, command line contract). */
enum {
	GROVE_EXIT_OK = 0,
	GROVE_EXIT_REFUSED = 1,
	GROVE_EXIT_USAGE = 2,
	GROVE_EXIT_PARTIAL = 3,
	GROVE_EXIT_ATTENTION = 4,
	GROVE_EXIT_NOT_DURABLE = 5, /* changed and committed; the log's last sync failed */
	GROVE_EXIT_CONFLICT = 6,    /* apply --check: conflicts (1 there means "would change") */
	GROVE_EXIT_LOCKED = 75,
	GROVE_EXIT_CONFIG = 78,
};

/* What a Stow-style command line asks for besides the request itself. */
struct grove_stow_cli {
	bool help;
	bool version;
	bool simulate;     /* -n, --no, --simulate, and grove's --dry-run */
	bool plan_only;    /* `grove plan ...`: print the plan, change nothing */
	bool dir_given;    /* the stow dir came from -d, an rc file or $STOW_DIR, not the default */
	bool target_given; /* the target came from -t or an rc file, not the stow dir's parent */
	/* Where GNU Stow dies (Perl's die exits with errno, else 255): the errno its -r test of the
	 * last rc file (./.stowrc) leaves, 0 when that file was there; and whether it died on an
	 * rc file (an undefined variable in --dir or --target). */
	int rc_errno;
	bool rc_died;
};

/* The action that package names get before any -S/-D/-R is seen. */
enum grove_stow_action {
	GROVE_ACTION_STOW,
	GROVE_ACTION_UNSTOW,
	GROVE_ACTION_RESTOW,
};

/*
 * Parses a GNU Stow 2.4 command line the way Stow's Getopt::Long setup does
 * ('no_ignore_case', 'bundling', 'permute'): options and package names mix in
 * any order; -S/-D/-R switch the action for the names that follow; short
 * options bundle (-nvS); long options take "--opt=VAL" or "--opt VAL" and may
 * be abbreviated to a unique prefix; "--" ends options. Options:
 *   -d/--dir DIR, -t/--target DIR, -S/--stow, -D/--delete, -R/--restow,
 *   --ignore RE, --defer RE, --override RE, --adopt, --no-folding, --dotfiles,
 *   -p/--compat, -n/--no/--simulate, -v/--verbose[=N] (-v adds 1, --verbose=N sets N),
 *   -V/--version, -h/--help.
 * grove also accepts --dry-run as -n.
 *
 * Then, as Stow does: options from ~/.stowrc then ./.stowrc (each line split
 * with shell word rules) are parsed the same way and merged under the command
 * line (list options add up, rc first; single values from the command line
 * win; package names in rc files are ignored, as Stow 2.4.1 does); --dir and --target from an rc
 * file get $VAR, ${VAR} and ~ expansion (an undefined variable is an error). The stow dir defaults
 * to $STOW_DIR (if non-empty) else the current folder; the target to the stow dir's parent.
 * Trailing slashes are stripped from package names.
 * ~/.stow-global-ignore is read into req->global_ignore_text when present.
 *
 * home is $HOME (may be NULL); cwd_rc is the path of the current folder's
 * .stowrc (normally ".stowrc"); rc files are skipped when read_rc is false.
 *
 * Errors: GROVE_E_USAGE with a message naming the option ("unknown option
 * '--frob'", "option '--dir' requires a value", "no packages to stow or
 * unstow"), GROVE_E_CONFIG for a bad rc file.
 */
int grove_stow_cli_parse(int argc, char **argv, enum grove_stow_action initial, const char *home,
			 const char *cwd_rc, bool read_rc, struct grove_stow_request *req,
			 struct grove_stow_cli *cli, struct grove_error *err);

/* Whether the Stow option word arg takes the next word as its value, as grove_stow_cli_parse
 * reads it: -d, -t (alone or last in a bundle: -nt), --dir, --target, --ignore, --defer,
 * --override and their unique abbreviations, written without "=VALUE". grove: grove's spelling
 * (false: invoked as stow). The command line's pre-parser asks, so that a value is never taken
 * for one of grove's global options (argv.c). */
bool grove_stow_opt_takes_next(const char *arg, bool grove);

/* How many words after the `grove alt` option word are its values, as update-alternatives
 * reads them: --install 4, --slave 3, --set and --remove 2, --query, --altdir… 1; 0 for any
 * other word. */
int grove_alt_opt_nargs(const char *word);

/* Splits one line into words with POSIX shell quoting rules (as Perl's
 * Text::ParseWords::shellwords: '...', "...", backslash escapes). */
int grove_shellwords(const char *line, char ***ret_words, size_t *ret_n, struct grove_error *err);

/* Prints Stow's usage text (grove's spelling) to out. */
void grove_stow_usage(FILE *out);

/* Prints conflicts as GNU Stow does, to out:
 *   WARNING! stowing pkg would cause conflicts:
 *     * message
 *   All operations aborted.
 */
void grove_print_conflicts(const struct grove_plan *plan, FILE *out);

/* grove's global options (before the command), for the commands that honour them. */
struct grove_global_opts {
	const char *state_dir;    /* --state DIR, or NULL */
	bool json;                /* --json */
	int verbose;              /* each -v adds 1 */
	bool dry_run;             /* -n, --dry-run */
	double wait_seconds;      /* --wait SECONDS: how long to wait for a locked target */
	bool wait_given;          /* --wait was given (alt's default is not 0 but 60 s) */
	const char *command_line; /* the whole command line, for the transaction log */
};

/* The exit status for a failure code (DESIGN.md, command line contract): a locked target 75,
 * usage 2, bad config 78, failed part-way and undone 3, stuck 4, anything else 1 (as Stow). */
int grove_exit_status(int code);

/* Prints "grove: MESSAGE" once on stderr and returns grove_exit_status(code). */
int grove_report_error(const struct grove_error *err, int code);
/* Prints one plan warning: "WARNING: MSG", or as Stow prints it (as_stow). */
void grove_print_warning(FILE *out, const char *msg, bool as_stow);

/* "grove" and argv[1..], shell-quoted where needed, as the log records a command (malloc'd). */
char *grove_command_line(int argc, char **argv);

/* Runs log, status, verify, undo, rollback or recover (cmd) on one target;
 * argv[0] is the command name. Returns the exit status. */
int grove_cmd_txn(int argc, char **argv, const char *cmd, const struct grove_global_opts *global);

/*
 * Runs a packages command (stow, unstow, restow, plan, or GNU Stow's own
 * spelling) from a Stow-style argv (argv[0] is the command name and is
 * skipped). Prints its errors and results; returns the exit status.
 */
int grove_cmd_stow(int argc, char **argv, enum grove_stow_action initial, bool plan_only,
		   const struct grove_global_opts *global);

/* `grove status`'s packages on disk (status_farm.c): the stow dir, when one is known (-d, an rc
 * file, $STOW_DIR), and the global ignore list's text and source (NULL: the built-in list). */
struct grove_status_farm {
	const struct grove_root *stow; /* NULL: no stow dir known, nothing listed */
	const char *global_ignore;
	const char *global_ignore_source;
};
/* Reads every package of f->stow as the target shows it (nothing when f->stow is NULL). */
int grove_status_farm_load(const struct grove_status_farm *f, const struct grove_root *target,
			   struct grove_stow_farm_pkg **ret, size_t *ret_n,
			   struct grove_error *err);
/* Prints them after status's own lines; own is the log's ownership (its entries, or one link
 * entry per package grove has links of), for "in grove's log". */
void grove_status_farm_print(const struct grove_status_farm *f,
			     const struct grove_stow_farm_pkg *pkgs, size_t n,
			     const struct grove_owned *own, size_t n_own);
/* The same as status's JSON fields "stow_dir" and "stow_packages" (docs/json.md). */
struct json_t;
void grove_status_farm_json(struct json_t *doc, const struct grove_status_farm *f,
			    const struct grove_stow_farm_pkg *pkgs, size_t n,
			    const struct grove_owned *own, size_t n_own);

/* Runs `grove import` (argv[0] is "import"): records the links GNU Stow made into the target as
 * grove's. Returns the exit status. */
int grove_cmd_import(int argc, char **argv, const struct grove_global_opts *global);
/* grove targets [--json]: every target the log knows (cmd_targets.c). */
int grove_cmd_targets(int argc, char **argv, const struct grove_global_opts *global);

/* Runs `grove alt` (update-alternatives' command line; argv[0] is "alt"). Returns 0 or 2, as
 * update-alternatives does. */
int grove_cmd_alt(int argc, char **argv, const struct grove_global_opts *global);
/* grove run as update-alternatives (argv[0]): grove alt with update-alternatives' name in its
 * messages and --log lines, and grove's defaults for everything else. */
int grove_cmd_update_alternatives(int argc, char **argv);

/* Runs `grove profile …` (argv[0] is "profile"). Returns the exit status. */
int grove_cmd_profile(int argc, char **argv, const struct grove_global_opts *global);

/* Runs `grove apply` (argv[0] is "apply"): converges the targets and alternatives of a manifest.
 * Returns the exit status (0 done or nothing to do; with --check 1 when something would change
 * and 6 when there are conflicts, 1 without --check; 78 a bad manifest or config). */
int grove_cmd_apply(int argc, char **argv, const struct grove_global_opts *global);

#endif
