/* SPDX-License-Identifier: GPL-3.0-or-later */
/* update-alternatives' administrative files (ADMINDIR/NAME) as update-alternatives reads them:
 * what a file means, to compare it with the text grove keeps. */
#ifndef GROVE_ALTFILE_H
#define GROVE_ALTFILE_H

#include <stddef.h>

/*
 * update-alternatives 1.21 reads an admin file line by line (each ended by a newline, none
 * holding a NUL byte) as far as the empty line that ends the list of choices, and no further:
 * what follows it is never read. A priority is read with strtol, so "010", "+10" and " 10" all
 * mean 10.
 *
 * The meaning of file (len bytes) is the text update-alternatives reads from it with each
 * priority that is an integer written as "%d" (one that is not is kept as written: it is
 * accepted for a choice whose file is missing, which is then dropped), and nothing after the
 * end of the list: the status, the link, the followers (name and link), then per choice its
 * path, its priority and one line per follower, choices in the file's order. grove_alt_group_format
 * writes a group it parsed from file as exactly this text, and the canonical text grove writes is
 * its own meaning. Two files update-alternatives reads alike have the same meaning.
 *
 * Returns 0 and *ret (malloc'd), -EINVAL when update-alternatives cannot read file this far
 * (a missing or unterminated line, a NUL byte in a line, a status other than auto or manual),
 * or -ENOMEM.
 */
int grove_altfile_meaning(const char *file, size_t len, char **ret);

/* Reads a priority as update-alternatives does (strtol, base 10, the whole line): 0 and
 * *ret, -EINVAL when it is no integer, -ERANGE when it is out of int's range. */
int grove_altfile_priority(const char *text, int *ret);

#endif
