/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Small internal helpers shared by the library's modules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

char *
grove_child_path(const char *dir, const char *name)
{
	size_t ld = strlen(dir), ln = strlen(name);
	char *s = malloc(ld + ln + 2);

	if (!s)
		return NULL;
	if (ld) {
		memcpy(s, dir, ld);
		s[ld++] = '/';
	}
	memcpy(s + ld, name, ln);
	s[ld + ln] = '\0';
	return s;
}
