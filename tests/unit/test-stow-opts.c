/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests: GNU Stow's command line, .stowrc merging, shellwords and package names. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "cli.h"

struct parsed {
	struct grove_stow_request req;
	struct grove_stow_cli cli;
	struct grove_error err;
	int r;
};

/* Parses a NULL-terminated list of arguments (the program name is added). */
static void
parse_full(struct parsed *p, enum grove_stow_action initial, const char *home, const char *cwd_rc,
	   bool read_rc, const char *const *args)
{
	char *argv[64];
	int argc = 0;

	argv[argc++] = "stow";
	while (*args)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	memset(p, 0, sizeof(*p));
	grove_stow_request_init(&p->req);
	p->r = grove_stow_cli_parse(argc, argv, initial, home, cwd_rc, read_rc, &p->req, &p->cli,
				    &p->err);
}

#define PARSE(p, ...)                                       \
	parse_full(p, GROVE_ACTION_STOW, NULL, NULL, false, \
		   (const char *const[]){ __VA_ARGS__, NULL })

static void
assert_list(char **v, size_t n, const char *const *want)
{
	size_t i = 0;

	for (; want[i]; i++) {
		if (i >= n)
			fail_msg("list too short: missing '%s'", want[i]);
		assert_string_equal(v[i], want[i]);
	}
	assert_int_equal(n, i);
}

#define LIST(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NONE      ((const char *const[]){ NULL })

static void
done(struct parsed *p)
{
	grove_stow_request_release(&p->req);
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Expected values in these tests come from running GNU Stow 2.4.1's bin/stow
 * process_options() on the same arguments. */

static void
test_stow_opts_bundling(void **state)
{
	struct parsed p;

	(void)state;
	PARSE(&p, "-nvD", "a", "b", "-S", "c", "-Rd/tmp", "x/");
	assert_int_equal(p.r, 0);
	assert_true(p.cli.simulate);
	assert_int_equal(p.req.verbose, 1);
	assert_string_equal(p.req.dir, "/tmp");
	assert_string_equal(p.req.target, ".");
	assert_list(p.req.unstow, p.req.n_unstow, LIST("a", "b", "x"));
	assert_list(p.req.stow, p.req.n_stow, LIST("c", "x"));
	done(&p);

	PARSE(&p, "-pd", "S", "-tT", "a");
	assert_int_equal(p.r, 0);
	assert_true(p.req.compat);
	assert_string_equal(p.req.dir, "S");
	assert_string_equal(p.req.target, "T");
	done(&p);

	PARSE(&p, "-nfoo", "a");
	assert_int_equal(p.r, -GROVE_E_USAGE);
	assert_string_equal(p.err.msg, "unknown option '-f'");
	done(&p);
}

static void
test_stow_opts_permute(void **state)
{
	struct parsed p;

	(void)state;
	PARSE(&p, "a", "-d", "S", "b", "-t", "T", "--adopt", "c", "--no-folding", "--dotfiles");
	assert_int_equal(p.r, 0);
	assert_list(p.req.stow, p.req.n_stow, LIST("a", "b", "c"));
	assert_int_equal(p.req.n_unstow, 0);
	assert_string_equal(p.req.dir, "S");
	assert_string_equal(p.req.target, "T");
	assert_true(p.req.adopt);
	assert_true(p.req.no_folding);
	assert_true(p.req.dotfiles);
	assert_false(p.cli.simulate);
	done(&p);

	/* "-" alone is a package name. */
	PARSE(&p, "-d", "S", "-");
	assert_int_equal(p.r, 0);
	assert_list(p.req.stow, p.req.n_stow, LIST("-"));
	done(&p);
}

static void
test_stow_opts_action_switching(void **state)
{
	struct parsed p;

	(void)state;
	parse_full(&p, GROVE_ACTION_UNSTOW, NULL, NULL, false,
		   LIST("-d", "S", "a", "-S", "b", "-R", "c", "--delete", "d", "--stow", "e",
			"--restow", "f"));
	assert_int_equal(p.r, 0);
	assert_list(p.req.unstow, p.req.n_unstow, LIST("a", "c", "d", "f"));
	assert_list(p.req.stow, p.req.n_stow, LIST("b", "c", "e", "f"));
	done(&p);

	parse_full(&p, GROVE_ACTION_RESTOW, NULL, NULL, false, LIST("-d", "S", "a"));
	assert_int_equal(p.r, 0);
	assert_list(p.req.unstow, p.req.n_unstow, LIST("a"));
	assert_list(p.req.stow, p.req.n_stow, LIST("a"));
	done(&p);
}

static void
test_stow_opts_abbreviations(void **state)
{
	struct parsed p;

	(void)state;
	PARSE(&p, "--verb=3", "--d", "S", "--del", "a", "--no-f", "--sim", "--targ=T");
	assert_int_equal(p.r, 0);
	assert_int_equal(p.req.verbose, 3);
	assert_string_equal(p.req.dir, "S");
	assert_string_equal(p.req.target, "T");
	assert_list(p.req.unstow, p.req.n_unstow, LIST("a"));
	assert_true(p.req.no_folding);
	assert_true(p.cli.simulate);
	done(&p);

	/* "--no" is an exact name (simulate) though "--no-folding" starts with it. */
	PARSE(&p, "-d", "S", "--no", "a");
	assert_int_equal(p.r, 0);
	assert_true(p.cli.simulate);
	assert_false(p.req.no_folding);
	done(&p);

	PARSE(&p, "--ver", "a");
	assert_int_equal(p.r, -GROVE_E_USAGE);
	assert_string_equal(p.err.msg, "option '--ver' is ambiguous (verbose, version)");
	done(&p);

	PARSE(&p, "--de", "x", "a");
	assert_int_equal(p.r, -GROVE_E_USAGE);
	assert_string_equal(p.err.msg, "option '--de' is ambiguous (defer, delete)");
	done(&p);

	PARSE(&p, "--frob", "a");
	assert_int_equal(p.r, -GROVE_E_USAGE);
	assert_string_equal(p.err.msg, "unknown option '--frob'");
	done(&p);

	PARSE(&p, "--adopt=1", "a");
	assert_int_equal(p.r, -GROVE_E_USAGE);
	assert_string_equal(p.err.msg, "option '--adopt' does not take a value");
	done(&p);
}

static void
test_stow_opts_verbose_forms(void **state)
{
	static const struct {
		const char *args[4];
		int verbose;
		const char *pkg;
	} cases[] = {
		{ { "-v", "3", "a" }, 3, "a" },        { { "-v3", "a" }, 3, "a" },
		{ { "-vv", "a", "-v" }, 3, "a" },      { { "--verbose=", "a" }, 1, "a" },
		{ { "-v", "-5", "a" }, -5, "a" },      { { "-v", "a" }, 1, "a" },
		{ { "--verbose", "2", "a" }, 2, "a" }, { { "-v", "-v3", "a" }, 3, "a" },
		{ { "--verbose=1_0", "a" }, 10, "a" }, { { "a" }, 0, "a" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[8] = { "-d", "S" };
		struct parsed p;

		memcpy(args + 2, cases[i].args, sizeof(cases[i].args));
		parse_full(&p, GROVE_ACTION_STOW, NULL, NULL, false, args);
		assert_int_equal(p.r, 0);
		if (p.req.verbose != cases[i].verbose)
			fail_msg("case %zu: verbose %d, expected %d", i, p.req.verbose,
				 cases[i].verbose);
		assert_list(p.req.stow, p.req.n_stow, LIST(cases[i].pkg));
		done(&p);
	}
}

static void
test_stow_opts_verbose_bad_value(void **state)
{
	struct parsed p;

	(void)state;
	PARSE(&p, "--verbose=x", "a");
	assert_int_equal(p.r, -GROVE_E_USAGE);
	assert_non_null(strstr(p.err.msg, "'x'"));
	done(&p);

	/* -v3x: the level 3, then an unknown -x. */
	PARSE(&p, "-v3x", "a");
	assert_int_equal(p.r, -GROVE_E_USAGE);
	assert_string_equal(p.err.msg, "unknown option '-x'");
	done(&p);
}

static void
test_stow_opts_double_dash(void **state)
{
	struct parsed p;

	(void)state;
	PARSE(&p, "-d", "S", "-D", "--", "-a", "-S");
	assert_int_equal(p.r, 0);
	assert_list(p.req.unstow, p.req.n_unstow, LIST("-a", "-S"));
	assert_int_equal(p.req.n_stow, 0);
	done(&p);

	/* A mandatory value takes "--" itself. */
	PARSE(&p, "-d", "--", "a");
	assert_int_equal(p.r, 0);
	assert_string_equal(p.req.dir, "--");
	done(&p);
}

static void
test_stow_opts_missing_values(void **state)
{
	struct parsed p;

	(void)state;
	PARSE(&p, "a", "-d");
	assert_int_equal(p.r, -GROVE_E_USAGE);
	assert_string_equal(p.err.msg, "option '-d' requires a value");
	done(&p);

	PARSE(&p, "--dir=", "a");
	assert_int_equal(p.r, -GROVE_E_USAGE);
	assert_string_equal(p.err.msg, "option '--dir' requires a value");
	done(&p);

	PARSE(&p, "a", "--ignore");
	assert_int_equal(p.r, -GROVE_E_USAGE);
	assert_string_equal(p.err.msg, "option '--ignore' requires a value");
	done(&p);

	PARSE(&p, "-d", "S");
	assert_int_equal(p.r, -GROVE_E_USAGE);
	assert_string_equal(p.err.msg, "no packages to stow or unstow");
	done(&p);

	PARSE(&p, "--ignore=a(", "x");
	assert_int_equal(p.r, -GROVE_E_USAGE);
	assert_non_null(strstr(p.err.msg, "'a('"));
	done(&p);
}

static void
test_stow_opts_help_and_version(void **state)
{
	struct parsed p;

	(void)state;
	PARSE(&p, "-h");
	assert_int_equal(p.r, 0);
	assert_true(p.cli.help);
	done(&p);

	PARSE(&p, "-V");
	assert_int_equal(p.r, 0);
	assert_true(p.cli.version);
	done(&p);
}

static void
test_stow_opts_trailing_slashes(void **state)
{
	struct parsed p;

	(void)state;
	PARSE(&p, "-d", "S", "pkg///", "-D", "b/", "c");
	assert_int_equal(p.r, 0);
	assert_list(p.req.stow, p.req.n_stow, LIST("pkg"));
	assert_list(p.req.unstow, p.req.n_unstow, LIST("b", "c"));
	done(&p);
}

static void
test_stow_opts_default_dir_and_target(void **state)
{
	char *saved = getenv("STOW_DIR") ? strdup(getenv("STOW_DIR")) : NULL;
	char *cwd = getcwd(NULL, 0);
	char *parent = strdup(cwd);
	struct parsed p;

	(void)state;
	*strrchr(parent, '/') = '\0';
	unsetenv("STOW_DIR");
	PARSE(&p, "a");
	assert_int_equal(p.r, 0);
	assert_string_equal(p.req.dir, cwd);
	assert_string_equal(p.req.target, *parent ? parent : ".");
	done(&p);

	setenv("STOW_DIR", "", 1);
	PARSE(&p, "a");
	assert_string_equal(p.req.dir, cwd);
	done(&p);

	setenv("STOW_DIR", "/x/y//stow/", 1);
	PARSE(&p, "a");
	assert_string_equal(p.req.dir, "/x/y//stow/");
	assert_string_equal(p.req.target, "/x/y");
	done(&p);

	/* Stow's parent() is lexical: "/stow" has parent "" and so ".", "a//b/" has "a". */
	static const char *const parents[][2] = {
		{ "/stow", "." }, { "a//b/", "a" }, { "stow", "." },      { "/", "." },
		{ "./s", "." },   { "../s", ".." }, { "/a/b/c", "/a/b" },
	};
	for (size_t i = 0; i < sizeof(parents) / sizeof(parents[0]); i++) {
		PARSE(&p, "-d", parents[i][0], "a");
		assert_int_equal(p.r, 0);
		assert_string_equal(p.req.target, parents[i][1]);
		done(&p);
	}
	if (saved)
		setenv("STOW_DIR", saved, 1);
	else
		unsetenv("STOW_DIR");
	free(saved);
	free(cwd);
	free(parent);
}

static void
test_stow_opts_rc_merge(void **state)
{
	char *home = tu_mkdtemp();
	char *work = tu_mkdtemp();
	char *home_rc = tu_path(home, ".stowrc");
	char *cwd_rc = tu_path(work, ".stowrc");
	char *want_target = tu_path(home, "t");
	struct parsed p;

	(void)state;
	setenv("GROVE_TEST_FOO", "/srv", 1);
	write_file(home_rc, "--ignore=h1 -v -v\n"
			    "# a comment line\n"
			    "--target=~/t \"--defer=with space\"\n"
			    "--override='sq\\'x\n"
			    "pkgrc\n");
	write_file(cwd_rc, "--ignore c1 --dir=${GROVE_TEST_FOO}/d\n"
			   "unbalanced \"quote -n\n"
			   "-p");
	parse_full(&p, GROVE_ACTION_STOW, home, cwd_rc, true, LIST("--ignore", "cli1", "-v", "a"));
	assert_int_equal(p.r, 0);
	assert_string_equal(p.req.dir, "/srv/d");
	assert_string_equal(p.req.target, want_target);
	assert_int_equal(p.req.verbose, 1); /* the command line's -v wins over the rc's -v -v */
	assert_true(p.req.compat);
	assert_false(p.cli.simulate); /* the line with the unmatched quote is skipped */
	assert_int_equal(grove_pattern_set_count(p.req.ignore), 3);
	assert_true(grove_pattern_set_match(p.req.ignore, "x/h1", NULL));
	assert_true(grove_pattern_set_match(p.req.ignore, "c1", NULL));
	assert_true(grove_pattern_set_match(p.req.ignore, "cli1", NULL));
	assert_int_equal(grove_pattern_set_count(p.req.defer), 1);
	assert_true(grove_pattern_set_match(p.req.defer, "with space/x", NULL));
	assert_int_equal(grove_pattern_set_count(p.req.override), 0);
	assert_list(p.req.stow, p.req.n_stow, LIST("a")); /* rc package names are ignored */
	done(&p);

	/* Without command line values the rc's apply; the command line's win. */
	parse_full(&p, GROVE_ACTION_STOW, home, cwd_rc, true, LIST("-d", "D", "-t", "T", "a"));
	assert_int_equal(p.r, 0);
	assert_string_equal(p.req.dir, "D");
	assert_string_equal(p.req.target, "T");
	assert_int_equal(p.req.verbose, 2);
	done(&p);

	/* Skipped entirely when asked. */
	parse_full(&p, GROVE_ACTION_STOW, home, cwd_rc, false, LIST("-d", "D", "a"));
	assert_int_equal(p.r, 0);
	assert_int_equal(p.req.verbose, 0);
	assert_null(p.req.ignore);
	done(&p);

	unsetenv("GROVE_TEST_FOO");
	tu_rmtree(home);
	tu_rmtree(work);
	free(home);
	free(work);
	free(home_rc);
	free(cwd_rc);
	free(want_target);
}

static void
test_stow_opts_rc_expansion(void **state)
{
	char *home = tu_mkdtemp();
	char *rc = tu_path(home, "rc");
	char *want;
	struct parsed p;

	(void)state;
	setenv("GROVE_TEST_A", "va", 1);
	setenv("GROVE_TEST_B", "$GROVE_TEST_A", 1);
	/* ${B} expands to "$GROVE_TEST_A", which the second ($VAR) pass expands again, as Stow. */
	write_file(rc, "--dir=${GROVE_TEST_B}/x '--target=~/\\$GROVE_TEST_A/\\~'\n");
	parse_full(&p, GROVE_ACTION_STOW, home, rc, true, LIST("a"));
	assert_int_equal(p.r, 0);
	assert_string_equal(p.req.dir, "va/x");
	if (asprintf(&want, "%s/$GROVE_TEST_A/~", home) < 0)
		abort();
	assert_string_equal(p.req.target, want);
	free(want);
	done(&p);

	/* Command line values are taken literally. */
	parse_full(&p, GROVE_ACTION_STOW, home, rc, true,
		   LIST("-d", "$GROVE_TEST_A", "-t", "~", "a"));
	assert_int_equal(p.r, 0);
	assert_string_equal(p.req.dir, "$GROVE_TEST_A");
	assert_string_equal(p.req.target, "~");
	done(&p);

	write_file(rc, "--dir=$GROVE_TEST_UNDEFINED_X/y\n");
	unsetenv("GROVE_TEST_UNDEFINED_X");
	parse_full(&p, GROVE_ACTION_STOW, home, rc, true, LIST("a"));
	assert_int_equal(p.r, -GROVE_E_CONFIG);
	assert_non_null(strstr(p.err.msg, "GROVE_TEST_UNDEFINED_X"));
	assert_non_null(strstr(p.err.msg, "--dir"));
	done(&p);

	write_file(rc, "--frob\n");
	parse_full(&p, GROVE_ACTION_STOW, home, rc, true, LIST("a"));
	assert_int_equal(p.r, -GROVE_E_CONFIG);
	assert_non_null(strstr(p.err.msg, "--frob"));
	done(&p);

	unsetenv("GROVE_TEST_A");
	unsetenv("GROVE_TEST_B");
	tu_rmtree(home);
	free(home);
	free(rc);
}

static void
test_stow_opts_global_ignore(void **state)
{
	char *home = tu_mkdtemp();
	char *file = tu_path(home, ".stow-global-ignore");
	struct parsed p;

	(void)state;
	parse_full(&p, GROVE_ACTION_STOW, home, NULL, true, LIST("a"));
	assert_int_equal(p.r, 0);
	assert_null(p.req.global_ignore_text);
	done(&p);

	write_file(file, "foo\n");
	parse_full(&p, GROVE_ACTION_STOW, home, NULL, true, LIST("a"));
	assert_int_equal(p.r, 0);
	assert_string_equal(p.req.global_ignore_text, "foo\n");
	assert_string_equal(p.req.global_ignore_source, file);
	done(&p);
	tu_rmtree(home);
	free(home);
	free(file);
}

static void
test_stow_opts_shellwords(void **state)
{
	static const struct {
		const char *line;
		const char *words[5];
	} cases[] = {
		/* From Perl's Text::ParseWords::shellwords. */
		{ "a\"b c\"d e", { "ab cd", "e" } },
		{ "  \"\" x", { "", "x" } },
		{ "a\\ b 'c\\d'", { "a b", "c\\d" } },
		{ "\"a\\\"b\" \\x", { "a\"b", "x" } },
		{ "a\tb  ", { "a", "b" } },
		{ "'it''s'", { "its" } },
		{ "   ", { NULL } },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct grove_error err = { 0 };
		char **w = NULL;
		size_t n = 0;

		assert_int_equal(grove_shellwords(cases[i].line, &w, &n, &err), 0);
		assert_list(w, n, cases[i].words);
		grove_names_free(w, n);
	}

	static const char *const bad[] = { "a\\", "\"abc", "x 'a\\'b", "a\"b" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct grove_error err = { 0 };
		char **w = NULL;
		size_t n = 0;

		assert_int_equal(grove_shellwords(bad[i], &w, &n, &err), -GROVE_E_CONFIG);
		assert_null(w);
	}
}

static void
test_request_package_name(void **state)
{
	static const struct {
		const char *name;
		const char *msg; /* NULL: accepted */
	} cases[] = {
		{ "vim", NULL },
		{ "caf\xc3\xa9", NULL },
		{ ".dotfiles", NULL },
		{ "", "invalid package name '': empty" },
		{ "a/b", "invalid package name 'a/b': contains '/'" },
		{ ".", "invalid package name '.': not a folder name" },
		{ "..", "invalid package name '..': not a folder name" },
		{ "a\nb", "invalid package name 'a\\x0ab': contains a control character" },
		{ "a\xc2\x85", "invalid package name 'a\\xc2\\x85': contains a control character" },
		{ "\xc0\xaf", "invalid package name '\\xc0\\xaf': not valid UTF-8" },
		{ "\xed\xa0\x80", "invalid package name '\\xed\\xa0\\x80': not valid UTF-8" },
		{ "\xff", "invalid package name '\\xff': not valid UTF-8" },
	};
	struct grove_error err = { 0 };
	char long_name[300];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = grove_stow_check_package_name(cases[i].name, &err);

		if (!cases[i].msg) {
			assert_int_equal(r, 0);
			continue;
		}
		assert_int_equal(r, -GROVE_E_BADINPUT);
		assert_string_equal(err.msg, cases[i].msg);
	}
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_int_equal(grove_stow_check_package_name(long_name, &err), -GROVE_E_BADINPUT);
	long_name[255] = '\0';
	assert_int_equal(grove_stow_check_package_name(long_name, &err), 0);
	/* A package on a command line or in a manifest: '.' is the stow dir itself (stow .). */
	assert_int_equal(grove_stow_check_package(".", &err), 0);
	assert_int_equal(grove_stow_check_package("vim", &err), 0);
	assert_int_equal(grove_stow_check_package("..", &err), -GROVE_E_BADINPUT);
	assert_int_equal(grove_stow_check_package("a/b", &err), -GROVE_E_BADINPUT);
}

static void
test_request_add_and_release(void **state)
{
	struct grove_stow_request req;

	(void)state;
	grove_stow_request_init(&req);
	assert_int_equal(grove_stow_request_add(&req, false, "a"), 0);
	assert_int_equal(grove_stow_request_add(&req, true, "b"), 0);
	assert_int_equal(grove_stow_request_add(&req, false, "c"), 0);
	assert_list(req.stow, req.n_stow, LIST("a", "c"));
	assert_list(req.unstow, req.n_unstow, LIST("b"));
	grove_stow_request_release(&req);
	assert_null(req.stow);
	grove_stow_request_release(&req);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stow_opts_bundling),
		cmocka_unit_test(test_stow_opts_permute),
		cmocka_unit_test(test_stow_opts_action_switching),
		cmocka_unit_test(test_stow_opts_abbreviations),
		cmocka_unit_test(test_stow_opts_verbose_forms),
		cmocka_unit_test(test_stow_opts_verbose_bad_value),
		cmocka_unit_test(test_stow_opts_double_dash),
		cmocka_unit_test(test_stow_opts_missing_values),
		cmocka_unit_test(test_stow_opts_help_and_version),
		cmocka_unit_test(test_stow_opts_trailing_slashes),
		cmocka_unit_test(test_stow_opts_default_dir_and_target),
		cmocka_unit_test(test_stow_opts_rc_merge),
		cmocka_unit_test(test_stow_opts_rc_expansion),
		cmocka_unit_test(test_stow_opts_global_ignore),
		cmocka_unit_test(test_stow_opts_shellwords),
		cmocka_unit_test(test_request_package_name),
		cmocka_unit_test(test_request_add_and_release),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
