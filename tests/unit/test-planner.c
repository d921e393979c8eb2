/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Golden planner cases: each tests/golden/NAME.case builds a tree, plans a request, and checks the
 * plan and the result. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "grove/plan.h"
#include "grove/stow.h"

/*
 * A case file has a header of "key: value" lines, then sections:
 *
 *   args: -S b --no-folding     Stow-style arguments (-S/-D/-R, --no-folding,
 *                               --adopt, --dotfiles, -p, --ignore=RE,
 *                               --defer=RE, --override=RE)
 *   dir: stow                   the stow dir, relative to the scenario root
 *   target: .                   the target, relative to the scenario root
 *   tree:                       the scenario before (tu_build spec)
 *   plan:                       the expected plan, one op per line as
 *                               grove_plan_print writes it (spaces collapsed)
 *   conflicts:                  or the expected conflicts, "ACTION PKG: MESSAGE"
 *   error:                      or a substring of the expected error message
 *   after:                      the expected tree after executing the plan
 *                               (tu_dump spec); checked when present
 *
 * Expected plans are written by hand from GNU Stow 2.4's rules; they are
 * never produced by running grove.
 */

struct gcase {
	char *name;
	char *args;
	char *dir;
	char *target;
	char *tree;
	char *plan;
	char *conflicts;
	char *error;
	char *after;
};

static void
append(char **buf, const char *line)
{
	size_t old = *buf ? strlen(*buf) : 0;
	char *n = realloc(*buf, old + strlen(line) + 2);

	assert_non_null(n);
	strcpy(n + old, line);
	strcat(n, "\n");
	*buf = n;
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

static void
parse_case(const char *path, struct gcase *c)
{
	char *text = tu_read_file(path);
	char **section = NULL;
	char *save = NULL;

	assert_non_null(text);
	memset(c, 0, sizeof(*c));
	c->name = strdup(path);
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *t = trim(line);

		if (t[0] == '#' && !section)
			continue;
		if (!strcmp(t, "tree:"))
			section = &c->tree;
		else if (!strcmp(t, "plan:"))
			section = &c->plan;
		else if (!strcmp(t, "conflicts:"))
			section = &c->conflicts;
		else if (!strcmp(t, "after:"))
			section = &c->after;
		else if (!strncmp(t, "args:", 5) && !section)
			c->args = strdup(trim(t + 5));
		else if (!strncmp(t, "dir:", 4) && !section)
			c->dir = strdup(trim(t + 4));
		else if (!strncmp(t, "target:", 7) && !section)
			c->target = strdup(trim(t + 7));
		else if (!strncmp(t, "error:", 6))
			c->error = strdup(trim(t + 6));
		else if (section && t[0] && t[0] != '#')
			append(section, t);
	}
	if (!c->dir)
		c->dir = strdup("stow");
	if (!c->target)
		c->target = strdup(".");
	if (!c->args)
		fail_msg("%s: no args", path);
	free(text);
}

static void
free_case(struct gcase *c)
{
	free(c->name);
	free(c->args);
	free(c->dir);
	free(c->target);
	free(c->tree);
	free(c->plan);
	free(c->conflicts);
	free(c->error);
	free(c->after);
}

static void
add_pattern(struct grove_pattern_set **set, enum grove_pattern_anchor a, const char *re)
{
	struct grove_error err;

	if (!*set)
		*set = grove_pattern_set_new(a);
	assert_non_null(*set);
	if (grove_pattern_set_add(*set, re, &err) < 0)
		fail_msg("pattern '%s': %s", re, err.msg);
}

static void
parse_args(const char *args, struct grove_stow_request *req)
{
	char *copy = strdup(args);
	char *save = NULL;
	int action = 'S';

	for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (!strcmp(w, "-S") || !strcmp(w, "-D") || !strcmp(w, "-R"))
			action = w[1];
		else if (!strcmp(w, "--no-folding"))
			req->no_folding = true;
		else if (!strcmp(w, "--adopt"))
			req->adopt = true;
		else if (!strcmp(w, "--dotfiles"))
			req->dotfiles = true;
		else if (!strcmp(w, "-p"))
			req->compat = true;
		else if (!strncmp(w, "--ignore=", 9))
			add_pattern(&req->ignore, GROVE_ANCHOR_END, w + 9);
		else if (!strncmp(w, "--defer=", 8))
			add_pattern(&req->defer, GROVE_ANCHOR_START, w + 8);
		else if (!strncmp(w, "--override=", 11))
			add_pattern(&req->override, GROVE_ANCHOR_START, w + 11);
		else if (w[0] == '-')
			fail_msg("unknown case argument %s", w);
		else {
			if (action == 'D' || action == 'R')
				assert_int_equal(grove_stow_request_add(req, true, w), 0);
			if (action == 'S' || action == 'R')
				assert_int_equal(grove_stow_request_add(req, false, w), 0);
		}
	}
	free(copy);
}

/* Collapses runs of spaces so column alignment does not matter. */
static char *
squeeze(const char *s)
{
	char *out = malloc(strlen(s) + 1);
	char *o = out;

	for (; *s; s++) {
		if (*s == ' ' && o > out && o[-1] == ' ')
			continue;
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

static char *
plan_text(const struct grove_plan *plan)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char *s;

	grove_plan_print(plan, f);
	fclose(f);
	s = squeeze(buf);
	free(buf);
	return s;
}

static char *
conflicts_text(const struct grove_plan *plan)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	for (size_t i = 0; i < plan->n_conflicts; i++)
		fprintf(f, "%s %s: %s\n", plan->conflicts[i].action, plan->conflicts[i].package,
			plan->conflicts[i].message);
	fclose(f);
	return buf;
}

static int failures;

static void
check(const struct gcase *c, const char *what, const char *want, const char *got)
{
	char *w = squeeze(want ? want : "");
	char *g = squeeze(got ? got : "");

	if (strcmp(w, g) != 0) {
		print_error("%s: %s differs\n--- expected\n%s--- got\n%s", c->name, what, w, g);
		failures++;
	}
	free(w);
	free(g);
}

static void
run_case(const char *path)
{
	struct gcase c;
	struct grove_stow_request req;
	struct grove_stow_run run;
	struct grove_error err = { 0 };
	char *root = tu_mkdtemp();
	char *cwd_before = NULL;
	int r;

	parse_case(path, &c);
	if (c.tree)
		tu_build(root, c.tree);
	grove_stow_request_init(&req);
	req.dir = tu_path(root, c.dir);
	req.target = tu_path(root, c.target);
	parse_args(c.args, &req);

	r = grove_stow_prepare(&req, NULL, &run, &err);
	if (c.error) {
		if (r >= 0 || !strstr(err.msg, c.error)) {
			print_error("%s: expected error containing '%s', got %d '%s'\n", path,
				    c.error, r, err.msg);
			failures++;
		}
		if (r >= 0)
			grove_stow_run_release(&run);
		goto out;
	}
	if (r < 0) {
		print_error("%s: prepare failed: %s\n", path, err.msg);
		failures++;
		goto out;
	}
	if (c.conflicts) {
		char *got = conflicts_text(&run.plan);
		check(&c, "conflicts", c.conflicts, got);
		free(got);
		if (run.plan.n_ops)
			check(&c, "ops with conflicts", "", "some ops");
	} else {
		char *got = plan_text(&run.plan);
		char *gotc = conflicts_text(&run.plan);
		check(&c, "conflicts", "", gotc);
		check(&c, "plan", c.plan, got);
		free(got);
		free(gotc);
		if (c.after && run.plan.n_conflicts == 0) {
			r = grove_stow_execute(&run, &err);
			if (r < 0) {
				print_error("%s: execute failed: %s\n", path, err.msg);
				failures++;
			} else {
				char *dump = tu_dump(root);
				check(&c, "tree after", c.after, dump);
				free(dump);
			}
		}
	}
	grove_stow_run_release(&run);
out:
	grove_stow_request_release(&req);
	free_case(&c);
	tu_rmtree(root);
	free(root);
	free(cwd_before);
}

/* The case this run checks (argv[1]), or NULL: then argv says how many cases meson registered. */
static const char *case_path;
static long registered = -1;

static void
test_planner_golden_case(void **state)
{
	(void)state;
	run_case(case_path);
	assert_int_equal(failures, 0);
}

/* meson lists the cases when it configures: a case added since is not run until it configures
 * again, so this test fails then, rather than the case going unnoticed. */
static void
test_planner_golden_cases_registered(void **state)
{
	const char *dir = getenv("GROVE_GOLDEN_DIR");
	DIR *d;
	struct dirent *de;
	long n = 0;

	(void)state;
	assert_non_null(dir);
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l > 5 && !strcmp(de->d_name + l - 5, ".case"))
			n++;
	}
	closedir(d);
	print_message("# %ld golden cases on disk, %ld registered as tests\n", n, registered);
	assert_true(n >= 10);
	assert_int_equal(n, registered);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest one[] = {
		cmocka_unit_test(test_planner_golden_case),
	};
	const struct CMUnitTest count[] = {
		cmocka_unit_test(test_planner_golden_cases_registered),
	};

	/* test-planner CASE: checks one case; test-planner --registered N: the count check. */
	if (argc == 3 && !strcmp(argv[1], "--registered")) {
		registered = strtol(argv[2], NULL, 10);
		return cmocka_run_group_tests(count, NULL, NULL);
	}
	if (argc != 2) {
		fprintf(stderr, "usage: test-planner CASE | --registered N\n");
		return 2;
	}
	case_path = argv[1];
	return cmocka_run_group_tests(one, NULL, NULL);
}
