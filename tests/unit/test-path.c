/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests: lexical paths, against values GNU Stow 2.4.1's Stow::Util and File::Spec print. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "grove/path.h"

/* Each expected value below was printed by Stow 2.4.1's Stow::Util::join_paths, parent,
 * adjust_dotfile, unadjust_dotfile and File::Spec->abs2rel. */
static const struct {
	const char *a, *b, *want;
} joins[] = {
	{ "bin", "../stow/a/bin/x", "stow/a/bin/x" },
	{ ".", "x", "x" },
	{ "", "stow/a", "stow/a" },
	{ "a/b", "../../c", "c" },
	{ "a", "/abs/x", "/abs/x" },
	{ "..", "../s/a", "../../s/a" },
	{ "x/..foo", "..", "x/..foo/.." },
	{ "a//b/./c/", "", "a/b/c" },
	{ "stow/./a/", "../b", "stow/b" },
	{ "a/b/c", "../../../../x", "../x" },
	/* one name joined to a folder (grove's fast path) and its near misses */
	{ "/", "x", "/x" },
	{ "a/b", "c", "a/b/c" },
	{ "/a/b", "c", "/a/b/c" },
	{ "a/./b", "c", "a/b/c" },
	{ "a/b/", "c", "a/b/c" },
	{ "a/b/..", "c", "a/c" },
	{ "..foo", "x", "..foo/x" },
	{ "../s", "x", "../s/x" },
	{ "a", ".x", "a/.x" },
	{ "a", "..x", "a/..x" },
	{ "a", "..", "" },
	{ "a", ".", "a" },
	{ "/..", "x", "/x" },
	{ ".", "...", "..." },
	{ "a/.", "b", "a/b" },
	{ "../stow", "p/bin/x", "../stow/p/bin/x" },
	{ "../../", "../stow/p/x", "../../../stow/p/x" },
	{ "../..//", "./x", "../../x" },
	{ "a/../..", "b", "../b" },
	{ "../x/", "../y", "../y" },
	{ "/a", "../b", "/b" },
	{ "..foo/..", "x", "..foo/../x" },
	{ "", "", "" },
	{ "a//b", "c//d", "a/b/c/d" },
	{ "/", "/", "/" },
	/* a clean folder copied whole (grove's second fast path), then b's components */
	{ "x/y/z", "../../w", "x/w" },
	{ "x/y", "../../../w", "../w" },
	{ "x/y", "../../..", ".." },
	{ "x.y/z", "../..", "" },
	{ "x/y", "./z", "x/y/z" },
	{ "x/y", "../.a", "x/.a" },
	{ "a.b/c", "d/../e", "a.b/c/e" },
	{ "a-b/c d", "e", "a-b/c d/e" },
	{ "x/y", "z/", "x/y/z" },
	{ "x/y.", "..z", "x/y./..z" },
	{ "/x/y", "z", "/x/y/z" },
};

/* The joins into a buffer give want (grove_path_join's answer) when it fits, -1 when not: for
 * a buffer one byte short, just big enough and ample. */
static void
check_into(const char *a, const char *b, const char *want)
{
	char buf[160];
	size_t wl = strlen(want);

	/* One byte short, just enough, ample. */
	const size_t sizes[] = { wl ? wl : 1, wl + 1, sizeof(buf) };

	for (size_t z = 0; z < 3 && sizes[z] <= sizeof(buf); z++) {
		size_t size = sizes[z];

		int n1, n2;

		memset(buf, 'z', sizeof(buf));
		n1 = grove_path_join_into(a, b, buf, size);
		if (size <= wl ? n1 != -1 : (n1 != (int)wl || strcmp(buf, want) != 0))
			fail_msg("join_into('%s', '%s', %zu) = %d '%.*s', want '%s'", a, b, size,
				 n1, n1 < 0 ? 0 : n1, buf, want);
		if (size < sizeof(buf) && buf[size] != 'z')
			fail_msg("join_into('%s', '%s', %zu) wrote past its buffer", a, b, size);
		memset(buf, 'z', sizeof(buf));
		n2 = grove_path_join_names_into(a, b, buf, size);
		if (size <= wl ? n2 != -1 : (n2 != (int)wl || strcmp(buf, want) != 0))
			fail_msg("join_names_into('%s', '%s', %zu) = %d '%.*s', want '%s'", a, b,
				 size, n2, n2 < 0 ? 0 : n2, buf, want);
		if (size < sizeof(buf) && buf[size] != 'z')
			fail_msg("join_names_into('%s', '%s', %zu) wrote past its buffer", a, b,
				 size);
	}
}

static void
test_path_join_matches_stow(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(joins) / sizeof(joins[0]); i++) {
		char *got = grove_path_join(joins[i].a, joins[i].b);
		assert_non_null(got);
		check_into(joins[i].a, joins[i].b, joins[i].want);
		if (strcmp(got, joins[i].want) != 0)
			fail_msg("join('%s', '%s') = '%s', want '%s'", joins[i].a, joins[i].b, got,
				 joins[i].want);
		free(got);
	}
}

static void
random_path(unsigned long *seed, char *buf, size_t n_comp, bool may_abs)
{
	static const char *const comps[] = { "x", "yy", "..", ".", "..z", ".h", "", "a.b" };

	buf[0] = '\0';
	*seed = *seed * 6364136223846793005UL + 1442695040888963407UL;
	if (may_abs && (*seed >> 60) % 4 == 0)
		strcat(buf, "/");
	for (size_t i = 0; i < n_comp; i++) {
		*seed = *seed * 6364136223846793005UL + 1442695040888963407UL;
		if (i)
			strcat(buf, "/");
		strcat(buf, comps[(*seed >> 33) % (sizeof(comps) / sizeof(comps[0]))]);
	}
}

static void
test_path_parent_matches_stow(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "a/b", "a" },     { "a", "" },  { "a//b/", "a" }, { "/a/b", "/a" },
		{ "", "" },         { "/x", "" }, { "///", "" },    { "../s/p//", "../s" },
		{ "a///b//", "a" }, { "..", "" }, { "x/..", "x" },
	};
	unsigned long seed = 5;
	char a[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = grove_path_parent(cases[i].in);
		assert_string_equal(got, cases[i].want);
		assert_int_equal(grove_path_parent_len(cases[i].in), strlen(cases[i].want));
		free(got);
	}
	/* grove_path_parent_len is the length of the prefix grove_path_parent copies. */
	for (int i = 0; i < 20000; i++) {
		char *want;

		random_path(&seed, a, 1 + (size_t)(seed >> 40) % 4, true);
		want = grove_path_parent(a);
		assert_non_null(want);
		if (grove_path_parent_len(a) != strlen(want) || strncmp(a, want, strlen(want)) != 0)
			fail_msg("parent_len('%s') = %zu, parent '%s'", a, grove_path_parent_len(a),
				 want);
		free(want);
	}
}

static void
test_path_abs2rel_matches_file_spec(void **state)
{
	static const struct {
		const char *path, *base, *want;
	} cases[] = {
		{ "/a/s", "/a/t", "../s" }, { "/a/t/stow", "/a/t", "stow" },
		{ "/", "/a", ".." },        { "/a", "/", "a" },
		{ "/ab", "/a", "../ab" },   { "/x/y/z", "/x/q/r", "../../y/z" },
		{ "/same", "/same", "." },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = grove_path_abs2rel(cases[i].path, cases[i].base);
		if (strcmp(got, cases[i].want) != 0)
			fail_msg("abs2rel('%s', '%s') = '%s', want '%s'", cases[i].path,
				 cases[i].base, got, cases[i].want);
		free(got);
	}
}

static void
test_path_dotfiles_match_stow(void **state)
{
	static const struct {
		const char *in, *adj, *unadj;
	} cases[] = {
		{ "dot-bashrc", ".bashrc", "dot-bashrc" },
		{ "dot-", "dot-", "dot-" },
		{ "dot-.x", "dot-.x", "dot-.x" },
		{ "dotfile", "dotfile", "dotfile" },
		{ ".x", ".x", "dot-x" },
		{ "..", "..", ".." },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *a = grove_dotfile_adjust(cases[i].in);
		char *u = grove_dotfile_unadjust(cases[i].in);
		assert_string_equal(a, cases[i].adj);
		assert_string_equal(u, cases[i].unadj);
		free(a);
		free(u);
	}
}

static void
test_path_canon_and_prefix(void **state)
{
	char *c;

	(void)state;
	c = grove_path_canon("./a//b/./");
	assert_string_equal(c, "a/b");
	free(c);
	c = grove_path_canon(".");
	assert_string_equal(c, ".");
	free(c);
	c = grove_path_canon("/../x");
	assert_string_equal(c, "/x");
	free(c);
	assert_string_equal(grove_path_strip_prefix("stow/a/x", "stow"), "a/x");
	assert_null(grove_path_strip_prefix("stowx/a", "stow"));
	assert_null(grove_path_strip_prefix("stow", "stow"));
	assert_int_equal(grove_path_slashes("a/b/c"), 2);
	assert_int_equal(grove_path_slashes(""), 0);
	assert_int_equal(grove_path_slashes("abc"), 0);
	assert_int_equal(grove_path_slashes("/a//b/"), 4);
	assert_int_equal(grove_path_slashes("//"), 2);
}

/* Joins of plain paths take join_plain's one pass; a "." component forces the long way
 * (canonicalise, join, collapse), which must give the same path: a with "./"
 * put in front (after the root's '/' for an absolute a) is the same folder. */
static void
test_path_join_shortcuts_match_long_way(void **state)
{
	unsigned long seed = 7;
	char a[64], b[64], dotted[80];

	(void)state;
	for (int i = 0; i < 200000; i++) {
		char *fast, *slow;

		random_path(&seed, a, 1 + (size_t)(seed >> 40) % 4, true);
		random_path(&seed, b, 1 + (size_t)(seed >> 50) % 2, false);
		if (!a[0] || !b[0])
			continue;
		if (a[0] == '/')
			snprintf(dotted, sizeof(dotted), "/./%s", a + 1);
		else
			snprintf(dotted, sizeof(dotted), "./%s", a);
		fast = grove_path_join(a, b);
		slow = grove_path_join(dotted, b);
		if ((fast == NULL) != (slow == NULL) || (fast && strcmp(fast, slow) != 0))
			fail_msg("join('%s', '%s') = '%s', join('%s', '%s') = '%s'", a, b,
				 fast ? fast : "(null)", dotted, b, slow ? slow : "(null)");
		free(fast);
		free(slow);
	}
}

/* grove_path_join_ups_into gives want (the join of level "../" and a) when it fits, -1 when
 * not. */
static void
check_ups_into(int level, const char *a, const char *want)
{
	char buf[160];
	size_t wl = strlen(want);

	/* One byte short, just enough, ample. */
	const size_t sizes[] = { wl ? wl : 1, wl + 1, sizeof(buf) };

	for (size_t z = 0; z < 3 && sizes[z] <= sizeof(buf); z++) {
		size_t size = sizes[z];

		int n;

		memset(buf, 'z', sizeof(buf));
		n = grove_path_join_ups_into(level, a, buf, size);
		if (size <= wl ? n != -1 : (n != (int)wl || strcmp(buf, want) != 0))
			fail_msg("join_ups_into(%d, '%s', %zu) = %d '%.*s', want '%s'", level, a,
				 size, n, n < 0 ? 0 : n, buf, want);
		if (size < sizeof(buf) && buf[size] != 'z')
			fail_msg("join_ups_into(%d, '%s', %zu) wrote past its buffer", level, a,
				 size);
	}
}

/* When grove_path_glues(a, b) says so, the joins of a, b and a name are the texts glued. */
static void
check_glues(const char *a, const char *b)
{
	static const char *const names[] = { "x", ".h", "..z", "a.b", "...", "-" };
	char glued[160], ups[200];

	if (!grove_path_glues(a, b))
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *names_b = NULL, *got;

		snprintf(glued, sizeof(glued), "%s/%s%s%s", a, b ? b : "", b ? "/" : "", names[i]);
		if (b) {
			names_b = malloc(strlen(b) + strlen(names[i]) + 2);
			assert_non_null(names_b);
			sprintf(names_b, "%s/%s", b, names[i]);
		}
		got = grove_path_join_names(a, names_b ? names_b : names[i]);
		assert_non_null(got);
		if (strcmp(got, glued) != 0)
			fail_msg("glues('%s', '%s') but join_names gives '%s', not '%s'", a,
				 b ? b : "(null)", got, glued);
		free(got);
		free(names_b);
		if (a[0] == '/')
			continue;
		for (int level = 0; level < 3; level++) {
			ups[0] = '\0';
			for (int k = 0; k < level; k++)
				strcat(ups, "../");
			strcat(ups, glued);
			got = grove_path_join_ups(level, glued);
			assert_non_null(got);
			if (strcmp(got, ups) != 0)
				fail_msg("glues('%s', '%s') but join_ups(%d, '%s') gives '%s'", a,
					 b ? b : "(null)", level, glued, got);
			free(got);
		}
	}
}

/* grove_path_entry and grove_path_glue give grove_path_join_names' answer, in the buffer when
 * it fits (ample, one byte short), else in *heap. */
static void
check_entry(const char *a, const char *b)
{
	char *want = grove_path_join_names(a, b);
	char buf[160], *heap = NULL, *heap2 = NULL;
	size_t wl;

	assert_non_null(want);
	wl = strlen(want);
	for (int z = 0; z < 2; z++) {
		size_t size = z ? (wl ? wl : 1) : sizeof(buf);
		const char *e = grove_path_entry(a, b, buf, size, &heap);
		const char *g = grove_path_glue(a, strlen(a), grove_path_glues(a, NULL), b,
						strlen(b), buf + 80, size < 80 ? size : 80, &heap2);

		assert_non_null(e);
		if (strcmp(e, want) != 0 || (e != buf) != (wl >= size))
			fail_msg("entry('%s', '%s', %zu) = '%s', want '%s'", a, b, size, e, want);
		assert_non_null(g);
		if (strcmp(g, want) != 0)
			fail_msg("glue('%s', '%s', %zu) = '%s', want '%s'", a, b, size, g, want);
	}
	free(heap);
	free(heap2);
	free(want);
}

/* The planner's one-copy joins give grove_path_join's answers, whatever the parts. */
static void
test_path_join_names_and_ups_match_join(void **state)
{
	unsigned long seed = 11;
	char a[64], b[64], ups[16];

	(void)state;
	for (int i = 0; i < 200000; i++) {
		int level = (int)((seed >> 20) % 4);
		char *want, *got;

		random_path(&seed, a, 1 + (size_t)(seed >> 40) % 4, true);
		random_path(&seed, b, 1 + (size_t)(seed >> 50) % 3, (seed >> 10) % 8 == 0);
		want = grove_path_join(a, b);
		got = grove_path_join_names(a, b);
		if ((want == NULL) != (got == NULL) || (want && strcmp(want, got) != 0))
			fail_msg("join_names('%s', '%s') = '%s', join = '%s'", a, b,
				 got ? got : "(null)", want ? want : "(null)");
		check_into(a, b, want);
		check_glues(a, b);
		check_glues(a, NULL);
		check_entry(a, b);
		free(want);
		free(got);
		ups[0] = '\0';
		for (int k = 0; k < level; k++)
			strcat(ups, "../");
		{
			char link[96];

			snprintf(link, sizeof(link), "%s%s", ups, b);
			want = grove_path_join(a, link);
			check_into(a, link, want);
			free(want);
		}
		want = grove_path_join(ups, a);
		got = grove_path_join_ups(level, a);
		if ((want == NULL) != (got == NULL) || (want && strcmp(want, got) != 0))
			fail_msg("join_ups(%d, '%s') = '%s', join = '%s'", level, a,
				 got ? got : "(null)", want ? want : "(null)");
		check_ups_into(level, a, want);
		free(want);
		free(got);
	}
}

/* When grove_path_link_prefix(dir, link, len) says so, joining dir and link's first len bytes
 * then any plain names is joining them then "x", the "x" put back as those names. */
static void
check_link_prefix(const char *dir, const char *link, size_t len)
{
	static const char *const names[] = { "x", "p/bin/y", ".h/..z", "...", "a.b/c/d" };
	char with_x[128], with_n[128], want[256];
	char *base;
	size_t bl;

	if (!grove_path_link_prefix(dir, link, len))
		return;
	snprintf(with_x, sizeof(with_x), "%.*sx", (int)len, link);
	base = grove_path_join(dir, with_x);
	assert_non_null(base);
	bl = strlen(base);
	if (bl == 0 || base[bl - 1] != 'x' || (bl > 1 && base[bl - 2] != '/'))
		fail_msg("link_prefix('%s', '%.*s') but join gives '%s'", dir, (int)len, link,
			 base);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *got;

		snprintf(with_n, sizeof(with_n), "%.*s%s", (int)len, link, names[i]);
		snprintf(want, sizeof(want), "%.*s%s", (int)(bl - 1), base, names[i]);
		got = grove_path_join(dir, with_n);
		assert_non_null(got);
		if (strcmp(got, want) != 0)
			fail_msg("link_prefix('%s', '%.*s') but join(.., '%s') = '%s', not '%s'",
				 dir, (int)len, link, with_n, got, want);
		check_into(dir, with_n, got);
		free(got);
	}
	free(base);
}

/* Where a stow makes the link to a package entry (issue 40): the same path, with or without
 * --dotfiles; only one of them when a name starts with "dot-". */
static void
test_path_lands_as(void **state)
{
	static const struct {
		const char *tpath, *sub;
		int want;
	} cases[] = {
		{ ".zshrc", ".zshrc", GROVE_LANDS_SAME },
		{ ".config/nvim/init.lua", ".config/nvim/init.lua", GROVE_LANDS_SAME },
		{ "bin", "bin", GROVE_LANDS_SAME },
		{ ".config", "dot-config", GROVE_LANDS_DOTTED },
		{ ".config/kitty", "dot-config/kitty", GROVE_LANDS_DOTTED },
		{ "x/.a/.b", "x/dot-a/dot-b", GROVE_LANDS_DOTTED },
		{ "dot-config", "dot-config", GROVE_LANDS_PLAIN },
		{ "dot-config/x", "dot-config/x", GROVE_LANDS_PLAIN },
		{ ".a/dot-b", "dot-a/dot-b", 0 },     /* one dot- name renamed, one not: neither */
		{ "dot-", "dot-", GROVE_LANDS_SAME }, /* "dot-" alone is not renamed */
		{ ".", "dot-", 0 },
		{ ".config", "kitty/dot-config", 0 }, /* a package's: one name deeper */
		{ "bin", "bin/tool", 0 },
		{ "bin/tool", "bin", 0 },
		{ ".zshrc", ".zsh", 0 },
		{ ".zshrc", "", 0 },
		{ "", "x", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(grove_path_lands_as(cases[i].tpath, cases[i].sub), cases[i].want);
	assert_int_equal(grove_path_lands_as("x", NULL), 0);
	assert_true(grove_path_is_package("."));
	assert_true(grove_path_is_package("vim"));
	assert_false(grove_path_is_package(".."));
	assert_false(grove_path_is_package("a/b"));
	assert_false(grove_path_is_package(""));
	assert_false(grove_path_is_package(NULL));
}

static void
test_path_link_prefix(void **state)
{
	static const struct {
		const char *dir, *prefix;
		bool want;
	} cases[] = {
		{ "bin", "../stow/", true },
		{ "", "stow/", true },
		{ "", "", true },
		{ "a/b", "../../../s/", true },
		{ "share/man/man1", "../../../stow/p/share/man/man1/", true },
		{ ".config", "../stow/", true },
		{ "/abs", "../stow/", false },
		{ "a/./b", "../stow/", false },
		{ "a//b", "../stow/", false },
		{ "a/", "../stow/", false },
		{ "..a/b", "../stow/", false },
		{ ".", "../stow/", false },
		{ "bin", "../stow", false },
		{ "bin", "/stow/", false },
		{ "bin", "../stow/../", false },
		{ "bin", "../stow/./", false },
		{ "bin", "..//stow/", false },
		{ "bin", "stow/../../", false },
	};
	unsigned long seed = 7;
	char dir[64], link[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (grove_path_link_prefix(cases[i].dir, cases[i].prefix,
					   strlen(cases[i].prefix)) != cases[i].want)
			fail_msg("link_prefix('%s', '%s') != %d", cases[i].dir, cases[i].prefix,
				 cases[i].want);
		check_link_prefix(cases[i].dir, cases[i].prefix, strlen(cases[i].prefix));
	}
	assert_int_equal(grove_path_plain_len("p/bin/x"), 7);
	assert_int_equal(grove_path_plain_len("..x/.y/..."), 10);
	assert_int_equal(grove_path_plain_len(""), 0);
	assert_int_equal(grove_path_plain_len("a//b"), 0);
	assert_int_equal(grove_path_plain_len("a/./b"), 0);
	assert_int_equal(grove_path_plain_len("a/.."), 0);
	assert_int_equal(grove_path_plain_len("a/"), 0);
	assert_int_equal(grove_path_plain_len("/a"), 0);
	for (int i = 0; i < 100000; i++) {
		random_path(&seed, dir, (size_t)(seed >> 40) % 4, true);
		random_path(&seed, link, 1 + (size_t)(seed >> 50) % 5, (seed >> 10) % 8 == 0);
		for (size_t len = 0; len <= strlen(link); len++)
			if (len == 0 || link[len - 1] == '/')
				check_link_prefix(dir, link, len);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_join_matches_stow),
		cmocka_unit_test(test_path_join_shortcuts_match_long_way),
		cmocka_unit_test(test_path_join_names_and_ups_match_join),
		cmocka_unit_test(test_path_link_prefix),
		cmocka_unit_test(test_path_lands_as),
		cmocka_unit_test(test_path_parent_matches_stow),
		cmocka_unit_test(test_path_abs2rel_matches_file_spec),
		cmocka_unit_test(test_path_dotfiles_match_stow),
		cmocka_unit_test(test_path_canon_and_prefix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
