/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for the alternatives model: the choice rules, saving order and state round trips. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/alt.h"
#include "formats/altfile.h"
#include "grove/journal.h"
#include "testutil.h"

static void
add(struct grove_alt_group *g, const char *path, int prio, const char *slave, const char *file)
{
	struct grove_alt_choice c = { 0 };

	c.path = strdup(path);
	c.priority = prio;
	assert_non_null(c.path);
	if (slave)
		assert_int_equal(grove_alt_choice_set_slave(&c, slave, file), 0);
	assert_int_equal(grove_alt_add_choice(g, &c), 0);
	assert_null(c.path);
}

static const char *
best(const struct grove_alt_group *g, const char *current)
{
	ssize_t i = grove_alt_best(g, current);

	return i < 0 ? NULL : g->choices[i].path;
}

static void
test_alt_best_highest_priority_wins(void **state)
{
	struct grove_alt_group g = { 0 };

	(void)state;
	assert_null(best(&g, NULL));
	add(&g, "/b", 10, NULL, NULL);
	add(&g, "/a", 20, NULL, NULL);
	add(&g, "/c", 5, NULL, NULL);
	assert_string_equal(best(&g, NULL), "/a");
	assert_string_equal(best(&g, "/c"), "/a");
	grove_alt_group_release(&g);
}

static void
test_alt_best_tie_keeps_current_then_list_order(void **state)
{
	struct grove_alt_group g = { 0 };

	(void)state;
	add(&g, "/b", 10, NULL, NULL);
	add(&g, "/c", 10, NULL, NULL);
	add(&g, "/a", 10, NULL, NULL); /* appended: last in list order until saved */
	assert_string_equal(best(&g, "/c"), "/c");
	assert_string_equal(best(&g, NULL), "/b");
	assert_string_equal(best(&g, "/nowhere"), "/b");
	grove_alt_group_normalize(&g); /* saving sorts: the first path in byte order wins */
	assert_string_equal(best(&g, NULL), "/a");
	assert_string_equal(best(&g, "/b"), "/b");
	grove_alt_group_release(&g);
}

static void
test_alt_reinstall_replaces_in_place(void **state)
{
	struct grove_alt_group g = { 0 };

	(void)state;
	add(&g, "/b", 10, "s", "/sb");
	add(&g, "/a", 10, NULL, NULL);
	add(&g, "/b", 1, NULL, NULL);
	assert_int_equal(g.n_choices, 2);
	assert_string_equal(g.choices[0].path, "/b");
	assert_int_equal(g.choices[0].priority, 1);
	assert_null(grove_alt_choice_slave(&g.choices[0], "s"));
	assert_true(grove_alt_remove_choice(&g, "/b"));
	assert_false(grove_alt_remove_choice(&g, "/b"));
	assert_int_equal(g.n_choices, 1);
	grove_alt_group_release(&g);
}

static void
test_alt_normalize_drops_unused_followers(void **state)
{
	struct grove_alt_group g = { 0 };

	(void)state;
	g.name = strdup("ed");
	g.link = strdup("/usr/bin/ed");
	assert_int_equal(grove_alt_group_set_slave(&g, "z", "/usr/bin/z"), 0);
	assert_int_equal(grove_alt_group_set_slave(&g, "unused", "/usr/bin/u"), 0);
	assert_int_equal(grove_alt_group_set_slave(&g, "a", "/usr/bin/a"), 0);
	add(&g, "/opt/2", 1, "z", "/opt/z");
	add(&g, "/opt/1", 1, "a", "/opt/a");
	assert_int_equal(grove_alt_group_normalize(&g), 1);
	assert_int_equal(g.n_slaves, 2);
	assert_string_equal(g.slaves[0].name, "a");
	assert_string_equal(g.slaves[1].name, "z");
	assert_string_equal(g.choices[0].path, "/opt/1");
	grove_alt_group_release(&g);
}

static void
test_alt_names(void **state)
{
	(void)state;
	assert_true(grove_alt_name_ok("editor"));
	assert_false(grove_alt_name_ok("a/b"));
	assert_false(grove_alt_name_ok("a b"));
	assert_false(grove_alt_name_ok(""));
}

static void
test_alt_state_round_trip(void **state)
{
	char *dir = tu_mkdtemp();
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	struct grove_error err = { 0 };
	struct grove_alt_group g = { 0 }, *v = NULL;
	size_t n = 0;
	int64_t id = 0, id2 = 0, other = 0;

	(void)state;
	assert_int_equal(grove_journal_open(dir, &root, &j, &err), 0);
	assert_int_equal(grove_journal_alt_dir(j, "/adm", "/etc/alternatives", &id, &err), 0);
	assert_int_equal(grove_journal_alt_dir(j, "/adm", "/etc/alternatives", &id2, &err), 0);
	assert_int_equal(grove_journal_alt_dir(j, "/adm", "/other", &other, &err), 0);
	assert_int_equal(id, id2);
	assert_true(id != other);
	g.name = strdup("ed");
	g.link = strdup("/usr/bin/ed");
	g.manual = true;
	assert_int_equal(grove_alt_group_set_slave(&g, "ex", "/usr/bin/ex"), 0);
	add(&g, "/opt/b", -3, NULL, NULL);
	add(&g, "/opt/a", 7, "ex", "/opt/ex");
	assert_int_equal(grove_alt_state_save(j, id, &g, &err), 0);
	assert_int_equal(grove_alt_state_load(j, id, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].name, "ed");
	assert_string_equal(v[0].link, "/usr/bin/ed");
	assert_true(v[0].manual);
	assert_int_equal(v[0].n_slaves, 1);
	assert_string_equal(grove_alt_group_slave_link(&v[0], "ex"), "/usr/bin/ex");
	assert_int_equal(v[0].n_choices, 2);
	assert_string_equal(v[0].choices[0].path, "/opt/b"); /* saved order kept */
	assert_int_equal(v[0].choices[0].priority, -3);
	assert_null(grove_alt_choice_slave(&v[0].choices[0], "ex"));
	assert_string_equal(grove_alt_choice_slave(&v[0].choices[1], "ex"), "/opt/ex");
	grove_alt_groups_free(v, n);
	v = NULL;
	assert_int_equal(grove_alt_state_load(j, other, &v, &n, &err), 0);
	assert_int_equal(n, 0);
	free(v);
	/* A group without choices is gone. */
	assert_true(grove_alt_remove_choice(&g, "/opt/a"));
	assert_true(grove_alt_remove_choice(&g, "/opt/b"));
	assert_int_equal(grove_alt_state_save(j, id, &g, &err), 0);
	v = NULL;
	assert_int_equal(grove_alt_state_load(j, id, &v, &n, &err), 0);
	assert_int_equal(n, 0);
	free(v);
	grove_alt_group_release(&g);
	grove_journal_close(j);
	grove_root_release(&root);
	tu_rmtree(dir);
	free(dir);
}

/* A v1 journal (transactions only) migrates to the current version and keeps its rows. */
static void
test_alt_migration_from_v1_keeps_data(void **state)
{
	char *dir = tu_mkdtemp();
	char *db = tu_path(dir, "grove.db");
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	struct grove_error err = { 0 };
	sqlite3 *h = NULL;
	sqlite3_stmt *s = NULL;
	int64_t id = 0;

	(void)state;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(
			h,
			"CREATE TABLE targets (id INTEGER PRIMARY KEY, path TEXT NOT NULL,"
			" dev INTEGER NOT NULL, ino INTEGER NOT NULL, born INTEGER NOT NULL"
			" DEFAULT 0, UNIQUE (dev, ino, born));"
			"CREATE TABLE txns (id INTEGER PRIMARY KEY AUTOINCREMENT, target_id"
			" INTEGER NOT NULL REFERENCES targets(id), state TEXT NOT NULL, command"
			" TEXT, stow_dir TEXT, note TEXT, undoes INTEGER, started REAL NOT NULL,"
			" finished REAL);"
			"CREATE TABLE ops (txn_id INTEGER NOT NULL, seq INTEGER NOT NULL, kind"
			" TEXT NOT NULL, path TEXT NOT NULL, old_text TEXT, text TEXT, stow_path"
			" TEXT, package TEXT, PRIMARY KEY (txn_id, seq)) WITHOUT ROWID;"
			"INSERT INTO targets VALUES (1, '/t', 1, 2, 0);"
			"INSERT INTO txns VALUES (1, 1, 'committed', 'grove stow x', NULL, NULL,"
			" NULL, 1.0, 2.0);"
			"PRAGMA application_id = 1735552886; PRAGMA user_version = 1;",
			NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(h);
	assert_int_equal(grove_journal_open(dir, &root, &j, &err), 0);
	assert_int_equal(grove_journal_alt_dir(j, "/adm", "/alt", &id, &err), 0);
	grove_journal_close(j);
	grove_root_release(&root);
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h,
					    "SELECT count(*) FROM txns WHERE command ="
					    " 'grove stow x'",
					    -1, &s, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(s, 0), 1);
	sqlite3_finalize(s);
	assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(s, 0), GROVE_JOURNAL_VERSION);
	sqlite3_finalize(s);
	sqlite3_close(h);
	tu_rmtree(dir);
	free(db);
	free(dir);
}

/* The administrative file text: update-alternatives' layout, and back. */
static void
test_alt_format_parse_round_trip(void **state)
{
	struct grove_alt_group g = { 0 }, back = { 0 };
	struct grove_error err = { 0 };
	char *text = NULL, *again = NULL;

	(void)state;
	g.name = strdup("ed");
	g.link = strdup("/usr/bin/ed");
	g.manual = true;
	assert_int_equal(grove_alt_group_set_slave(&g, "ex", "/usr/bin/ex"), 0);
	assert_int_equal(grove_alt_group_set_slave(&g, "vi", "/usr/bin/vi"), 0);
	add(&g, "/opt/a", 7, "ex", "/opt/ex");
	add(&g, "/opt/b", -3, "vi", "/opt/vi");
	assert_int_equal(grove_alt_group_format(&g, &text), 0);
	assert_string_equal(text, "manual\n/usr/bin/ed\nex\n/usr/bin/ex\nvi\n/usr/bin/vi\n\n"
				  "/opt/a\n7\n/opt/ex\n\n/opt/b\n-3\n\n/opt/vi\n\n");
	assert_int_equal(grove_alt_group_parse("ed", text, strlen(text), "x", &back, &err), 0);
	assert_string_equal(back.name, "ed");
	assert_true(back.manual);
	assert_int_equal(back.n_choices, 2);
	assert_null(grove_alt_choice_slave(&back.choices[0], "vi"));
	assert_string_equal(grove_alt_choice_slave(&back.choices[1], "vi"), "/opt/vi");
	assert_int_equal(grove_alt_group_format(&back, &again), 0);
	assert_string_equal(text, again);
	free(text);
	free(again);
	grove_alt_group_release(&g);
	grove_alt_group_release(&back);
}

static void
test_alt_parse_refuses_corrupt(void **state)
{
	static const char *const bad[][2] = {
		{ "", "unexpected end of file while trying to read status" },
		{ "auto", "line not terminated while trying to read status" },
		{ "sometimes\n/l\n\n", "invalid status" },
		{ "auto\n/l\ns\n", "unexpected end of file while trying to read slave link" },
		{ "auto\n/l\ns\n/l\n\n\n", "slave link same as main link /l" },
		{ "auto\n/l\ns\n/m\ns\n/n\n\n\n", "duplicate slave name s" },
		{ "auto\n/l\ns\n/m\nt\n/m\n\n\n", "duplicate slave link /m" },
		{ "auto\n/l\n\n/p\n1\n",
		  "unexpected end of file while trying to read master file" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct grove_alt_group g = { 0 };
		struct grove_error err = { 0 };
		char want[160];

		snprintf(want, sizeof(want), "F corrupt: %s", bad[i][1]);
		assert_int_equal(
			grove_alt_group_parse("n", bad[i][0], strlen(bad[i][0]), "F", &g, &err),
			-GROVE_E_CONFIG);
		assert_string_equal(err.msg, want);
		assert_null(g.name);
	}
	/* A NUL byte in a line: update-alternatives' fgets loop reads up to it, so the line is
	 * not terminated. */
	{
		static const char nul_prio[] = "auto\n/l\n\n/p\n1\x00\n\n";
		static const char nul_path[] = "auto\n/l\n\n/p\n1\n\x00\n";
		struct grove_alt_group g = { 0 };
		struct grove_error err = { 0 };

		assert_int_equal(
			grove_alt_group_parse("n", nul_prio, sizeof(nul_prio) - 1, "F", &g, &err),
			-GROVE_E_CONFIG);
		assert_string_equal(err.msg,
				    "F corrupt: line not terminated while trying to read priority");
		assert_int_equal(
			grove_alt_group_parse("n", nul_path, sizeof(nul_path) - 1, "F", &g, &err),
			-GROVE_E_CONFIG);
		assert_string_equal(
			err.msg, "F corrupt: line not terminated while trying to read master file");
	}
}

/* What update-alternatives accepts for a choice whose file is missing (a priority that is no
 * integer, a path written twice) is kept as written, in the file's order, and written back so;
 * grove_altfile_meaning says the same of the file, its text after the last choice aside, and
 * reads "010" as 10. */
static void
test_alt_parse_keeps_what_ua_reads(void **state)
{
	static const char file[] = "manual\n/l\ns\n/s\n\n/p\nten\n\n/b\n010\n/sb\n/p\n+2\n\n"
				   "\njunk\x00after";
	static const char meaning[] = "manual\n/l\ns\n/s\n\n/p\nten\n\n/b\n10\n/sb\n/p\n2\n\n\n";
	struct grove_alt_group g = { 0 };
	struct grove_error err = { 0 };
	char *text = NULL, *m = NULL;

	(void)state;
	assert_int_equal(grove_alt_group_parse("n", file, sizeof(file) - 1, "F", &g, &err), 0);
	assert_int_equal(g.n_choices, 3);
	assert_string_equal(g.choices[0].path, "/p");
	assert_string_equal(g.choices[0].priority_text, "ten");
	assert_string_equal(g.choices[1].path, "/b");
	assert_int_equal(g.choices[1].priority, 10);
	assert_null(g.choices[1].priority_text);
	assert_string_equal(g.choices[2].path, "/p");
	assert_int_equal(g.choices[2].priority, 2);
	assert_int_equal(grove_alt_group_format(&g, &text), 0);
	assert_int_equal(grove_altfile_meaning(file, sizeof(file) - 1, &m), 0);
	assert_string_equal(text, meaning);
	assert_string_equal(m, meaning);
	free(m);
	assert_int_equal(grove_altfile_meaning(text, strlen(text), &m), 0);
	assert_string_equal(m, meaning);
	free(m);
	assert_int_equal(grove_altfile_meaning("auto\n/l\n\n/p\n1\x00\n\n", 14, &m), -EINVAL);
	assert_int_equal(grove_altfile_meaning("bogus\n/l\n\n\n", 12, &m), -EINVAL);
	free(text);
	grove_alt_group_release(&g);
}

static unsigned int
next_rand(unsigned int *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 16;
}

/* On random texts of admin-file lines: whatever the parser reads, grove_altfile_meaning reads
 * alike (the parsed group written back is the file's meaning), and a meaning means itself. */
static void
test_alt_meaning_is_what_parse_reads(void **state)
{
	static const char *const words[] = {
		"manual", "",   "",    "",   "/a", "/b", "/c", "s",
		"t",      "10", "010", "+3", " 7", "-0", "x9", "\x01"
	};
	unsigned int seed = 12345;
	size_t n_parsed = 0;

	(void)state;
	for (int round = 0; round < 20000; round++) {
		char text[512];
		size_t len = 0;
		unsigned int lines = 2 + next_rand(&seed) % 14;
		struct grove_alt_group g = { 0 };
		struct grove_error err = { 0 };
		char *m = NULL, *f = NULL;

		for (unsigned int l = 0; l < lines; l++) {
			unsigned int k = next_rand(&seed) % (sizeof(words) / sizeof(words[0]));
			const char *w = l == 0 && k % 4 ? "auto" : words[k];

			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s\n", w);
		}
		if (next_rand(&seed) % 5 == 0)
			len--; /* sometimes the last line has no newline */
		if (grove_alt_group_parse("n", text, len, "F", &g, &err) == 0) {
			n_parsed++;
			assert_int_equal(grove_altfile_meaning(text, len, &m), 0);
			assert_int_equal(grove_alt_group_format(&g, &f), 0);
			assert_string_equal(f, m);
			free(f);
			assert_int_equal(grove_altfile_meaning(m, strlen(m), &f), 0);
			assert_string_equal(f, m);
			free(f);
			free(m);
			grove_alt_group_release(&g);
		}
	}
	assert_true(n_parsed > 100);
}

/* A transaction's group change is saved by its commit, and only by it. */
static void
test_alt_group_saved_with_commit(void **state)
{
	char *dir = tu_mkdtemp();
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	struct grove_error err = { 0 };
	struct grove_plan plan;
	struct grove_journal_alt_change ch = { 0 }, *v = NULL;
	int64_t id = 0, tid = 0, t1 = 0, t2 = 0;
	char *text = NULL;
	size_t n = 0;

	(void)state;
	grove_plan_init(&plan);
	assert_int_equal(grove_journal_open(dir, &root, &j, &err), 0);
	assert_int_equal(grove_journal_target(j, &root, &tid, &err), 0);
	assert_int_equal(grove_journal_alt_dir(j, "/adm", "/alt", &id, &err), 0);
	ch.dir_id = id;
	ch.name = "ed";
	ch.after = "auto\n/usr/bin/ed\n\n/opt/a\n5\n\n";
	assert_int_equal(grove_journal_begin_alt(j, tid, "one", NULL, 0, &plan, &ch, 1, &t1, &err),
			 0);
	assert_int_equal(grove_journal_alt_text(j, id, "ed", &text, &err), 0);
	assert_null(text); /* not before the commit */
	assert_int_equal(grove_journal_finish(j, t1, GROVE_TXN_COMMITTED, NULL, &err), 0);
	assert_int_equal(grove_journal_alt_text(j, id, "ed", &text, &err), 0);
	assert_non_null(text);
	assert_string_equal(text, ch.after);
	free(text);
	/* Rolled back: the group stays as it was. */
	ch.before = ch.after;
	ch.after = NULL;
	assert_int_equal(grove_journal_begin_alt(j, tid, "two", NULL, 0, &plan, &ch, 1, &t2, &err),
			 0);
	assert_int_equal(grove_journal_finish(j, t2, GROVE_TXN_ROLLED_BACK, "x", &err), 0);
	assert_int_equal(grove_journal_alt_text(j, id, "ed", &text, &err), 0);
	assert_non_null(text);
	assert_string_equal(text, ch.before);
	free(text);
	assert_int_equal(grove_journal_alt_changes(j, t2, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].before, ch.before);
	assert_null(v[0].after);
	grove_journal_alt_changes_free(v, n);
	grove_journal_close(j);
	grove_root_release(&root);
	grove_plan_release(&plan);
	tu_rmtree(dir);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alt_best_highest_priority_wins),
		cmocka_unit_test(test_alt_best_tie_keeps_current_then_list_order),
		cmocka_unit_test(test_alt_reinstall_replaces_in_place),
		cmocka_unit_test(test_alt_normalize_drops_unused_followers),
		cmocka_unit_test(test_alt_names),
		cmocka_unit_test(test_alt_state_round_trip),
		cmocka_unit_test(test_alt_migration_from_v1_keeps_data),
		cmocka_unit_test(test_alt_format_parse_round_trip),
		cmocka_unit_test(test_alt_parse_refuses_corrupt),
		cmocka_unit_test(test_alt_parse_keeps_what_ua_reads),
		cmocka_unit_test(test_alt_meaning_is_what_parse_reads),
		cmocka_unit_test(test_alt_group_saved_with_commit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
