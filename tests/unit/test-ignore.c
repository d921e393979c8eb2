/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests: Stow's ignore lists and --ignore/--defer/--override patterns, checked against GNU
 * Stow 2.4.1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "grove/ignore.h"

struct ignore_case {
	const char *path;
	bool ignored;
};

/* The expectations below were produced by GNU Stow 2.4.1's own Stow.pm
 * (get_ignore_regexps_from_fh and the matching in Stow::ignore), not by grove. */
static const struct ignore_case default_cases[] = {
	{ "README.md", true },
	{ "doc/README.md", false },
	{ "README", true },
	{ "foo~", true },
	{ "a/foo~", true },
	{ ".git", true },
	{ "a/b/.git", true },
	{ "a/.gitignore", true },
	{ "#x#", true },
	{ "a/#x#", true },
	{ ".gitx", false },
	{ "LICENSE", true },
	{ "x/LICENSE", false },
	{ "COPYING", true },
	{ "COPYINGx", false },
	{ ".stow-local-ignore", true },
	{ "a/.stow-local-ignore", false },
	{ "RCS", true },
	{ "a/b,v", true },
	{ ",v", false },
	{ ".#foo", true },
	{ ".#", false },
	{ "CVS", true },
	{ "x/CVS/y", false },
	{ "_darcs", true },
	{ ".hg", true },
	{ ".svn", true },
	{ ".cvsignore", true },
	{ "foo", false },
	{ "bar/.gitmodules", true },
};

static void
test_ignore_default_list(void **state)
{
	struct grove_ignore_list *list = NULL;
	struct grove_error err = { 0 };

	(void)state;
	assert_int_equal(grove_ignore_list_default(&list, &err), 0);
	for (size_t i = 0; i < sizeof(default_cases) / sizeof(default_cases[0]); i++) {
		bool got = grove_ignore_list_match(list, default_cases[i].path, NULL);

		if (got != default_cases[i].ignored)
			fail_msg("built-in list: '%s' expected %d got %d", default_cases[i].path,
				 default_cases[i].ignored, got);
	}
	grove_ignore_list_free(list);
}

/* A local list with comments, escapes, path and segment patterns, blank and
 * whitespace-only lines, "foo #" (a '#' with nothing after it is no comment),
 * a pattern holding '|' and '/', and a last line without a newline. */
static const char local_text[] = "# comment\n"
				 "  \\#hash\\#   # trailing comment\n"
				 "bin/.*\\.bak\n"
				 "^/top\n"
				 "foo #\n"
				 "build/\n"
				 ".*\\.o\n"
				 "c #d #e\n"
				 "\n"
				 "\t   \n"
				 "x|y/z\n"
				 "tail\\#";

static const struct ignore_case local_cases[] = {
	{ "#hash#", true },
	{ "d/#hash#", true },
	{ "bin/x.bak", true },
	{ "bin/x.bakk", false },
	{ "src/bin/x.bak", true },
	{ "top", true },
	{ "top/x", true },
	{ "a/top", false },
	{ "foo #", true },
	{ "foo", false },
	{ "build", false },
	{ "x/build", true },
	{ "build/y", false },
	{ "x.o", true },
	{ "d/x.o", true },
	{ "x.oo", false },
	{ "c", true },
	{ "d/c", true },
	{ "c #d", false },
	{ "x", true },
	{ "q/x", true },
	{ "y/z", true },
	{ "w/y/z", true },
	{ "tail#", true },
	{ ".stow-local-ignore", true },
	{ "README.md", false }, /* the built-in list does not apply */
	{ "foo~", false },
	{ ".git", false },
	{ "x.o/y", false },
};

static void
test_ignore_local_list(void **state)
{
	struct grove_ignore_list *list = NULL;
	struct grove_error err = { 0 };

	(void)state;
	assert_int_equal(
		grove_ignore_list_parse(local_text, "'pkg/.stow-local-ignore'", &list, &err), 0);
	for (size_t i = 0; i < sizeof(local_cases) / sizeof(local_cases[0]); i++) {
		bool got = grove_ignore_list_match(list, local_cases[i].path, NULL);

		if (got != local_cases[i].ignored)
			fail_msg("local list: '%s' expected %d got %d", local_cases[i].path,
				 local_cases[i].ignored, got);
	}
	grove_ignore_list_free(list);
}

static void
test_ignore_empty_list_keeps_local_ignore_file(void **state)
{
	struct grove_ignore_list *list = NULL;
	struct grove_error err = { 0 };

	(void)state;
	assert_int_equal(grove_ignore_list_parse("# nothing\n\n", "'x'", &list, &err), 0);
	assert_true(grove_ignore_list_match(list, ".stow-local-ignore", NULL));
	assert_false(grove_ignore_list_match(list, "README", NULL));
	assert_false(grove_ignore_list_match(list, "a", NULL));
	grove_ignore_list_free(list);
}

static void
test_ignore_bad_regex_names_it(void **state)
{
	struct grove_ignore_list *list = NULL;
	struct grove_error err = { 0 };

	(void)state;
	assert_int_equal(
		grove_ignore_list_parse("ok\nfoo(\n", "'/h/.stow-global-ignore'", &list, &err),
		-GROVE_E_CONFIG);
	assert_null(list);
	assert_non_null(strstr(err.msg, "'foo('"));
	assert_non_null(strstr(err.msg, "'/h/.stow-global-ignore'"));
}

struct pattern_case {
	enum grove_pattern_anchor anchor;
	const char *re;
	const char *path;
	bool match;
};

/* From Perl 5.36: $path =~ qr{($re)\z} (--ignore) and qr{\A($re)} (--defer, --override). */
static const struct pattern_case pattern_cases[] = {
	{ GROVE_ANCHOR_END, "\\.bak", "a.bak", true },
	{ GROVE_ANCHOR_END, "\\.bak", "a.bak/x", false },
	{ GROVE_ANCHOR_END, "\\.bak", "x.bakx", false },
	{ GROVE_ANCHOR_END, "\\.bak", "a.bak\n", false },
	{ GROVE_ANCHOR_END, "a|b", "xa", true },
	{ GROVE_ANCHOR_END, "a|b", "xb", true },
	{ GROVE_ANCHOR_END, "a|b", "ax", false },
	{ GROVE_ANCHOR_END, "^foo", "foo", true },
	{ GROVE_ANCHOR_END, "^foo", "xfoo", false },
	{ GROVE_ANCHOR_END, "^foo", "foo/x", false },
	{ GROVE_ANCHOR_END, "o$", "foo", true },
	{ GROVE_ANCHOR_END, "o$", "foo\n", false },
	{ GROVE_ANCHOR_END, "\\i", "x\\i", true }, /* Perl passes unknown escapes through */
	{ GROVE_ANCHOR_END, "foo/", "a/foo/", true },
	{ GROVE_ANCHOR_START, "bin", "bin", true },
	{ GROVE_ANCHOR_START, "bin", "bin/x", true },
	{ GROVE_ANCHOR_START, "bin", "xbin", false },
	{ GROVE_ANCHOR_START, "bin", "sbin/bin", false },
	{ GROVE_ANCHOR_START, "a|b", "ax", true },
	{ GROVE_ANCHOR_START, "a|b", "bx", true },
	{ GROVE_ANCHOR_START, "a|b", "xa", false },
	{ GROVE_ANCHOR_START, "man/", "man/x", true },
	{ GROVE_ANCHOR_START, "man/", "man", false },
};

static void
test_ignore_pattern_anchors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(pattern_cases) / sizeof(pattern_cases[0]); i++) {
		const struct pattern_case *c = &pattern_cases[i];
		struct grove_pattern_set *set = grove_pattern_set_new(c->anchor);
		struct grove_error err = { 0 };

		assert_non_null(set);
		assert_int_equal(grove_pattern_set_add(set, c->re, &err), 0);
		if (grove_pattern_set_match(set, c->path, NULL) != c->match)
			fail_msg("pattern '%s' on '%s': expected %d", c->re, c->path, c->match);
		grove_pattern_set_free(set);
	}
}

static void
test_ignore_pattern_set_any(void **state)
{
	struct grove_pattern_set *set = grove_pattern_set_new(GROVE_ANCHOR_START);
	struct grove_error err = { 0 };

	(void)state;
	assert_int_equal(grove_pattern_set_count(set), 0);
	assert_false(grove_pattern_set_match(set, "bin", NULL));
	assert_int_equal(grove_pattern_set_add(set, "bin", &err), 0);
	assert_int_equal(grove_pattern_set_add(set, "man", &err), 0);
	assert_int_equal(grove_pattern_set_count(set), 2);
	assert_true(grove_pattern_set_match(set, "man/man1", NULL));
	assert_true(grove_pattern_set_match(set, "bin/ls", NULL));
	assert_false(grove_pattern_set_match(set, "share/man", NULL));
	assert_null(grove_pattern_set_free(set));
	assert_null(grove_pattern_set_free(NULL));
}

static void
test_ignore_pattern_bad_regex(void **state)
{
	struct grove_pattern_set *set = grove_pattern_set_new(GROVE_ANCHOR_END);
	struct grove_error err = { 0 };

	(void)state;
	assert_int_equal(grove_pattern_set_add(set, "a(", &err), -GROVE_E_USAGE);
	assert_non_null(strstr(err.msg, "'a('"));
	assert_non_null(strstr(err.msg, "--ignore"));
	assert_int_equal(grove_pattern_set_count(set), 0);
	grove_pattern_set_free(set);
}

static void
compare_builtin(const struct grove_ignore_list *fast, const struct grove_ignore_list *re,
		const char *path, size_t *n_ignored)
{
	bool a = grove_ignore_list_match(fast, path, NULL),
	     b = grove_ignore_list_match(re, path, NULL);

	if (a != b)
		fail_msg("built-in list on '%s': %d, its regexes say %d", path, a, b);
	*n_ignored += b;
}

/* The built-in list decides paths in C (no regex); the same text parsed as
 * any other list goes through the regexes. Both must agree on every path:
 * all strings up to 4 characters over an alphabet of the characters the
 * patterns care about, and every sequence of up to 3 tokens from the list. */
static void
test_ignore_builtin_matches_its_regexes(void **state)
{
	static const char alphabet[] = "RCSv,.#~/_\na";
	static const char *const tokens[] = {
		"README",      "LICENSE", "COPYING",    ".stow-local-ignore",
		"RCS",         "CVS",     ".cvsignore", ".svn",
		"_darcs",      ".hg",     ".git",       ".gitignore",
		".gitmodules", "/",       "\n",         "x",
		",v",          "~",       "#",          ".#",
		"README.md",   "x/",
	};
	const size_t n_alpha = sizeof(alphabet) - 1, n_tok = sizeof(tokens) / sizeof(tokens[0]);
	struct grove_ignore_list *fast = NULL, *re = NULL;
	struct grove_error err = { 0 };
	size_t n_ignored = 0, n_paths = 0;
	char buf[128];

	(void)state;
	assert_int_equal(grove_ignore_list_default(&fast, &err), 0);
	assert_int_equal(
		grove_ignore_list_parse(grove_ignore_list_default_text(), "(test)", &re, &err), 0);
	for (size_t len = 1; len <= 4; len++) {
		size_t total = 1;

		for (size_t i = 0; i < len; i++)
			total *= n_alpha;
		for (size_t v = 0; v < total; v++) {
			size_t x = v;

			for (size_t i = 0; i < len; i++, x /= n_alpha)
				buf[i] = alphabet[x % n_alpha];
			buf[len] = '\0';
			compare_builtin(fast, re, buf, &n_ignored);
			n_paths++;
		}
	}
	for (size_t a = 0; a < n_tok; a++)
		for (size_t b = 0; b <= n_tok; b++)
			for (size_t c = 0; c <= n_tok; c++) {
				snprintf(buf, sizeof(buf), "%s%s%s", tokens[a],
					 b < n_tok ? tokens[b] : "", c < n_tok ? tokens[c] : "");
				compare_builtin(fast, re, buf, &n_ignored);
				n_paths++;
			}
	/* Both answers occur often enough for the comparison to mean something. */
	assert_true(n_ignored > n_paths / 20 && n_ignored < n_paths - n_paths / 20);
	grove_ignore_list_free(fast);
	grove_ignore_list_free(re);
}

/* A run of 'a's: catastrophic for (a|a)* and friends in a backtracking engine. */
static char *
run_of(char c, size_t n, const char *tail)
{
	size_t t = strlen(tail);
	char *s = malloc(n + t + 1);

	assert_non_null(s);
	memset(s, c, n);
	memcpy(s + n, tail, t + 1);
	return s;
}

/* A pattern with catastrophic backtracking is an error naming the list, the
 * pattern and the entry, in bounded work: never "not ignored" (that would link
 * a file the user asked to ignore), whatever the other patterns say. */
static void
test_ignore_costly_pattern_is_an_error(void **state)
{
	static const char *const lists[] = {
		"(a|a)*\n",
		"(a|a)*/nomatch\na+/secret\n",
		"x\n(a*)*b\ny\n",
		"((a+)+)+c\n",
	};
	char *name = run_of('a', 40, "!bc");
	char *path = run_of('a', 40, "/secret");

	(void)state;
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		struct grove_ignore_list *list = NULL;
		struct grove_error err = { 0 };
		int r;

		grove_ignore_budget_reset();
		assert_int_equal(
			grove_ignore_list_parse(lists[i], "'pkg/.stow-local-ignore'", &list, &err),
			0);
		r = grove_ignore_list_match(list, i == 1 ? path : name, &err);
		if (r != -GROVE_E_BADINPUT)
			fail_msg("list %zu: %d, expected an error", i, r);
		assert_non_null(strstr(err.msg, "'pkg/.stow-local-ignore'"));
		assert_non_null(strstr(err.msg, i == 1   ? "(a|a)*/nomatch"
						: i == 2 ? "(a*)*b"
							 : "a"));
		assert_non_null(strstr(err.msg, "costs too much"));
		grove_ignore_list_free(list);
	}
	free(name);
	free(path);
}

/* 10,000 costly entries: every one is an error (the budget does not run out
 * into "no match"), and the budget bounds the total work of the run. */
static void
test_ignore_budget_over_many_entries(void **state)
{
	struct grove_ignore_list *list = NULL;
	struct grove_pattern_set *set = grove_pattern_set_new(GROVE_ANCHOR_END);
	struct grove_error err = { 0 };
	size_t errors = 0;

	(void)state;
	grove_ignore_budget_reset();
	assert_int_equal(grove_ignore_list_parse("(a|a)*\n", "(t)", &list, &err), 0);
	assert_int_equal(grove_pattern_set_add(set, "(x+x+)+y", &err), 0);
	for (size_t i = 0; i < 10000; i++) {
		char *name = run_of('a', 30 + i % 20, "!");
		char *xs = run_of('x', 30 + i % 20, "!y");

		errors += grove_ignore_list_match(list, name, &err) == -GROVE_E_BADINPUT;
		errors += grove_pattern_set_match(set, xs, &err) == -GROVE_E_BADINPUT;
		free(name);
		free(xs);
	}
	assert_int_equal(errors, 20000);
	assert_non_null(strstr(err.msg, "'--ignore'"));
	assert_non_null(strstr(err.msg, "(x+x+)+y"));
	grove_pattern_set_free(set);
	grove_ignore_list_free(list);
}

/* Honest patterns over long paths stay under the cheap limit: no error, and
 * the same answers as without a budget. */
static void
test_ignore_honest_patterns_within_budget(void **state)
{
	struct grove_ignore_list *list = NULL;
	struct grove_error err = { 0 };
	char *deep = malloc(4096);
	size_t len = 0;

	(void)state;
	assert_non_null(deep);
	while (len + 9 < 4000) {
		memcpy(deep + len, "dir.d/sub", 9);
		len += 9;
		deep[len++] = '/';
	}
	memcpy(deep + len, "x.swp", 6);
	grove_ignore_budget_reset();
	assert_int_equal(grove_ignore_list_parse(".*\\.swp\n.*\\.o\nbuild/.+\n"
						 "^/README.*\n(foo|bar)+baz\n",
						 "(t)", &list, &err),
			 0);
	for (size_t i = 0; i < 20000; i++)
		assert_int_equal(grove_ignore_list_match(list, deep, &err), 1);
	deep[len + 4] = 'q';
	assert_int_equal(grove_ignore_list_match(list, deep, &err), 0);
	grove_ignore_list_free(list);
	free(deep);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ignore_default_list),
		cmocka_unit_test(test_ignore_builtin_matches_its_regexes),
		cmocka_unit_test(test_ignore_local_list),
		cmocka_unit_test(test_ignore_empty_list_keeps_local_ignore_file),
		cmocka_unit_test(test_ignore_bad_regex_names_it),
		cmocka_unit_test(test_ignore_pattern_anchors),
		cmocka_unit_test(test_ignore_pattern_set_any),
		cmocka_unit_test(test_ignore_pattern_bad_regex),
		cmocka_unit_test(test_ignore_costly_pattern_is_an_error),
		cmocka_unit_test(test_ignore_budget_over_many_entries),
		cmocka_unit_test(test_ignore_honest_patterns_within_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
