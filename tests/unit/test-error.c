/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests: error values, messages and context. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "grove/error.h"
#include "grove/text.h"

static void
test_error_errno_appends_reason(void **state)
{
	struct grove_error err;

	(void)state;
	assert_int_equal(grove_error_errno(&err, -EACCES, "remove link '%s'", ".vimrc"), -EACCES);
	assert_string_equal(err.msg, "remove link '.vimrc': Permission denied");
	assert_int_equal(err.code, -EACCES);
}

static void
test_error_prefix_adds_context(void **state)
{
	struct grove_error err;

	(void)state;
	grove_error_set(&err, -GROVE_E_CONFLICT, "two packages want '%s'", "bin/x");
	assert_int_equal(grove_error_prefix(&err, "stow '%s'", "vim"), -GROVE_E_CONFLICT);
	assert_string_equal(err.msg, "stow 'vim': two packages want 'bin/x'");
}

static void
test_error_null_is_allowed_and_codes_have_text(void **state)
{
	(void)state;
	assert_int_equal(grove_error_set(NULL, -ENOENT, "x"), -ENOENT);
	assert_string_equal(grove_strerror(-ENOENT), strerror(ENOENT));
	assert_string_equal(grove_strerror(-GROVE_E_PARTIAL), "failed part-way and rolled back");
}

static void
test_error_long_messages_keep_their_reason(void **state)
{
	struct grove_error err;
	char big[3000];

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	grove_error_errno(&err, -EIO, "%s", big);
	assert_int_equal(strlen(err.msg), GROVE_ERROR_MSG_MAX - 1);
	/* The reason survives a long path: the middle is elided, not the end. */
	assert_non_null(strstr(err.msg, "..."));
	assert_string_equal(err.msg + strlen(err.msg) - strlen(": Input/output error"),
			    ": Input/output error");
	grove_error_prefix(&err, "%s", big);
	assert_int_equal(strlen(err.msg), GROVE_ERROR_MSG_MAX - 1);
	assert_string_equal(err.msg + strlen(err.msg) - strlen(": Input/output error"),
			    ": Input/output error");
}

/* Names shown to people: controls, C1 controls and broken UTF-8 as \xHH, the rest as it is. */
static void
test_text_shown_escapes_what_could_forge_or_drive_a_terminal(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain name.txt", "plain name.txt" },
		{ "a\nb", "a\\x0ab" },
		{ "\x1b[1A\x07", "\\x1b[1A\\x07" },
		{ "tab\there\x7f", "tab\\x09here\\x7f" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8c\xb3",
		  "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8c\xb3" },
		{ "c1\xc2\x9b[1A", "c1\\xc2\\x9b[1A" },      /* CSI as UTF-8 */
		{ "raw\x9b", "raw\\x9b" },                   /* a lone continuation */
		{ "over\xc0\xaf", "over\\xc0\\xaf" },        /* overlong '/' */
		{ "sur\xed\xa0\x80", "sur\\xed\\xa0\\x80" }, /* a surrogate */
		{ "cut\xe2\x82", "cut\\xe2\\x82" },          /* truncated */
		{ "back\\slash", "back\\slash" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = grove_text_shown(cases[i].in);

		assert_non_null(got);
		if (strcmp(got, cases[i].out) != 0)
			fail_msg("case %zu: got '%s', want '%s'", i, got, cases[i].out);
		assert_int_equal(grove_text_is_plain(cases[i].in),
				 !strcmp(cases[i].in, cases[i].out));
		free(got);
	}
}

/* The path an error is about (docs/json.md, "error.path"): set after a setter, kept by a prefix,
 * cleared by the next setter and by clear, joined to its folder, dropped rather than cut. */
static void
test_error_path_follows_its_error(void **state)
{
	struct grove_error err = { 0 };
	char *long_name = malloc(GROVE_ERROR_PATH_MAX + 1);

	(void)state;
	assert_non_null(long_name);
	assert_int_equal(grove_error_set(&err, -ENOENT, "open 'x'"), -ENOENT);
	assert_string_equal(err.path, "");
	assert_int_equal(grove_error_path(&err, "/t/x"), -ENOENT);
	assert_string_equal(err.path, "/t/x");
	grove_error_prefix(&err, "target");
	assert_string_equal(err.path, "/t/x");
	grove_error_errno(&err, -EACCES, "link 'y'");
	assert_string_equal(err.path, "");
	grove_error_path_in(&err, "/s", "caf\xe9");
	assert_string_equal(err.path, "/s/caf\xe9");
	grove_error_path_in(&err, "/", "s");
	assert_string_equal(err.path, "/s");
	memset(long_name, 'a', GROVE_ERROR_PATH_MAX);
	long_name[GROVE_ERROR_PATH_MAX] = '\0';
	grove_error_path(&err, long_name);
	assert_string_equal(err.path, "");
	grove_error_path_in(&err, "/s", long_name + 2);
	assert_string_equal(err.path, "");
	grove_error_path(&err, "/t/x");
	grove_error_clear(&err);
	assert_string_equal(err.path, "");
	assert_int_equal(grove_error_path(NULL, "/t"), 0);
	free(long_name);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_errno_appends_reason),
		cmocka_unit_test(test_text_shown_escapes_what_could_forge_or_drive_a_terminal),
		cmocka_unit_test(test_error_prefix_adds_context),
		cmocka_unit_test(test_error_null_is_allowed_and_codes_have_text),
		cmocka_unit_test(test_error_long_messages_keep_their_reason),
		cmocka_unit_test(test_error_path_follows_its_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
