/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Profiles: parsing the names of a profile's entries (defined in profile_log.c, which recognises a
 * profile's log by them; profile_record.c names them); this header needs nothing but the C
 * library, so that profile_log.c (asked by sessions) includes no session header. */
#ifndef GROVE_PROFILE_LOG_NAMES_H
#define GROVE_PROFILE_LOG_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define GEN_MAX 1000000000L

/* A generation number as written in names: decimal, no sign, no leading zero, at most GEN_MAX. */
bool grove_profile_record_number(const char *s, size_t len, long *ret);

/* "PROFILE-<n>-link" -> n, for the profile named profile. */
bool grove_profile_record_link_of(const char *profile, const char *name, long *ret);

#endif
