/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Lexical path arithmetic as GNU Stow does it (join_paths, parent, canonpath, abs2rel); no I/O. */
#ifndef GROVE_PATH_H
#define GROVE_PATH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * All results are malloc'd strings (NULL only on allocation failure).
 *
 * grove_path_canon: File::Spec::Unix->canonpath: collapses "//", drops "."
 * components and a trailing '/', keeps ".." ("./a/" -> "a", "" -> "").
 *
 * grove_path_join: Stow::Util::join_paths(a, b): canonpath each part, an
 * absolute part restarts the result, then "x/.." pairs are removed lexically
 * where x does not start with ".." ("bin/../../stow/a" -> "../stow/a").
 *
 * grove_path_parent: Stow::Util::parent: drop the last component ("a/b" ->
 * "a", "a" -> "").
 *
 * grove_path_abs2rel: File::Spec->abs2rel(path, base) for two canonical
 * absolute paths ("/a/s", "/a/t" -> "../s"; equal paths -> ".").
 */
char *grove_path_canon(const char *path);
char *grove_path_join(const char *a, const char *b);
char *grove_path_parent(const char *path);
/* The length of grove_path_parent(path), which is path's first that many bytes. */
size_t grove_path_parent_len(const char *path);

/*
 * The same answers as grove_path_join, in one copy for the planner's common cases.
 * grove_path_join_names: grove_path_join(dir, names), names being folder entries joined by '/'
 * (dir + "/" + names when dir is a join's result).
 * grove_path_join_ups: grove_path_join of level "../" and path (a link's text from a folder
 * level deep: the "../"s then path, when path is a relative join's result).
 */
char *grove_path_join_names(const char *dir, const char *names);
char *grove_path_join_ups(int level, const char *path);

/*
 * grove_path_join, grove_path_join_names and grove_path_join_ups into buf (size bytes), without
 * allocating on the planner's common cases: the result's length, or -1 when it does not fit in buf
 * (or memory ran out on the long way); the caller then takes the allocating function.
 */
int grove_path_join_into(const char *a, const char *b, char *buf, size_t size);
int grove_path_join_names_into(const char *dir, const char *names, char *buf, size_t size);
int grove_path_join_ups_into(int level, const char *path, char *buf, size_t size);

/*
 * For a walk that joins many links' texts to one folder: whether grove_path_join_into(dir, prefix
 * + names) is, for any plain names, grove_path_join_into(dir, prefix + "x") with its last "x"
 * put back as names, when it fits (the one-pass join of a link's text in its folder): dir is ""
 * or relative, no component empty, "." or starting with ".."; prefix (its first len bytes) is ""
 * or ends with '/', its components fewer than 64 ".." then names, none empty, "." or "..".
 * grove_path_plain_names: whether s is one or more '/'-separated names, none empty, "." or "..";
 * grove_path_plain_len: then its length, else 0.
 */
bool grove_path_link_prefix(const char *dir, const char *prefix, size_t len);
bool grove_path_plain_names(const char *s);
size_t grove_path_plain_len(const char *s);
/*
 * Whether grove_path_join_names(dir, names) is dir + "/" + names, and so is dir + "/" + names +
 * "/" + any name (not "", "." or "..", no '/'), and grove_path_join_ups(level, that) the "../"s
 * then it when dir is relative: dir is a join's result other than "", "." and "/", names (NULL:
 * none) are plain names. For a walk that joins many names to one folder.
 */
bool grove_path_glues(const char *dir, const char *names);

/*
 * For a walk that names a folder's entries in one buffer. grove_path_entry: the path of dir's
 * entry name (grove_path_join_names) in buf (size bytes) or, when it does not fit, in a new
 * string *heap (freed first); NULL when out of memory. grove_path_plain_name: whether name (len
 * bytes) is one component grove_path_glues glues (not "", "." or "..", no '/').
 * grove_path_glue: dir + "/" + name into buf when glue (grove_path_glues(dir, NULL); dlen:
 * dir's length), name is plain and it fits, else grove_path_entry. grove_path_put_ups: writes
 * level "../"s at d (not terminated) and returns their end.
 */
const char *grove_path_entry(const char *dir, const char *name, char *buf, size_t size,
			     char **heap);
bool grove_path_plain_name(const char *name, size_t len);
const char *grove_path_glue(const char *dir, size_t dlen, bool glue, const char *name, size_t len,
			    char *buf, size_t size, char **heap);
char *grove_path_put_ups(char *d, int level);
char *grove_path_abs2rel(const char *path, const char *base);

/*
 * Checks for paths and names read back from a file another user may have
 * written (the journal, records; DESIGN.md invariant 8).
 * grove_path_is_clean_relative: non-empty, shorter than PATH_MAX, no leading
 * '/', no empty, "." or ".." component, no trailing '/'.
 * grove_path_is_name: one such component (no '/'), shorter than NAME_MAX + 1.
 */
bool grove_path_is_clean_relative(const char *path);
bool grove_path_is_name(const char *name);

/* The package that is the stow dir itself (`stow .`, docs/stow.md): its entries land at their
 * own paths in the target. */
#define GROVE_STOW_DIR_PACKAGE "."

/* Whether the target-relative path tpath is where a stow makes the link to the package-relative
 * path sub: 0 no; GROVE_LANDS_SAME when they are equal and no name of sub starts with "dot-"
 * (a stow with or without --dotfiles); GROVE_LANDS_PLAIN when they are equal and one does (only
 * a stow without --dotfiles); GROVE_LANDS_DOTTED when tpath is sub with each "dot-X" name as
 * ".X" (only --dotfiles). sub may be NULL (0). */
enum { GROVE_LANDS_SAME = 1, GROVE_LANDS_PLAIN = 2, GROVE_LANDS_DOTTED = 3 };
int grove_path_lands_as(const char *tpath, const char *sub);

/* Whether name is a package name as the log stores it: a single name, or "." (the stow dir
 * itself as one package, `stow .`). */
bool grove_path_is_package(const char *name);

/* Number of '/' characters in path. */
int grove_path_slashes(const char *path);

/* If path starts with prefix + "/", returns the rest; else NULL. */
const char *grove_path_strip_prefix(const char *path, const char *prefix);

/* Stow's --dotfiles renaming of one name: "dot-X" -> ".X" unless X starts with '.'. */
char *grove_dotfile_adjust(const char *name);
/* Stow's reverse (compat unstow): ".X" -> "dot-X"; "." and ".." unchanged. */
char *grove_dotfile_unadjust(const char *name);

#endif
