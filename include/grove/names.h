/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Arrays of owned strings (package names, paths) that the library hands to its callers. */
#ifndef GROVE_NAMES_H
#define GROVE_NAMES_H

#include <stddef.h>

/* Frees the n strings of v, then v. Accepts NULL (whatever n is). */
void grove_names_free(char **v, size_t n);

#endif
