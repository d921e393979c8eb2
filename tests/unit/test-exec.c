/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests: the executor applies plans exactly, and on any failure leaves the tree as before. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grove/exec.h"
#include "testutil.h"

#include "fault.h"

/* ---- fixture: DIR/{stow,target,outside} ---- */

struct fx {
	char *dir;
	struct grove_root target, stow;
	struct grove_error err;
};

static const char initial_spec[] = "d stow/a/bin\n"
				   "f stow/a/bin/x x\n"
				   "f stow/a/bin/y y\n"
				   "d stow/b/bin/sub\n"
				   "f stow/b/bin/sub/q q\n"
				   "f stow/b/bin/z z\n"
				   "d stow/c/lib/sub\n"
				   "f stow/c/lib/l1 l1\n"
				   "f stow/c/lib/sub/s s\n"
				   "f stow/a/old o\n"
				   "f stow/a/rel r\n"
				   "f stow/b/rel r2\n"
				   "f stow/b/new/n n\n"
				   "f stow/a/conf pkg\n"
				   "d target\n"
				   "l target/bin ../stow/a/bin\n"
				   "d target/lib/sub\n"
				   "l target/lib/l1 ../../stow/c/lib/l1\n"
				   "l target/lib/sub/s ../../../stow/c/lib/sub/s\n"
				   "l target/old ../stow/a/old\n"
				   "l target/rel ../stow/a/rel\n"
				   "d target/empty\n"
				   "f target/conf user\n"
				   "f target/keep mine\n"
				   "f outside/secret s\n";

/* Written by hand: what full_plan must leave. */
static const char expected_after[] = "d outside\n"
				     "f outside/secret s\n"
				     "d stow\n"
				     "d stow/a\n"
				     "d stow/a/bin\n"
				     "f stow/a/bin/x x\n"
				     "f stow/a/bin/y y\n"
				     "f stow/a/conf user\n"
				     "f stow/a/old o\n"
				     "f stow/a/rel r\n"
				     "d stow/b\n"
				     "d stow/b/bin\n"
				     "d stow/b/bin/sub\n"
				     "f stow/b/bin/sub/q q\n"
				     "f stow/b/bin/z z\n"
				     "d stow/b/new\n"
				     "f stow/b/new/n n\n"
				     "f stow/b/rel r2\n"
				     "d stow/c\n"
				     "d stow/c/lib\n"
				     "f stow/c/lib/l1 l1\n"
				     "d stow/c/lib/sub\n"
				     "f stow/c/lib/sub/s s\n"
				     "d target\n"
				     "d target/bin\n"
				     "d target/bin/sub\n"
				     "l target/bin/sub/q ../../../stow/b/bin/sub/q\n"
				     "l target/bin/x ../../stow/a/bin/x\n"
				     "l target/bin/y ../../stow/a/bin/y\n"
				     "l target/bin/z ../../stow/b/bin/z\n"
				     "l target/conf ../stow/a/conf\n"
				     "f target/keep mine\n"
				     "l target/lib ../stow/c/lib\n"
				     "d target/new\n"
				     "l target/new/n ../../stow/b/new/n\n"
				     "l target/rel ../stow/b/rel\n";

#define OP(k, p, o, t, s)                                                           \
	{                                                                           \
		.kind = GROVE_OP_##k, .path = (char *)(p), .old_text = (char *)(o), \
		.text = (char *)(t), .stow_path = (char *)(s)                       \
	}

static struct grove_op full_ops[] = {
	OP(UNFOLD, "bin", "../stow/a/bin", NULL, NULL),
	OP(LINK, "bin/x", NULL, "../../stow/a/bin/x", NULL),
	OP(LINK, "bin/y", NULL, "../../stow/a/bin/y", NULL),
	OP(MKDIR, "bin/sub", NULL, NULL, NULL),
	OP(LINK, "bin/sub/q", NULL, "../../../stow/b/bin/sub/q", NULL),
	OP(LINK, "bin/z", NULL, "../../stow/b/bin/z", NULL),
	OP(FOLD, "lib", NULL, "../stow/c/lib", NULL),
	OP(UNLINK, "lib/l1", "../../stow/c/lib/l1", NULL, NULL),
	OP(UNLINK, "lib/sub/s", "../../../stow/c/lib/sub/s", NULL, NULL),
	OP(RMDIR, "lib/sub", NULL, NULL, NULL),
	OP(UNLINK, "old", "../stow/a/old", NULL, NULL),
	OP(RELINK, "rel", "../stow/a/rel", "../stow/b/rel", NULL),
	OP(RMDIR, "empty", NULL, NULL, NULL),
	OP(MKDIR, "new", NULL, NULL, NULL),
	OP(LINK, "new/n", NULL, "../../stow/b/new/n", NULL),
	OP(ADOPT, "conf", NULL, "../stow/a/conf", "a/conf"),
};

static struct grove_plan
plan_of(struct grove_op *ops, size_t n)
{
	struct grove_plan p;

	memset(&p, 0, sizeof(p));
	p.ops = ops;
	p.n_ops = n;
	p.cap_ops = n;
	return p;
}

#define PLAN(ops) plan_of(ops, sizeof(ops) / sizeof(ops[0]))

static void
fx_open(struct fx *fx, const char *spec)
{
	char *t = tu_path(fx->dir, "target");
	char *s = tu_path(fx->dir, "stow");

	tu_build(fx->dir, spec);
	assert_int_equal(grove_root_open(&fx->target, t, &fx->err), 0);
	assert_int_equal(grove_root_open(&fx->stow, s, &fx->err), 0);
	free(t);
	free(s);
}

static void
fx_close(struct fx *fx)
{
	grove_root_release(&fx->target);
	grove_root_release(&fx->stow);
	tu_rmtree(fx->dir);
	assert_int_equal(mkdir(fx->dir, 0700), 0);
}

static int
setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	fx->dir = tu_mkdtemp();
	fx_open(fx, initial_spec);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *fx = *state;

	grove_root_release(&fx->target);
	grove_root_release(&fx->stow);
	tu_rmtree(fx->dir);
	free(fx->dir);
	free(fx);
	return 0;
}

static char *
dump(struct fx *fx)
{
	return tu_dump(fx->dir);
}

static void
assert_tree(struct fx *fx, const char *want)
{
	char *have = dump(fx);

	assert_string_equal(have, want);
	free(have);
}

static int
apply(struct fx *fx, const struct grove_plan *plan, const struct grove_exec_opts *opts)
{
	grove_error_clear(&fx->err);
	return grove_exec_apply(plan, &fx->target, &fx->stow, opts, &fx->err);
}

/* ---- tests ---- */

struct progress_log {
	size_t calls, last_done, total;
};

static void
on_progress(void *ctx, size_t done, size_t total, const struct grove_op *op)
{
	struct progress_log *log = ctx;

	assert_non_null(op);
	assert_int_equal(done, log->last_done + 1);
	log->calls++;
	log->last_done = done;
	log->total = total;
}

static void
test_exec_full_plan(void **state)
{
	struct fx *fx = *state;
	struct grove_plan plan = PLAN(full_ops);
	struct progress_log log = { 0 };
	struct grove_exec_opts opts = { .progress = on_progress, .progress_ctx = &log };

	assert_int_equal(apply(fx, &plan, &opts), 0);
	assert_string_equal(fx->err.msg, "");
	assert_tree(fx, expected_after);
	assert_int_equal(log.calls, plan.n_ops);
	assert_int_equal(log.total, plan.n_ops);
}

static void
test_exec_empty_plan(void **state)
{
	struct fx *fx = *state;
	struct grove_plan plan = plan_of(NULL, 0);
	char *before = dump(fx);

	assert_int_equal(grove_exec_apply(&plan, &fx->target, NULL, NULL, NULL), 0);
	assert_tree(fx, before);
	free(before);
}

static void
test_exec_first_op_precondition(void **state)
{
	struct fx *fx = *state;
	struct grove_op ops[] = {
		OP(LINK, "keep", NULL, "../stow/a/keep", NULL),
		OP(LINK, "fresh", NULL, "x", NULL),
	};
	struct grove_plan plan = PLAN(ops);
	char *before = dump(fx);

	assert_int_equal(apply(fx, &plan, NULL), -GROVE_E_PRECONDITION);
	assert_string_equal(fx->err.msg, "link 'keep': create link 'keep': File exists");
	assert_tree(fx, before);
	free(before);
}

static void
test_exec_middle_precondition(void **state)
{
	struct fx *fx = *state;
	struct grove_plan plan = PLAN(full_ops);
	char *before;

	/* A file where op 14 (MKDIR new) expects nothing: ops 1-13 are undone. */
	tu_build(fx->dir, "f target/new foreign\n");
	before = dump(fx);
	assert_int_equal(apply(fx, &plan, NULL), -GROVE_E_PARTIAL);
	assert_non_null(strstr(fx->err.msg, "mkdir 'new'"));
	assert_non_null(strstr(fx->err.msg, "undone"));
	assert_tree(fx, before);
	free(before);
}

static void
test_exec_unlink_refuses_file(void **state)
{
	struct fx *fx = *state;
	struct grove_op ops[] = {
		OP(LINK, "keep2", NULL, "x", NULL),
		OP(UNLINK, "keep", "../stow/a/keep", NULL, NULL),
	};
	struct grove_plan plan = PLAN(ops);
	char *before = dump(fx);

	/* UNLINK must refuse a regular file and leave it; the LINK before is undone. */
	assert_int_equal(apply(fx, &plan, NULL), -GROVE_E_PARTIAL);
	assert_non_null(strstr(fx->err.msg, "unlink 'keep': remove link 'keep'"));
	assert_tree(fx, before);
	free(before);
}

static void
test_exec_unfold_wrong_link(void **state)
{
	struct fx *fx = *state;
	struct grove_plan plan = PLAN(full_ops);
	char *before;

	fx_close(fx); /* rebuild with bin pointing elsewhere */
	fx_open(fx, initial_spec);
	assert_int_equal(unlinkat(fx->target.fd, "bin", 0), 0);
	assert_int_equal(symlinkat("../stow/b/bin", fx->target.fd, "bin"), 0);
	before = dump(fx);
	assert_int_equal(apply(fx, &plan, NULL), -GROVE_E_PRECONDITION);
	assert_non_null(strstr(fx->err.msg, "unfold 'bin'"));
	assert_tree(fx, before);
	free(before);
}

static void
test_exec_fold_foreign_entry(void **state)
{
	struct fx *fx = *state;
	struct grove_op ops[] = {
		OP(LINK, "fresh", NULL, "x", NULL),
		OP(FOLD, "lib", NULL, "../stow/c/lib", NULL),
		OP(UNLINK, "lib/l1", "../../stow/c/lib/l1", NULL, NULL),
		OP(UNLINK, "lib/sub/s", "../../../stow/c/lib/sub/s", NULL, NULL),
		OP(RMDIR, "lib/sub", NULL, NULL, NULL),
	};
	struct grove_plan plan = PLAN(ops);
	char *before;

	/* A user's file in the folder being folded: the fold must fail, and the
	 * file (and every link) must be back where it was. */
	tu_build(fx->dir, "f target/lib/users-file precious\n");
	before = dump(fx);
	assert_int_equal(apply(fx, &plan, NULL), -GROVE_E_PARTIAL);
	assert_non_null(strstr(fx->err.msg, "fold 'lib'"));
	assert_tree(fx, before);
	free(before);
}

static void
test_exec_unfold_nested_fails_inside(void **state)
{
	struct fx *fx = *state;
	struct grove_op ops[] = {
		OP(UNFOLD, "bin", "../stow/a/bin", NULL, NULL),
		OP(LINK, "bin/x", NULL, "../../stow/a/bin/x", NULL),
		OP(LINK, "bin/x", NULL, "../../stow/a/bin/x", NULL), /* twice: EEXIST */
	};
	struct grove_plan plan = PLAN(ops);
	char *before = dump(fx);

	assert_int_equal(apply(fx, &plan, NULL), -GROVE_E_PARTIAL);
	/* Named once, by the op that failed, with the plan's path (not a temp name). */
	assert_true(strncmp(fx->err.msg, "link 'bin/x': create link 'x'", 29) == 0);
	assert_tree(fx, before);
	free(before);
}

static void
test_exec_symlinked_parent_refused(void **state)
{
	struct fx *fx = *state;
	struct grove_op ops[] = {
		OP(LINK, "fresh", NULL, "x", NULL),
		OP(LINK, "evil/planted", NULL, "x", NULL),
	};
	struct grove_plan plan = PLAN(ops);
	char *before;

	/* A folder of the target replaced by a symlink to outside: the op must
	 * fail rather than write through it. */
	tu_build(fx->dir, "l target/evil ../outside\n");
	before = dump(fx);
	assert_int_equal(apply(fx, &plan, NULL), -GROVE_E_PARTIAL);
	assert_non_null(strstr(fx->err.msg, "symlink"));
	assert_tree(fx, before);
	free(before);
}

static void
test_exec_relink_and_rmdir_preconditions(void **state)
{
	struct fx *fx = *state;
	struct grove_op relink[] = { OP(RELINK, "rel", "../stow/b/rel", "../stow/a/rel", NULL) };
	struct grove_op rmdir_full[] = { OP(RMDIR, "lib", NULL, NULL, NULL) };
	struct grove_op rmdir_link[] = { OP(RMDIR, "bin", NULL, NULL, NULL) };
	struct grove_op adopt_link[] = { OP(ADOPT, "old", NULL, "x", "a/old") };
	struct grove_plan p1 = PLAN(relink), p2 = PLAN(rmdir_full), p3 = PLAN(rmdir_link);
	struct grove_plan p4 = PLAN(adopt_link);
	char *before = dump(fx);

	assert_int_equal(apply(fx, &p1, NULL), -GROVE_E_PRECONDITION);
	assert_int_equal(apply(fx, &p2, NULL), -GROVE_E_PRECONDITION);
	assert_int_equal(apply(fx, &p3, NULL), -GROVE_E_PRECONDITION);
	assert_int_equal(apply(fx, &p4, NULL), -GROVE_E_PRECONDITION);
	assert_tree(fx, before);
	free(before);
}

static void
test_exec_adopt_new_file(void **state)
{
	struct fx *fx = *state;
	struct grove_op ops[] = { OP(ADOPT, "keep", NULL, "../stow/a/keep", "a/keep") };
	struct grove_plan plan = PLAN(ops);
	char *t = tu_path(fx->dir, "stow/a/keep");
	char *c;

	assert_int_equal(apply(fx, &plan, NULL), 0);
	c = tu_read_file(t);
	assert_string_equal(c, "mine");
	free(c);
	free(t);
}

static void
test_exec_malformed_plan(void **state)
{
	struct fx *fx = *state;
	struct grove_op ops[] = { OP(LINK, "fresh", NULL, NULL, NULL) };
	struct grove_op adopt[] = { OP(ADOPT, "keep", NULL, "x", "a/keep") };
	struct grove_plan plan = PLAN(ops), p2 = PLAN(adopt);
	char *before = dump(fx);

	assert_int_equal(apply(fx, &plan, NULL), -GROVE_E_INTERNAL);
	/* ADOPT without a stow root */
	assert_int_equal(grove_exec_apply(&p2, &fx->target, NULL, NULL, &fx->err),
			 -GROVE_E_INTERNAL);
	assert_tree(fx, before);
	free(before);
}

/* For every k, the k-th mutating syscall fails: the tree must be exactly as before. */
static void
fault_sweep(struct fx *fx, int e)
{
	struct grove_plan plan = PLAN(full_ops);
	int k;

	for (k = 1; k < 1000; k++) {
		char *before;
		int r;

		fx_close(fx);
		fx_open(fx, initial_spec);
		before = dump(fx);
		fi_arm(k, e, false);
		r = apply(fx, &plan, NULL);
		fi_armed = false;
		if (!fi_hit) {
			assert_int_equal(r, 0);
			assert_tree(fx, expected_after);
			free(before);
			break;
		}
		if (r >= 0 || r == -GROVE_E_STUCK)
			fail_msg("k=%d errno=%d: r=%d %s", k, e, r, fx->err.msg);
		assert_non_null(strstr(fx->err.msg, strerror(e)));
		{
			char *after = dump(fx);

			if (strcmp(before, after) != 0)
				fail_msg(
					"k=%d errno=%d: tree changed (%s)\nbefore:\n%s\nafter:\n%s",
					k, e, fx->err.msg, before, after);
			free(after);
		}
		free(before);
	}
	/* The plan makes well over 20 mutating calls; each was failed once. */
	assert_true(k > 20 && k < 1000);
}

static void
test_exec_fault_eio(void **state)
{
	fault_sweep(*state, EIO);
}

static void
test_exec_fault_enospc(void **state)
{
	fault_sweep(*state, ENOSPC);
}

static void
test_exec_fault_eacces(void **state)
{
	fault_sweep(*state, EACCES);
}

static void
test_exec_fault_stuck(void **state)
{
	struct fx *fx = *state;
	struct grove_plan plan = PLAN(full_ops);
	int r;

	/* Everything from the 10th call on fails, so undo cannot finish either. */
	fi_arm(10, EIO, true);
	r = apply(fx, &plan, NULL);
	fi_armed = false;
	assert_int_equal(r, -GROVE_E_STUCK);
	assert_non_null(strstr(fx->err.msg, "undo failed"));
}

static void
test_exec_fault_first_call(void **state)
{
	struct fx *fx = *state;
	struct grove_plan plan = PLAN(full_ops);
	char *before = dump(fx);
	int r;

	/* Nothing changed: the error is the syscall's own, not "partial". */
	fi_arm(1, EIO, false);
	r = apply(fx, &plan, NULL);
	fi_armed = false;
	assert_int_equal(r, -EIO);
	assert_tree(fx, before);
	free(before);
}

static void
test_exec_exchange_unsupported(void **state)
{
	struct fx *fx = *state;
	struct grove_op ops[] = {
		OP(UNFOLD, "bin", "../stow/a/bin", NULL, NULL),
		OP(LINK, "bin/x", NULL, "../../stow/a/bin/x", NULL),
	};
	struct grove_plan plan = PLAN(ops);
	char *before = dump(fx);
	int r;

	/* A filesystem without RENAME_EXCHANGE answers EINVAL: fail clearly and
	 * undo the folder built aside, never fall back to a non-atomic swap. */
	fi_arm(1, EINVAL, false);
	fi_only = "renameat2";
	r = apply(fx, &plan, NULL);
	fi_armed = false;
	assert_true(fi_hit);
	assert_int_equal(r, -GROVE_E_PARTIAL);
	assert_non_null(strstr(fx->err.msg, "does not support RENAME_EXCHANGE"));
	assert_tree(fx, before);
	free(before);
}

static void
test_exec_noreplace_unsupported(void **state)
{
	struct fx *fx = *state;
	struct grove_op ops[] = { OP(UNLINK, "old", "../stow/a/old", NULL, NULL) };
	struct grove_plan plan = PLAN(ops);
	char *before = dump(fx);
	int r;

	fi_arm(1, EINVAL, false);
	fi_only = "renameat2";
	r = apply(fx, &plan, NULL);
	fi_armed = false;
	assert_int_equal(r, -GROVE_E_UNSUPPORTED);
	assert_non_null(strstr(fx->err.msg, "RENAME_NOREPLACE"));
	assert_tree(fx, before);
	free(before);
}

/* ---- grove's own entries: WRITE, ERASE, MOVE (a profile's generation folders) ---- */

static struct grove_op gen_build_ops[] = {
	OP(MKDIR, "gen.tmp", NULL, NULL, NULL),
	OP(MKDIR, "gen.tmp/bin", NULL, NULL, NULL),
	OP(LINK, "gen.tmp/bin/x", NULL, "../../../stow/a/bin/x", NULL),
	OP(WRITE, "gen.tmp/rec", NULL, "record 1\n", NULL),
	OP(MOVE, "gen.tmp", NULL, "gen", NULL),
};

static struct grove_op gen_remove_ops[] = {
	OP(MOVE, "gen", NULL, "gen.aside", NULL),
	OP(UNLINK, "gen.aside/bin/x", "../../../stow/a/bin/x", NULL, NULL),
	OP(RMDIR, "gen.aside/bin", NULL, NULL, NULL),
	OP(ERASE, "gen.aside/rec", "record 1\n", NULL, NULL),
	OP(RMDIR, "gen.aside", NULL, NULL, NULL),
};

static void
test_exec_own_entries(void **state)
{
	struct fx *fx = *state;
	struct grove_plan build = PLAN(gen_build_ops), rm = PLAN(gen_remove_ops);
	char *before = dump(fx);
	char *built;

	assert_int_equal(apply(fx, &build, NULL), 0);
	built = dump(fx);
	assert_non_null(strstr(built, "l target/gen/bin/x ../../../stow/a/bin/x\n"));
	assert_non_null(strstr(built, "f target/gen/rec record 1\n"));
	assert_null(strstr(built, "gen.tmp"));
	assert_int_equal(apply(fx, &rm, NULL), 0);
	assert_tree(fx, before);
	free(built);
	free(before);
}

static void
test_exec_own_entries_preconditions(void **state)
{
	struct fx *fx = *state;
	struct grove_plan build = PLAN(gen_build_ops);
	struct grove_op wrong[] = {
		OP(MOVE, "gen", NULL, "gen.aside", NULL),
		OP(ERASE, "gen.aside/rec", "record 2\n", NULL, NULL),
	};
	struct grove_op onto[] = { OP(MOVE, "old", NULL, "rel", NULL) };
	struct grove_op over[] = { OP(WRITE, "old", NULL, "x", NULL) };
	struct grove_plan p_wrong = PLAN(wrong), p_onto = PLAN(onto), p_over = PLAN(over);
	char *built;
	int r;

	assert_int_equal(apply(fx, &build, NULL), 0);
	built = dump(fx);
	/* A record that is not what grove wrote stays, and the move aside is undone. */
	r = apply(fx, &p_wrong, NULL);
	assert_int_equal(r, -GROVE_E_PARTIAL);
	assert_non_null(strstr(fx->err.msg, "is not the file grove wrote"));
	assert_tree(fx, built);
	/* MOVE never replaces an entry; WRITE never writes over one. */
	assert_int_equal(apply(fx, &p_onto, NULL), -GROVE_E_PRECONDITION);
	assert_tree(fx, built);
	assert_int_equal(apply(fx, &p_over, NULL), -GROVE_E_PRECONDITION);
	assert_tree(fx, built);
	free(built);
}

/* For every k, the k-th mutating syscall of a build and of a removal fails: as before. */
static void
test_exec_own_entries_faults(void **state)
{
	struct fx *fx = *state;
	struct grove_plan build = PLAN(gen_build_ops), rm = PLAN(gen_remove_ops);
	int k, total = 0;

	for (int which = 0; which < 2; which++) {
		for (k = 1; k < 200; k++) {
			char *before;
			int r;

			fx_close(fx);
			fx_open(fx, initial_spec);
			if (which == 1)
				assert_int_equal(apply(fx, &build, NULL), 0);
			before = dump(fx);
			fi_arm(k, EIO, false);
			r = apply(fx, which ? &rm : &build, NULL);
			fi_armed = false;
			if (!fi_hit) {
				assert_int_equal(r, 0);
				free(before);
				break;
			}
			if (r >= 0 || r == -GROVE_E_STUCK)
				fail_msg("%s k=%d: r=%d %s", which ? "remove" : "build", k, r,
					 fx->err.msg);
			assert_tree(fx, before);
			free(before);
			total++;
		}
	}
	assert_true(total >= 10);
}

/* ---- a folder removed whole: moved aside once, emptied there ---- */

static const char gone_spec[] = "d target/gone/sub\n"
				"l target/gone/a ../../stow/a/bin/x\n"
				"l target/gone/b ../../stow/a/bin/y\n"
				"l target/gone/sub/c ../../../stow/b/bin/z\n";

static struct grove_op gone_ops[] = {
	OP(UNLINK, "gone/a", "../../stow/a/bin/x", NULL, NULL),
	OP(UNLINK, "gone/b", "../../stow/a/bin/y", NULL, NULL),
	OP(UNLINK, "gone/sub/c", "../../../stow/b/bin/z", NULL, NULL),
	OP(RMDIR, "gone/sub", NULL, NULL, NULL),
	OP(RMDIR, "gone", NULL, NULL, NULL),
	OP(UNLINK, "old", "../stow/a/old", NULL, NULL),
};

/* The tree of initial_spec without the link 'old' (what gone_ops leaves). */
static char *
without_old(struct fx *fx)
{
	static const char line[] = "l target/old ../stow/a/old\n";
	char *s = dump(fx);
	char *at = strstr(s, line);

	assert_non_null(at);
	memmove(at, at + sizeof(line) - 1, strlen(at + sizeof(line) - 1) + 1);
	return s;
}

static void
test_exec_remove_whole_folder(void **state)
{
	struct fx *fx = *state;
	struct grove_plan plan = PLAN(gone_ops);
	struct progress_log log = { 0 };
	struct grove_exec_opts opts = { .progress = on_progress, .progress_ctx = &log };
	char *want = without_old(fx);

	tu_build(fx->dir, gone_spec);
	/* Count the renames (none fails): one for the folder, one for 'old', none per link inside.
	 */
	fi_arm(1000, EIO, false);
	fi_only = "renameat2";
	assert_int_equal(apply(fx, &plan, &opts), 0);
	fi_armed = false;
	assert_int_equal(fi_count, 2);
	assert_tree(fx, want);
	assert_int_equal(log.calls, plan.n_ops);
	assert_int_equal(log.total, plan.n_ops);
	free(want);
}

/* A link changed, a foreign entry inside, the folder swapped for a symlink to a look-alike
 * outside: each fails the removal, and everything is back where it was. */
static void
test_exec_remove_whole_folder_preconditions(void **state)
{
	struct fx *fx = *state;
	static const char *const changes[] = {
		"l target/gone/b ../../stow/b/bin/z\n",
		"f target/gone/sub/users precious\n",
		"l target/gone ../outside/gone\n",
	};
	static const char *const says[] = { "unlink 'gone/b'", "rmdir 'gone/sub'", "rmdir 'gone'" };

	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		struct grove_plan plan = PLAN(gone_ops);
		char *before;
		int r;

		fx_close(fx);
		fx_open(fx, initial_spec);
		if (i == 2) {
			/* The attacker's folder outside holds the same names and texts. */
			tu_build(fx->dir, "d outside/gone/sub\n"
					  "l outside/gone/a ../../stow/a/bin/x\n"
					  "l outside/gone/b ../../stow/a/bin/y\n"
					  "l outside/gone/sub/c ../../../stow/b/bin/z\n");
		} else {
			tu_build(fx->dir, gone_spec);
			if (i == 0) {
				char *p = tu_path(fx->dir, "target/gone/b");

				assert_int_equal(unlink(p), 0);
				free(p);
			}
		}
		tu_build(fx->dir, changes[i]);
		before = dump(fx);
		r = apply(fx, &plan, NULL);
		if (r >= 0 || r == -GROVE_E_STUCK)
			fail_msg("case %zu: r=%d %s", i, r, fx->err.msg);
		if (!strstr(fx->err.msg, says[i]))
			fail_msg("case %zu: '%s' does not say '%s'", i, fx->err.msg, says[i]);
		assert_tree(fx, before);
		free(before);
	}
}

/* For every k, the k-th mutating syscall of a whole folder's removal fails: as before. */
static void
test_exec_remove_whole_folder_faults(void **state)
{
	struct fx *fx = *state;
	static const int errs[] = { EIO, ENOSPC, EACCES };
	int total = 0;

	for (size_t e = 0; e < sizeof(errs) / sizeof(errs[0]); e++) {
		for (int k = 1; k < 200; k++) {
			struct grove_plan plan = PLAN(gone_ops);
			char *before;
			int r;

			fx_close(fx);
			fx_open(fx, initial_spec);
			tu_build(fx->dir, gone_spec);
			before = dump(fx);
			fi_arm(k, errs[e], false);
			r = apply(fx, &plan, NULL);
			fi_armed = false;
			if (!fi_hit) {
				assert_int_equal(r, 0);
				free(before);
				break;
			}
			if (r >= 0 || r == -GROVE_E_STUCK)
				fail_msg("k=%d errno=%d: r=%d %s", k, errs[e], r, fx->err.msg);
			assert_tree(fx, before);
			free(before);
			total++;
		}
	}
	/* rename, 3 unlinks, 2 rmdirs, the 'old' link's 2 calls, fsyncs: each failed once. */
	assert_true(total >= 3 * 9);
}

/* ---- a streamed plan's batches: blocks left open across them (exec_block.c) ---- */

#define N_FULL (sizeof(full_ops) / sizeof(full_ops[0]))

/* Runs ops in batches of k, the open blocks carried from one to the next as the streamed
 * executor carries them; returns the first failure (0 when every batch ran) and, when before is
 * given, the tree as it was before the last batch run. */
static int
apply_batches(struct fx *fx, struct grove_op *ops, size_t n, size_t k, char **before)
{
	struct grove_exec_blocks bs = { 0 };
	int r = 0;

	for (size_t first = 0; first < n && r == 0; first += k) {
		size_t len = n - first < k ? n - first : k;
		struct grove_plan p = plan_of(ops + first, len);
		struct grove_exec_opts o = { .blocks = &bs, .more_ops = first + len < n };

		if (before) {
			free(*before);
			*before = dump(fx);
		}
		r = apply(fx, &p, &o);
	}
	if (r == 0)
		assert_int_equal(bs.n, 0);
	grove_exec_blocks_release(&bs);
	return r;
}

/* Every batch size gives what the whole plan gives: the unfold of bin/ and the fold of lib/ run
 * across batches when they are longer than what is left of one. */
static void
test_exec_batches(void **state)
{
	struct fx *fx = *state;

	for (size_t k = 1; k <= N_FULL; k++) {
		fx_close(fx);
		fx_open(fx, initial_spec);
		assert_int_equal(apply_batches(fx, full_ops, N_FULL, k, NULL), 0);
		assert_tree(fx, expected_after);
	}
}

/* A block that reaches a batch's end is left open: after the first batch of two ops, bin is
 * still the old link and its new folder is being built aside; a block that ends inside its
 * batch, or in the last batch, is not. */
static void
test_exec_batch_leaves_block_open(void **state)
{
	struct fx *fx = *state;
	struct grove_exec_blocks bs = { 0 };
	struct grove_plan p = plan_of(full_ops, 2);
	struct grove_exec_opts o = { .blocks = &bs, .more_ops = true };
	char *have;

	assert_int_equal(apply(fx, &p, &o), 0);
	assert_int_equal(bs.n, 1);
	assert_int_equal(bs.v[0].kind, GROVE_OP_UNFOLD);
	assert_string_equal(bs.v[0].path, "bin");
	assert_string_equal(bs.v[0].old_text, "../stow/a/bin");
	have = dump(fx);
	assert_non_null(strstr(have, "l target/bin ../stow/a/bin\n"));
	assert_non_null(strstr(have, ".bin/x ../../stow/a/bin/x\n"));
	free(have);

	/* The rest of the block and the ops after it: the block is finished first. */
	p = plan_of(full_ops + 2, 4);
	o.more_ops = false;
	assert_int_equal(apply(fx, &p, &o), 0);
	assert_int_equal(bs.n, 0);
	have = dump(fx);
	assert_non_null(strstr(have, "d target/bin\n"));
	assert_non_null(strstr(have, "l target/bin/z ../../stow/b/bin/z\n"));
	assert_null(strstr(have, ".grove"));
	free(have);
	grove_exec_blocks_release(&bs);
}

/* Blocks nest: an unfold inside an unfold, both open across batches. */
static void
test_exec_batches_nested(void **state)
{
	struct fx *fx = *state;
	struct grove_op ops[] = {
		OP(UNFOLD, "bin", "../stow/a/bin", NULL, NULL),
		OP(LINK, "bin/sub", NULL, "../../stow/b/bin/sub", NULL),
		OP(UNFOLD, "bin/sub", "../../stow/b/bin/sub", NULL, NULL),
		OP(LINK, "bin/sub/q", NULL, "../../../stow/b/bin/sub/q", NULL),
		OP(LINK, "bin/x", NULL, "../../stow/a/bin/x", NULL),
		OP(LINK, "bin/y", NULL, "../../stow/a/bin/y", NULL),
		OP(UNLINK, "old", "../stow/a/old", NULL, NULL),
	};
	size_t n = sizeof(ops) / sizeof(ops[0]);

	for (size_t k = 1; k <= n; k++) {
		char *have;

		fx_close(fx);
		fx_open(fx, initial_spec);
		assert_int_equal(apply_batches(fx, ops, n, k, NULL), 0);
		have = dump(fx);
		assert_non_null(strstr(have, "d target/bin\n"
					     "d target/bin/sub\n"
					     "l target/bin/sub/q ../../../stow/b/bin/sub/q\n"
					     "l target/bin/x ../../stow/a/bin/x\n"
					     "l target/bin/y ../../stow/a/bin/y\n"));
		assert_null(strstr(have, "target/old"));
		assert_null(strstr(have, ".grove"));
		free(have);
	}
}

/* A failure in any batch leaves the tree as that batch found it (its own changes undone, those
 * of the batches before, open blocks included, left for recovery), never STUCK. */
static void
test_exec_batches_faults(void **state)
{
	struct fx *fx = *state;
	int total = 0;

	for (int kk = 1; kk < 1000; kk++) {
		char *before = NULL;
		int r;

		fx_close(fx);
		fx_open(fx, initial_spec);
		fi_arm(kk, EIO, false);
		r = apply_batches(fx, full_ops, N_FULL, 2, &before);
		fi_armed = false;
		if (!fi_hit) {
			assert_int_equal(r, 0);
			assert_tree(fx, expected_after);
			free(before);
			break;
		}
		if (r >= 0 || r == -GROVE_E_STUCK)
			fail_msg("k=%d: r=%d %s", kk, r, fx->err.msg);
		assert_tree(fx, before);
		free(before);
		total++;
	}
	assert_true(total > 20);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_exec_full_plan),
		T(test_exec_empty_plan),
		T(test_exec_first_op_precondition),
		T(test_exec_middle_precondition),
		T(test_exec_unlink_refuses_file),
		T(test_exec_unfold_wrong_link),
		T(test_exec_fold_foreign_entry),
		T(test_exec_unfold_nested_fails_inside),
		T(test_exec_symlinked_parent_refused),
		T(test_exec_relink_and_rmdir_preconditions),
		T(test_exec_adopt_new_file),
		T(test_exec_malformed_plan),
		T(test_exec_fault_eio),
		T(test_exec_fault_enospc),
		T(test_exec_fault_eacces),
		T(test_exec_fault_stuck),
		T(test_exec_fault_first_call),
		T(test_exec_exchange_unsupported),
		T(test_exec_noreplace_unsupported),
		T(test_exec_own_entries),
		T(test_exec_own_entries_preconditions),
		T(test_exec_own_entries_faults),
		T(test_exec_remove_whole_folder),
		T(test_exec_remove_whole_folder_preconditions),
		T(test_exec_remove_whole_folder_faults),
		T(test_exec_batches),
		T(test_exec_batch_leaves_block_open),
		T(test_exec_batches_nested),
		T(test_exec_batches_faults),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
