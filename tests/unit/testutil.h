/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Test fixtures: throwaway roots and a tree builder/dumper from a compact spec. */
#ifndef GROVE_TESTUTIL_H
#define GROVE_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

/* Makes a fresh temporary folder (under $TMPDIR or /tmp) and returns its
 * malloc'd absolute path; the test removes it with tu_rmtree(). */
char *tu_mkdtemp(void);

/* Removes path recursively (never following symlinks). */
void tu_rmtree(const char *path);

/*
 * Builds entries under root from a spec, one entry per line:
 *   d PATH            a folder (parents are made as needed)
 *   f PATH [TEXT]     a regular file holding TEXT (default: PATH)
 *   l PATH TEXT       a symlink PATH -> TEXT
 *   p PATH            a fifo
 * Blank lines and lines starting with '#' are skipped.
 */
void tu_build(const char *root, const char *spec);

/* Dumps the tree under root, sorted, one line per entry in the same spec
 * language (files as "f PATH TEXT" with their contents); malloc'd. */
char *tu_dump(const char *root);

/* Joins root and rel into a malloc'd path. */
char *tu_path(const char *root, const char *rel);

/* Reads a whole file (malloc'd, NUL-terminated), or NULL. */
char *tu_read_file(const char *path);

#endif
