/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove alt: update-alternatives' command line, outputs and exit statuses (0 and 2). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grove/alt.h"

#define PROG "grove alt"

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
	       "  --set <name> <path>      set <path> as alternative for <name>.\n\n"
	       "Options:\n"
	       "  --altdir <directory>     change the alternatives directory.\n"
	       "  --admindir <directory>   change the administrative directory.\n"
	       "  --instdir <directory>    change the installation directory (held as the root\n"
	       "                           every link must lie beneath).\n"
	       "  --log <file>             change the log file (accepted; grove logs in its journal).\n"
	       "  --verbose                verbose operation, more output.\n"
	       "  --quiet                  quiet operation, minimal output.\n"
	       "  --help                   show this help message.\n",
	       PROG);
}

static void
print_query(const struct grove_alt_result *res)
{
	const struct grove_alt_group *g = &res->group;
	ssize_t best = grove_alt_best(g, res->current);

	printf("Name: %s\nLink: %s\n", g->name, g->link);
	if (g->n_slaves) {
		printf("Slaves:\n");
		for (size_t i = 0; i < g->n_slaves; i++)
			printf(" %s %s\n", g->slaves[i].name, g->slaves[i].path);
	}
	printf("Status: %s\n", g->manual ? "manual" : "auto");
	if (res->current_failed)
		return; /* update-alternatives stops here when it cannot read the current value */
	if (best >= 0)
		printf("Best: %s\n", g->choices[best].path);
	printf("Value: %s\n", res->current ? res->current : "none");
	for (size_t i = 0; i < g->n_choices; i++) {
		const struct grove_alt_choice *c = &g->choices[i];

		printf("\nAlternative: %s\nPriority: %d\n", c->path, c->priority);
		if (!g->n_slaves)
			continue;
		printf("Slaves:\n");
		for (size_t k = 0; k < g->n_slaves; k++) {
			const char *f = grove_alt_choice_slave(c, g->slaves[k].name);

			if (f)
				printf(" %s %s\n", g->slaves[k].name, f);
		}
	}
}

static void
print_display(const struct grove_alt_result *res)
{
	const struct grove_alt_group *g = &res->group;
	ssize_t best = grove_alt_best(g, res->current);

	printf("%s - %s\n", g->name, g->manual ? "manual mode" : "auto mode");
	if (res->current_failed)
		return;
	if (best >= 0)
		printf("  link best version is %s\n", g->choices[best].path);
	else
		printf("  link best version not available\n");
	if (res->current)
		printf("  link currently points to %s\n", res->current);
	else
		printf("  link currently absent\n");
	printf("  link %s is %s\n", g->name, g->link);
	for (size_t i = 0; i < g->n_slaves; i++)
		printf("  slave %s is %s\n", g->slaves[i].name, g->slaves[i].path);
	for (size_t i = 0; i < g->n_choices; i++) {
		const struct grove_alt_choice *c = &g->choices[i];

		printf("%s - priority %d\n", c->path, c->priority);
		for (size_t k = 0; k < g->n_slaves; k++) {
			const char *f = grove_alt_choice_slave(c, g->slaves[k].name);

			if (f)
				printf("  slave %s: %s\n", g->slaves[k].name, f);
		}
	}
}

static int
set_action(struct grove_alt_request *q, enum grove_alt_action a, const char *prev, const char *opt)
{
	if (q->action != GROVE_ALT_NONE)
		return badusage("two commands specified: --%s and --%s", prev, opt);
	q->action = a;
	return 0;
}

static const struct {
	const char *opt;
	enum grove_alt_action action;
	int nargs;
} commands[] = {
	{ "install", GROVE_ALT_INSTALL, 4 }, { "remove", GROVE_ALT_REMOVE, 2 },
	{ "set", GROVE_ALT_SET, 2 },         { "remove-all", GROVE_ALT_REMOVE_ALL, 1 },
	{ "auto", GROVE_ALT_AUTO, 1 },       { "query", GROVE_ALT_QUERY, 1 },
	{ "display", GROVE_ALT_DISPLAY, 1 }, { "list", GROVE_ALT_LIST, 1 },
};

static int
parse(int argc, char **argv, struct grove_alt_request *q, bool *ret_help)
{
	const char *action_name = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		size_t k;

		if (strncmp(a, "--", 2) != 0)
			return badusage("unknown argument '%s'", a);
		a += 2;
		for (k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
			if (!strcmp(a, commands[k].opt))
				break;
		if (k < sizeof(commands) / sizeof(commands[0])) {
			int n = commands[k].nargs;

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
			if (n == 4) {
				char *end;
				long prio;

				q->link = argv[i + 1];
				q->name = argv[i + 2];
				q->path = argv[i + 3];
				if (!strcmp(q->link, q->path))
					return badusage("<link> '%s' is the same as <path>",
							q->link);
				errno = 0;
				prio = strtol(argv[i + 4], &end, 10);
				if (end == argv[i + 4] || *end)
					return badusage("priority '%s' must be an integer",
							argv[i + 4]);
				if (errno == ERANGE || prio < INT_MIN || prio > INT_MAX)
					return badusage("priority '%s' is out of range",
							argv[i + 4]);
				q->priority = (int)prio;
			} else {
				q->name = argv[i + 1];
				if (n == 2)
					q->path = argv[i + 2];
			}
			i += n;
			continue;
		}
		if (!strcmp(a, "slave")) {
			const char *sl, *sn, *sp;
			struct grove_alt_slave *nv;
			const char **nl;

			if (q->action != GROVE_ALT_INSTALL)
				return badusage("--slave only allowed with --install");
			if (i + 3 >= argc)
				return badusage("--slave needs <link> <name> <path>");
			sl = argv[i + 1];
			sn = argv[i + 2];
			sp = argv[i + 3];
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
			i += 3;
			continue;
		}
		if (!strcmp(a, "verbose")) {
			q->verbose = 1;
		} else if (!strcmp(a, "quiet")) {
			q->verbose = -1;
		} else if (!strcmp(a, "force") || !strcmp(a, "skip-auto")) {
			/* accepted; grove never replaces a file with a link */
		} else if (!strcmp(a, "help")) {
			*ret_help = true;
			return 0;
		} else if (!strcmp(a, "log") || !strcmp(a, "altdir") || !strcmp(a, "admindir") ||
			   !strcmp(a, "instdir")) {
			if (i + 1 >= argc)
				return badusage("--%s needs a <%s> argument", a,
						a[0] == 'l' ? "file" : "directory");
			if (a[0] == 'l')
				q->log = argv[i + 1];
			else if (a[1] == 'l')
				q->altdir = argv[i + 1];
			else if (a[1] == 'd')
				q->admindir = argv[i + 1];
			else
				q->instdir = argv[i + 1];
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
	if (!grove_alt_name_ok(q->name))
		return fail("alternative name (%s) must not contain '/' and spaces", q->name);
	if (q->action == GROVE_ALT_INSTALL && q->link[0] != '/')
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
	return 0;
}

int
grove_cmd_alt(int argc, char **argv, const struct grove_global_opts *global)
{
	struct grove_alt_request q = { 0 };
	struct grove_alt_result res = { 0 };
	struct grove_error err = { 0 };
	const char *adm = getenv("DPKG_ADMINDIR");
	char *adm_default = NULL;
	bool help = false;
	int status, r;

	status = parse(argc, argv, &q, &help);
	if (status != 0 || help) {
		if (help)
			usage();
		goto out;
	}
	status = check_args(&q);
	if (status != 0)
		goto out;
	if (!q.altdir)
		q.altdir = "/etc/alternatives";
	if (!q.admindir) {
		adm_default = malloc(strlen(adm ? adm : "/var/lib/dpkg") + sizeof("/alternatives"));
		if (!adm_default) {
			status = fail("out of memory");
			goto out;
		}
		strcpy(adm_default, adm ? adm : "/var/lib/dpkg");
		strcat(adm_default, "/alternatives");
		q.admindir = adm_default;
	}
	if (!q.instdir)
		q.instdir = getenv("DPKG_ROOT") && *getenv("DPKG_ROOT") ? getenv("DPKG_ROOT") : "/";
	if (global) {
		q.state_opt = global->state_dir;
		q.wait_seconds = global->wait_seconds;
		q.command_line = global->command_line;
		if (global->verbose && q.verbose == 0)
			q.verbose = 1;
	}
	r = grove_alt_run(&q, &res, &err);
	for (size_t i = 0; i < res.n_msgs; i++) {
		const struct grove_alt_msg *m = &res.msgs[i];

		if (m->kind == GROVE_ALT_WARNING && q.verbose >= 0)
			fprintf(stderr, "%s: warning: %s\n", PROG, m->text);
		else if ((m->kind == GROVE_ALT_INFO && q.verbose >= 0) ||
			 (m->kind == GROVE_ALT_VERBOSE && q.verbose > 0))
			printf("%s: %s\n", PROG, m->text);
	}
	if (r < 0 && res.current_failed && q.action == GROVE_ALT_QUERY)
		print_query(&res);
	else if (r < 0 && res.current_failed)
		print_display(&res);
	if (r < 0) {
		status = fail("%s", err.msg);
		goto out;
	}
	if (q.action == GROVE_ALT_QUERY)
		print_query(&res);
	else if (q.action == GROVE_ALT_DISPLAY)
		print_display(&res);
	else if (q.action == GROVE_ALT_LIST)
		for (size_t i = 0; i < res.group.n_choices; i++)
			printf("%s\n", res.group.choices[i].path);
	status = GROVE_EXIT_OK;
out:
	fflush(stdout);
	grove_alt_result_release(&res);
	free(q.slaves);
	free(q.slave_links);
	free(adm_default);
	return status;
}
