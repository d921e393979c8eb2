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
		bool got = grove_ignore_list_match(list, default_cases[i].path);

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
		bool got = grove_ignore_list_match(list, local_cases[i].path);

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
	assert_true(grove_ignore_list_match(list, ".stow-local-ignore"));
	assert_false(grove_ignore_list_match(list, "README"));
	assert_false(grove_ignore_list_match(list, "a"));
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
		if (grove_pattern_set_match(set, c->path) != c->match)
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
	assert_false(grove_pattern_set_match(set, "bin"));
	assert_int_equal(grove_pattern_set_add(set, "bin", &err), 0);
	assert_int_equal(grove_pattern_set_add(set, "man", &err), 0);
	assert_int_equal(grove_pattern_set_count(set), 2);
	assert_true(grove_pattern_set_match(set, "man/man1"));
	assert_true(grove_pattern_set_match(set, "bin/ls"));
	assert_false(grove_pattern_set_match(set, "share/man"));
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
	bool a = grove_ignore_list_match(fast, path), b = grove_ignore_list_match(re, path);

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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
