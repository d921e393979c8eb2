/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests: the command line's front: conflict hints, --color values, the help request, JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "front.h"

static const char *
hint(const char *path, const char *message, const char *stow_path, char *buf, size_t size)
{
	struct grove_conflict c = {
		.action = "stow", .package = "b", .path = (char *)path, .message = (char *)message
	};

	return grove_conflict_hint(&c, stow_path, buf, size);
}

static void
test_front_hint_names_the_owning_package(void **state)
{
	char buf[512];
	const char *h;

	(void)state;
	/* Stow dir beside the target, the link inside an unfolded folder. */
	h = hint("bin/x",
		 "existing target is stowed to a different package: bin/x => ../../stow/a/bin/x",
		 "../stow", buf, sizeof(buf));
	assert_non_null(h);
	assert_non_null(strstr(h, "package 'a' has these paths"));
	assert_non_null(strstr(h, "grove unstow a"));
	assert_non_null(strstr(h, "--override"));
	/* Stow dir inside the target, a top-level link. */
	h = hint("share",
		 "existing target is stowed to a different package: share => stow/vim/share",
		 "stow", buf, sizeof(buf));
	assert_non_null(h);
	assert_non_null(strstr(h, "grove unstow vim"));
	/* The package's own link (with --dotfiles, its "dot-x" and ".x"): no switch to itself. */
	h = hint(".x", "existing target is stowed to a different package: .x => ../stow/b/.x",
		 "../stow", buf, sizeof(buf));
	assert_non_null(h);
	assert_non_null(strstr(h, "two entries of package 'b'"));
	assert_null(strstr(h, "grove switch"));
	assert_null(strstr(h, "grove unstow"));
	/* A link into somewhere else: no package to name, still the options. */
	h = hint("bin/x",
		 "existing target is stowed to a different package: bin/x => ../elsewhere/x",
		 "stow", buf, sizeof(buf));
	assert_non_null(h);
	assert_null(strstr(h, "package '"));
	assert_non_null(strstr(h, "--override"));
}

static void
test_front_hint_by_kind(void **state)
{
	char buf[512];
	const char *h;

	(void)state;
	h = hint(".rc",
		 "cannot stow ../stow/a/.rc over existing target .rc since neither a link nor a "
		 "directory and --adopt not specified",
		 "../stow", buf, sizeof(buf));
	assert_non_null(h);
	assert_non_null(strstr(h, "--adopt"));
	h = hint("bin/y", "existing target is not owned by stow: bin/y", "../stow", buf,
		 sizeof(buf));
	assert_non_null(h);
	assert_non_null(strstr(h, "--adopt"));
	h = hint("etc",
		 "cannot stow non-directory ../stow/b/etc over existing directory target etc",
		 "../stow", buf, sizeof(buf));
	assert_non_null(h);
	assert_non_null(strstr(h, "no option resolves this"));
	assert_null(hint("x", "package link escapes the stow dir: x", "stow", buf, sizeof(buf)));
}

static void
test_front_color_values(void **state)
{
	enum grove_color_mode m = GROVE_COLOR_AUTO;

	(void)state;
	assert_int_equal(grove_color_parse("always", &m), 0);
	assert_int_equal(m, GROVE_COLOR_ALWAYS);
	assert_int_equal(grove_color_parse("never", &m), 0);
	assert_int_equal(m, GROVE_COLOR_NEVER);
	assert_int_equal(grove_color_parse("auto", &m), 0);
	assert_int_equal(m, GROVE_COLOR_AUTO);
	assert_int_equal(grove_color_parse("sometimes", &m), -1);
	assert_int_equal(grove_color_parse("", &m), -1);
	assert_int_equal(m, GROVE_COLOR_AUTO);
}

static void
test_front_help_wanted_stops_at_double_dash(void **state)
{
	char *a[] = { "log", "-t", "x", "--help", NULL };
	char *b[] = { "stow", "--", "--help", NULL };
	char *c[] = { "stow", "-h", NULL };
	char *d[] = { "stow", "vim", NULL };

	(void)state;
	assert_true(grove_help_wanted(4, a));
	assert_false(grove_help_wanted(3, b));
	assert_true(grove_help_wanted(2, c));
	assert_false(grove_help_wanted(2, d));
	assert_int_equal(grove_help_command(stdout, "no-such-command"), -1);
}

static void
test_front_json_strings_and_times(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	grove_json_str(f, "a\"b\\c\n\x01\x7f");
	fputc(' ', f);
	grove_json_str(f, NULL);
	fputc(' ', f);
	grove_json_time(f, 0);
	fputc(' ', f);
	grove_json_begin(f, "log");
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf,
			    "\"a\\\"b\\\\c\\u000a\\u0001\\u007f\" null \"1970-01-01T00:00:00Z\" "
			    "{\"grove\": 1, \"command\": \"log\"");
	free(buf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_front_hint_names_the_owning_package),
		cmocka_unit_test(test_front_hint_by_kind),
		cmocka_unit_test(test_front_color_values),
		cmocka_unit_test(test_front_help_wanted_stops_at_double_dash),
		cmocka_unit_test(test_front_json_strings_and_times),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
