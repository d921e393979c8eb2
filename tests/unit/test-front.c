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

/* doc as text, freed. */
static void
assert_doc(struct json_t *doc, const char *want)
{
	char *text = grove_json_text(doc);

	assert_non_null(text);
	assert_string_equal(text, want);
	free(text);
	grove_json_free(doc);
}

static void
test_front_json_strings_and_times(void **state)
{
	struct json_t *doc = grove_json_doc("log");

	(void)state;
	grove_json_put_str(doc, "s", "a\"b\\c\n\x01\x7f");
	grove_json_put_str(doc, "none", NULL);
	grove_json_put_time(doc, "t", 0);
	grove_json_put_int(doc, "n", -3);
	grove_json_put_bool(doc, "b", true);
	assert_doc(doc,
		   "{\"grove\": 2, \"command\": \"log\", \"s\": \"a\\\"b\\\\c\\n\\u0001\x7f\", "
		   "\"none\": null, \"t\": \"1970-01-01T00:00:00Z\", \"n\": -3, \"b\": true}");
}

/* A name that is not UTF-8 (docs/json.md): each stray byte as \xHH, each backslash doubled, and
 * the bytes in hex beside it; a UTF-8 name (a backslash in it too) as it is. */
static void
test_front_json_names_not_utf8(void **state)
{
	struct json_t *doc = grove_json_obj();
	char *v[] = { "ok", "caf\xe9", "\xc3\xa9t\xc3\xa9" };

	(void)state;
	grove_json_put_str(doc, "path", "caf\xe9");
	grove_json_put_str(doc, "text", "a\\b");
	grove_json_put_str(doc, "x", "\\\xff\xc3\xa9\xed\xa0\x80\xc0\xaf");
	grove_json_put_strv(doc, "packages", v, 3);
	grove_json_put_strv(doc, "good", v + 2, 1);
	assert_doc(doc, "{\"path\": \"caf\\\\xe9\", \"path_hex\": \"636166e9\", "
			"\"text\": \"a\\\\b\", "
			"\"x\": \"\\\\\\\\\\\\xff\xc3\xa9\\\\xed\\\\xa0\\\\x80\\\\xc0\\\\xaf\", "
			"\"x_hex\": \"5cffc3a9eda080c0af\", "
			"\"packages\": [\"ok\", \"caf\\\\xe9\", \"\xc3\xa9t\xc3\xa9\"], "
			"\"packages_hex\": [null, \"636166e9\", null], "
			"\"good\": [\"\xc3\xa9t\xc3\xa9\"]}");
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
		cmocka_unit_test(test_front_json_names_not_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
