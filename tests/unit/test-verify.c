/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove_verify: the log of a stowed target against what is on disk, as findings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "grove/session.h"
#include "grove/stow.h"
#include "grove/verify.h"

struct fx {
	char *root, *state, *dir, *target;
};

/* Two packages sharing bin/, stowed with a log: grove owns the folder bin and three links. */
static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct grove_stow_request req;
	struct grove_stow_run run;
	struct grove_session_opts so = { 0 };
	struct grove_error err = { 0 };

	f->root = tu_mkdtemp();
	tu_build(f->root, "f stow/pkg/bin/a\nf stow/pkg/bin/b\nf stow/other/bin/c\nd target\n"
			  "d state\n");
	f->state = tu_path(f->root, "state");
	f->dir = tu_path(f->root, "stow");
	f->target = tu_path(f->root, "target");
	so.state_opt = f->state;
	grove_stow_request_init(&req);
	req.dir = strdup(f->dir);
	req.target = strdup(f->target);
	assert_int_equal(grove_stow_request_add(&req, false, "pkg"), 0);
	assert_int_equal(grove_stow_request_add(&req, false, "other"), 0);
	assert_int_equal(grove_stow_prepare(&req, &so, &run, &err), 0);
	assert_int_equal(run.plan.n_conflicts, 0);
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
	grove_stow_request_release(&req);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	tu_rmtree(f->root);
	free(f->root);
	free(f->state);
	free(f->dir);
	free(f->target);
	free(f);
	return 0;
}

/* Runs grove_verify on the fixture's target through a read-only session. */
static void
verify(const struct fx *f, struct grove_verify_report *rep)
{
	struct grove_root target = { .fd = -1 };
	struct grove_session_opts so = { .state_opt = f->state,
					 .no_lock = true,
					 .read_only = true };
	struct grove_session s;
	struct grove_error err = { 0 };

	assert_int_equal(grove_root_open(&target, f->target, &err), 0);
	assert_int_equal(grove_session_open(&s, &target, &so, &err), 0);
	assert_int_equal(grove_verify(&s, rep, &err), 0);
	grove_session_close(&s);
	grove_root_release(&target);
}

static void
test_verify_clean(void **state)
{
	struct grove_verify_report rep;

	verify(*state, &rep);
	assert_int_equal(rep.checked, 4);
	assert_int_equal(rep.n_findings, 0);
	assert_int_equal(rep.missing + rep.changed + rep.broken + rep.foreign, 0);
	grove_verify_report_release(&rep);
}

static void
test_verify_findings(void **state)
{
	const struct fx *f = *state;
	struct grove_verify_report rep;
	char *p;

	p = tu_path(f->target, "bin/a");
	assert_int_equal(unlink(p), 0);
	free(p);
	p = tu_path(f->target, "bin/b");
	assert_int_equal(unlink(p), 0);
	assert_int_equal(symlink("elsewhere", p), 0);
	free(p);
	p = tu_path(f->dir, "other/bin/c");
	assert_int_equal(unlink(p), 0);
	free(p);
	tu_build(f->target, "f bin/x mine\n");

	verify(f, &rep);
	assert_int_equal(rep.checked, 4);
	assert_int_equal(rep.n_findings, 4);
	/* In the log's order, a foreign entry right after the folder it is in. */
	assert_int_equal(rep.findings[0].issue, GROVE_VERIFY_FOREIGN);
	assert_string_equal(rep.findings[0].path, "bin/x");
	assert_null(rep.findings[0].expected);
	assert_int_equal(rep.findings[1].issue, GROVE_VERIFY_MISSING);
	assert_string_equal(rep.findings[1].path, "bin/a");
	assert_string_equal(rep.findings[1].expected, "../../stow/pkg/bin/a");
	assert_int_equal(rep.findings[2].issue, GROVE_VERIFY_CHANGED);
	assert_string_equal(rep.findings[2].path, "bin/b");
	assert_int_equal(rep.findings[3].issue, GROVE_VERIFY_BROKEN);
	assert_string_equal(rep.findings[3].path, "bin/c");
	assert_int_equal(rep.missing, 1);
	assert_int_equal(rep.changed, 1);
	assert_int_equal(rep.broken, 1);
	assert_int_equal(rep.foreign, 1);
	assert_string_equal(grove_verify_issue_name(rep.findings[3].issue), "broken");
	grove_verify_report_release(&rep);
	grove_verify_report_release(&rep); /* a released report releases again */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_verify_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_findings, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
