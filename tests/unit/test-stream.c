/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Streamed plans: a stow over the plan budget logged while planned and run from the log. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "grove/journal.h"
#include "grove/session.h"
#include "grove/stow.h"

struct fx {
	char *root, *state, *dir, *target;
};

/* Package "other" is stowed (bin/ folded into it) with the default budget; "pkg" shares bin/,
 * so stowing it unfolds bin/ (a block of 4 ops) and links lib/ and share/. */
static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->root = tu_mkdtemp();
	tu_build(f->root, "f stow/other/bin/c\n"
			  "f stow/pkg/bin/a\nf stow/pkg/bin/b\nf stow/pkg/lib/l1\n"
			  "f stow/pkg/share/d1/f\nd target\nd state\n");
	f->state = tu_path(f->root, "state");
	f->dir = tu_path(f->root, "stow");
	f->target = tu_path(f->root, "target");
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	unsetenv("GROVE_PLAN_BUDGET");
	tu_rmtree(f->root);
	free(f->root);
	free(f->state);
	free(f->dir);
	free(f->target);
	free(f);
	return 0;
}

/* Prepares stowing (or unstowing) pkg into the fixture's target with the log. */
static void
prepare(const struct fx *f, bool unstow, const char *pkg, struct grove_stow_run *run)
{
	struct grove_stow_request req;
	struct grove_session_opts so = { .state_opt = f->state };
	struct grove_error err = { 0 };

	grove_stow_request_init(&req);
	req.dir = strdup(f->dir);
	req.target = strdup(f->target);
	assert_int_equal(grove_stow_request_add(&req, unstow, pkg), 0);
	assert_int_equal(grove_stow_prepare(&req, &so, run, &err), 0);
	assert_int_equal(run->plan.n_conflicts, 0);
	grove_stow_request_release(&req);
}

static void
run_ok(const struct fx *f, bool unstow, const char *pkg)
{
	struct grove_stow_run run;
	struct grove_error err = { 0 };

	prepare(f, unstow, pkg, &run);
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
}

/* The log's transactions of the target, newest first, as "STATE N_OPS" words. */
static void
log_states(const struct fx *f, char *buf, size_t size)
{
	struct grove_root target = { .fd = -1 };
	struct grove_session_opts so = { .state_opt = f->state,
					 .no_lock = true,
					 .read_only = true };
	struct grove_session s;
	struct grove_error err = { 0 };
	struct grove_txn *txns = NULL;
	size_t n = 0, len = 0;

	static const char *const names[] = { "intent", "committed", "rolled_back", "stuck" };

	assert_int_equal(grove_root_open(&target, f->target, &err), 0);
	assert_int_equal(grove_session_open(&s, &target, &so, &err), 0);
	assert_int_equal(grove_journal_list(s.journal, s.target_id, 0, &txns, &n, &err), 0);
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s %zu", i ? ", " : "",
					names[txns[i].state], txns[i].n_ops);
	grove_txns_free(txns, n);
	grove_session_close(&s);
	grove_root_release(&target);
}

/* Over the budget: nothing of the plan is left in memory after prepare, the transaction runs
 * from the log (an unfold block longer than a batch read whole), and the target and the log are
 * as without streaming; the unstow that folds bin/ back streams too. */
static void
test_stream_stow_unstow(void **state)
{
	struct fx *f = *state;
	struct grove_stow_run run;
	struct grove_error err = { 0 };
	char *dump, logs[256];

	run_ok(f, false, "other");
	setenv("GROVE_PLAN_BUDGET", "2", 1);
	prepare(f, false, "pkg", &run);
	assert_int_equal(run.plan.n_ops, 0);
	assert_int_equal(run.plan.n_logged, 6); /* unfold bin, 3 links in it, lib, share */
	assert_true(run.stream.id > 0);
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	assert_int_equal(run.txn, 2);
	grove_stow_run_release(&run);
	dump = tu_dump(f->target);
	assert_string_equal(dump, "d bin\n"
				  "l bin/a ../../stow/pkg/bin/a\n"
				  "l bin/b ../../stow/pkg/bin/b\n"
				  "l bin/c ../../stow/other/bin/c\n"
				  "l lib ../stow/pkg/lib\n"
				  "l share ../stow/pkg/share\n");
	free(dump);
	log_states(f, logs, sizeof(logs));
	assert_string_equal(logs, "committed 6, committed 1");

	prepare(f, true, "pkg", &run);
	assert_int_equal(run.plan.n_ops, 0);
	assert_int_equal(run.plan.n_logged, 6); /* fold bin, 3 unlinks in it, lib, share */
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
	dump = tu_dump(f->target);
	assert_string_equal(dump, "l bin ../stow/other/bin\n");
	free(dump);
	log_states(f, logs, sizeof(logs));
	assert_string_equal(logs, "committed 6, committed 6, committed 1");

	/* Within the budget: today's path, the plan whole in memory. */
	setenv("GROVE_PLAN_BUDGET", "6", 1);
	prepare(f, false, "pkg", &run);
	assert_int_equal(run.plan.n_ops, 6);
	assert_int_equal(run.plan.n_logged, 0);
	assert_int_equal(run.stream.id, 0);
	grove_stow_run_release(&run);
}

/* A change that fails in the last batch, after earlier batches made theirs: the executor undoes
 * its batch, the abort rolls the rest back from the log, the target is exactly as before and
 * the transaction rolled back. */
static void
test_stream_fails_late(void **state)
{
	struct fx *f = *state;
	struct grove_stow_run run;
	struct grove_error err = { 0 };
	char *before, *after, logs[256], *share;
	int r;

	run_ok(f, false, "other");
	setenv("GROVE_PLAN_BUDGET", "2", 1);
	prepare(f, false, "pkg", &run);
	assert_int_equal(run.plan.n_logged, 6);
	/* Between the plan and its execution, someone makes share/ (the last op's path). */
	share = tu_path(f->target, "share");
	tu_build(f->target, "f share mine\n");
	before = tu_dump(f->target);
	r = grove_stow_execute(&run, &err);
	assert_int_equal(r, -GROVE_E_PARTIAL);
	assert_non_null(strstr(err.msg, "share"));
	assert_non_null(strstr(err.msg, "every change was undone"));
	grove_stow_run_release(&run);
	after = tu_dump(f->target);
	assert_string_equal(after, before);
	assert_non_null(strstr(after, "l bin ../stow/other/bin\n"));
	log_states(f, logs, sizeof(logs));
	assert_string_equal(logs, "rolled_back 6, committed 1");
	free(before);
	free(after);
	free(share);
}

/* A streamed transaction prepared and never executed ends rolled back, nothing changed. */
static void
test_stream_not_executed(void **state)
{
	struct fx *f = *state;
	struct grove_stow_run run;
	char *before, *after, logs[256];

	run_ok(f, false, "other");
	before = tu_dump(f->target);
	setenv("GROVE_PLAN_BUDGET", "1", 1);
	prepare(f, false, "pkg", &run);
	assert_int_equal(run.plan.n_logged, 6);
	grove_stow_run_release(&run);
	after = tu_dump(f->target);
	assert_string_equal(after, before);
	log_states(f, logs, sizeof(logs));
	assert_string_equal(logs, "rolled_back 6, committed 1");
	free(before);
	free(after);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_stream_stow_unstow),
		T(test_stream_fails_late),
		T(test_stream_not_executed),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
