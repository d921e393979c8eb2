/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove alt: update-alternatives' command line, outputs and exit statuses (0 and 2). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "front.h"
#include "grove-config.h"
#include "grove/alt.h"

#include "../banned.h" /* last */

/* The name in messages: "update-alternatives" when grove runs under that name. */
static const char *PROG = "grove alt";

/* The update-alternatives whose command line, outputs and admin files grove alt reproduces (and
 * is tested against): the version it gives under that name, as dpkg's own prints its version. */
#define UA_COMPAT_VERSION "1.21.22"

/* --version: dpkg's format under update-alternatives' name (its first line, then what this
 * program is), grove's own format as grove alt. */
static void
version(void)
{
	if (!strcmp(PROG, "update-alternatives"))
		printf("Debian update-alternatives version %s.\n\n"
		       "This is grove %s under that name (see grove-alt(1)). It is free software;\n"
		       "see the GNU General Public License version 3 or later for copying\n"
		       "conditions. There is NO warranty.\n",
		       UA_COMPAT_VERSION, GROVE_VERSION);
	else
		printf("grove alt (update-alternatives %s compatible) version %s\n",
		       UA_COMPAT_VERSION, GROVE_VERSION);
}

static int badusage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
badusage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", PROG);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n\nUse '%s --help' for program usage information.\n", PROG);
	return GROVE_EXIT_USAGE;
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: error: ", PROG);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return GROVE_EXIT_USAGE;
}

static void
usage(void)
{
	printf("Usage: %s [<option> ...] <command>\n\n"
	       "Commands:\n"
	       "  --install <link> <name> <path> <priority>\n"
	       "    [--slave <link> <name> <path>] ...\n"
	       "                           add a group of alternatives to the system.\n"
	       "  --remove <name> <path>   remove <path> from the <name> group alternative.\n"
	       "  --remove-all <name>      remove <name> group from the alternatives system.\n"
	       "  --auto <name>            switch the master link <name> to automatic mode.\n"
	       "  --display <name>         display information about the <name> group.\n"
	       "  --query <name>           machine parseable version of --display <name>.\n"
	       "  --list <name>            display all targets of the <name> group.\n"
	       "  --get-selections         list master alternative names and their status.\n"
	       "  --set-selections         read alternative status from standard input.\n"
	       "  --config <name>          show alternatives for the <name> group and ask the\n"
	       "                           user to select which one to use.\n"
	       "  --set <name> <path>      set <path> as alternative for <name>.\n"
	       "  --all                    call --config on all alternatives.\n\n"
	       "Options:\n"
	       "  --altdir <directory>     change the alternatives directory.\n"
	       "  --admindir <directory>   change the administrative directory.\n"
	       "  --instdir <directory>    change the installation directory (held as the root\n"
	       "                           every link must lie beneath).\n"
	       "  --root <directory>       change the filesystem root directory (paths are taken\n"
	       "                           inside it).\n"
	       "  --log <file>             append what changes to <file> (by default\n"
	       "                           /var/log/alternatives.log, for the system's admindir;\n"
	       "                           grove also logs every change in its journal).\n"
	       "  --force                  accepted; grove never replaces a file with a link.\n"
	       "  --dry-run                decide as the real run, print what it would do,\n"
	       "                           change and write nothing (grove's -n too).\n"
	       "  --wait <seconds>         wait this long for another run on the same\n"
	       "                           administrative directory (default 60).\n"
	       "  --skip-auto              skip prompt for alternatives correctly configured\n"
	       "                           in automatic mode (relevant for --config only)\n"
	       "  --debug                  debug output, way more output.\n"
	       "  --verbose                verbose operation, more output.\n"
	       "  --quiet                  quiet operation, minimal output.\n"
	       "  --help                   show this help message.\n"
	       "  --version                show the version.\n",
	       PROG);
}

/* 0, or -ENOMEM (nothing printed of the choices). */
static int
print_query(const struct grove_alt_group *g, const char *current, bool failed)
{
	ssize_t best = grove_alt_best(g, current);
	const char **files = NULL;

	printf("Name: %s\nLink: %s\n", g->name, g->link);
	if (g->n_slaves) {
		printf("Slaves:\n");
		for (size_t i = 0; i < g->n_slaves; i++)
			printf(" %s %s\n", g->slaves[i].name, g->slaves[i].path);
	}
	printf("Status: %s\n", g->manual ? "manual" : "auto");
	if (failed)
		return 0; /* update-alternatives stops here when it cannot read the current value */
	if (best >= 0)
		printf("Best: %s\n", g->choices[best].path);
	printf("Value: %s\n", current ? current : "none");
	/* (each choice's files in the group's order at once: linear in the followers) */
	if (grove_alt_group_files(g, &files) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < g->n_choices; i++) {
		const struct grove_alt_choice *c = &g->choices[i];

		printf("\nAlternative: %s\nPriority: %d\n", c->path, c->priority);
		if (!g->n_slaves)
			continue;
		printf("Slaves:\n");
		for (size_t k = 0; k < g->n_slaves; k++) {
			const char *f = files[i * g->n_slaves + k];

			if (f)
				printf(" %s %s\n", g->slaves[k].name, f);
		}
	}
	free(files);
	return 0;
}

/* 0, or -ENOMEM (nothing printed of the choices). */
static int
print_display(const struct grove_alt_group *g, const char *current, bool failed, FILE *out)
{
	ssize_t best = grove_alt_best(g, current);
	const char **files = NULL;

	fprintf(out, "%s - %s\n", g->name, g->manual ? "manual mode" : "auto mode");
	if (failed)
		return 0;
	if (best >= 0)
		fprintf(out, "  link best version is %s\n", g->choices[best].path);
	else
		fprintf(out, "  link best version not available\n");
	if (current)
		fprintf(out, "  link currently points to %s\n", current);
	else
		fprintf(out, "  link currently absent\n");
	fprintf(out, "  link %s is %s\n", g->name, g->link);
	for (size_t i = 0; i < g->n_slaves; i++)
		fprintf(out, "  slave %s is %s\n", g->slaves[i].name, g->slaves[i].path);
	if (grove_alt_group_files(g, &files) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < g->n_choices; i++) {
		const struct grove_alt_choice *c = &g->choices[i];

		fprintf(out, "%s - priority %d\n", c->path, c->priority);
		for (size_t k = 0; k < g->n_slaves; k++) {
			const char *f = files[i * g->n_slaves + k];

			if (f)
				fprintf(out, "  slave %s: %s\n", g->slaves[k].name, f);
		}
	}
	free(files);
	return 0;
}

static int
set_action(struct grove_alt_request *q, enum grove_alt_action a, const char *prev, const char *opt)
{
	if (q->action != GROVE_ALT_NONE)
		return badusage("two commands specified: --%s and --%s", prev, opt);
	q->action = a;
	return 0;
}

/* The commands the command line runs as several requests. */
#define ALT_ALL            ((enum grove_alt_action)100)
#define ALT_SET_SELECTIONS ((enum grove_alt_action)101)

static const struct {
	const char *opt;
	enum grove_alt_action action;
	int nargs;
} commands[] = {
	{ "install", GROVE_ALT_INSTALL, 4 },
	{ "remove", GROVE_ALT_REMOVE, 2 },
	{ "set", GROVE_ALT_SET, 2 },
	{ "remove-all", GROVE_ALT_REMOVE_ALL, 1 },
	{ "auto", GROVE_ALT_AUTO, 1 },
	{ "query", GROVE_ALT_QUERY, 1 },
	{ "display", GROVE_ALT_DISPLAY, 1 },
	{ "list", GROVE_ALT_LIST, 1 },
	{ "config", GROVE_ALT_CONFIG, 1 },
	{ "get-selections", GROVE_ALT_GET_SELECTIONS, 0 },
	{ "all", ALT_ALL, 0 },
	{ "set-selections", ALT_SET_SELECTIONS, 0 },
};

int
grove_alt_opt_nargs(const char *word)
{
	if (strncmp(word, "--", 2) != 0)
		return 0;
	word += 2;
	for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
		if (!strcmp(word, commands[k].opt))
			return commands[k].nargs;
	if (!strcmp(word, "slave"))
		return 3;
	if (!strcmp(word, "log") || !strcmp(word, "altdir") || !strcmp(word, "admindir") ||
	    !strcmp(word, "instdir") || !strcmp(word, "root") || !strcmp(word, "wait"))
		return 1;
	return 0;
}

/* --root DIR (or $DPKG_ROOT): paths inside DIR, its admindir and the default altdir. An empty DIR
 * is no root (update-alternatives' admindir is then /var/lib/dpkg/alternatives). */
static int
set_root(struct grove_alt_request *q, const char *root, char **owned)
{
	free(*owned);
	*owned = malloc(strlen(root) + sizeof("/var/lib/dpkg/alternatives"));
	if (!*owned)
		return -1;
	snprintf(*owned, strlen(root) + sizeof("/var/lib/dpkg/alternatives"),
		 "%s/var/lib/dpkg/alternatives", root);
	q->root = *root ? root : NULL;
	q->admindir = *owned;
	q->altdir = "/etc/alternatives";
	return 0;
}

/*
 * Where update-alternatives 1.21.22 starts before its options (measured with its --debug line):
 * $DPKG_ROOT is the root (empty: none); $DPKG_ADMINDIR, when set (even empty), names the admindir
 * as "$DPKG_ADMINDIR/alternatives" whatever the root, else it is the root's
 * /var/lib/dpkg/alternatives. The options then apply in order: --root DIR resets the root, the
 * admindir (to DIR's, ignoring $DPKG_ADMINDIR) and the altdir; --admindir and --altdir set theirs.
 */
static int
env_defaults(struct grove_alt_request *q, char **root_adm, char **env_adm)
{
	const char *droot = getenv("DPKG_ROOT"), *adm = getenv("DPKG_ADMINDIR");

	if (set_root(q, droot ? droot : "", root_adm) < 0)
		return -1;
	if (!droot)
		q->root = NULL;
	if (adm) {
		*env_adm = malloc(strlen(adm) + sizeof("/alternatives"));
		if (!*env_adm)
			return -1;
		snprintf(*env_adm, strlen(adm) + sizeof("/alternatives"), "%s/alternatives", adm);
		q->admindir = *env_adm;
	}
	return 0;
}

/* The n arguments of a command option at argv[i] (--install's four, --set's two, ...). */
static int
parse_command_args(int argc, char **argv, int i, int n, struct grove_alt_request *q)
{
	if (n == 4) {
		char *end;
		long prio;

		q->link = argv[i + 1];
		q->name = argv[i + 2];
		q->path = argv[i + 3];
		if (!strcmp(q->link, q->path))
			return badusage("<link> '%s' is the same as <path>", q->link);
		errno = 0;
		prio = strtol(argv[i + 4], &end, 10);
		if (end == argv[i + 4] || *end)
			return badusage("priority '%s' must be an integer", argv[i + 4]);
		if (errno == ERANGE || prio < INT_MIN || prio > INT_MAX)
			return badusage("priority '%s' is out of range", argv[i + 4]);
		q->priority = (int)prio;
	} else if (n > 0) {
		q->name = argv[i + 1];
		if (n == 2)
			q->path = argv[i + 2];
	}
	return 0;
}

/* --slave <link> <name> <path> at argv[0] (argc counts from it), after --install. */
static int
parse_slave(char **argv, int argc, struct grove_alt_request *q)
{
	const char *sl, *sn, *sp;
	struct grove_alt_slave *nv;
	const char **nl;

	if (q->action != GROVE_ALT_INSTALL)
		return badusage("--slave only allowed with --install");
	if (argc <= 3)
		return badusage("--slave needs <link> <name> <path>");
	sl = argv[1];
	sn = argv[2];
	sp = argv[3];
	if (!strcmp(sl, sp))
		return badusage("<link> '%s' is the same as <path>", sl);
	if (!strcmp(q->name, sn))
		return badusage("<name> '%s' is both primary and slave", sn);
	if (!strcmp(sl, q->link))
		return badusage("<link> '%s' is both primary and slave", sl);
	for (size_t s = 0; s < q->n_slaves; s++) {
		if (!strcmp(q->slaves[s].name, sn))
			return badusage("duplicate slave <name> '%s'", sn);
		if (!strcmp(q->slave_links[s], sl))
			return badusage("duplicate slave <link> '%s'", sl);
	}
	nv = realloc(q->slaves, (q->n_slaves + 1) * sizeof(*nv));
	if (nv)
		q->slaves = nv;
	nl = nv ? realloc(q->slave_links, (q->n_slaves + 1) * sizeof(*nl)) : NULL;
	if (!nl)
		return fail("out of memory");
	q->slave_links = nl;
	q->slaves[q->n_slaves].name = (char *)sn;
	q->slaves[q->n_slaves].path = (char *)sp;
	q->slave_links[q->n_slaves++] = sl;
	return 0;
}

static int
parse(int argc, char **argv, struct grove_alt_request *q, bool *ret_help, bool *ret_version,
      char **owned)
{
	const char *action_name = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		size_t k;

		/* grove alt import [options]: take over update-alternatives' groups. */
		if (!strcmp(a, "import")) {
			if (set_action(q, GROVE_ALT_IMPORT, action_name, "import") != 0)
				return GROVE_EXIT_USAGE;
			action_name = "import";
			continue;
		}
		if (strncmp(a, "--", 2) != 0)
			return fail("unknown argument '%s'", a);
		a += 2;
		for (k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
			if (!strcmp(a, commands[k].opt))
				break;
		if (k < sizeof(commands) / sizeof(commands[0])) {
			int n = commands[k].nargs, r;

			if (set_action(q, commands[k].action, action_name, a) != 0)
				return GROVE_EXIT_USAGE;
			action_name = commands[k].opt;
			if (i + n >= argc) {
				if (n == 4)
					return badusage("--install needs <link> <name> <path> "
							"<priority>");
				if (n == 2)
					return badusage("--%s needs <name> <path>", a);
				return badusage("--%s needs <name>", a);
			}
			r = parse_command_args(argc, argv, i, n, q);
			if (r != 0)
				return r;
			i += n;
			continue;
		}
		if (!strcmp(a, "slave")) {
			int r = parse_slave(argv + i, argc - i, q);

			if (r != 0)
				return r;
			i += 3;
			continue;
		}
		if (!strcmp(a, "verbose")) {
			q->verbose = 1;
		} else if (!strcmp(a, "quiet")) {
			q->verbose = -1;
		} else if (!strcmp(a, "debug")) {
			/* update-alternatives' --debug is a verbosity above --verbose: a later
			 * --quiet silences its lines too. */
			q->verbose = 2;
		} else if (!strcmp(a, "dry-run")) {
			q->dry_run = true;
		} else if (!strcmp(a, "force")) {
			/* accepted; grove never replaces a file with a link */
		} else if (!strcmp(a, "wait")) {
			char *end = NULL;

			if (i + 1 >= argc)
				return badusage("--wait needs a <seconds> argument");
			q->wait_seconds = strtod(argv[i + 1], &end);
			if (!*argv[i + 1] || *end || !(q->wait_seconds >= 0))
				return badusage("--wait needs a number of seconds, not '%s'",
						argv[i + 1]);
			i++;
		} else if (!strcmp(a, "skip-auto")) {
			q->skip_auto = true;
		} else if (!strcmp(a, "help")) {
			*ret_help = true;
			return 0;
		} else if (!strcmp(a, "version")) {
			/* As update-alternatives: at once, whatever follows. */
			*ret_version = true;
			return 0;
		} else if (!strcmp(a, "log") || !strcmp(a, "altdir") || !strcmp(a, "admindir") ||
			   !strcmp(a, "instdir") || !strcmp(a, "root")) {
			const char *v = argv[i + 1];

			if (i + 1 >= argc)
				return badusage("--%s needs a <%s> argument", a,
						a[0] == 'l' ? "file" : "directory");
			if (a[0] == 'l') {
				q->log = v;
			} else if (a[0] == 'r') {
				if (set_root(q, v, owned) < 0)
					return fail("out of memory");
			} else if (a[1] == 'l') {
				size_t rl = q->root ? strlen(q->root) : 0;

				/* Inside --root, an altdir written with the root's prefix is
				 * taken without it, as update-alternatives does. */
				q->altdir =
					rl && !strncmp(v, q->root, rl) && v[rl] == '/' ? v + rl : v;
			} else if (a[1] == 'd') {
				q->admindir = v;
			} else {
				q->instdir = v;
			}
			i++;
		} else {
			return badusage("unknown option '%s'", argv[i]);
		}
	}
	if (*ret_help)
		return 0;
	if (q->action == GROVE_ALT_NONE)
		return badusage("need --display, --query, --list, --get-selections, --config, "
				"--set, --set-selections, --install, --remove, --all, "
				"--remove-all or --auto");
	return 0;
}

/* The checks update-alternatives makes before reading any state. */
static int
check_args(const struct grove_alt_request *q)
{
	if (q->name && *q->name && !grove_alt_name_ok(q->name))
		return fail("alternative name (%s) must not contain '/' and spaces", q->name);
	if (q->action == GROVE_ALT_INSTALL && q->link && q->link[0] != '/')
		return fail("alternative link is not absolute as it should be: %s", q->link);
	if (q->path && q->path[0] != '/')
		return fail("alternative path is not absolute as it should be: %s", q->path);
	for (size_t s = 0; s < q->n_slaves; s++) {
		if (!grove_alt_name_ok(q->slaves[s].name))
			return fail("alternative name (%s) must not contain '/' and spaces",
				    q->slaves[s].name);
		if (q->slave_links[s][0] != '/')
			return fail("alternative link is not absolute as it should be: %s",
				    q->slave_links[s]);
		if (q->slaves[s].path[0] != '/')
			return fail("alternative path is not absolute as it should be: %s",
				    q->slaves[s].path);
	}
	/* An empty name passes update-alternatives' checks; reading its admin file then reads
	 * the admindir itself. */
	if (q->name && !*q->name)
		return fail("%s/ corrupt: while reading status: %s", q->admindir, strerror(EISDIR));
	return 0;
}

/* Prints the messages of res not shown yet. */
static void
print_msgs(struct grove_alt_result *res, int verbose, bool debug, FILE *out)
{
	for (; res->n_shown < res->n_msgs; res->n_shown++) {
		const struct grove_alt_msg *m = &res->msgs[res->n_shown];

		if (m->kind == GROVE_ALT_DEBUG && debug)
			fprintf(stderr, "DEBUG: %s\n", m->text);
		else if (m->kind == GROVE_ALT_WARNING && verbose >= 0)
			fprintf(stderr, "%s: warning: %s\n", PROG, m->text);
		else if ((m->kind == GROVE_ALT_INFO && verbose >= 0) ||
			 (m->kind == GROVE_ALT_VERBOSE && verbose > 0))
			fprintf(out, "%s: %s\n", PROG, m->text);
		else if (m->kind == GROVE_ALT_PLAIN)
			fprintf(out, "%s\n", m->text);
	}
	(void)fflush(stdout); /* (a finished command's messages: a failed write undoes nothing) */
}

/* --config's menu, exactly as update-alternatives prints it. */
static void
print_menu(const struct grove_alt_group *g, const char *current, ssize_t best, FILE *out)
{
	const struct grove_alt_choice *b = &g->choices[best];
	int len = 15;

	for (size_t i = 0; i < g->n_choices; i++)
		if ((int)strlen(g->choices[i].path) + 1 > len)
			len = (int)strlen(g->choices[i].path) + 1;
	if (g->n_choices == 1)
		fprintf(out, "There is %zu choice for the alternative %s (providing %s).\n",
			g->n_choices, g->name, g->link);
	else
		fprintf(out, "There are %zu choices for the alternative %s (providing %s).\n",
			g->n_choices, g->name, g->link);
	fprintf(out, "\n  %-12.12s %-*.*s %-10.10s %s\n", "Selection", len, len, "Path", "Priority",
		"Status");
	fprintf(out, "------------------------------------------------------------\n");
	fprintf(out, "%s %-12d %-*s % -10d %s\n",
		!g->manual && current && !strcmp(current, b->path) ? "*" : " ", 0, len, b->path,
		b->priority, "auto mode");
	for (size_t i = 0; i < g->n_choices; i++)
		fprintf(out, "%s %-12zu %-*s % -10d %s\n",
			g->manual && current && !strcmp(current, g->choices[i].path) ? "*" : " ",
			i + 1, len, g->choices[i].path, g->choices[i].priority, "manual mode");
	fprintf(out, "\nPress <enter> to keep the current choice[*], or type selection number: ");
	(void)fflush(out); /* the prompt, before reading the answer */
}

struct ask_ctx {
	int verbose;
	bool debug;
	FILE *out; /* the menu's and messages' (stderr when --json keeps stdout for the document) */
};

/* Shows the menu and reads the answer from stdin, until it names a choice (or is empty, or the
 * input ends). */
static int
config_ask(void *vctx, struct grove_alt_result *res, const struct grove_alt_group *g,
	   const char *current, bool display_only, enum grove_alt_answer *ret,
	   const char **ret_path)
{
	struct ask_ctx *ctx = vctx;
	ssize_t best = grove_alt_best(g, current);
	char *line = NULL;
	size_t cap = 0;

	print_msgs(res, ctx->verbose, ctx->debug, ctx->out);
	*ret = GROVE_ALT_ANSWER_KEEP;
	*ret_path = NULL;
	if (display_only)
		return print_display(g, current, false, ctx->out);
	for (;;) {
		ssize_t got;
		char *end;
		long idx;

		print_menu(g, current, best, ctx->out);
		got = getline(&line, &cap, stdin);
		if (got <= 0)
			break;
		/* update-alternatives drops the last character, newline or not. */
		line[--got] = '\0';
		if (got == 0)
			break;
		errno = 0;
		idx = strtol(line, &end, 10);
		if (idx < 0 || errno != 0)
			continue;
		if (*end == '\0') {
			if (idx == 0) {
				*ret = GROVE_ALT_ANSWER_AUTO;
				break;
			}
			if ((size_t)idx <= g->n_choices) {
				*ret = GROVE_ALT_ANSWER_PATH;
				*ret_path = g->choices[idx - 1].path;
				break;
			}
			continue;
		}
		if (grove_alt_find_choice(g, line) >= 0) {
			*ret = GROVE_ALT_ANSWER_PATH;
			*ret_path = g->choices[grove_alt_find_choice(g, line)].path;
			break;
		}
	}
	free(line);
	return 0;
}

/* update-alternatives' default --log (inside --root when there is one). */
#define SYSTEM_ALT_LOG "/var/log/alternatives.log"

/* How long a command waits for another on the same admindir, by default. */
#define ALT_WAIT_DEFAULT 60.0

/* The one line said when a lock is still held after a second. */
static void
lock_notice(void *ctx, const char *what, const char *path, double seconds)
{
	(void)ctx;
	fprintf(stderr, "%s: waiting for %s '%s': another run holds it (giving up after %g s)\n",
		PROG, what, path, seconds);
}

/* Whether the saved text of a group changes in what it says (not only in its form). */
static bool
same_text(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* The followers' files of choice c of g, one line each, as a plan says them. */
static void
print_choice_files(const struct grove_alt_group *g, const struct grove_alt_choice *c,
		   const struct grove_alt_group *og, const struct grove_alt_choice *oc)
{
	for (size_t k = 0; k < g->n_slaves; k++) {
		const char *f = grove_alt_choice_slave(c, g->slaves[k].name);
		const char *of = oc && og ? grove_alt_choice_slave(oc, g->slaves[k].name) : NULL;

		if (f && of && strcmp(f, of) != 0)
			printf("  choice %s: follower %s: %s (was %s)\n", c->path,
			       g->slaves[k].name, f, of);
		else if (f && !of)
			printf("  choice %s: follower %s: %s\n", c->path, g->slaves[k].name, f);
	}
	for (size_t k = 0; oc && k < oc->n_slaves; k++)
		if (!grove_alt_choice_slave(c, oc->slaves[k].name))
			printf("  choice %s: follower %s: none (was %s)\n", c->path,
			       oc->slaves[k].name, oc->slaves[k].path);
}

/* What saving group name would change, line by line: its mode, link, followers and choices after
 * against before (NULL: a new group). */
static void
print_group_change(const char *name, const char *before, const char *after)
{
	struct grove_alt_group b = { 0 }, a = { 0 };
	struct grove_error err = { 0 };
	bool has_b = before &&
		     grove_alt_group_parse(name, before, strlen(before), "before", &b, &err) >= 0;

	if (grove_alt_group_parse(name, after, strlen(after), "after", &a, &err) < 0) {
		grove_alt_group_release(&b);
		printf("%s: dry run: would save group %s\n", PROG, name);
		return;
	}
	printf("%s: dry run: would %s group %s:\n", PROG, has_b ? "save" : "create", name);
	if (!has_b || a.manual != b.manual)
		printf("  mode: %s%s\n", a.manual ? "manual" : "auto",
		       !has_b     ? ""
		       : a.manual ? " (was auto)"
				  : " (was manual)");
	if (!has_b || strcmp(a.link, b.link) != 0)
		printf("  link: %s%s%s%s\n", a.link, has_b ? " (was " : "", has_b ? b.link : "",
		       has_b ? ")" : "");
	for (size_t k = 0; k < a.n_slaves; k++) {
		const char *ol = has_b ? grove_alt_group_slave_link(&b, a.slaves[k].name) : NULL;

		if (!ol || strcmp(ol, a.slaves[k].path) != 0)
			printf("  follower %s: link %s%s%s%s\n", a.slaves[k].name, a.slaves[k].path,
			       ol ? " (was " : "", ol ? ol : "", ol ? ")" : "");
	}
	for (size_t k = 0; has_b && k < b.n_slaves; k++)
		if (!grove_alt_group_slave_link(&a, b.slaves[k].name))
			printf("  follower %s: removed\n", b.slaves[k].name);
	for (size_t i = 0; i < a.n_choices; i++) {
		const struct grove_alt_choice *c = &a.choices[i];
		ssize_t j = has_b ? grove_alt_find_choice(&b, c->path) : -1;
		const struct grove_alt_choice *oc = j >= 0 ? &b.choices[j] : NULL;

		if (!oc)
			printf("  choice %s: added, priority %d\n", c->path, c->priority);
		else if (oc->priority != c->priority)
			printf("  choice %s: priority %d (was %d)\n", c->path, c->priority,
			       oc->priority);
		print_choice_files(&a, c, has_b ? &b : NULL, oc);
	}
	for (size_t i = 0; has_b && i < b.n_choices; i++)
		if (grove_alt_find_choice(&a, b.choices[i].path) < 0)
			printf("  choice %s: removed\n", b.choices[i].path);
	grove_alt_group_release(&a);
	grove_alt_group_release(&b);
}

/* The ops of a dry run, each path as the commands name paths: inside the root with --root, else
 * beneath the instdir as given (the plan's are relative to the root held). */
static void
print_ops(const struct grove_alt_request *q, const struct grove_plan *plan)
{
	const char *base = q->root ? "" : q->instdir;
	size_t l = strlen(base);
	struct grove_plan shown;

	while (l > 0 && base[l - 1] == '/')
		l--;
	grove_plan_init(&shown);
	for (size_t i = 0; i < plan->n_ops; i++) {
		const struct grove_op *op = &plan->ops[i];
		char *path = NULL;

		if (asprintf(&path, "%.*s/%s", (int)l, base, op->path) < 0 ||
		    grove_plan_add_op(&shown, op->kind, path, op->old_text, op->text, op->stow_path,
				      op->package) < 0) {
			free(path);
			grove_plan_release(&shown);
			grove_print_plan(plan, stdout); /* (out of memory: as they are) */
			return;
		}
		free(path);
	}
	grove_print_plan(&shown, stdout);
	grove_plan_release(&shown);
}

/*
 * A dry run's prediction, as a plan: the link ops it would apply (each path as the commands name
 * it), then what it would save of the group (what changes in its mode, links and choices), or
 * that it would remove it; with --json one document (docs/json.md's alt members: the ops, changed,
 * and the group's saved text before and after, as its administrative file).
 */
static void
print_prediction(const struct grove_alt_request *q, const struct grove_alt_result *res, bool json)
{
	bool changed = res->plan.n_ops > 0 || res->group_name;

	if (json) {
		struct json_t *doc = grove_json_doc("alt");

		grove_json_put_bool(doc, "dry_run", true);
		grove_json_put_bool(doc, "changed", changed);
		grove_json_put_ops(doc, "ops", &res->plan);
		if (res->group_name) {
			struct json_t *group = grove_json_obj();

			grove_json_put_str(group, "name", res->group_name);
			grove_json_put_str(group, "before", res->group_before);
			grove_json_put_str(group, "after", res->group_after);
			grove_json_put(doc, "group", group);
		} else {
			grove_json_put_null(doc, "group");
		}
		grove_json_print(doc);
		return;
	}
	if (!changed) {
		printf("%s: dry run: nothing would change\n", PROG);
		return;
	}
	if (res->plan.n_ops) {
		printf("%s: dry run: would change %zu link%s:\n", PROG, res->plan.n_ops,
		       res->plan.n_ops == 1 ? "" : "s");
		print_ops(q, &res->plan);
	}
	if (!res->group_name)
		printf("%s: dry run: group %s would stay as it is\n", PROG, q->name);
	else if (!res->group_after)
		printf("%s: dry run: would remove group %s\n", PROG, res->group_name);
	else if (same_text(res->group_before, res->group_after))
		printf("%s: dry run: would rewrite group %s's file in update-alternatives' form\n",
		       PROG, res->group_name);
	else
		print_group_change(res->group_name, res->group_before, res->group_after);
}

/* Whether --json has a document to print: a dry run's prediction of one group's change (the other
 * commands print update-alternatives' text, which --json must not pass off as JSON). */
static bool
json_ok(const struct grove_alt_request *q)
{
	switch ((int)q->action) {
	case GROVE_ALT_INSTALL:
	case GROVE_ALT_REMOVE:
	case GROVE_ALT_REMOVE_ALL:
	case GROVE_ALT_SET:
	case GROVE_ALT_AUTO:
	case GROVE_ALT_CONFIG:
		return q->dry_run;
	default:
		return false;
	}
}

/* Runs one request and prints what it says; the exit status. */
static int
run_one(struct grove_alt_request *q, struct grove_alt_result *res)
{
	struct grove_error err = { 0 };
	int r = grove_alt_run(q, res, &err);

	/* --json keeps stdout for the document. */
	print_msgs(res, q->verbose, q->debug, q->json && q->dry_run ? stderr : stdout);
	if (q->action == GROVE_ALT_GET_SELECTIONS)
		for (size_t i = 0; i < res->n_sel_read; i++)
			printf("%-30s %-8s %s\n", res->sel[i].name,
			       res->sel[i].manual ? "manual" : "auto",
			       res->sel[i].current ? res->sel[i].current : "");
	if (r < 0 && res->current_failed && q->action == GROVE_ALT_QUERY)
		(void)print_query(&res->group, res->current, true);
	else if (r < 0 && res->current_failed)
		(void)print_display(&res->group, res->current, true, stdout);
	if (r < 0)
		return fail("%s", err.msg);
	if (q->dry_run && q->action != GROVE_ALT_QUERY && q->action != GROVE_ALT_DISPLAY &&
	    q->action != GROVE_ALT_LIST && q->action != GROVE_ALT_GET_SELECTIONS &&
	    q->action != GROVE_ALT_IMPORT)
		print_prediction(q, res, q->json);
	if ((q->action == GROVE_ALT_QUERY && print_query(&res->group, res->current, false) < 0) ||
	    (q->action == GROVE_ALT_DISPLAY &&
	     print_display(&res->group, res->current, false, stdout) < 0))
		return fail("out of memory");
	else if (q->action == GROVE_ALT_LIST)
		for (size_t i = 0; i < res->group.n_choices; i++)
			printf("%s\n", res->group.choices[i].path);
	return GROVE_EXIT_OK;
}

/* The names of every group (GET_SELECTIONS, printing nothing). */
static int
group_names(const struct grove_alt_request *base, struct grove_alt_result *sel)
{
	struct grove_alt_request q = *base;
	struct grove_error err = { 0 };

	q.action = GROVE_ALT_GET_SELECTIONS;
	q.name = NULL;
	/* Only the names are needed: a current value that cannot be read does not matter. */
	if (grove_alt_run(&q, sel, &err) < 0 && sel->n_sel == 0)
		return fail("%s", err.msg);
	return GROVE_EXIT_OK;
}

static int
log_run_with(const struct grove_alt_request *q)
{
	struct grove_error err = { 0 };
	char *line = NULL;
	int r;

	if (q->dry_run)
		return GROVE_EXIT_OK; /* a dry run writes no log */
	if (asprintf(&line, "run with %s", q->log_args) < 0)
		return fail("out of memory");
	r = grove_alt_log(q, (const char *const *)&line, 1, &err);
	free(line);
	if (r < 0)
		return fail("%s", err.msg);
	return GROVE_EXIT_OK;
}

/* --all: --config of every group, in name order. */
static int
config_all(const struct grove_alt_request *base)
{
	struct grove_alt_result sel = { 0 };
	/* "run with" first, as update-alternatives logs it before it reads the groups */
	int status = log_run_with(base);

	if (status == GROVE_EXIT_OK)
		status = group_names(base, &sel);
	for (size_t i = 0; i < sel.n_sel && status == GROVE_EXIT_OK; i++) {
		struct grove_alt_request q = *base;
		struct grove_alt_result res = { 0 };

		q.action = GROVE_ALT_CONFIG;
		q.name = sel.sel[i].name;
		q.log_args = NULL;
		q.lax_load = true;
		status = run_one(&q, &res);
		grove_alt_result_release(&res);
	}
	grove_alt_result_release(&sel);
	return status;
}

/* Ends the field that starts at p (at its first blank) and returns where the next one starts (past
 * the blanks), or NULL when no blank follows the field. */
static char *
end_field(char *p)
{
	while (*p && *p != ' ' && *p != '\t')
		p++;
	if (!*p)
		return NULL;
	*p++ = '\0';
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* One line of --set-selections: NAME STATUS CHOICE (the choice may hold blanks). */
static int
set_selection(const struct grove_alt_request *base, const struct grove_alt_result *sel, char *line)
{
	struct grove_alt_request q = *base;
	struct grove_alt_result res = { 0 };
	char *name = line, *status, *choice;
	bool known = false;
	int rc;

	status = end_field(name);
	choice = status ? end_field(status) : NULL;
	if (!choice || !*choice)
		goto invalid;
	if (q.debug)
		fprintf(stderr, "DEBUG: set_selection(%s, %s, %s)\n", name, status, choice);
	for (size_t i = 0; i < sel->n_sel && !known; i++)
		known = !strcmp(sel->sel[i].name, name);
	q.name = name;
	q.log_args = NULL;
	q.lax_load = true;
	q.selection = true;
	if (!known) {
		if (q.verbose >= 0)
			printf("%s: skip unknown alternative %s\n", PROG, name);
		return GROVE_EXIT_OK;
	}
	if (!strcmp(status, "auto")) {
		if (q.verbose >= 0)
			printf("%s: %s alternative %s as auto\n", PROG,
			       q.dry_run ? "would select" : "selecting", name);
		q.action = GROVE_ALT_AUTO;
	} else {
		struct grove_alt_request l = q;
		struct grove_alt_result lres = { 0 };
		struct grove_error err = { 0 };
		bool has = false;

		l.action = GROVE_ALT_LIST;
		if (grove_alt_run(&l, &lres, &err) >= 0)
			has = grove_alt_find_choice(&lres.group, choice) >= 0;
		grove_alt_result_release(&lres);
		if (!has) {
			if (q.verbose >= 0)
				printf("%s: alternative %s unchanged because choice %s is not "
				       "available\n",
				       PROG, name, choice);
			return GROVE_EXIT_OK;
		}
		if (q.verbose >= 0)
			printf("%s: %s alternative %s as choice %s\n", PROG,
			       q.dry_run ? "would select" : "selecting", name, choice);
		q.action = GROVE_ALT_SET;
		q.path = choice;
	}
	rc = run_one(&q, &res);
	grove_alt_result_release(&res);
	return rc;
invalid:
	if (q.verbose >= 0)
		printf("%s: skip invalid selection line: %s\n", PROG, line);
	return GROVE_EXIT_OK;
}

/* update-alternatives 1.21 reads --set-selections' lines with fgets into 1,024 bytes: a line of
 * more than 1,022 bytes (its newline aside) is "too long", and so is a NUL byte in one (its
 * fgets loop reads up to the NUL). grove holds no more of a line than that either. */
#define SELECTION_LINE_MAX 1024

/* --set-selections: the lines of stdin, each an --auto or a --set. */
static int
set_selections(const struct grove_alt_request *base)
{
	struct grove_alt_result sel = { 0 };
	char line[SELECTION_LINE_MAX];
	/* "run with" first, as update-alternatives logs it before it reads the groups */
	int status = log_run_with(base);

	if (status == GROVE_EXIT_OK)
		status = group_names(base, &sel);
	while (status == GROVE_EXIT_OK) {
		size_t got;

		errno = 0;
		if (!fgets(line, sizeof(line), stdin)) {
			if (ferror(stdin))
				status =
					fail("read error in <standard input>: %s", strerror(errno));
			break;
		}
		got = strlen(line);
		if (got == 0 || line[got - 1] != '\n') {
			status = fail("line too long or not terminated while trying to read "
				      "<standard input>");
			break;
		}
		line[got - 1] = '\0';
		status = set_selection(base, &sel, line);
	}
	grove_alt_result_release(&sel);
	return status;
}

/* update-alternatives' "run with" line: its arguments joined by spaces. */
static char *
join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 1; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	len = 0;
	for (int i = 1; i < argc; i++) {
		size_t n = strlen(argv[i]);

		if (i > 1)
			s[len++] = ' ';
		memcpy(s + len, argv[i], n + 1);
		len += n;
	}
	return s;
}

int
grove_cmd_alt(int argc, char **argv, const struct grove_global_opts *global)
{
	struct grove_alt_request q = { 0 };
	struct grove_alt_result res = { 0 };
	struct ask_ctx ask = { 0 };
	char *adm_default = NULL, *root_adm = NULL, *args = NULL, *cmdline = NULL;
	bool help = false, show_version = false;
	int status;

	q.wait_seconds = -1; /* not given */
	if (env_defaults(&q, &root_adm, &adm_default) < 0) {
		status = fail("out of memory");
		goto out;
	}
	status = parse(argc, argv, &q, &help, &show_version, &root_adm);
	if (status != 0 || help || show_version) {
		if (help)
			usage();
		else if (show_version)
			version();
		goto out;
	}
	status = check_args(&q);
	if (status != 0)
		goto out;
	q.debug = q.verbose >= 2;
	if (q.debug)
		fprintf(stderr, "DEBUG: root=%s admdir=%s altdir=%s\n", q.root ? q.root : "",
			q.admindir, q.altdir);
	if (!q.instdir)
		q.instdir = "/";
	/* The system's alternatives log, which administrators grep and logrotate rotates:
	 * update-alternatives appends to it (inside --root) whatever its admindir unless --log
	 * names another; grove alt does so when it works on the system's own admindir (the root's).
	 */
	if (!q.log && (!global || !strcmp(q.admindir, root_adm)))
		q.log = SYSTEM_ALT_LOG;
	args = join_args(argc, argv);
	if (!args) {
		status = fail("out of memory");
		goto out;
	}
	q.log_args = args;
	q.prog = PROG;
	q.lock_notice = lock_notice;
	/* Run by another name: the journal records the command as it was typed. */
	if (!global && asprintf(&cmdline, "%s %s", PROG, args) >= 0)
		q.command_line = cmdline;
	/* A second command on the same admindir waits for the first (maintainer scripts never
	 * retry): ALT_WAIT_DEFAULT seconds unless --wait (alt's, else grove's) says otherwise. */
	if (q.wait_seconds < 0)
		q.wait_seconds =
			global && global->wait_given ? global->wait_seconds : ALT_WAIT_DEFAULT;
	if (global) {
		q.state_opt = global->state_dir;
		q.command_line = global->command_line;
		q.dry_run = q.dry_run || global->dry_run;
		q.json = global->json;
		if (global->verbose && q.verbose == 0)
			q.verbose = 1;
	}
	if (q.json && !json_ok(&q)) {
		status = badusage(
			"--json: grove alt prints JSON only for the prediction of a dry run "
			"(-n) of --install, --remove, --remove-all, --set, --auto or "
			"--config; its other output is update-alternatives' text");
		goto out;
	}
	ask.verbose = q.verbose;
	ask.debug = q.debug;
	ask.out = q.json ? stderr : stdout;
	q.config_ask = config_ask;
	q.config_ctx = &ask;
	if (q.action == ALT_ALL)
		status = config_all(&q);
	else if (q.action == ALT_SET_SELECTIONS)
		status = set_selections(&q);
	else
		status = run_one(&q, &res);
	if (status == GROVE_EXIT_OK && q.action == GROVE_ALT_IMPORT && q.verbose >= 0)
		printf("%s: %s %zu link group%s from %s\n", PROG,
		       q.dry_run ? "dry run: would take over" : "took over", res.n_imported,
		       res.n_imported == 1 ? "" : "s", q.admindir);
out:
	fflush(stdout);
	grove_alt_result_release(&res);
	free(q.slaves);
	free(q.slave_links);
	free(adm_default);
	free(root_adm);
	free(args);
	free(cmdline);
	return status;
}

int
grove_cmd_update_alternatives(int argc, char **argv)
{
	PROG = "update-alternatives";
	return grove_cmd_alt(argc, argv, NULL);
}
