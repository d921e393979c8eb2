/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove import's recorded ops: the log's ownership over a recorded transaction and its undo, the
 * executor's check of each recorded link (a link changed between scan and record), recovery. */
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
	struct grove_root troot;
	struct grove_session s;
	struct grove_error err;
};

/* A farm GNU Stow made (two links, one a folded folder) and a locked session on its target. */
static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct grove_session_opts so = { 0 };

	f->root = tu_mkdtemp();
	tu_build(f->root, "f stow/vim/vimrc\nf stow/bin/bin/b1\nd target\nd state\n"
			  "l target/vimrc ../stow/vim/vimrc\nl target/bin ../stow/bin/bin\n");
	f->state = tu_path(f->root, "state");
	f->dir = tu_path(f->root, "stow");
	f->target = tu_path(f->root, "target");
	f->troot.fd = -1;
	so.state_opt = f->state;
	assert_int_equal(grove_root_open(&f->troot, f->target, &f->err), 0);
	assert_int_equal(grove_session_open(&f->s, &f->troot, &so, &f->err), 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	grove_session_close(&f->s);
	grove_root_release(&f->troot);
	tu_rmtree(f->root);
	free(f->root);
	free(f->state);
	free(f->dir);
	free(f->target);
	free(f);
	return 0;
}

/* The log's ownership as "path=text(package)" lines. */
static char *
owned_str(struct fx *f)
{
	struct grove_owned *o = NULL;
	size_t n = 0;
	char *buf = calloc(1, 4096);

	assert_int_equal(grove_journal_owned(f->s.journal, f->s.target_id, &o, &n, &f->err), 0);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(buf);

		snprintf(buf + len, 4096 - len, "%s=%s(%s)\n", o[i].path,
			 o[i].text ? o[i].text : "/", o[i].package ? o[i].package : "-");
	}
	grove_owned_free(o, n);
	return buf;
}

/* The import's plan: the two links as recorded LINKs. */
static void
import_plan(struct grove_plan *p, const char *vimrc_text)
{
	grove_plan_init(p);
	assert_int_equal(grove_plan_add_recorded(p, GROVE_OP_LINK, "bin", "../stow/bin/bin", "bin"),
			 0);
	assert_int_equal(grove_plan_add_recorded(p, GROVE_OP_LINK, "vimrc", vimrc_text, "vim"), 0);
}

static int64_t
apply(struct fx *f, const struct grove_plan *p, int64_t undoes)
{
	int64_t txn = 0;

	assert_int_equal(grove_session_apply(&f->s, p, NULL, "test", NULL, undoes, &txn, &f->err),
			 0);
	assert_true(txn > 0);
	return txn;
}

static void
test_import_owned_and_undo(void **state)
{
	struct fx *f = *state;
	struct grove_plan p, back;
	char *s, *before = tu_dump(f->target), *pkgs = tu_dump(f->dir);
	int64_t txn;

	import_plan(&p, "../stow/vim/vimrc");
	txn = apply(f, &p, 0);
	grove_plan_release(&p);
	s = owned_str(f);
	assert_string_equal(s, "bin=../stow/bin/bin(bin)\nvimrc=../stow/vim/vimrc(vim)\n");
	free(s);

	/* Undo: recorded UNLINKs only, the disk untouched, the log forgets. */
	grove_plan_init(&back);
	assert_int_equal(grove_session_plan_revert(&f->s, &txn, 1, &back, &f->err), 0);
	assert_int_equal(back.n_conflicts, 0);
	assert_int_equal(back.n_ops, 2);
	for (size_t i = 0; i < back.n_ops; i++) {
		assert_true(back.ops[i].recorded);
		assert_int_equal(back.ops[i].kind, GROVE_OP_UNLINK);
	}
	apply(f, &back, txn);
	grove_plan_release(&back);
	s = owned_str(f);
	assert_string_equal(s, "");
	free(s);
	s = tu_dump(f->target);
	assert_string_equal(s, before);
	free(s);
	free(before);
	s = tu_dump(f->dir);
	assert_string_equal(s, pkgs);
	free(s);
	free(pkgs);

	/* The undo is not undoable; the import is undone. */
	assert_int_equal(grove_journal_last_undoable(f->s.journal, f->s.target_id, &txn, &f->err),
			 0);
	assert_int_equal(txn, 0);
}

/* Ownership replays recorded ops like made ones, and recorded ops survive the log's round trip. */
static void
test_import_ops_read_back(void **state)
{
	struct fx *f = *state;
	struct grove_plan p, back;
	int64_t txn;

	import_plan(&p, "../stow/vim/vimrc");
	txn = apply(f, &p, 0);
	grove_plan_release(&p);
	grove_plan_init(&back);
	assert_int_equal(grove_journal_ops(f->s.journal, txn, &back, &f->err), 0);
	assert_int_equal(back.n_ops, 2);
	assert_true(back.ops[0].recorded && back.ops[1].recorded);
	assert_string_equal(back.ops[1].text, "../stow/vim/vimrc");
	assert_string_equal(back.ops[1].package, "vim");
	grove_plan_release(&back);
}

/* A link changed between the scan and the record: the executor's check refuses it, nothing is
 * recorded, nothing is touched. */
static void
test_import_changed_link_refused(void **state)
{
	struct fx *f = *state;
	struct grove_session_txn_opts o = { .command = "test" };
	struct grove_session_txn t;
	struct grove_plan p;
	char *s, *before = tu_dump(f->target);
	int r;

	import_plan(&p, "../stow/vim/gvimrc"); /* the scan saw another text */
	assert_int_equal(grove_session_begin(&f->s, &t, &p, &o, &f->err), 0);
	r = grove_session_exec(&t, &p, &f->troot, NULL, &f->err);
	assert_int_equal(r, -GROVE_E_PRECONDITION);
	assert_non_null(strstr(f->err.msg, "vimrc"));
	assert_int_equal(grove_session_abort(&t, r, &f->err), r);
	grove_plan_release(&p);
	s = owned_str(f);
	assert_string_equal(s, "");
	free(s);
	s = tu_dump(f->target);
	assert_string_equal(s, before);
	free(s);
	free(before);
}

/* An import interrupted before its commit is rolled back by recovery without touching the disk,
 * even when a recorded link went away since. */
static void
test_import_recovery(void **state)
{
	struct fx *f = *state;
	struct grove_session_txn_opts o = { .command = "test" };
	struct grove_session_txn t;
	struct grove_plan p;
	struct grove_txn hdr = { 0 };
	int64_t rec = 0;
	char *vimrc = tu_path(f->target, "vimrc");
	char *s;

	import_plan(&p, "../stow/vim/vimrc");
	assert_int_equal(grove_session_begin(&f->s, &t, &p, &o, &f->err), 0);
	grove_plan_release(&p);
	assert_int_equal(unlink(vimrc), 0);
	assert_int_equal(grove_session_recover(&f->s, NULL, false, &rec, &f->err), 0);
	assert_int_equal(rec, t.id);
	assert_int_equal(grove_journal_get(f->s.journal, t.id, &hdr, &f->err), 0);
	assert_int_equal(hdr.state, GROVE_TXN_ROLLED_BACK);
	grove_txn_release(&hdr);
	s = tu_dump(f->target);
	assert_string_equal(s, "l bin ../stow/bin/bin\n");
	free(s);
	free(vimrc);
}

/* rollback across an import and an unstow made after it: the unstowed link comes back on disk
 * (a made LINK), and the log forgets it again (a recorded UNLINK after it). */
static void
test_import_rollback_across(void **state)
{
	struct fx *f = *state;
	struct grove_plan p, back;
	int64_t txns[2];
	char *s, *before = tu_dump(f->target);

	import_plan(&p, "../stow/vim/vimrc");
	txns[0] = apply(f, &p, 0);
	grove_plan_release(&p);
	grove_plan_init(&p);
	assert_int_equal(grove_plan_add_op(&p, GROVE_OP_UNLINK, "vimrc", "../stow/vim/vimrc", NULL,
					   NULL, "vim"),
			 0);
	txns[1] = apply(f, &p, 0);
	grove_plan_release(&p);
	s = owned_str(f);
	assert_string_equal(s, "bin=../stow/bin/bin(bin)\n");
	free(s);

	grove_plan_init(&back);
	assert_int_equal(grove_session_plan_revert(&f->s, txns, 2, &back, &f->err), 0);
	assert_int_equal(back.n_conflicts, 0);
	apply(f, &back, 0);
	grove_plan_release(&back);
	s = owned_str(f);
	assert_string_equal(s, "");
	free(s);
	s = tu_dump(f->target);
	assert_string_equal(s, before);
	free(s);
	free(before);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_import_owned_and_undo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_import_ops_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_import_changed_link_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_import_recovery, setup, teardown),
		cmocka_unit_test_setup_teardown(test_import_rollback_across, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
