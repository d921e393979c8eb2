/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The command line's shape: grove's global options before or after the command, Stow's options
 * before it, and GNU Stow's own verb-less spelling (grove(1), COMMAND LINE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "front.h"
#include "grove-config.h"

#include "../banned.h" /* last */

static const char *const commands[] = {
	"stow", "unstow", "restow", "plan", "switch",   "alt",     "profile", "apply",  "help",
	"log",  "status", "verify", "undo", "rollback", "recover", "show",    "import",
};

const char *
grove_nearest_command(const char *word)
{
	return grove_nearest(word, commands, sizeof(commands) / sizeof(commands[0]));
}

bool
grove_is_command(const char *word)
{
	for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
		if (!strcmp(word, commands[k]))
			return true;
	return false;
}

/* GNU Stow's long options (stow_opts.c), to know which one an abbreviation names. */
static const char *const stow_longs[] = {
	"adopt",   "compat",   "defer",  "delete", "dir",        "dotfiles",
	"dry-run", "help",     "ignore", "no",     "no-folding", "override",
	"restow",  "simulate", "stow",   "target", "verbose",    "version",
};

static bool
in(const char *name, size_t len, const char *const *v, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (strlen(v[k]) == len && !strncmp(name, v[k], len))
			return true;
	return false;
}

/* The Stow long option "--name" (no "=") names, exact or abbreviated; NULL if none or several. */
static const char *
stow_long(const char *name)
{
	const char *hit = NULL;
	size_t len = strlen(name), n = 0;

	for (size_t k = 0; k < sizeof(stow_longs) / sizeof(stow_longs[0]); k++) {
		if (!strcmp(name, stow_longs[k]))
			return stow_longs[k];
		if (!strncmp(name, stow_longs[k], len))
			hit = stow_longs[k], n++;
	}
	return n == 1 ? hit : NULL;
}

/* Which options take the next word as their value, per command (NULL: before the command,
 * where it is not known yet: Stow's options and every command's long ones). Each list is the
 * command's own parser's (cmd_apply.c, cmd_profile.c, cmd_txn.c; Stow's from stow_opts.c, with
 * its abbreviations and bundles), so that a value is never read as a global option. */
static bool
takes_value(const char *cmd, const char *a)
{
	static const char *const apply[] = { "-f",    "--file",   "--tag",   "--host",    "-d",
					     "--dir", "--ignore", "--defer", "--override" };
	static const char *const profile[] = { "-p", "--profile", "-d", "--dir", "--link" };
	static const char *const any[] = { "--to",   "--before",  "--file", "--tag",
					   "--host", "--profile", "--link" };
	size_t len = strlen(a);

	if (cmd && !strcmp(cmd, "apply"))
		return in(a, len, apply, sizeof(apply) / sizeof(apply[0]));
	if (cmd && !strcmp(cmd, "profile"))
		return in(a, len, profile, sizeof(profile) / sizeof(profile[0]));
	if (!cmd ? in(a, len, any, sizeof(any) / sizeof(any[0]))
		 : !strcmp(cmd, "rollback") && (!strcmp(a, "--to") || !strcmp(a, "--before")))
		return true;
	return grove_stow_opt_takes_next(a, true);
}

/* -S, -D, -R (alone or in a bundle), --stow, --delete, --restow: GNU Stow's spelling. */
static bool
is_stow_action(const char *a)
{
	if (a[1] != '-') {
		for (const char *c = a + 1; *c; c++) {
			if (*c == 'S' || *c == 'D' || *c == 'R')
				return true;
			if (*c == 'd' || *c == 't')
				return false; /* the rest is the value */
		}
		return false;
	}
	const char *name = strchr(a, '=') ? NULL : stow_long(a + 2);

	return name &&
	       (!strcmp(name, "stow") || !strcmp(name, "delete") || !strcmp(name, "restow"));
}

struct state {
	struct grove_global_opts *g;
	enum grove_color_mode *color;
	bool *quiet;
};

static int
usage(const char *msg, const char *arg)
{
	fputs("grove: ", stderr);
	fprintf(stderr, msg, arg);
	fputc('\n', stderr);
	return -GROVE_EXIT_USAGE - 1;
}

/*
 * One of grove's global options at argv[*i] (taking its value from argv[*i + 1] when needed):
 * 1 when it was one, 0 when not, or -1 - the exit status. before: in front of the command, where
 * --help and --version are grove's own and -v/-n/-q bundles count; after it, a command may use
 * the same names itself (alt: --verbose, --quiet), and those are left to it.
 */
static int
global_opt(struct state *st, int argc, char **argv, int *i, bool before, bool alt)
{
	const char *a = argv[*i];
	struct grove_global_opts *g = st->g;

	if (!strcmp(a, "--state") || !strncmp(a, "--state=", 8)) {
		if (a[7] == '=')
			g->state_dir = a + 8;
		else if (*i + 1 < argc)
			g->state_dir = argv[++*i];
		else
			return usage("option '%s' requires a value", "--state");
	} else if (!strcmp(a, "--wait") || !strncmp(a, "--wait=", 7)) {
		const char *val = a[6] == '=' ? a + 7 : (*i + 1 < argc ? argv[++*i] : NULL);
		char *end = NULL;

		if (!val || !*val || (g->wait_seconds = strtod(val, &end), *end) ||
		    g->wait_seconds < 0)
			return usage("option '%s' needs a number of seconds", "--wait");
		g->wait_given = true;
	} else if (!strcmp(a, "--color") || !strncmp(a, "--color=", 8) || !strcmp(a, "--colour") ||
		   !strncmp(a, "--colour=", 9)) {
		const char *val = strchr(a, '=') ? strchr(a, '=') + 1 : "always";

		if (grove_color_parse(val, st->color) < 0)
			return usage("option '--color' takes auto, always or never, not '%s'", val);
	} else if (alt) { /* NOLINT(bugprone-branch-clone): the rest are update-alternatives' own */
		return 0; /* (--verbose, --quiet, …) */
	} else if (!strcmp(a, "--json")) {
		g->json = true;
	} else if (!strcmp(a, "--verbose") || !strcmp(a, "--dry-run") || !strcmp(a, "--quiet")) {
		g->verbose += a[2] == 'v';
		g->dry_run = g->dry_run || a[2] == 'd';
		*st->quiet = *st->quiet || a[2] == 'q';
	} else if (!strncmp(a, "--verbose=", 10)) {
		char *end = NULL;
		long v = strtol(a + 10, &end, 10);

		if (!a[10] || *end || v < 0 || v > 100)
			return usage("option '--verbose' takes a number, not '%s'", a + 10);
		g->verbose = (int)v;
	} else if (a[0] == '-' && a[1] && a[1] != '-' && strspn(a + 1, "vnq") == strlen(a + 1)) {
		for (const char *c = a + 1; *c; c++) {
			g->verbose += *c == 'v';
			g->dry_run = g->dry_run || *c == 'n';
			*st->quiet = *st->quiet || *c == 'q';
		}
	} else if (before && !strcmp(a, "--version")) {
		printf("grove (GNU Stow compatible) version %s\n", GROVE_VERSION);
		return -GROVE_EXIT_OK - 1;
	} else if (before && !strcmp(a, "--help")) {
		grove_help(stdout);
		return -GROVE_EXIT_OK - 1;
	} else {
		return 0;
	}
	return 1;
}

/* Appends a word; v has room for every word of argv and the terminating NULL. */
static void
push(struct grove_cmdline *c, char *word)
{
	c->v[c->n++] = word;
	c->v[c->n] = NULL;
}

/*
 * The words after the command (from argv[i]): global options are taken out where the command
 * reads an option, until "--"; never where it expects a value: an option's value (Stow's -t,
 * apply's --tag…), alt's arguments (--install's four, --slave's three: update-alternatives reads
 * them as values, whatever they look like), or the words after profile's subcommand (generations,
 * packages: the subcommand's own, with profile's options such as --json).
 */
static int
rest(struct state *st, int argc, char **argv, int i, const char *cmd, struct grove_cmdline *c)
{
	bool alt = cmd && !strcmp(cmd, "alt"), profile = cmd && !strcmp(cmd, "profile");

	for (; i < argc; i++) {
		const char *a = argv[i];
		int r, n;

		if (!strcmp(a, "--")) {
			while (i < argc)
				push(c, argv[i++]);
			break;
		}
		if (a[0] != '-' || !a[1]) {
			push(c, argv[i]);
			/* profile SUB: the rest is the subcommand's. */
			if (profile)
				while (++i < argc)
					push(c, argv[i]);
			continue;
		}
		r = global_opt(st, argc, argv, &i, false, alt);
		if (r < 0)
			return r;
		if (r)
			continue;
		push(c, argv[i]);
		n = alt ? grove_alt_opt_nargs(a) : takes_value(cmd, a) ? 1 : 0;
		for (; n > 0 && i + 1 < argc; n--)
			push(c, argv[++i]);
	}
	return 0;
}

int
grove_cmdline_parse(int argc, char **argv, struct grove_global_opts *g,
		    enum grove_color_mode *color, bool *quiet, struct grove_cmdline *ret)
{
	struct state st = { g, color, quiet };
	struct grove_cmdline c = { 0 };
	char **prefix = calloc((size_t)argc + 1, sizeof(char *));
	int np = 0, i, r = 0;
	bool stow_spelling = false;

	c.v = calloc((size_t)argc + 2, sizeof(char *));
	if (!prefix || !c.v) {
		free(prefix);
		free(c.v);
		fputs("grove: out of memory\n", stderr);
		return -GROVE_EXIT_REFUSED - 1;
	}
	/* In front of the command: global options, and Stow's options for the command. */
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (a[0] != '-' || !a[1] || !strcmp(a, "--"))
			break;
		r = global_opt(&st, argc, argv, &i, true, false);
		if (r < 0)
			goto fail;
		if (r)
			continue;
		if (is_stow_action(a)) {
			stow_spelling = true;
			break;
		}
		prefix[np++] = argv[i];
		if (takes_value(NULL, a) && i + 1 < argc)
			prefix[np++] = argv[++i];
	}
	if (i >= argc && !np && !stow_spelling) {
		fputs("grove: no command given (try 'grove --help')\n", stderr);
		r = -GROVE_EXIT_USAGE - 1;
		goto fail;
	}
	/* A word: the command, unless Stow's options came first and it is none of grove's (then
	 * it is GNU Stow's spelling without -S: every word a package). */
	if (!stow_spelling && i < argc && argv[i][0] != '-' && (grove_is_command(argv[i]) || !np)) {
		c.cmd = argv[i];
		push(&c, argv[i++]);
		/* `plan` keeps the action it plans right after it. */
		if (!strcmp(c.cmd, "plan") && i < argc &&
		    (!strcmp(argv[i], "stow") || !strcmp(argv[i], "unstow") ||
		     !strcmp(argv[i], "restow")))
			push(&c, argv[i++]);
	} else {
		push(&c, argv[0]);
	}
	for (int k = 0; k < np; k++)
		push(&c, prefix[k]);
	r = rest(&st, argc, argv, i, c.cmd, &c);
	if (r < 0)
		goto fail;
	free(prefix);
	*ret = c;
	return 0;
fail:
	free(prefix);
	free(c.v);
	return r;
}

void
grove_cmdline_release(struct grove_cmdline *c)
{
	free(c->v);
	c->v = NULL;
	c->n = 0;
}
