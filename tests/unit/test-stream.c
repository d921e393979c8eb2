/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Streamed plans: a stow over the plan budget logged while planned and run from the log. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "fault.h"
#include "testutil.h"
#include "grove/history.h"
#include "grove/ignore.h"
#include "grove/plan.h"
#include "grove/journal.h"
#include "grove/session.h"
#include "grove/stow.h"
#include "session/session_int.h"

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

static void prepare_as(const struct fx *f, bool unstow, const char *pkg, bool no_folding,
		       struct grove_stow_run *run);

/* Prepares stowing (or unstowing) pkg into the fixture's target with the log. */
static void
prepare(const struct fx *f, bool unstow, const char *pkg, struct grove_stow_run *run)
{
	prepare_as(f, unstow, pkg, false, run);
}

static void
prepare_as(const struct fx *f, bool unstow, const char *pkg, bool no_folding,
	   struct grove_stow_run *run)
{
	struct grove_stow_request req;
	struct grove_session_opts so = { .state_opt = f->state };
	struct grove_error err = { 0 };

	grove_stow_request_init(&req);
	req.dir = strdup(f->dir);
	req.target = strdup(f->target);
	req.no_folding = no_folding;
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
 * from the log (an unfold block longer than a batch left open across batches), and the target and
 * the log are as without streaming; the unstow that folds bin/ back streams too. */
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

/* Between the plan and its execution, someone makes a file at the path of op `name`: the stow
 * fails there, part-way, and the abort undoes every batch before it (the unfold of bin/, left open
 * by the batches before, rolled back to its end and no further: the file is left alone). */
static void
fails_late(const struct fx *f, const char *name, const char *want_logs)
{
	struct grove_stow_run run;
	struct grove_error err = { 0 };
	char *before, *after, logs[256], spec[64];
	int r;

	prepare(f, false, "pkg", &run);
	assert_int_equal(run.plan.n_logged, 6);
	snprintf(spec, sizeof(spec), "f %s mine\n", name);
	tu_build(f->target, spec);
	before = tu_dump(f->target);
	r = grove_stow_execute(&run, &err);
	assert_int_equal(r, -GROVE_E_PARTIAL);
	assert_non_null(strstr(err.msg, name));
	assert_non_null(strstr(err.msg, "every change was undone"));
	grove_stow_run_release(&run);
	after = tu_dump(f->target);
	assert_string_equal(after, before);
	assert_non_null(strstr(after, "l bin ../stow/other/bin\n"));
	log_states(f, logs, sizeof(logs));
	assert_string_equal(logs, want_logs);
	free(before);
	free(after);
}

/* Ops 4 and 5 (lib and share) come in the batch after the unfold's last. */
static void
test_stream_fails_late(void **state)
{
	struct fx *f = *state;
	char *p;

	run_ok(f, false, "other");
	setenv("GROVE_PLAN_BUDGET", "2", 1);
	fails_late(f, "share", "rolled_back 6, committed 1");
	assert_int_equal(unlink(p = tu_path(f->target, "share")), 0);
	free(p);
	fails_late(f, "lib", "rolled_back 6, rolled_back 6, committed 1");
}

/* Fails the k-th change of a streamed stow (or unstow) for every k, the plan budget 2 so that
 * the unfold (fold) of bin/ spans three batches: each failure leaves the target as it was, the
 * changes of the batches before undone by the abort (the block they left open included: the
 * abort rolls back to its end), and the transaction rolled back. Returns how many failed. */
static int
fault_sweep(const struct fx *f, bool unstow, const char *want_after)
{
	int k, failed = 0;

	setenv("GROVE_PLAN_BUDGET", "2", 1);
	for (k = 1; k < 200; k++) {
		struct grove_stow_run run;
		struct grove_error err = { 0 };
		char *before, *after;
		int r;

		prepare(f, unstow, "pkg", &run);
		assert_int_equal(run.plan.n_logged, 6);
		before = tu_dump(f->target);
		/* (Not fsync: the log's folder sync after the commit reports a change done, which
		 * the crash tier covers.) */
		fi_arm(k, EIO, false);
		fi_never = "fsync";
		r = grove_stow_execute(&run, &err);
		fi_armed = false;
		grove_stow_run_release(&run);
		after = tu_dump(f->target);
		if (!fi_hit) {
			assert_int_equal(r, 0);
			assert_string_equal(after, want_after);
			free(before);
			free(after);
			break;
		}
		if (r >= 0 || r == -GROVE_E_STUCK)
			fail_msg("k=%d: r=%d %s", k, r, err.msg);
		if (strcmp(before, after) != 0)
			fail_msg("k=%d: %s\nbefore:\n%s\nafter:\n%s", k, err.msg, before, after);
		free(before);
		free(after);
		failed++;
	}
	unsetenv("GROVE_PLAN_BUDGET");
	return failed;
}

static void
test_stream_faults(void **state)
{
	struct fx *f = *state;
	char logs[512];

	run_ok(f, false, "other");
	/* Each call failed once: the stow's 9 (the unfold's mkdir, its three links, the exchange,
	 * the old link's safe removal (two), lib and share) and the unstow's 13 (the fold's link
	 * and exchange, the safe removal of bin/a, bin/b and bin/c (two each), the old folder's
	 * rmdir, lib and share). */
	assert_true(fault_sweep(f, false,
				"d bin\n"
				"l bin/a ../../stow/pkg/bin/a\n"
				"l bin/b ../../stow/pkg/bin/b\n"
				"l bin/c ../../stow/other/bin/c\n"
				"l lib ../stow/pkg/lib\n"
				"l share ../stow/pkg/share\n") == 9);
	assert_int_equal(fault_sweep(f, true, "l bin ../stow/other/bin\n"), 13);
	log_states(f, logs, sizeof(logs));
	/* Every failed run rolled back, the last of each committed. */
	assert_null(strstr(logs, "intent"));
	assert_null(strstr(logs, "stuck"));
	assert_true(strncmp(logs, "committed 6, rolled_back 6", 26) == 0);
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

/* ---- the bounded walk (planner_walk.c) against the whole model ---- */

/* A request in a compact form: "-D a -S b" (each word after -D unstows, after -S stows). */
struct walk_req {
	const char *pkgs;
	bool no_folding;
	const char *ignore; /* --ignore pattern, or NULL */
};

/* Appends to *buf (malloc'd) what the prepared run's plan says: its ops (read back from the log
 * when streamed), conflicts and warnings, one per line. */
static void
append(char **buf, size_t *len, const char *line)
{
	size_t l = strlen(line);

	*buf = realloc(*buf, *len + l + 2);
	assert_non_null(*buf);
	memcpy(*buf + *len, line, l);
	(*buf)[*len + l] = '\n';
	*len += l + 1;
	(*buf)[*len] = '\0';
}

static void
append_ops(char **buf, size_t *len, const struct grove_plan *plan)
{
	for (size_t i = 0; i < plan->n_ops; i++) {
		const struct grove_op *op = &plan->ops[i];
		char line[4096];

		snprintf(line, sizeof(line), "%s %s [%s] [%s] [%s]", grove_op_kind_name(op->kind),
			 op->path, op->old_text ? op->old_text : "", op->text ? op->text : "",
			 op->package ? op->package : "");
		append(buf, len, line);
	}
}

/* Plans rq in the fixture's target (with the log, nothing executed: the target is unchanged)
 * and returns the plan as text; *ret_walked: whether the walk made it. */
static char *
plan_text(const struct fx *f, const struct walk_req *rq, bool no_walk, bool *ret_walked)
{
	struct grove_stow_request req;
	struct grove_session_opts so = { .state_opt = f->state };
	struct grove_error err = { 0 };
	struct grove_stow_run run;
	char *words = strdup(rq->pkgs);
	char *save = NULL, *buf = NULL;
	size_t len = 0;
	bool unstow = false;
	int r;

	grove_stow_request_init(&req);
	req.dir = strdup(f->dir);
	req.target = strdup(f->target);
	req.no_folding = req.no_folding_given = rq->no_folding;
	req.no_walk = no_walk;
	if (rq->ignore) {
		req.ignore = grove_pattern_set_new(GROVE_ANCHOR_END);
		assert_int_equal(grove_pattern_set_add(req.ignore, rq->ignore, &err), 0);
	}
	for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (strcmp(w, "-D") == 0 || strcmp(w, "-S") == 0)
			unstow = w[1] == 'D';
		else
			assert_int_equal(grove_stow_request_add(&req, unstow, w), 0);
	}
	free(words);
	r = grove_stow_prepare(&req, &so, &run, &err);
	grove_stow_request_release(&req);
	append(&buf, &len, "");
	if (r < 0) {
		append(&buf, &len, err.msg);
		*ret_walked = false;
		return buf;
	}
	*ret_walked = run.walked;
	if (run.stream.id) {
		struct grove_plan ops;

		grove_plan_init(&ops);
		assert_int_equal(grove_journal_ops_range(run.session.journal, run.stream.id, 0,
							 run.stream.n_ops, &ops, &err),
				 0);
		append_ops(&buf, &len, &ops);
		grove_plan_release(&ops);
	}
	append_ops(&buf, &len, &run.plan);
	for (size_t i = 0; i < run.plan.n_conflicts; i++) {
		const struct grove_conflict *c = &run.plan.conflicts[i];
		char line[4096];

		snprintf(line, sizeof(line), "conflict %s %s %s: %s", c->action, c->package,
			 c->path, c->message);
		append(&buf, &len, line);
	}
	for (size_t i = 0; i < run.plan.n_warnings; i++)
		append(&buf, &len, run.plan.warnings[i]);
	grove_stow_run_release(&run);
	return buf;
}

/* The walk and the whole model give the same plan for rq (budget 1: every plan streams);
 * walked: whether the walk is to take it (else it falls back). */
static void
same_plan(const struct fx *f, const struct walk_req *rq, bool walked)
{
	bool w1, w2;
	char *whole, *walk;

	setenv("GROVE_PLAN_BUDGET", "1", 1);
	whole = plan_text(f, rq, true, &w1);
	walk = plan_text(f, rq, false, &w2);
	unsetenv("GROVE_PLAN_BUDGET");
	if (strcmp(whole, walk) != 0 || w2 != walked)
		print_message("request '%s'%s: walked %d\n--- whole model:\n%s--- walk:\n%s",
			      rq->pkgs, rq->no_folding ? " --no-folding" : "", w2, whole, walk);
	assert_false(w1);
	assert_string_equal(walk, whole);
	assert_int_equal(w2, walked);
	free(whole);
	free(walk);
}

static void
stow_now(const struct fx *f, const char *pkgs, bool no_folding)
{
	struct walk_req rq = { .pkgs = pkgs, .no_folding = no_folding };
	struct grove_stow_request req;
	struct grove_session_opts so = { .state_opt = f->state };
	struct grove_error err = { 0 };
	struct grove_stow_run run;
	char *words = strdup(rq.pkgs);
	char *save = NULL;
	bool unstow = false;

	grove_stow_request_init(&req);
	req.dir = strdup(f->dir);
	req.target = strdup(f->target);
	req.no_folding = req.no_folding_given = no_folding;
	for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (strcmp(w, "-D") == 0 || strcmp(w, "-S") == 0)
			unstow = w[1] == 'D';
		else
			assert_int_equal(grove_stow_request_add(&req, unstow, w), 0);
	}
	free(words);
	assert_int_equal(grove_stow_prepare(&req, &so, &run, &err), 0);
	assert_int_equal(run.plan.n_conflicts, 0);
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
	grove_stow_request_release(&req);
}

/* Three packages sharing bin/ and share/, deeper folders, an empty folder, a link inside a
 * package, an ignore file; a target with foreign files in the shared folders. */
static void
build_farm(const struct fx *f)
{
	tu_build(f->root, "f stow/a/bin/a1\nf stow/a/bin/a2\nf stow/a/share/a/x/f1\n"
			  "f stow/a/share/a/x/f2\nf stow/a/share/a/y/f3\nd stow/a/share/empty\n"
			  "f stow/a/share/common/fa\nl stow/a/bin/a3 a1\n"
			  "f stow/b/bin/b1\nf stow/b/share/common/fb\nf stow/b/share/b/z/f4\n"
			  "f stow/b/lib/l1\nf stow/b/skip/s1\nf stow/b/.stow-local-ignore skip\n"
			  "f stow/c/share/common/fc\nf stow/c/etc/c.conf\nf stow/c/share/c/w/f5\n"
			  "f target/bin/mine\nf target/share/common/mine\n");
}

/* --no-folding: stow, restow, unstow of several packages sharing folders, with the whole
 * model's plan each time (the walk takes them all). */
static void
test_walk_no_folding(void **state)
{
	struct fx *f = *state;
	static const char *const reqs[] = { "-S a", "-S a b", "-S a b c", "-S c b a" };

	build_farm(f);
	for (size_t i = 0; i < sizeof(reqs) / sizeof(*reqs); i++)
		same_plan(f, &(struct walk_req){ .pkgs = reqs[i], .no_folding = true }, true);
	stow_now(f, "-S a b", true);
	same_plan(f, &(struct walk_req){ .pkgs = "-D a -S a", .no_folding = true }, true);
	same_plan(f, &(struct walk_req){ .pkgs = "-D a b -S a b", .no_folding = true }, true);
	same_plan(f, &(struct walk_req){ .pkgs = "-D a", .no_folding = true }, true);
	same_plan(f, &(struct walk_req){ .pkgs = "-D a b", .no_folding = true }, true);
	same_plan(f, &(struct walk_req){ .pkgs = "-D a -S c", .no_folding = true }, true);
	same_plan(f, &(struct walk_req){ .pkgs = "-D b -S a c", .no_folding = true }, true);
	same_plan(f,
		  &(struct walk_req){ .pkgs = "-D a -S a c", .no_folding = true, .ignore = "f2" },
		  true);
	/* A dangling link of ours in a shared folder: unstowing cleans it up. */
	tu_build(f->root, "l target/share/common/gone ../../stow/a/share/common/gone\n");
	same_plan(f, &(struct walk_req){ .pkgs = "-D b", .no_folding = true }, true);
}

/* With folding the whole model plans (the walk is for --no-folding): the same plans. */
static void
test_walk_folding(void **state)
{
	struct fx *f = *state;
	static const char *const reqs[] = { "-S a", "-S a b", "-S b a c", "-S c" };

	build_farm(f);
	for (size_t i = 0; i < sizeof(reqs) / sizeof(*reqs); i++)
		same_plan(f, &(struct walk_req){ .pkgs = reqs[i] }, false);
	stow_now(f, "-S c", false); /* share/c and etc folded into c */
	tu_build(f->root, "f stow/a/share/c/w/fa\nf stow/b/etc/b.conf\n");
	same_plan(f, &(struct walk_req){ .pkgs = "-S a b" }, false);
	same_plan(f, &(struct walk_req){ .pkgs = "-D c -S a" }, false);
	/* --no-folding unfolds c's folds, folder by folder. */
	same_plan(f, &(struct walk_req){ .pkgs = "-S a", .no_folding = true }, true);
	same_plan(f, &(struct walk_req){ .pkgs = "-S b a", .no_folding = true }, true);
}

/* What the walk does not take is planned again with the whole model: the same conflicts,
 * warnings and ops. */
static void
test_walk_falls_back(void **state)
{
	struct fx *f = *state;

	build_farm(f);
	/* A file where a package has one: a conflict. */
	tu_build(f->root, "f target/bin/a1\n");
	same_plan(f, &(struct walk_req){ .pkgs = "-S a b", .no_folding = true }, false);
	/* A folder where a package has a file, deep down. */
	tu_build(f->root, "f target/share/a/y/f3/inner\n");
	same_plan(f, &(struct walk_req){ .pkgs = "-S a", .no_folding = true }, false);
	/* A link leaving the stow dir, in a folder that folds (checked all the same). */
	tu_build(f->root, "l stow/b/share/b/z/out ../../../../../elsewhere\n");
	same_plan(f, &(struct walk_req){ .pkgs = "-S b", .no_folding = true }, false);
	/* A marked stow dir in the target: a warning. */
	tu_build(f->root, "f target/lib/.stow\nf stow/c/lib/l2\n");
	same_plan(f, &(struct walk_req){ .pkgs = "-S c", .no_folding = true }, false);
	/* Different layouts: c stowed with --no-folding, b with folding. */
	{
		char *out = tu_path(f->root, "stow/b/share/b/z/out");

		assert_int_equal(unlink(out), 0);
		free(out);
	}
	stow_now(f, "-S c", true);
	stow_now(f, "-S b", false);
	same_plan(f, &(struct walk_req){ .pkgs = "-D b c" }, false);
}

/* Only a request whose packages hold more entries than the budget is walked. */
static void
test_walk_budget(void **state)
{
	struct fx *f = *state;
	struct walk_req rq = { .pkgs = "-S a b", .no_folding = true };
	bool walked;
	char *text;

	build_farm(f);
	text = plan_text(f, &rq, false, &walked);
	assert_false(walked); /* 4,096 */
	free(text);
	setenv("GROVE_PLAN_BUDGET", "27", 1);
	text = plan_text(f, &rq, false, &walked);
	assert_false(walked); /* a and b hold 27 entries */
	free(text);
	setenv("GROVE_PLAN_BUDGET", "26", 1);
	text = plan_text(f, &rq, false, &walked);
	assert_true(walked);
	free(text);
	unsetenv("GROVE_PLAN_BUDGET");
}

/* A sink that checks each batch it is handed and counts the ops. */
struct count_sink {
	struct grove_plan_sink sink;
	size_t flushed;
};

static int
count_flush(struct grove_plan_sink *sink, struct grove_plan *plan)
{
	struct count_sink *c = (struct count_sink *)sink;

	grove_plan_foreach_op (plan, op) {
		char want[32];

		snprintf(want, sizeof(want), "d/%zu", plan->n_logged + (size_t)(op - plan->ops));
		assert_string_equal(op->path, want);
	}
	c->flushed += plan->n_ops;
	grove_plan_drop_ops(plan);
	return 0;
}

/* Packed ops keep their strings as given (NULL stays NULL) next to ordinary ones, through a
 * string longer than a block, a sink's drops and the plan's release (ASan sees the rest). */
static void
test_plan_packed_ops(void **state)
{
	struct count_sink c = { .sink = { .batch = 8, .flush = count_flush } };
	struct grove_plan plan;
	char *big = malloc(100000);

	(void)state;
	memset(big, 'x', 99999);
	big[99999] = '\0';
	grove_plan_init(&plan);
	assert_int_equal(grove_plan_add_op_packed(&plan, GROVE_OP_RELINK, "bin/a", "../s/p/bin/a",
						  "../s/q/bin/a", NULL, "q"),
			 0);
	assert_int_equal(grove_plan_add_op(&plan, GROVE_OP_LINK, "bin/b", NULL, "t", NULL, NULL),
			 0);
	assert_int_equal(
		grove_plan_add_op_packed(&plan, GROVE_OP_ADOPT, "f", NULL, big, "p/f", NULL), 0);
	assert_int_equal(
		grove_plan_add_op_packed(&plan, GROVE_OP_MKDIR, "", NULL, NULL, NULL, NULL), 0);
	assert_int_equal(plan.n_ops, 4);
	assert_true(plan.ops[0].packed && !plan.ops[1].packed && plan.ops[2].packed);
	assert_string_equal(plan.ops[0].path, "bin/a");
	assert_string_equal(plan.ops[0].old_text, "../s/p/bin/a");
	assert_string_equal(plan.ops[0].text, "../s/q/bin/a");
	assert_null(plan.ops[0].stow_path);
	assert_string_equal(plan.ops[0].package, "q");
	assert_string_equal(plan.ops[1].text, "t");
	assert_string_equal(plan.ops[2].text, big);
	assert_string_equal(plan.ops[2].stow_path, "p/f");
	assert_null(plan.ops[2].old_text);
	assert_null(plan.ops[2].package);
	assert_string_equal(plan.ops[3].path, "");
	assert_null(plan.ops[3].text);
	grove_plan_release(&plan);
	assert_int_equal(plan.n_ops, 0);

	/* Streamed: every batch of packed ops is dropped as a whole, and ops made after a drop
	 * are intact. */
	grove_plan_init(&plan);
	plan.sink = &c.sink;
	for (size_t i = 0; i < 1000; i++) {
		char path[32];

		snprintf(path, sizeof(path), "d/%zu", i);
		assert_int_equal(grove_plan_add_op_packed(&plan, GROVE_OP_LINK, path, NULL,
							  big + 99000, NULL, "pkg"),
				 0);
	}
	assert_int_equal(c.flushed + plan.n_ops, 1000);
	assert_int_equal(plan.n_logged, c.flushed);
	assert_true(c.flushed > 900);
	grove_plan_foreach_op (&plan, op)
		assert_int_equal(strlen(op->text), 999);
	grove_plan_release(&plan);
	free(big);
}

/* ---- streamed reverts (session_revert.c) ---- */

/* Reverts transaction txn with grove_session_revert_streamed, as `grove undo` does; returns its
 * result (1: streamed, 0: to be planned whole), *rv what it did. */
static int
revert_streamed(const struct fx *f, int64_t txn, struct grove_session_reverted *rv)
{
	struct grove_root target = { .fd = -1 };
	struct grove_session_opts so = { .state_opt = f->state };
	struct grove_session_txn_opts to = { .command = "grove undo", .undoes = txn };
	struct grove_session s;
	struct grove_error err = { 0 };
	int r;

	assert_int_equal(grove_root_open(&target, f->target, &err), 0);
	assert_int_equal(grove_session_open(&s, &target, &so, &err), 0);
	r = grove_session_revert_streamed(&s, txn, &to, rv, &err);
	if (r < 0)
		fail_msg("revert of %lld: %s", (long long)txn, err.msg);
	grove_session_close(&s);
	grove_root_release(&target);
	return r;
}

/* Over the budget: the undo of a stow without folding is its inverse, last op first, logged and
 * run in batches: every folder and link it made goes; the undo of an unstow puts back what it
 * removed. */
static void
test_revert_streamed(void **state)
{
	struct fx *f = *state;
	struct grove_session_reverted rv;
	struct grove_stow_run run;
	struct grove_error err = { 0 };
	char *dump, *before, logs[256];

	setenv("GROVE_PLAN_BUDGET", "2", 1);
	prepare_as(f, false, "pkg", true, &run);
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
	dump = tu_dump(f->target);
	assert_non_null(strstr(dump, "d share/d1\n"));
	free(dump);
	assert_int_equal(revert_streamed(f, 1, &rv), 1);
	assert_int_equal(rv.txn, 2);
	assert_int_equal(rv.n_ops, 8); /* bin, lib, share, share/d1 and 4 links */
	assert_int_equal(rv.by_kind[GROVE_OP_RMDIR], 4);
	assert_int_equal(rv.by_kind[GROVE_OP_UNLINK], 4);
	dump = tu_dump(f->target);
	assert_string_equal(dump, "");
	free(dump);
	log_states(f, logs, sizeof(logs));
	assert_string_equal(logs, "committed 8, committed 8");

	/* The undo of an unstow puts back what it removed. */
	unsetenv("GROVE_PLAN_BUDGET");
	prepare_as(f, false, "pkg", true, &run);
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
	before = tu_dump(f->target);
	setenv("GROVE_PLAN_BUDGET", "2", 1);
	prepare_as(f, true, "pkg", true, &run);
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
	assert_int_equal(revert_streamed(f, 4, &rv), 1);
	assert_int_equal(rv.txn, 5);
	assert_int_equal(rv.by_kind[GROVE_OP_LINK], 4);
	dump = tu_dump(f->target);
	assert_string_equal(dump, before);
	free(dump);
	free(before);
}

/* Reverts txns[0, n) with grove_session_revert_chain_streamed, as `grove rollback` does. */
static int
revert_chain(const struct fx *f, const int64_t *txns, size_t n, struct grove_session_reverted *rv)
{
	struct grove_root target = { .fd = -1 };
	struct grove_session_opts so = { .state_opt = f->state };
	struct grove_session_txn_opts to = { .command = "grove rollback" };
	struct grove_session s;
	struct grove_error err = { 0 };
	int r;

	assert_int_equal(grove_root_open(&target, f->target, &err), 0);
	assert_int_equal(grove_session_open(&s, &target, &so, &err), 0);
	r = grove_session_revert_chain_streamed(&s, txns, n, &to, rv, &err);
	if (r < 0)
		fail_msg("revert of a chain: %s", err.msg);
	grove_session_close(&s);
	grove_root_release(&target);
	return r;
}

static void fresh(const struct fx *f);

/* A chain of transactions that share no path reverts streamed as one transaction, the newest's
 * inverses first: bin/, which the older stow made, goes after the newer one's bin/c. Two that
 * share paths (an unstow's links, made again by the next stow) go the whole way, with nothing
 * changed or logged. */
static void
test_revert_chain_streamed(void **state)
{
	struct fx *f = *state;
	struct grove_session_reverted rv;
	struct grove_stow_run run;
	struct grove_error err = { 0 };
	char *dump, *before, logs[256], logs2[256];

	fresh(f);
	setenv("GROVE_PLAN_BUDGET", "2", 1);
	prepare_as(f, false, "pkg", true, &run); /* 1: bin, lib, share, share/d1 and 4 links */
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
	prepare_as(f, false, "other", true, &run); /* 2: bin/c */
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
	assert_int_equal(revert_chain(f, (int64_t[]){ 1, 2 }, 2, &rv), 1);
	assert_int_equal(rv.txn, 3);
	assert_int_equal(rv.n_ops, 9);
	assert_int_equal(rv.by_kind[GROVE_OP_RMDIR], 4);
	assert_int_equal(rv.by_kind[GROVE_OP_UNLINK], 5);
	dump = tu_dump(f->target);
	assert_string_equal(dump, "");
	free(dump);
	log_states(f, logs, sizeof(logs));
	assert_string_equal(logs, "committed 9, committed 1, committed 8");

	fresh(f);
	prepare_as(f, false, "pkg", true, &run); /* 1 */
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
	prepare_as(f, true, "pkg", true, &run); /* 2: removes the links */
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
	prepare_as(f, false, "pkg", true, &run); /* 3: makes them again */
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
	before = tu_dump(f->target);
	log_states(f, logs, sizeof(logs));
	assert_int_equal(revert_chain(f, (int64_t[]){ 2, 3 }, 2, &rv), 0);
	dump = tu_dump(f->target);
	assert_string_equal(dump, before);
	log_states(f, logs2, sizeof(logs2));
	assert_string_equal(logs2, logs);
	free(dump);
	free(before);
}

/* What grove_history_revert told its callbacks. */
struct told {
	int recovered, pending, planned, begun, ended;
	size_t progress;
};

static void
told_planned(void *ctx, const struct grove_plan *plan)
{
	(void)plan;
	((struct told *)ctx)->planned++;
}

static void
told_begin(void *ctx, size_t total)
{
	(void)total;
	((struct told *)ctx)->begun++;
}

static void
told_progress(void *ctx, size_t done, size_t total, const struct grove_op *op)
{
	(void)done, (void)total, (void)op;
	((struct told *)ctx)->progress++;
}

static void
told_end(void *ctx)
{
	((struct told *)ctx)->ended++;
}

/* Stows pkg into the fixture's target with --no-folding. */
static void
stow_flat(const struct fx *f, const char *pkg)
{
	struct grove_stow_run run;
	struct grove_error err = { 0 };

	prepare_as(f, false, pkg, true, &run);
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
}

/* Runs grove_history_revert on the fixture's target with req (its log and callbacks filled in). */
static int
history_revert(const struct fx *f, struct grove_history_revert_request *req, struct told *t,
	       struct grove_history_reverted *res, struct grove_error *err)
{
	struct grove_root target = { .fd = -1 };
	int r;

	memset(t, 0, sizeof(*t));
	req->state_opt = f->state;
	req->cb = (struct grove_history_revert_cb){ .planned = told_planned,
						    .begin = told_begin,
						    .progress = told_progress,
						    .end = told_end,
						    .ctx = t };
	assert_int_equal(grove_root_open(&target, f->target, err), 0);
	r = grove_history_revert(&target, req, res, err);
	grove_root_release(&target);
	return r;
}

/* The library decides what undo and rollback revert and says what it did: a dry run writes
 * nothing and plans whole; a rollback over the budget streams (no whole plan in the result), one
 * within it or asked whole plans; a conflict is -GROVE_E_CONFLICT with the conflicts in the
 * result; nothing to undo is an empty result; a rollback point the rules refuse is
 * -GROVE_E_BADINPUT. */
static void
test_history_revert(void **state)
{
	struct fx *f = *state;
	struct grove_history_revert_request req = { 0 };
	struct grove_history_reverted res;
	struct grove_error err = { 0 };
	struct told t;
	char *dump, *stowed, logs[256], logs2[256], *p;

	fresh(f);
	setenv("GROVE_PLAN_BUDGET", "2", 1);
	stow_flat(f, "pkg");   /* 1: bin, lib, share, share/d1 and 4 links */
	stow_flat(f, "other"); /* 2: bin/c */
	stowed = tu_dump(f->target);
	log_states(f, logs, sizeof(logs));

	/* -n rollback --to 0: the plan, whole, and nothing written. */
	req = (struct grove_history_revert_request){ .kind = GROVE_HISTORY_ROLLBACK,
						     .point = { .have_to = true, .to = 0 },
						     .dry_run = true };
	assert_int_equal(history_revert(f, &req, &t, &res, &err), 0);
	assert_int_equal(res.n_txns, 2);
	assert_true(res.txns[0] == 1 && res.txns[1] == 2);
	assert_false(res.streamed);
	assert_int_equal(res.made, 0);
	assert_int_equal(res.plan.n_ops, res.n_ops);
	assert_true(res.n_ops > 2);
	assert_string_equal(res.command, "grove rollback --to 0");
	assert_int_equal(t.planned, 1);
	assert_int_equal(t.begun, 0);
	grove_history_reverted_release(&res);
	dump = tu_dump(f->target);
	assert_string_equal(dump, stowed);
	free(dump);
	log_states(f, logs2, sizeof(logs2));
	assert_string_equal(logs2, logs);

	/* A point the rules refuse. */
	req = (struct grove_history_revert_request){ .kind = GROVE_HISTORY_ROLLBACK,
						     .point = { .have_to = true, .to = 9 } };
	assert_int_equal(history_revert(f, &req, &t, &res, &err), -GROVE_E_BADINPUT);
	grove_history_reverted_release(&res);

	/* A conflict: bin/c replaced by a file. Nothing changed. */
	assert_int_equal(unlink(p = tu_path(f->target, "bin/c")), 0);
	free(p);
	tu_build(f->target, "f bin/c mine\n");
	req = (struct grove_history_revert_request){ .kind = GROVE_HISTORY_ROLLBACK,
						     .point = { .have_to = true, .to = 0 } };
	assert_int_equal(history_revert(f, &req, &t, &res, &err), -GROVE_E_CONFLICT);
	assert_true(res.plan.n_conflicts > 0);
	assert_int_equal(res.made, 0);
	grove_history_reverted_release(&res);
	log_states(f, logs2, sizeof(logs2));
	assert_string_equal(logs2, logs);
	assert_int_equal(unlink(p = tu_path(f->target, "bin/c")), 0);
	free(p);
	tu_build(f->root, "l target/bin/c ../../stow/other/bin/c\n");

	/* The real rollback, over the budget: streamed, told to the progress callbacks. */
	assert_int_equal(history_revert(f, &req, &t, &res, &err), 0);
	assert_true(res.streamed);
	assert_int_equal(res.made, 3);
	assert_int_equal(res.plan.n_ops, 0);
	assert_int_equal(res.by_kind[GROVE_OP_UNLINK], 5);
	assert_int_equal(t.begun, 1);
	assert_int_equal(t.ended, 1);
	assert_int_equal(t.progress, res.n_ops);
	grove_history_reverted_release(&res);
	dump = tu_dump(f->target);
	assert_string_equal(dump, "");
	free(dump);

	/* Undo of the rollback, asked whole (as --json asks): planned and applied. */
	req = (struct grove_history_revert_request){ .kind = GROVE_HISTORY_UNDO, .whole = true };
	assert_int_equal(history_revert(f, &req, &t, &res, &err), 0);
	assert_false(res.streamed);
	assert_int_equal(res.n_txns, 1);
	assert_int_equal(res.txns[0], 3);
	assert_int_equal(res.made, 4);
	assert_string_equal(res.command, "grove undo (of 3)");
	assert_int_equal(t.planned, 1);
	grove_history_reverted_release(&res);
	dump = tu_dump(f->target);
	assert_string_equal(dump, stowed);
	free(dump);
	free(stowed);

	/* Nothing to undo on a target without a transaction. */
	fresh(f);
	req = (struct grove_history_revert_request){ .kind = GROVE_HISTORY_UNDO };
	assert_int_equal(history_revert(f, &req, &t, &res, &err), 0);
	assert_int_equal(res.n_txns, 0);
	assert_int_equal(res.made, 0);
	grove_history_reverted_release(&res);
}

/* Starts the fixture over: an empty target and no log. */
static void
fresh(const struct fx *f)
{
	tu_rmtree(f->target);
	tu_rmtree(f->state);
	tu_build(f->root, "d target\nd state\n");
}

/* Asserts that the streamed revert of txn declines (0), with the target unchanged and nothing
 * logged. */
static void
declines(const struct fx *f, int64_t txn)
{
	struct grove_session_reverted rv;
	char *before = tu_dump(f->target), *after, logs[256], logs2[256];

	log_states(f, logs, sizeof(logs));
	assert_int_equal(revert_streamed(f, txn, &rv), 0);
	after = tu_dump(f->target);
	assert_string_equal(after, before);
	log_states(f, logs2, sizeof(logs2));
	assert_string_equal(logs2, logs);
	free(after);
	free(before);
}

/* A block reverts streamed as the other block: the undo of the stow that unfolded bin/ folds it
 * back to other's link (the fold first, then its block's unlinks, last first), the undo of the
 * unstow that folded it unfolds it again; an unfolded folder holding an entry grove did not
 * make goes the whole way. */
static void
test_revert_streamed_blocks(void **state)
{
	struct fx *f = *state;
	struct grove_session_reverted rv;
	char *dump, *stowed, logs[256];

	run_ok(f, false, "other");
	setenv("GROVE_PLAN_BUDGET", "2", 1);
	run_ok(f, false, "pkg"); /* unfold bin, bin/a, bin/b, bin/c, lib, share */
	stowed = tu_dump(f->target);
	assert_int_equal(revert_streamed(f, 2, &rv), 1);
	assert_int_equal(rv.txn, 3);
	assert_int_equal(rv.by_kind[GROVE_OP_FOLD], 1);
	assert_int_equal(rv.by_kind[GROVE_OP_UNLINK], 5);
	dump = tu_dump(f->target);
	assert_string_equal(dump, "l bin ../stow/other/bin\n");
	free(dump);

	run_ok(f, false, "pkg"); /* 4: the unfold again */
	run_ok(f, true, "pkg");  /* 5: fold bin, its 3 unlinks, lib, share */
	assert_int_equal(revert_streamed(f, 5, &rv), 1);
	assert_int_equal(rv.by_kind[GROVE_OP_UNFOLD], 1);
	assert_int_equal(rv.by_kind[GROVE_OP_LINK], 5);
	dump = tu_dump(f->target);
	assert_string_equal(dump, stowed);
	free(dump);
	log_states(f, logs, sizeof(logs));
	assert_string_equal(logs,
			    "committed 6, committed 6, committed 6, committed 6, committed 6, "
			    "committed 1");

	/* Someone's file in the unfolded bin/. */
	tu_build(f->target, "f bin/mine mine\n");
	declines(f, 4);
	free(stowed);
}

/* What the inverse stream does not take goes the whole way, with nothing changed or logged: a
 * link changed since, a folder holding an entry grove did not make, and a transaction within the
 * budget. */
static void
test_revert_streamed_whole(void **state)
{
	struct fx *f = *state;
	struct grove_stow_run run;
	struct grove_error err = { 0 };
	char *p;

	setenv("GROVE_PLAN_BUDGET", "2", 1);
	/* lib is no longer the link the stow made. */
	run_ok(f, false, "pkg"); /* bin, lib, share */
	assert_int_equal(unlink(p = tu_path(f->target, "lib")), 0);
	free(p);
	tu_build(f->target, "f lib mine\n");
	declines(f, 1);

	/* A file of someone else's in a folder the stow made. */
	fresh(f);
	prepare_as(f, false, "pkg", true, &run);
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
	tu_build(f->target, "f share/d1/mine mine\n");
	declines(f, 1);

	/* Within the budget. */
	setenv("GROVE_PLAN_BUDGET", "100", 1);
	assert_int_equal(unlink(p = tu_path(f->target, "share/d1/mine")), 0);
	free(p);
	declines(f, 1);
}

/* Recovers txn with grove_session_recover_streamed (as recovery does after a crash); returns its
 * result, err its message. */
static int
recover_streamed(const struct fx *f, int64_t txn, struct grove_error *err)
{
	struct grove_root target = { .fd = -1 };
	struct grove_session_opts so = { .state_opt = f->state };
	struct grove_session s;
	char tag[32];
	int r;

	snprintf(tag, sizeof(tag), "%lld", (long long)txn);
	assert_int_equal(grove_root_open(&target, f->target, err), 0);
	assert_int_equal(grove_session_open(&s, &target, &so, err), 0);
	r = grove_session_recover_streamed(&s, txn, SIZE_MAX, tag, err);
	grove_session_close(&s);
	grove_root_release(&target);
	return r;
}

/* Stows pkg (--no-folding) within the budget, then sets the budget to 2 for what follows. */
static void
stow_then_budget(const struct fx *f)
{
	struct grove_stow_run run;
	struct grove_error err = { 0 };

	unsetenv("GROVE_PLAN_BUDGET");
	prepare_as(f, false, "pkg", true, &run);
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
	setenv("GROVE_PLAN_BUDGET", "2", 1);
}

/* An unstow that leaves its folders (--no-folding) removes each link by moving it aside under
 * the transaction's one removal name (grove_fs_removal_name), then unlinking it: nothing of it is
 * left, streamed or not. */
static void
test_stream_removal_name(void **state)
{
	struct fx *f = *state;
	struct grove_stow_run run;
	struct grove_error err = { 0 };
	char *dump;

	for (int streamed = 0; streamed < 2; streamed++) {
		if (streamed)
			setenv("GROVE_PLAN_BUDGET", "2", 1);
		prepare_as(f, false, "pkg", true, &run);
		assert_int_equal(grove_stow_execute(&run, &err), 0);
		grove_stow_run_release(&run);
		fi_removal_renames = 0;
		prepare_as(f, true, "pkg", true, &run);
		assert_int_equal(grove_stow_execute(&run, &err), 0);
		grove_stow_run_release(&run);
		assert_int_equal(fi_removal_renames, 4); /* bin/a, bin/b, lib/l1, share/d1/f */
		dump = tu_dump(f->target);
		assert_string_equal(dump, "d bin\nd lib\nd share\nd share/d1\n");
		free(dump);
		unsetenv("GROVE_PLAN_BUDGET");
	}
}

/* With a temporary link of txn's tag at path pointing somewhere txn never made, recovery is
 * STUCK and changes nothing; the link is removed after. */
static void
recover_stuck_on(const struct fx *f, int64_t txn, const char *path)
{
	struct grove_error err = { 0 };
	char spec[128], *before, *after, *p;

	snprintf(spec, sizeof(spec), "l %s /etc/passwd\n", path);
	tu_build(f->target, spec);
	before = tu_dump(f->target);
	assert_int_equal(recover_streamed(f, txn, &err), -GROVE_E_STUCK);
	assert_non_null(strstr(err.msg, "never made"));
	after = tu_dump(f->target);
	assert_string_equal(after, before);
	free(after);
	free(before);
	assert_int_equal(unlink(p = tu_path(f->target, path)), 0);
	free(p);
}

/* Recovery over the budget, a batch at a time: every op that ran is undone, one that did not is
 * left, the transaction's temporary entries go first; a temporary link the transaction never
 * made is stuck, nothing changed. (The transaction is a committed stow: recovery looks at the
 * disk, not at the state.) */
static void
test_recover_streamed(void **state)
{
	struct fx *f = *state;
	struct grove_stow_run run;
	struct grove_error err = { 0 };
	char *dump, *p;

	setenv("GROVE_PLAN_BUDGET", "2", 1);
	prepare_as(f, false, "pkg", true, &run);
	assert_int_equal(grove_stow_execute(&run, &err), 0);
	grove_stow_run_release(&run);
	/* As if the stow stopped before its link share/d1/f, and in the middle of a removal of
	 * lib/l1 that moved the link aside. */
	assert_int_equal(unlink(p = tu_path(f->target, "share/d1/f")), 0);
	free(p);
	assert_int_equal(rename(p = tu_path(f->target, "lib/l1"),
				dump = tu_path(f->target, "lib/.grove-1.7.l1")),
			 0);
	free(p);
	free(dump);
	tu_build(f->target, "l bin/.grove-1.9.zz ../../stow/pkg/bin/b\n");
	assert_int_equal(recover_streamed(f, 1, &err), 1);
	dump = tu_dump(f->target);
	assert_string_equal(dump, "");
	free(dump);

	/* A removal stopped with the link under the transaction's removal name. */
	stow_then_budget(f);
	assert_int_equal(rename(p = tu_path(f->target, "lib/l1"),
				dump = tu_path(f->target, "lib/.grove-2.rm")),
			 0);
	free(p);
	free(dump);
	assert_int_equal(recover_streamed(f, 2, &err), 1);
	dump = tu_dump(f->target);
	assert_string_equal(dump, "");
	free(dump);

	/* A temporary link of the transaction's tag pointing somewhere it never made. */
	stow_then_budget(f);
	recover_stuck_on(f, 3, "bin/.grove-3.1.a");
	recover_stuck_on(f, 3, "bin/.grove-3.rm"); /* the same under the removal name */
}

/* Recovery over the budget with blocks (their inverses ahead of their blocks' inverses): a
 * committed unfold is folded back; a crash inside an unfold (the new folder half built aside) and
 * inside a fold (the old folder swapped out, half emptied) are rolled back. */
static void
test_recover_streamed_blocks(void **state)
{
	struct fx *f = *state;
	struct grove_error err = { 0 };
	char *dump, *stowed, *p;

	run_ok(f, false, "other");
	setenv("GROVE_PLAN_BUDGET", "2", 1);
	run_ok(f, false, "pkg"); /* 2: unfold bin, bin/a, bin/b, bin/c, lib, share */
	stowed = tu_dump(f->target);
	assert_int_equal(recover_streamed(f, 2, &err), 1);
	dump = tu_dump(f->target);
	assert_string_equal(dump, "l bin ../stow/other/bin\n");
	free(dump);

	/* 3, stopped inside its unfold: bin still the old link, its new folder half built aside,
	 * lib and share not made yet. */
	run_ok(f, false, "pkg"); /* 3 */
	tu_rmtree(p = tu_path(f->target, "bin"));
	free(p);
	assert_int_equal(unlink(p = tu_path(f->target, "lib")), 0);
	free(p);
	assert_int_equal(unlink(p = tu_path(f->target, "share")), 0);
	free(p);
	tu_build(f->target, "l bin ../stow/other/bin\n"
			    "d .grove-3.0.bin\n"
			    "l .grove-3.0.bin/a ../../stow/pkg/bin/a\n"
			    "l .grove-3.0.bin/c ../../stow/other/bin/c\n");
	assert_int_equal(recover_streamed(f, 3, &err), 1);
	dump = tu_dump(f->target);
	assert_string_equal(dump, "l bin ../stow/other/bin\n");
	free(dump);

	/* 5, an unstow stopped inside its fold: bin the new link, the old folder aside with b and
	 * c still in it, lib and share not yet removed. */
	run_ok(f, false, "pkg"); /* 4 */
	run_ok(f, true, "pkg");  /* 5 */
	tu_build(f->target, "d .grove-5.0.bin\n"
			    "l .grove-5.0.bin/b ../../stow/pkg/bin/b\n"
			    "l .grove-5.0.bin/c ../../stow/other/bin/c\n"
			    "l lib ../stow/pkg/lib\n"
			    "l share ../stow/pkg/share\n");
	assert_int_equal(recover_streamed(f, 5, &err), 1);
	dump = tu_dump(f->target);
	assert_string_equal(dump, stowed);
	free(dump);
	free(stowed);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_stream_stow_unstow),
		T(test_stream_fails_late),
		T(test_stream_faults),
		T(test_stream_not_executed),
		T(test_walk_no_folding),
		T(test_walk_folding),
		T(test_walk_falls_back),
		T(test_walk_budget),
		cmocka_unit_test(test_plan_packed_ops),
		T(test_revert_streamed),
		T(test_revert_streamed_whole),
		T(test_revert_streamed_blocks),
		T(test_revert_chain_streamed),
		T(test_history_revert),
		T(test_stream_removal_name),
		T(test_recover_streamed),
		T(test_recover_streamed_blocks),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
