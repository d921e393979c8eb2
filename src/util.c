/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Small internal helpers shared by the library's modules. */
#include <stdio.h>

#include "util.h"

char *
grove_strdupf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return r < 0 ? NULL : s;
}
