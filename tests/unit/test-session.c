/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The transaction driver's states (include/grove/session.h's diagram): every transition of a
 * whole and a streamed run, driven with a fault at each of the fs layer's mutating calls, a
 * failing final sync, a COMMIT the log refuses, and a crash recovered by the next session. After
 * each, the struct's state, the log's row and the target agree. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <sqlite3.h>

#include "fault.h"
#include "testutil.h"
#include "grove/journal.h"
#include "grove/plan.h"
#include "grove/session.h"

/* ---- a COMMIT the log refuses (linked with -Wl,--wrap=sqlite3_step) ---- */

static bool refuse_commit; /* the next COMMIT is rolled back and reported as an I/O error */

int __real_sqlite3_step(sqlite3_stmt *s);
int __wrap_sqlite3_step(sqlite3_stmt *s);

int
__wrap_sqlite3_step(sqlite3_stmt *s)
{
	const char *sql = sqlite3_sql(s);

	if (!refuse_commit || !sql || strcmp(sql, "COMMIT") != 0)
		return __real_sqlite3_step(s);
	refuse_commit = false;
	assert_int_equal(sqlite3_exec(sqlite3_db_handle(s), "ROLLBACK", NULL, NULL, NULL),
			 SQLITE_OK);
	return SQLITE_IOERR;
}

/* ---- fixture: a package of three files, an empty target, a state dir ---- */

struct fx {
	char *dir, *state, *target;
	struct grove_root troot;
	struct grove_session s;
	struct grove_error err;
	char *before; /* the tree before any transaction */
};

static const char initial[] = "f stow/pkg/a\nf stow/pkg/b\nf stow/pkg/c\nd target\nd state\n";
static const char *const names[] = { "a", "b", "c" };

static void
fx_open_session(struct fx *fx)
{
	struct grove_session_opts so = { .state_opt = fx->state };

	assert_int_equal(grove_session_open(&fx->s, &fx->troot, &so, &fx->err), 0);
}

static int
setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	fx->dir = tu_mkdtemp();
	tu_build(fx->dir, initial);
	fx->state = tu_path(fx->dir, "state");
	fx->target = tu_path(fx->dir, "target");
	assert_int_equal(grove_root_open(&fx->troot, fx->target, &fx->err), 0);
	fx_open_session(fx);
	fx->before = tu_dump(fx->target);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *fx = *state;

	fi_armed = false;
	refuse_commit = false;
	unsetenv("GROVE_PLAN_BUDGET");
	grove_session_close(&fx->s);
	grove_root_release(&fx->troot);
	tu_rmtree(fx->dir);
	free(fx->dir);
	free(fx->state);
	free(fx->target);
	free(fx->before);
	free(fx);
	return 0;
}

/* The plan that links the package's three files into the target. */
static void
add_links(struct grove_plan *plan)
{
	for (size_t i = 0; i < 3; i++) {
		char text[64];

		snprintf(text, sizeof(text), "../stow/pkg/%s", names[i]);
		assert_int_equal(
			grove_plan_add_op(plan, GROVE_OP_LINK, names[i], NULL, text, NULL, "pkg"),
			0);
	}
}

static enum grove_txn_state
logged_state(struct fx *fx, int64_t id)
{
	struct grove_txn row = { 0 };
	struct grove_error err = { 0 };
	enum grove_txn_state st;

	assert_int_equal(grove_journal_get(fx->s.journal, id, &row, &err), 0);
	st = row.state;
	grove_txn_release(&row);
	return st;
}

static void
assert_target(struct fx *fx, bool linked)
{
	char *have = tu_dump(fx->target);

	if (!linked) {
		assert_string_equal(have, fx->before);
	} else {
		assert_non_null(strstr(have, "l a ../stow/pkg/a\n"));
		assert_non_null(strstr(have, "l b ../stow/pkg/b\n"));
		assert_non_null(strstr(have, "l c ../stow/pkg/c\n"));
	}
	free(have);
}

static void
begin(struct fx *fx, struct grove_session_txn *t, const struct grove_plan *plan)
{
	struct grove_session_txn_opts o = { .command = "test-session" };

	grove_error_clear(&fx->err);
	assert_int_equal(grove_session_begin(&fx->s, t, plan, &o, &fx->err), 0);
	assert_int_equal(t->state, GROVE_SESSION_TXN_OPEN);
	assert_true(t->id > 0);
	assert_int_equal(logged_state(fx, t->id), GROVE_TXN_INTENT);
}

/* ---- the whole run ---- */

/* IDLE -> OPEN -> OPEN (exec) -> COMMITTED; then commit and exec are refused and abort does
 * nothing: the log and the target stay committed. */
static void
test_commit_then_nothing(void **state)
{
	struct fx *fx = *state;
	struct grove_session_txn t;
	struct grove_plan plan;

	grove_plan_init(&plan);
	add_links(&plan);
	begin(fx, &t, &plan);
	assert_int_equal(grove_session_exec(&t, &plan, &fx->troot, NULL, &fx->err), 0);
	assert_int_equal(t.state, GROVE_SESSION_TXN_OPEN);
	assert_int_equal(grove_session_commit(&t, &fx->err), 0);
	assert_int_equal(t.state, GROVE_SESSION_TXN_COMMITTED);
	assert_int_equal(logged_state(fx, t.id), GROVE_TXN_COMMITTED);
	assert_target(fx, true);

	/* Abort after the commit: a no-op that returns what it was given. */
	grove_error_set(&fx->err, -EIO, "a later step failed");
	assert_int_equal(grove_session_abort(&t, -EIO, &fx->err), -EIO);
	assert_int_equal(t.state, GROVE_SESSION_TXN_COMMITTED);
	assert_int_equal(logged_state(fx, t.id), GROVE_TXN_COMMITTED);
	assert_target(fx, true);

	/* A second commit, and a change after the commit, are a caller's bug: refused. */
	assert_int_equal(grove_session_commit(&t, &fx->err), -GROVE_E_INTERNAL);
	assert_non_null(strstr(fx->err.msg, "is committed where an open one is needed"));
	assert_int_equal(grove_session_exec(&t, &plan, &fx->troot, NULL, &fx->err),
			 -GROVE_E_INTERNAL);
	assert_int_equal(logged_state(fx, t.id), GROVE_TXN_COMMITTED);
	assert_target(fx, true);
	grove_plan_release(&plan);
}

/* A transaction never begun (a zeroed struct): exec, exec_logged and commit are refused and
 * change nothing; abort returns r and logs nothing. */
static void
test_idle_refuses(void **state)
{
	struct fx *fx = *state;
	struct grove_session_txn t;
	struct grove_plan plan;
	int64_t last = 0;

	memset(&t, 0, sizeof(t));
	t.session = &fx->s;
	grove_plan_init(&plan);
	add_links(&plan);
	assert_int_equal(grove_session_exec(&t, &plan, &fx->troot, NULL, &fx->err),
			 -GROVE_E_INTERNAL);
	assert_non_null(strstr(fx->err.msg, "is idle where an open one is needed"));
	assert_int_equal(grove_session_exec_logged(&t, &fx->troot, NULL, &fx->err),
			 -GROVE_E_INTERNAL);
	assert_int_equal(grove_session_commit(&t, &fx->err), -GROVE_E_INTERNAL);
	assert_int_equal(grove_session_abort(&t, -EIO, &fx->err), -EIO);
	assert_int_equal(t.state, GROVE_SESSION_TXN_IDLE);
	assert_int_equal(grove_journal_unfinished(fx->s.journal, fx->s.target_id, &last, &fx->err),
			 0);
	assert_int_equal(last, 0);
	assert_target(fx, false);
	grove_plan_release(&plan);
}

/* OPEN -> ROLLED_BACK by abort: the k-th mutating call of the change fails, for every k, with
 * EIO; the executor undid its ops, the log says ROLLED_BACK with the reason, the target is as
 * before. The first k the change gets through, it commits. */
static void
test_exec_fails_at_each_call(void **state)
{
	struct fx *fx = *state;
	bool hit = true;

	for (int k = 1; hit; k++) {
		struct grove_session_txn t;
		struct grove_plan plan;
		int r;

		grove_plan_init(&plan);
		add_links(&plan);
		begin(fx, &t, &plan);
		fi_arm(k, EIO, false);
		fi_never = "fsync";
		r = grove_session_exec(&t, &plan, &fx->troot, NULL, &fx->err);
		hit = fi_hit;
		fi_armed = false;
		fi_never = NULL;
		if (!hit) {
			assert_int_equal(r, 0);
			assert_int_equal(grove_session_commit(&t, &fx->err), 0);
			assert_int_equal(t.state, GROVE_SESSION_TXN_COMMITTED);
			assert_target(fx, true);
			assert_true(k > 3);
		} else {
			assert_true(r < 0);
			assert_int_equal(grove_session_abort(&t, r, &fx->err), r);
			assert_int_equal(t.state, GROVE_SESSION_TXN_ROLLED_BACK);
			assert_int_equal(logged_state(fx, t.id), GROVE_TXN_ROLLED_BACK);
			assert_target(fx, false);
			/* Ended: a second abort changes nothing. */
			assert_int_equal(grove_session_abort(&t, r, &fx->err), r);
			assert_int_equal(logged_state(fx, t.id), GROVE_TXN_ROLLED_BACK);
		}
		grove_plan_release(&plan);
	}
}

/* begin fails when the state dir's sync after the intent fails: IDLE, nothing changed, the
 * intent marked ROLLED_BACK; abort is a no-op. */
static void
test_begin_sync_fails(void **state)
{
	struct fx *fx = *state;
	struct grove_session_txn_opts o = { .command = "test-session" };
	struct grove_session_txn t;
	struct grove_plan plan;
	struct grove_txn *rows = NULL;
	size_t n = 0;

	grove_plan_init(&plan);
	add_links(&plan);
	fi_arm(1, EIO, false);
	fi_only = "fsync";
	assert_int_equal(grove_session_begin(&fx->s, &t, &plan, &o, &fx->err), -EIO);
	assert_true(fi_hit);
	fi_armed = false;
	assert_int_equal(t.state, GROVE_SESSION_TXN_IDLE);
	assert_int_equal(grove_session_exec(&t, &plan, &fx->troot, NULL, &fx->err),
			 -GROVE_E_INTERNAL);
	assert_int_equal(grove_session_abort(&t, -EIO, &fx->err), -EIO);
	assert_target(fx, false);
	/* The intent written before the sync failed is the log's newest row, rolled back. */
	assert_int_equal(grove_journal_list(fx->s.journal, fx->s.target_id, 1, &rows, &n, &fx->err),
			 0);
	assert_int_equal(n, 1);
	assert_true(rows[0].id > 0);
	assert_int_equal(rows[0].state, GROVE_TXN_ROLLED_BACK);
	grove_txns_free(rows, n);
	grove_plan_release(&plan);
}

/* OPEN -> COMMITTED when only the final sync fails: -GROVE_E_NOT_DURABLE, the change made and
 * the log saying committed. */
static void
test_commit_sync_fails(void **state)
{
	struct fx *fx = *state;
	struct grove_session_txn t;
	struct grove_plan plan;

	grove_plan_init(&plan);
	add_links(&plan);
	begin(fx, &t, &plan);
	assert_int_equal(grove_session_exec(&t, &plan, &fx->troot, NULL, &fx->err), 0);
	fi_arm(1, EIO, false);
	fi_only = "fsync";
	assert_int_equal(grove_session_commit(&t, &fx->err), -GROVE_E_NOT_DURABLE);
	assert_true(fi_hit);
	fi_armed = false;
	assert_int_equal(t.state, GROVE_SESSION_TXN_COMMITTED);
	assert_int_equal(logged_state(fx, t.id), GROVE_TXN_COMMITTED);
	assert_target(fx, true);
	assert_int_equal(grove_session_abort(&t, -EIO, &fx->err), -EIO);
	assert_int_equal(logged_state(fx, t.id), GROVE_TXN_COMMITTED);
	grove_plan_release(&plan);
}

/* OPEN -> ROLLED_BACK by commit when the log refuses the COMMIT: the change is undone (the
 * log is what says whether it happened) and -GROVE_E_PARTIAL returned. */
static void
test_commit_refused(void **state)
{
	struct fx *fx = *state;
	struct grove_session_txn t;
	struct grove_plan plan;

	grove_plan_init(&plan);
	add_links(&plan);
	begin(fx, &t, &plan);
	assert_int_equal(grove_session_exec(&t, &plan, &fx->troot, NULL, &fx->err), 0);
	assert_target(fx, true);
	refuse_commit = true;
	assert_int_equal(grove_session_commit(&t, &fx->err), -GROVE_E_PARTIAL);
	assert_false(refuse_commit);
	assert_non_null(strstr(fx->err.msg, "every change was undone"));
	assert_int_equal(t.state, GROVE_SESSION_TXN_ROLLED_BACK);
	assert_int_equal(logged_state(fx, t.id), GROVE_TXN_ROLLED_BACK);
	assert_target(fx, false);
	grove_plan_release(&plan);
}

/* A crash in OPEN (the process gone after some changes): the log says INTENT, and the next
 * session's recovery puts the target back and marks it ROLLED_BACK. */
static void
test_crash_recovered(void **state)
{
	struct fx *fx = *state;
	struct grove_session_txn t;
	struct grove_plan plan;
	int64_t recovered = 0;

	grove_plan_init(&plan);
	add_links(&plan);
	begin(fx, &t, &plan);
	assert_int_equal(grove_session_exec(&t, &plan, &fx->troot, NULL, &fx->err), 0);
	/* No commit and no abort: the session ends as a killed run's would. */
	grove_session_close(&fx->s);
	fx_open_session(fx);
	assert_int_equal(logged_state(fx, t.id), GROVE_TXN_INTENT);
	assert_int_equal(grove_session_recover(&fx->s, NULL, false, &recovered, &fx->err), 0);
	assert_int_equal(recovered, t.id);
	assert_int_equal(logged_state(fx, t.id), GROVE_TXN_ROLLED_BACK);
	assert_target(fx, false);
	grove_plan_release(&plan);
}

/* ---- a rollback hook of the owner's (grove_session_set_rollback: a profile's) ---- */

enum hook_does { HOOK_UNDOES, HOOK_FORWARD, HOOK_FAILS };

struct hook {
	struct fx *fx;
	enum hook_does does;
	int calls;
	int64_t txn;
};

static int
hook_rollback(void *ctx, int64_t txn, bool *ret_forward, struct grove_error *err)
{
	struct hook *h = ctx;

	h->calls++;
	h->txn = txn;
	*ret_forward = false;
	switch (h->does) {
	case HOOK_UNDOES:
		for (size_t i = 0; i < 3; i++)
			if (unlinkat(h->fx->troot.fd, names[i], 0) < 0 && errno != ENOENT)
				return grove_error_set(err, -errno, "unlink '%s'", names[i]);
		return 0;
	case HOOK_FORWARD:
		*ret_forward = true; /* the changes are all made: finish forward */
		return 0;
	case HOOK_FAILS:
		break;
	}
	return grove_error_set(err, -EIO, "the hook could not undo");
}

/* OPEN -> ROLLED_BACK, COMMITTED or STUCK by abort with the owner's rollback: the hook is what
 * puts back (called once, with the transaction), and its answer is the row's final state. */
static void
test_abort_with_hook(void **state)
{
	struct fx *fx = *state;
	static const struct {
		enum hook_does does;
		int ret; /* abort's, given -EIO */
		enum grove_session_txn_state st;
		enum grove_txn_state row;
		bool linked;
	} cases[] = {
		{ HOOK_UNDOES, -EIO, GROVE_SESSION_TXN_ROLLED_BACK, GROVE_TXN_ROLLED_BACK, false },
		{ HOOK_FORWARD, 0, GROVE_SESSION_TXN_COMMITTED, GROVE_TXN_COMMITTED, true },
		{ HOOK_FAILS, -GROVE_E_STUCK, GROVE_SESSION_TXN_STUCK, GROVE_TXN_STUCK, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hook h = { .fx = fx, .does = cases[i].does };
		struct grove_session_txn t;
		struct grove_plan plan;

		for (size_t k = 0; k < 3; k++)
			(void)unlinkat(fx->troot.fd, names[k], 0);
		grove_session_set_rollback(&fx->s, hook_rollback, &h);
		grove_plan_init(&plan);
		add_links(&plan);
		begin(fx, &t, &plan);
		assert_int_equal(grove_session_exec(&t, &plan, &fx->troot, NULL, &fx->err), 0);
		/* The owner's own step after the links failed. */
		grove_error_set(&fx->err, -EIO, "the owner's step failed");
		assert_int_equal(grove_session_abort(&t, -EIO, &fx->err), cases[i].ret);
		assert_int_equal(h.calls, 1);
		assert_int_equal(h.txn, t.id);
		assert_int_equal(t.state, cases[i].st);
		assert_int_equal(logged_state(fx, t.id), cases[i].row);
		assert_target(fx, cases[i].linked);
		/* Ended: abort again calls nothing and changes nothing. */
		assert_int_equal(grove_session_abort(&t, -EIO, &fx->err), -EIO);
		assert_int_equal(h.calls, 1);
		assert_int_equal(logged_state(fx, t.id), cases[i].row);
		grove_session_set_rollback(&fx->s, NULL, NULL);
		if (cases[i].row == GROVE_TXN_STUCK) {
			/* A STUCK transaction blocks the target until it is resolved: force marks
			 * it rolled back without touching the target. */
			assert_int_equal(grove_session_recover(&fx->s, NULL, true, NULL, &fx->err),
					 0);
			assert_int_equal(logged_state(fx, t.id), GROVE_TXN_ROLLED_BACK);
		}
		grove_plan_release(&plan);
	}
}

/* OPEN -> STUCK by commit: the log refuses the COMMIT and the owner's rollback cannot undo. */
static void
test_commit_refused_undo_fails(void **state)
{
	struct fx *fx = *state;
	struct hook h = { .fx = fx, .does = HOOK_FAILS };
	struct grove_session_txn t;
	struct grove_plan plan;

	grove_session_set_rollback(&fx->s, hook_rollback, &h);
	grove_plan_init(&plan);
	add_links(&plan);
	begin(fx, &t, &plan);
	assert_int_equal(grove_session_exec(&t, &plan, &fx->troot, NULL, &fx->err), 0);
	refuse_commit = true;
	assert_int_equal(grove_session_commit(&t, &fx->err), -GROVE_E_STUCK);
	assert_int_equal(h.calls, 1);
	assert_int_equal(t.state, GROVE_SESSION_TXN_STUCK);
	assert_int_equal(logged_state(fx, t.id), GROVE_TXN_STUCK);
	assert_target(fx, true);
	grove_plan_release(&plan);
}

/* ---- what a transaction carries (grove_session_take_pkgs, grove_session_add_alt) ---- */

/* The package rows and group changes given before begin are logged with the intent and
 * consumed by it: the next transaction carries none unless given again. */
static void
test_carried_inputs(void **state)
{
	struct fx *fx = *state;
	struct grove_journal_pkg *pk = calloc(1, sizeof(*pk));
	struct grove_journal_pkg *got = NULL;
	struct grove_session_txn t;
	struct grove_plan plan;
	size_t n = 0;

	assert_non_null(pk);
	pk->stow_dir = tu_path(fx->dir, "stow");
	pk->package = strdup("pkg");
	pk->layout.stowed = true;
	pk->layout.no_folding = true;
	grove_session_take_pkgs(&fx->s, pk, 1);
	grove_plan_init(&plan);
	add_links(&plan);
	begin(fx, &t, &plan);
	assert_int_equal(grove_session_exec(&t, &plan, &fx->troot, NULL, &fx->err), 0);
	assert_int_equal(grove_session_commit(&t, &fx->err), 0);
	assert_int_equal(grove_journal_txn_pkgs(fx->s.journal, t.id, &got, &n, &fx->err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(got[0].package, "pkg");
	assert_true(got[0].layout.no_folding);
	grove_journal_pkgs_free(got, n);
	grove_plan_release(&plan);

	/* Consumed: a second transaction logs no package. */
	grove_plan_init(&plan);
	assert_int_equal(
		grove_plan_add_op(&plan, GROVE_OP_UNLINK, "a", "../stow/pkg/a", NULL, NULL, "pkg"),
		0);
	begin(fx, &t, &plan);
	assert_int_equal(grove_session_exec(&t, &plan, &fx->troot, NULL, &fx->err), 0);
	assert_int_equal(grove_session_commit(&t, &fx->err), 0);
	got = NULL;
	assert_int_equal(grove_journal_txn_pkgs(fx->s.journal, t.id, &got, &n, &fx->err), 0);
	assert_int_equal(n, 0);
	grove_journal_pkgs_free(got, n);
	grove_plan_release(&plan);

	/* Taken and then cleared: nothing is logged, nothing leaks (ASan). */
	assert_int_equal(grove_session_add_alt(&fx->s, 1, "editor", NULL, "auto\n", &fx->err), 0);
	grove_session_take_alt(&fx->s, NULL, 0);
}

/* ---- the streamed run ---- */

/* With a budget of one op: stream_end leaves IDLE when the plan has a conflict (nothing in the
 * log), and OPEN (streamed) when it is whole; exec_logged failing at each mutating call ends
 * ROLLED_BACK by abort (the batches done before it undone from the log), until it commits. */
static void
test_streamed(void **state)
{
	struct fx *fx = *state;
	struct grove_session_txn_opts o = { .command = "test-session streamed" };
	bool hit = true;

	setenv("GROVE_PLAN_BUDGET", "1", 1);
	{
		struct grove_session_stream st;
		struct grove_session_txn t;
		struct grove_plan plan;
		int64_t last = 0;

		grove_plan_init(&plan);
		grove_session_stream_arm(&fx->s, &st, &plan, &o, NULL, 0);
		add_links(&plan);
		plan.n_conflicts = 1; /* a planner's conflict: the logged batches go */
		assert_int_equal(grove_session_stream_end(&st, &t, &plan, 0, &fx->err), 0);
		assert_int_equal(t.state, GROVE_SESSION_TXN_IDLE);
		assert_int_equal(t.id, 0);
		assert_int_equal(
			grove_journal_unfinished(fx->s.journal, fx->s.target_id, &last, &fx->err),
			0);
		assert_int_equal(last, 0);
		plan.n_conflicts = 0;
		grove_plan_release(&plan);
	}
	for (int k = 1; hit; k++) {
		struct grove_session_stream st;
		struct grove_session_txn t;
		struct grove_plan plan;
		int r;

		grove_plan_init(&plan);
		grove_session_stream_arm(&fx->s, &st, &plan, &o, NULL, 0);
		add_links(&plan);
		assert_int_equal(grove_session_stream_end(&st, &t, &plan, 0, &fx->err), 0);
		assert_int_equal(t.state, GROVE_SESSION_TXN_OPEN);
		assert_true(t.streamed);
		assert_int_equal(t.n_ops, 3);
		assert_int_equal(plan.n_ops, 0);
		assert_int_equal(logged_state(fx, t.id), GROVE_TXN_INTENT);
		fi_arm(k, EIO, false);
		fi_never = "fsync";
		r = grove_session_exec_logged(&t, &fx->troot, NULL, &fx->err);
		hit = fi_hit;
		fi_armed = false;
		fi_never = NULL;
		if (!hit) {
			assert_int_equal(r, 0);
			assert_int_equal(grove_session_commit(&t, &fx->err), 0);
			assert_int_equal(t.state, GROVE_SESSION_TXN_COMMITTED);
			assert_int_equal(logged_state(fx, t.id), GROVE_TXN_COMMITTED);
			assert_target(fx, true);
			/* A cleanup path's abort after the commit: the batches done (t.n_done)
			 * are not rolled back. */
			assert_true(t.n_done > 0);
			assert_int_equal(grove_session_abort(&t, -EIO, &fx->err), -EIO);
			assert_int_equal(logged_state(fx, t.id), GROVE_TXN_COMMITTED);
			assert_target(fx, true);
		} else {
			assert_true(r < 0);
			assert_int_equal(grove_session_abort(&t, r, &fx->err), r);
			assert_int_equal(t.state, GROVE_SESSION_TXN_ROLLED_BACK);
			assert_int_equal(logged_state(fx, t.id), GROVE_TXN_ROLLED_BACK);
			assert_target(fx, false);
		}
		grove_plan_release(&plan);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_commit_then_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_fails_at_each_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_begin_sync_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_sync_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_recovered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_streamed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_with_hook, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_refused_undo_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_carried_inputs, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
