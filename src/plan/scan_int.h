/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Private to the scan (scan.c reads the stow dir, scan_target.c the target): its state. */
#ifndef GROVE_SCAN_INT_H
#define GROVE_SCAN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "grove/fs.h"
#include "plan/tree.h"
#include "plan/world.h"

struct scan {
	struct grove_world *w;
	const struct grove_root *stow;
	const struct grove_root *target;
	const struct grove_scan_opts *o;
	struct grove_error *err;
	/* (dev, ino) of the folders being loaded, to stop at a link back to an ancestor */
	struct dev_ino {
		dev_t dev;
		ino_t ino;
		int fd; /* >= 0: ino not known yet, fstat of this fd (open while on the stack) */
	} * stack;
	size_t depth, cap_stack;
	size_t follows; /* package links being followed, nested */
	bool lookup;    /* target folders: names looked up, not listed (grove_scan_opts.lookup) */
	/* Pruning (grove_scan_opts.prune), while load_package reads a package: */
	bool prune;
	const char *package; /* the package being read */
	char *const *pkgs;   /* every package of the request */
	size_t n_pkgs;
	size_t total;    /* nodes made for every package so far (grove_scan_opts.walk_above) */
	size_t made;     /* nodes this scan made (heap reservation steps) */
	size_t reserved; /* bytes of heap reserved for them (grove_tree_heap_reserve) */
	/* owned links whose destinations must be known: (stow-relative dest, pkg subpaths) */
	struct pending {
		char *dest;   /* stow-relative path the link points at */
		char *unfold; /* stow-relative folder the plan may unfold, or NULL */
		struct grove_node *tnode;
	} * pend;
	size_t n_pend, cap_pend;
	/* Package folders read and done with, closed a batch at a time (grove_fd_batch): the
	 * scan ends with grove_scan_end. */
	struct grove_fd_batch done_fds;
};

/* A folder of a package the target scan is matching against, at subpath ("." at its root). */
struct pkg_at {
	const char *package;
	struct grove_node *node; /* a folder (or link to one) in the package */
	char *subpath;           /* "." at the package root; NULL: not made yet (see parent) */
	/* A match's folder's subpath (scan_target.c's matching_kids): subpath is parent joined
	 * with node's name, made only when needed (most matches are files, which need none). */
	const char *parent;
};

int grove_scan_oom(struct scan *s);

/* grove_fs_list_flags's flags for a folder of the stow dir (the target) that is on_mount: on
 * the root's own mount, none crossed on the way (grove_fs_open_dir_at_mount). */
unsigned grove_scan_stow_list_flags(struct scan *s, bool on_mount);
unsigned grove_scan_target_list_flags(struct scan *s, bool on_mount);

/* What the stow-relative path is in the model (reading it if need be): its type in *ret_type. */
int grove_scan_model_answer(struct scan *s, const char *relpath, enum grove_ftype *ret_type);

/* Stats the stow-relative relpath, links followed (a package link that leaves the stow dir and
 * comes straight back is rebased: *ret_phys, malloc'd, is then the path to open it by). */
int grove_scan_stat_follow(struct scan *s, const char *relpath, char **ret_phys,
			   struct grove_stat *st, struct grove_error *err);

/* Records in the model what following the stow-relative relpath finds, unless known. */
int grove_scan_note_dest(struct scan *s, const char *relpath, enum grove_ftype *ret_type);

/* Notes what each of s->pend's destinations is (grove_scan_note_dest) on its target link. */
int grove_scan_note_pending(struct scan *s);

/* Frees what a scan holds beyond the world's trees and closes its batched fds. */
void grove_scan_end(struct scan *s);

/* The model node for a stow-relative path, made (unlisted folders) as needed; NULL when a listed
 * folder on the way says the path does not exist (*ret_absent) or out of memory. */
struct grove_node *grove_scan_model_path(struct scan *s, const char *relpath, bool *ret_absent);

/* .stow-local-ignore files larger than this are refused. */
#define IGNORE_FILE_MAX ((size_t)1024 * 1024)

/* Reads the package's .stow-local-ignore once (its record in w). */
int grove_scan_package_ignore(struct scan *s, const char *package);

/* Readies m to make the nodes of a listing of dir (ents[0..n)) together, and sizes dir's kids
 * array for them; into a folder that already has kids (a merge) each node is made on its own.
 * Returns 0 or -ENOMEM (m is ready all the same). */
int grove_scan_maker_init(struct grove_node *dir, const struct grove_dirent *ents, size_t n,
			  struct grove_node_maker *m);

/* Counts a node the scan made; every so many, reserves heap for the next ones
 * (grove_tree_heap_reserve), up to a bound per scan. */
void grove_scan_note_made(struct scan *s);

/* Whether the package node is a folder, or a link to one. */
bool grove_scan_pkg_is_dir(const struct grove_node *n);

/* Lists the target folder dir (target-relative tpath, open as dfd; on_mount: on the target's
 * mount) and what beneath it the packages at pkgs reach, recording the target's links into the
 * stow dir in s->pend. */
int grove_scan_target_dir(struct scan *s, struct grove_node *dir, int dfd, bool on_mount,
			  const char *tpath, const struct pkg_at *pkgs, size_t n_pkgs);

#endif
