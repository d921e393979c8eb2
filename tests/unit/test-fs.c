/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests: fs (being written). */
#include "testutil.h"

static void
test_placeholder(void **state)
{
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_placeholder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
