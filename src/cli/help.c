/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove's help: the overview (`grove --help`) and one page per command (`grove help CMD`,
 * `grove CMD --help`). grove(1) documents every command and option listed here; a test checks it.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "front.h"

#include "../banned.h" /* last */

struct help_page {
	const char *name;
	const char *text;
};

/* The package options GNU Stow has, shared by stow, unstow, restow, plan and switch. */
#define PACKAGE_OPTIONS                                                                               \
	"Package options (GNU Stow's):\n"                                                             \
	"    -d DIR, --dir=DIR      the stow dir (default: $STOW_DIR, else the current folder)\n"     \
	"    -t DIR, --target=DIR   the target (default: the stow dir's parent)\n"                    \
	"    -S, --stow             stow the packages that follow\n"                                  \
	"    -D, --delete           unstow the packages that follow\n"                                \
	"    -R, --restow           restow the packages that follow\n"                                \
	"    --ignore=REGEX         ignore package entries whose path ends in REGEX\n"                \
	"    --defer=REGEX          leave paths starting with REGEX to the package that has them\n"   \
	"    --override=REGEX       take over paths starting with REGEX from another package\n"       \
	"    --adopt                move existing target files into the package, then link them\n"    \
	"    --no-folding           make folders of links, never a link to a folder\n"                \
	"    --dotfiles             a package entry 'dot-x' is linked as '.x'\n"                      \
	"    --folding, --no-dotfiles  the defaults, given explicitly (grove's own)\n"                \
	"    -p, --compat           legacy unstow that walks the target\n"                            \
	"    -n, --no, --simulate   plan and check, change nothing\n"                                 \
	"    -v, --verbose[=N]      print the plan's ops on stderr (-v adds 1, --verbose=N sets N)\n" \
	"    -V, --version          show the version\n"                                               \
	"    -h, --help             show this help\n"                                                 \
	"\n"                                                                                          \
	"A package grove stowed keeps the --dotfiles and --no-folding it was stowed with\n"           \
	"when neither is given (grove says so, once); restow with another to change it.\n"

#define TARGET_OPTIONS                                                             \
	"Options:\n"                                                               \
	"    -t DIR, --target=DIR   the target (default: the stow dir's parent)\n" \
	"    -d DIR, --dir=DIR      the stow dir, to find the default target\n"    \
	"    --json                 print a JSON document on stdout (see docs/json.md)\n"

static const struct help_page pages[] = {
	{ "stow",
	  "Usage: grove stow [OPTION ...] PACKAGE ...\n"
	  "Links the packages' entries into the target, as GNU Stow does: a folder only one\n"
	  "package needs becomes one link, folded; all conflicts are reported at once and\n"
	  "nothing changes. One logged transaction.\n\n" PACKAGE_OPTIONS },
	{ "unstow",
	  "Usage: grove unstow [OPTION ...] PACKAGE ...\n"
	  "Removes the packages' links from the target; folders left with links into one\n"
	  "package are folded back into one link. One logged transaction.\n\n" PACKAGE_OPTIONS },
	{ "restow",
	  "Usage: grove restow [OPTION ...] PACKAGE ...\n"
	  "Unstows then stows the packages, in one transaction (after a package changed).\n\n" PACKAGE_OPTIONS },
	{ "plan",
	  "Usage: grove plan [stow|unstow|restow] [OPTION ...] PACKAGE ...\n"
	  "       grove plan [OPTION ...] [-S|-D|-R] PACKAGE ...\n"
	  "Prints the ops the command would make, one per line (or, with --json, one document\n"
	  "with the ops and the conflicts); changes nothing. Exit 1 when there are conflicts.\n\n" PACKAGE_OPTIONS },
	{ "switch",
	  "Usage: grove switch [OPTION ...] OLD NEW\n"
	  "Unstows OLD and stows NEW in one transaction: a path both provide is replaced in\n"
	  "place and never missing.\n\n" PACKAGE_OPTIONS },
	{ "import",
	  "Usage: grove import [-d DIR] [-t DIR] [--dotfiles] [-n] [-v] [--json] [PACKAGE ...]\n"
	  "Records the links GNU Stow made for the packages (every package of the stow dir\n"
	  "when none is named) as one transaction that changes nothing on disk: from then on\n"
	  "status, verify, unstow, undo and apply know them as grove's. A link into another\n"
	  "package, or to nothing, is reported and left out; a link grove owns already is\n"
	  "left out too. grove undo forgets the links again and leaves them in place.\n\n"
	  "Options:\n"
	  "    -d DIR, --dir=DIR      the stow dir (default: $STOW_DIR, else the current folder)\n"
	  "    -t DIR, --target=DIR   the target (default: the stow dir's parent)\n"
	  "    --dotfiles             the packages were stowed with --dotfiles ('dot-x' as '.x')\n"
	  "    -n, --dry-run          print what would be recorded; change and write nothing\n"
	  "    -v, --verbose          print the links recorded on stderr\n"
	  "    --json                 print a JSON document on stdout (see docs/json.md)\n" },
	{ "log",
	  "Usage: grove log [-t DIR] [-v] [--json] [--limit N] [PACKAGE]\n"
	  "Lists the target's transactions, newest first: number, time, state (committed,\n"
	  "rolled-back, in-progress, interrupted, stuck), number of ops, command line, and\n"
	  "who ran it when that was another user or someone through sudo; with -v, each\n"
	  "transaction's ops under it. With PACKAGE, only the transactions that stowed or\n"
	  "unstowed it. Reads root's log when yours does not know the target, and says so.\n\n" TARGET_OPTIONS
	  "    -v, --verbose          list each transaction's ops\n"
	  "    --limit N, -n N        the newest N transactions only\n" },
	{ "show",
	  "Usage: grove show N [-t DIR] [--json]\n"
	  "Prints transaction N of the target (see grove log) and its ops. A transaction of\n"
	  "another target, or one the log does not have, is refused (exit 1).\n\n" TARGET_OPTIONS },
	{ "status",
	  "Usage: grove status [-t DIR] [--json]\n"
	  "Lists the packages grove has stowed into the target, with their link counts, and\n"
	  "says when a transaction is in progress (the run's pid and command), interrupted\n"
	  "or stuck. Exit 4 when one is interrupted or stuck. Reads root's log when yours\n"
	  "does not know the target, and says so.\n\n" TARGET_OPTIONS },
	{ "verify",
	  "Usage: grove verify [-t DIR] [--json]\n"
	  "Checks every link and folder the log says grove owns against the disk: missing,\n"
	  "changed, broken (pointing at nothing) and foreign (someone else's entry inside a\n"
	  "folder grove made). An unfinished transaction is told first, and the entries it\n"
	  "touches are shown as part of it. Exit 4 on drift, or a transaction interrupted or\n"
	  "stuck; 0 when only a transaction in progress differs.\n\n" TARGET_OPTIONS },
	{ "undo",
	  "Usage: grove undo [-t DIR] [-n] [-v]\n"
	  "Reverts the last committed transaction that is not an undo already, as a new\n"
	  "transaction, and says what changed; refused (exit 1) when a path it would restore\n"
	  "was changed since.\n\n" TARGET_OPTIONS
	  "    -n, --dry-run          print the plan, change nothing\n"
	  "    -v, --verbose          print the plan's ops on stderr\n" },
	{ "rollback",
	  "Usage: grove rollback --to N|--before T [-t DIR] [-n] [-v]\n"
	  "Puts the target back to its state after transaction N (see grove log), or before\n"
	  "transaction T, by reverting every committed transaction after N (from T on), as\n"
	  "one new transaction, and says what changed. N is one of the target's transactions,\n"
	  "0, or the number just before one of them; T is one of the target's transactions;\n"
	  "another target's or an unknown one is refused (exit 1).\n\n" TARGET_OPTIONS
	  "    --to N                 the transaction to go back to\n"
	  "    --before T             the transaction to go back to before (the target's own)\n"
	  "    -n, --dry-run          print the plan, change nothing\n"
	  "    -v, --verbose          print the plan's ops on stderr\n" },
	{ "targets",
	  "Usage: grove targets [--json]\n"
	  "Lists every target the log knows (the log of --state, else your own), the most\n"
	  "recently changed first: when it last changed, how many transactions it has, the\n"
	  "stow dirs used with it, and the packages stowed there with their links. Use it to\n"
	  "find the -t to give log, status, verify, undo and rollback.\n\n"
	  "Options:\n"
	  "    --json                 print a JSON document on stdout (see docs/json.md)\n" },
	{ "recover",
	  "Usage: grove recover [-t DIR] [--force]\n"
	  "Rolls back an interrupted transaction now (every mutating command does it first\n"
	  "anyway). A transaction that cannot be rolled back safely is stuck (exit 4).\n\n" TARGET_OPTIONS
	  "    --force                mark a stuck transaction as resolved by "
	  "hand,\n"
	  "                           without touching the target\n" },
	{ "help",
	  "Usage: grove help [COMMAND]\n"
	  "Shows the overview, or the help of one command (also: grove COMMAND --help).\n" },
};

void
grove_help(FILE *out)
{
	fputs("grove: a safe symlink farm manager (GNU Stow 2.4 drop-in, alternatives, profiles)\n"
	      "\n"
	      "Usage:\n"
	      "    grove [GLOBAL OPTION ...] COMMAND [OPTION ...] [ARG ...]\n"
	      "    grove [GLOBAL OPTION ...] [OPTION ...] [-D|-S|-R] PACKAGE ... (GNU Stow's spelling)\n"
	      "    stow [OPTION ...] [-D|-S|-R] PACKAGE ...      (when installed as 'stow')\n"
	      "\n"
	      "Commands:\n"
	      "    stow PACKAGE ...       link the packages into the target\n"
	      "    unstow PACKAGE ...     remove the packages' links\n"
	      "    restow PACKAGE ...     unstow then stow, in one transaction\n"
	      "    plan [stow|unstow|restow] PACKAGE ...\n"
	      "                           print what would change; change nothing\n"
	      "    switch OLD NEW         unstow OLD and stow NEW in one transaction\n"
	      "    import [PACKAGE ...]   record the links GNU Stow made as grove's\n"
	      "    log                    the target's transactions, newest first (-v: their ops)\n"
	      "    show N                 one transaction and its ops\n"
	      "    status                 the packages stowed into the target\n"
	      "    verify                 the log against the disk: missing, changed, broken, foreign\n"
	      "    undo                   revert the last transaction\n"
	      "    rollback --to N        back to the state after transaction N (--before T:\n"
	      "                           before transaction T)\n"
	      "    recover                roll back an interrupted transaction now\n"
	      "    targets                every target the log knows, with its packages\n"
	      "    alt ...                alternatives, with update-alternatives' options\n"
	      "    profile ...            generations of a set of packages, rolled back in one step\n"
	      "    apply                  converge to a grove.yaml manifest in one transaction\n"
	      "    help [COMMAND]         this help, or a command's\n"
	      "\n"
	      "Global options (before or after the command; Stow's -d, -t... may also come\n"
	      "before it; -- ends options, and a package named like a command is written\n"
	      "after --, after -S, or with a trailing slash: grove -d DIR -- log):\n"
	      "    --state DIR            keep the transaction log in DIR\n"
	      "    --json                 machine-readable output on stdout (see docs/json.md)\n"
	      "    -v, --verbose          be more verbose (-vv, --verbose=N)\n"
	      "    -q, --quiet            no progress line, notes or error hints; errors only\n"
	      "    -n, --dry-run          plan and check, change nothing\n"
	      "    --wait SECONDS         wait that long for a target locked by another run\n"
	      "    --color=WHEN           colour: auto (on a terminal, without NO_COLOR), always, never\n"
	      "    --version              show the version\n"
	      "    --help                 show this help\n"
	      "\n" PACKAGE_OPTIONS "\n"
	      "Log options (log, show, status, verify, undo, rollback, recover):\n"
	      "    -t DIR, --target=DIR   the target whose log to read\n"
	      "    --to N                 rollback: the transaction to go back to\n"
	      "    --before T             rollback: the transaction to go back to before\n"
	      "    --force                recover: mark a stuck transaction resolved by hand\n"
	      "\n"
	      "Alternatives (grove alt, update-alternatives' command line; see grove-alt(1)):\n"
	      "    --install LINK NAME PATH PRIORITY [--slave LINK NAME PATH] ...\n"
	      "    --remove NAME PATH, --remove-all NAME, --set NAME PATH, --auto NAME\n"
	      "    --display NAME, --query NAME, --list NAME, --config NAME, --all\n"
	      "    --get-selections, --set-selections, import (take over an admindir's groups)\n"
	      "    --altdir DIR, --admindir DIR, --instdir DIR, --root DIR, --log FILE\n"
	      "    --skip-auto, --force, --quiet, --verbose\n"
	      "\n"
	      "Profiles (grove profile; see grove-profile(1)):\n"
	      "    -p PROFILE, --profile=PROFILE\n"
	      "                           the profile: a name or a path; default: 'default'\n"
	      "    build|install PACKAGE ..., remove PACKAGE ..., switch N, rollback, list,\n"
	      "    diff A B, delete N...|old|+N|Nd, gc, recover\n"
	      "    --link PATH            build: the user's link to the profile (default: "
	      "~/.grove-profile)\n"
	      "    --no-link              build: make no user link\n"
	      "\n"
	      "Manifest (grove apply; see grove.yaml(5)):\n"
	      "    -f FILE, --file=FILE   the manifest (default: $GROVE_MANIFEST, else ./grove.yaml,\n"
	      "                           else $XDG_CONFIG_HOME/grove/grove.yaml)\n"
	      "    --check                plan only: exit 0 when nothing would change, 1 when\n"
	      "                           something would, 6 on conflicts\n"
	      "    --diff                 also print every link added (+) and removed (-)\n"
	      "    --tag TAG              turn on a tag for host/tag selection (repeatable)\n"
	      "    --host NAME            select entries for host NAME\n"
	      "\n"
	      "Options are also read from ~/.stowrc and ./.stowrc, as GNU Stow reads them.\n"
	      "Exit status: 0 done, 1 refused (nothing changed), 2 usage, 3 failed and rolled back,\n"
	      "4 needs attention, 5 done but the log's last sync failed, 6 apply --check found\n"
	      "conflicts, 75 locked, 78 bad configuration. grove alt exits 0 or 2.\n"
	      "See grove(1), grove-stow(1), grove-alt(1), grove-profile(1), grove.yaml(5).\n",
	      out);
}

int
grove_help_command(FILE *out, const char *cmd)
{
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		if (!strcmp(pages[i].name, cmd)) {
			fputs(pages[i].text, out);
			return 0;
		}
	}
	return -1;
}

bool
grove_help_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	}
	return false;
}
