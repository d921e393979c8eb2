/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Names and link texts shown to people: nothing in them can forge a line or drive a terminal. */
#ifndef GROVE_TEXT_H
#define GROVE_TEXT_H

#include <stdio.h>

/*
 * Entry names and link texts come from folders other users may own: a name
 * holding a newline could forge a plan line ("unlink .ssh"), one holding
 * escape sequences could rewrite what a reviewer sees (DESIGN.md invariant 8).
 * Everything grove prints in words goes through these: every byte that is a
 * C0 control or DEL, every C1 control (U+0080..U+009F as UTF-8), and every
 * byte that is not part of valid UTF-8 is shown as \xHH; printable text,
 * UTF-8 included, is left as it is (so names match GNU Stow's output).
 */

/* Writes s to f, shown as above. */
void grove_fput_shown(const char *s, FILE *f);

/* s shown as above, malloc'd; NULL when out of memory. */
char *grove_text_shown(const char *s);

/* True if s needs no change to be shown. */
int grove_text_is_plain(const char *s);

#endif
