/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for profiles through the library API: the delete forms, build, switch, rollback and
 * gc, as the manifest will drive them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "formats/profile_log.h"
#include "grove/profile.h"
#include "testutil.h"

/* Generations 1..5, built at day 0, 1, 2, 3, 4 (seconds since the epoch), current as given. */
static void
gens_fixture(struct grove_generation *g, long current)
{
	memset(g, 0, 5 * sizeof(*g));
	for (int i = 0; i < 5; i++) {
		g[i].number = i + 1;
		g[i].time = (double)i * 86400.0;
		g[i].current = g[i].number == current;
		g[i].complete = true;
	}
}

static char *
select_str(const struct grove_generation *g, const char *spec, double now, int *ret)
{
	struct grove_error err = { 0 };
	long *nums = NULL;
	size_t n = 0;
	char buf[128] = "";

	*ret = grove_profile_select(g, 5, spec, now, &nums, &n, &err);
	for (size_t i = 0; i < n; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%ld", i ? " " : "",
			 nums[i]);
	free(nums);
	return strdup(buf);
}

static void
expect_select(const struct grove_generation *g, const char *spec, double now, const char *want)
{
	int r;
	char *got = select_str(g, spec, now, &r);

	assert_int_equal(r, 0);
	assert_string_equal(got, want);
	free(got);
}

static void
test_profile_select_forms(void **state)
{
	struct grove_generation g[5];
	double now = 10.5 * 86400.0;
	int r;
	char *got;

	(void)state;
	gens_fixture(g, 3);
	expect_select(g, "old", now, "1 2 4 5");
	/* nix-env: the generations newer than the current one stay; the current one counts
	 * as the first of the N kept (with 1-5 and 3 current, +2 keeps 2, 3, 4 and 5). */
	expect_select(g, "+2", now, "1");
	expect_select(g, "+1", now, "1 2");
	expect_select(g, "+3", now, "");
	expect_select(g, "+9", now, "");
	/* Built more than 8 days before day 10.5: days 0, 1 and 2. Generation 3 (day 2)
	 * was the profile 8 days ago: it stays (and is current anyway); 1 and 2 go. */
	expect_select(g, "8d", now, "1 2");
	/* 6 days before day 10.5 is day 4.5: generation 5 (day 4) stays, 3 is current. */
	expect_select(g, "6d", now, "1 2 4");
	/* 9 days: day 1.5: generation 2 (day 1) stays, 1 goes. */
	expect_select(g, "9d", now, "1");
	expect_select(g, "10d", now, "");
	expect_select(g, "100d", now, "");
	expect_select(g, "4", now, "4");
	expect_select(g, "9", now, "");  /* as nix-env: a number no generation has is ignored */
	expect_select(g, "3", now, "3"); /* named: the caller refuses the current one */
	gens_fixture(g, 5);
	expect_select(g, "+2", now, "1 2 3");
	expect_select(g, "+5", now, "");
	gens_fixture(g, 1);
	expect_select(g, "+1", now, "");
	expect_select(g, "+2", now, "");
	got = select_str(g, "yesterday", now, &r);
	assert_int_equal(r, -GROVE_E_USAGE);
	free(got);
	got = select_str(g, "+0", now, &r);
	assert_int_equal(r, -GROVE_E_USAGE);
	free(got);
	got = select_str(g, "007", now, &r);
	assert_int_equal(r, -GROVE_E_USAGE);
	free(got);
}

struct fixture {
	char *dir;
	char *stow;
	char *prof;
	char *state;
};

static struct grove_profile *
open_profile(struct fixture *f, bool mutate)
{
	struct grove_profile_opts o = { .state_opt = f->state,
					.profile = f->prof,
					.mutate = mutate };
	struct grove_profile *p = NULL;
	struct grove_error err = { 0 };

	assert_int_equal(grove_profile_open(&o, &p, NULL, &err), 0);
	return p;
}

static long
build(struct fixture *f, struct grove_profile *p, char *const *pkgs, size_t n, int want_r)
{
	struct grove_profile_spec spec = { .stow_dir = f->stow, .packages = pkgs, .n_packages = n };
	struct grove_error err = { 0 };
	struct grove_plan conflicts;
	long num = -1;

	grove_plan_init(&conflicts);
	assert_int_equal(grove_profile_build(p, &spec, &num, &conflicts, &err), want_r);
	if (want_r == -GROVE_E_CONFLICT) {
		assert_true(conflicts.n_conflicts > 0);
		assert_non_null(strstr(err.msg, "bin/x"));
	}
	grove_plan_release(&conflicts);
	return num;
}

static void
test_profile_build_switch_rollback_gc(void **state)
{
	struct fixture f;
	struct grove_profile *p;
	struct grove_generation *gens = NULL;
	struct grove_error err = { 0 };
	char *a[] = { "a" }, *ab[] = { "b", "a", "a" }, *clash[] = { "a", "a2" };
	size_t n = 0, removed = 0;
	long cur = 0, num = 0, del[] = { 1 };
	bool changed = false;
	char *text, *path;

	(void)state;
	f.dir = tu_mkdtemp();
	f.stow = tu_path(f.dir, "stow");
	f.prof = tu_path(f.dir, "p/main");
	f.state = tu_path(f.dir, "state");
	tu_build(f.dir, "f stow/a/bin/x ax\nf stow/b/bin/y by\nf stow/a2/bin/x a2x\n");

	/* Read-only before the profile exists: no generations, nothing made. */
	p = open_profile(&f, false);
	assert_int_equal(grove_profile_generations(p, &gens, &n, &cur, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(cur, 0);
	p = grove_profile_close(p);

	p = open_profile(&f, true);
	assert_int_equal(build(&f, p, a, 1, 0), 1);
	assert_int_equal(build(&f, p, ab, 3, 0), 2);
	assert_int_equal(build(&f, p, ab, 2, 0), 0); /* identical: nothing to do */
	assert_int_equal(build(&f, p, clash, 2, -GROVE_E_CONFLICT), 0);
	assert_int_equal(grove_profile_generations(p, &gens, &n, &cur, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(cur, 2);
	assert_int_equal(gens[1].n_packages, 2);
	assert_string_equal(gens[1].packages[0], "a");
	assert_string_equal(gens[1].packages[1], "b");
	assert_true(gens[1].current && gens[1].complete);
	grove_generations_free(gens, n);
	path = tu_path(f.dir, "p/main/bin/y");
	text = tu_read_file(path);
	assert_string_equal(text, "by");
	free(text);
	free(path);

	assert_int_equal(grove_profile_rollback(p, NULL, &num, &err), 0);
	assert_int_equal(num, 1);
	assert_int_equal(grove_profile_rollback(p, NULL, &num, &err), -GROVE_E_PRECONDITION);
	assert_int_equal(grove_profile_delete(p, del, 1, NULL, &err), -GROVE_E_PRECONDITION);
	assert_int_equal(grove_profile_switch(p, 2, NULL, &changed, &err), 0);
	assert_true(changed);
	assert_int_equal(grove_profile_switch(p, 2, NULL, &changed, &err), 0);
	assert_false(changed);
	assert_int_equal(grove_profile_delete(p, del, 1, NULL, &err), 0);
	assert_int_equal(grove_profile_gc(p, NULL, &removed, &err), 0);
	assert_int_equal(removed, 1);
	assert_int_equal(build(&f, p, a, 1, 0), 3); /* highest (2) + 1 */
	p = grove_profile_close(p);

	tu_rmtree(f.dir);
	free(f.dir);
	free(f.stow);
	free(f.prof);
	free(f.state);
}

/* Install and remove start from the current generation's packages; "x/" names x; a package to
 * remove that is not there is refused with nothing changed; the stow dir is -d's, else
 * $STOW_DIR's, else the current generation's. */
static void
test_profile_change_sets(void **state)
{
	struct fixture f;
	struct grove_profile *p;
	struct grove_profile_changed ch;
	struct grove_error err = { 0 };
	char *inst_a[] = { "a/" }, *inst_b[] = { "b", "a" }, *rm_a[] = { "a" }, *rm_z[] = { "z" };
	struct grove_profile_change rq = { .kind = GROVE_PROFILE_INSTALL };

	(void)state;
	f.dir = tu_mkdtemp();
	f.stow = tu_path(f.dir, "stow");
	f.prof = tu_path(f.dir, "p/main");
	f.state = tu_path(f.dir, "state");
	tu_build(f.dir, "f stow/a/bin/x ax\nf stow/b/bin/y by\n");
	p = open_profile(&f, true);

	rq.packages = inst_a;
	rq.n_packages = 1;
	rq.env_stow_dir = f.stow; /* $STOW_DIR: there is no current generation yet */
	assert_int_equal(grove_profile_change(p, &rq, &ch, &err), 0);
	assert_int_equal(ch.previous, 0);
	assert_int_equal(ch.generation, 1);
	assert_int_equal(ch.n_packages, 1);
	assert_string_equal(ch.packages[0], "a");
	grove_profile_changed_release(&ch);

	rq.packages = inst_b; /* a again, and b: the set is {a, b}, sorted, each once */
	rq.n_packages = 2;
	rq.env_stow_dir = NULL; /* the current generation's stow dir */
	assert_int_equal(grove_profile_change(p, &rq, &ch, &err), 0);
	assert_int_equal(ch.previous, 1);
	assert_int_equal(ch.generation, 2);
	assert_int_equal(ch.n_packages, 2);
	assert_string_equal(ch.packages[0], "a");
	assert_string_equal(ch.packages[1], "b");
	grove_profile_changed_release(&ch);

	rq.kind = GROVE_PROFILE_REMOVE;
	rq.packages = rm_z;
	rq.n_packages = 1;
	assert_int_equal(grove_profile_change(p, &rq, &ch, &err), -GROVE_E_BADINPUT);
	assert_non_null(strstr(err.msg, "package 'z' is not in the current generation"));
	assert_int_equal(ch.generation, 0);
	grove_profile_changed_release(&ch);

	rq.packages = rm_a;
	assert_int_equal(grove_profile_change(p, &rq, &ch, &err), 0);
	assert_int_equal(ch.previous, 2);
	assert_int_equal(ch.generation, 3);
	assert_int_equal(ch.n_packages, 1);
	assert_string_equal(ch.packages[0], "b");
	grove_profile_changed_release(&ch);
	{
		char *path = tu_path(f.dir, "p/main/bin/x");

		assert_null(tu_read_file(path)); /* a's file is gone from the profile */
		free(path);
	}
	p = grove_profile_close(p);
	tu_rmtree(f.dir);
	free(f.dir);
	free(f.stow);
	free(f.prof);
	free(f.state);
}

/* A dry run plans and changes nothing; the profile's generations folder is known as its log. */
static void
test_profile_dry_run_and_log_owner(void **state)
{
	struct fixture f;
	struct grove_profile_opts o = { .mutate = true, .dry_run = true };
	struct grove_profile *p = NULL;
	struct grove_error err = { 0 };
	struct grove_root root = { .fd = -1 };
	const struct grove_plan *summary, *forest = NULL;
	char *a[] = { "a" }, *owner = NULL, *gens_path, *pdir;
	bool changed = false;

	(void)state;
	f.dir = tu_mkdtemp();
	f.stow = tu_path(f.dir, "stow");
	f.prof = tu_path(f.dir, "p/new/main");
	f.state = tu_path(f.dir, "state");
	pdir = tu_path(f.dir, "p");
	tu_build(f.dir, "f stow/a/bin/x ax\nf stow/a/etc/c c\n");
	o.state_opt = f.state;
	o.profile = f.prof;

	assert_int_equal(grove_profile_open(&o, &p, NULL, &err), 0);
	assert_true(grove_profile_dry_run(p));
	assert_int_equal(build(&f, p, a, 1, 0), 1);
	summary = grove_profile_planned(p, &forest);
	assert_int_equal(summary->n_ops, 3);
	assert_int_equal(summary->ops[0].kind, GROVE_OP_MKDIR);
	assert_string_equal(summary->ops[0].path, "main.generations/1");
	assert_int_equal(summary->ops[2].kind, GROVE_OP_LINK);
	assert_string_equal(summary->ops[2].text, "main-1-link");
	assert_int_equal(forest->n_ops, 2); /* bin, etc */
	assert_string_equal(forest->ops[0].text, "../../../../stow/a/bin");
	p = grove_profile_close(p);
	assert_int_equal(access(pdir, F_OK), -1);
	assert_int_equal(access(f.state, F_OK), -1);

	p = open_profile(&f, true);
	assert_int_equal(build(&f, p, a, 1, 0), 1);
	p = grove_profile_close(p);
	assert_int_equal(grove_profile_open(&o, &p, NULL, &err), 0);
	assert_int_equal(grove_profile_switch(p, 1, NULL, &changed, &err), 0);
	assert_false(changed);
	p = grove_profile_close(p);

	gens_path = tu_path(f.dir, "p/new/main.generations");
	assert_int_equal(grove_root_open(&root, gens_path, &err), 0);
	assert_int_equal(grove_profile_log_owner(&root, NULL, 0, &owner, &err), 0);
	assert_non_null(owner);
	assert_non_null(strstr(owner, "/p/new/main"));
	free(owner);
	grove_root_release(&root);
	assert_int_equal(grove_root_open(&root, f.stow, &err), 0);
	assert_int_equal(grove_profile_log_owner(&root, NULL, 0, &owner, &err), 0);
	assert_null(owner);
	grove_root_release(&root);

	tu_rmtree(f.dir);
	free(gens_path);
	free(pdir);
	free(f.dir);
	free(f.stow);
	free(f.prof);
	free(f.state);
}

/* True once process pid sleeps in (clock_)nanosleep: grove_lock_target polls a held lock
 * that way, and nothing else on the way to it sleeps. */
static bool
sleeping(pid_t pid)
{
	char path[64];
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
#ifdef SYS_nanosleep
	if (nr == SYS_nanosleep)
		return true;
#endif
	return nr == SYS_clock_nanosleep;
}

/* A run that waited for the lock of a new profile whose first run was refused (and removed
 * the folder it made) opens the profile again, and builds. */
static void
test_profile_waiter_reopens_removed_folder(void **state)
{
	struct fixture f;
	struct grove_profile *p;
	char *a[] = { "a" }, *gens_path;
	int status = -1, go[2];
	bool waiting = false;
	pid_t pid;

	(void)state;
	f.dir = tu_mkdtemp();
	f.stow = tu_path(f.dir, "stow");
	f.prof = tu_path(f.dir, "p/main");
	f.state = tu_path(f.dir, "state");
	gens_path = tu_path(f.dir, "p/main.generations");
	tu_build(f.dir, "f stow/a/bin/x ax\n");

	/* The child is forked first: it must not inherit the lock's open file. */
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct grove_profile_opts o = {
			.state_opt = f.state, .profile = f.prof, .mutate = true, .wait_seconds = 60
		};
		struct grove_profile_spec spec = { .stow_dir = f.stow,
						   .packages = a,
						   .n_packages = 1 };
		struct grove_error err = { 0 };
		struct grove_profile *q = NULL;
		long num = 0;
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		if (grove_profile_open(&o, &q, NULL, &err) < 0 ||
		    grove_profile_build(q, &spec, &num, NULL, &err) < 0 || num != 1) {
			fprintf(stderr, "child: %s\n", err.msg);
			_exit(1);
		}
		grove_profile_close(q);
		_exit(0);
	}
	close(go[0]);
	p = open_profile(&f, true); /* makes p/ and main.generations/, holds the lock */
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	/* Wait until the child is waiting for the lock (its state, not a fixed sleep). */
	/* The answer of the sample that saw it: asking again may catch the child between two
	 * polls of the lock (in flock, not nanosleep). */
	for (int i = 0; i < 60000 && !(waiting = sleeping(pid)); i++)
		usleep(1000);
	assert_true(waiting);
	p = grove_profile_close(p); /* logged nothing: removes main.generations, then p/ */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(access(gens_path, F_OK), 0);
	p = open_profile(&f, false);
	{
		struct grove_generation *gens = NULL;
		struct grove_error err = { 0 };
		size_t n = 0;
		long cur = 0;

		assert_int_equal(grove_profile_generations(p, &gens, &n, &cur, &err), 0);
		assert_int_equal(n, 1);
		assert_int_equal(cur, 1);
		assert_true(gens[0].complete);
		grove_generations_free(gens, n);
	}
	p = grove_profile_close(p);

	tu_rmtree(f.dir);
	free(gens_path);
	free(f.dir);
	free(f.stow);
	free(f.prof);
	free(f.state);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_select_forms),
		cmocka_unit_test(test_profile_build_switch_rollback_gc),
		cmocka_unit_test(test_profile_change_sets),
		cmocka_unit_test(test_profile_dry_run_and_log_owner),
		cmocka_unit_test(test_profile_waiter_reopens_removed_folder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
