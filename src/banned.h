/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Turns a call of a banned C library function into a compile error naming it. */
#ifndef GROVE_BANNED_H
#define GROVE_BANNED_H

/*
 * Include this after every system header (src/base/util.h includes it last; a file
 * that does not include util.h includes it directly, last). A call then fails
 * to compile with "sorry_strcpy_is_a_banned_function" undeclared.
 *
 * The list, and why:
 *  - strcpy, strcat: no bound at all; the size is the caller's unchecked belief.
 *    Use memcpy with a length you computed, or grove_strdupf/snprintf.
 *  - strncpy: leaves the result unterminated when the source is long, and pads
 *    with NULs when it is short; neither is ever what is meant.
 *  - strncat: its bound is what is left, not the buffer's size, so it is
 *    misused as often as strcat.
 *  - sprintf, vsprintf: unbounded; snprintf and vsnprintf say the size.
 *  - gets: cannot be used safely (removed from C11).
 *  - strtok: hidden static state, wrong in any code that may be re-entered.
 *    strtok_r is allowed: its state is the caller's, and it writes only into
 *    the caller's own copy.
 * Not banned: memcpy, snprintf, strndup, strtok_r. Like git's banned.h, the
 * macros take the function's arguments, so only calls are caught.
 */
#define GROVE_BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) GROVE_BANNED(strcpy)
#undef strcat
#define strcat(x, y) GROVE_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) GROVE_BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) GROVE_BANNED(strncat)
#undef sprintf
#define sprintf(...) GROVE_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) GROVE_BANNED(vsprintf)
#undef gets
#define gets(x) GROVE_BANNED(gets)
#undef strtok
#define strtok(x, y) GROVE_BANNED(strtok)

#endif
