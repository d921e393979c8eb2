/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Stow's ignore lists and --ignore/--defer/--override patterns, as Perl-compatible regexes (PCRE2).
 */
#ifndef GROVE_IGNORE_H
#define GROVE_IGNORE_H

#include <stdbool.h>
#include <stddef.h>

#include "grove/error.h"

/*
 * An ignore list as GNU Stow 2.4 builds it from a .stow-local-ignore file,
 * ~/.stow-global-ignore, or the built-in default list: each line is trimmed,
 * '#' lines and empty lines skipped, " #..." trailing comments stripped, "\#"
 * unescaped; "^/\.stow\-local\-ignore$" is always added. Patterns without '/'
 * form the segment regex "^(p1|p2|...)$" matched against the basename; the
 * others form the path regex "(^|/)(q1|q2|...)(/|$)" matched against "/" + path.
 * Patterns are compiled with PCRE2 (Perl syntax, as Stow uses Perl regexes).
 */
struct grove_ignore_list;

/* Parses text (NUL-terminated) into a list. source names it in errors
 * ("'/home/u/.stow-global-ignore'"). A bad regex: GROVE_E_CONFIG naming the
 * source and the pattern. */
int grove_ignore_list_parse(const char *text, const char *source, struct grove_ignore_list **ret,
			    struct grove_error *err);

/* The built-in default list (Stow's __DATA__ section). Never fails except -ENOMEM. */
int grove_ignore_list_default(struct grove_ignore_list **ret, struct grove_error *err);
/* Its text, as grove_ignore_list_parse takes it. */
const char *grove_ignore_list_default_text(void);

/*
 * Whether the target-relative path (e.g. "bin/foo~") is ignored by the list:
 * 1 yes, 0 no. Every match has a budget (an ignore file may be another
 * user's): a pattern that costs too much on a path is -GROVE_E_BADINPUT with
 * err naming the list's source, the pattern and the path, never a silent
 * answer; -ENOMEM likewise.
 */
int grove_ignore_list_match(const struct grove_ignore_list *list, const char *path,
			    struct grove_error *err);

/* The budget is kept per process (a run of grove): the matches that pass the
 * cheap per-match limit share one total. Tests reset it. */
void grove_ignore_budget_reset(void);

struct grove_ignore_list *grove_ignore_list_free(struct grove_ignore_list *list);

/*
 * A list of command-line patterns. Stow wraps each --ignore RE as "(RE)\z"
 * (matches the end of the path), and each --defer/--override RE as "\A(RE)"
 * (matches the start). A path matches the set if any pattern matches.
 */
enum grove_pattern_anchor {
	GROVE_ANCHOR_END,   /* --ignore */
	GROVE_ANCHOR_START, /* --defer, --override */
};

struct grove_pattern_set;

struct grove_pattern_set *grove_pattern_set_new(enum grove_pattern_anchor anchor);
/* Compiles and adds one pattern; a bad regex is GROVE_E_USAGE naming the option and the pattern. */
int grove_pattern_set_add(struct grove_pattern_set *set, const char *re, struct grove_error *err);
/* 1 if path matches any pattern of set, 0 if none; over budget, as grove_ignore_list_match. */
int grove_pattern_set_match(const struct grove_pattern_set *set, const char *path,
			    struct grove_error *err);
size_t grove_pattern_set_count(const struct grove_pattern_set *set);
struct grove_pattern_set *grove_pattern_set_free(struct grove_pattern_set *set);

#endif
