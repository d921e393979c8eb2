/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The names of a profile's generations, parsed (no I/O): profile_log needs them to tell a
 * profile's log, and profile to read its generations. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "profile_log_names.h"
#include "util.h"

/* A generation number as written in names: decimal, no sign, no leading zero. */
bool
grove_profile_record_number(const char *s, size_t len, long *ret)
{
	long n = 0;

	if (len == 0 || len > 10 || s[0] == '0')
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		n = n * 10 + (s[i] - '0');
	}
	if (n > GEN_MAX)
		return false;
	*ret = n;
	return true;
}

/* "PROFILE-<n>-link" -> n, for the profile named profile. */
bool
grove_profile_record_link_of(const char *profile, const char *name, long *ret)
{
	size_t nl = strlen(profile), l = strlen(name);

	if (l < nl + 7 || strncmp(name, profile, nl) != 0 || name[nl] != '-' ||
	    strcmp(name + l - 5, "-link") != 0)
		return false;
	return grove_profile_record_number(name + nl + 1, l - nl - 6, ret);
}
