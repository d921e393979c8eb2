/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Private to the executor (exec.c applies ops, exec_block.c runs the FOLD and UNFOLD blocks,
 * exec_dcache.c holds the folders they act in). */
#ifndef GROVE_EXEC_INT_H
#define GROVE_EXEC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "grove/error.h"
#include "grove/exec.h"
#include "grove/plan.h"

#define GROVE_DCACHE_SIZE 16

struct grove_dcache_ent {
	char *rel; /* folder path beneath the root */
	int fd;
	bool dirty; /* changed since opened: fsync before closing */
};

struct grove_dcache {
	int rootfd;
	struct grove_dcache_ent e[GROVE_DCACHE_SIZE];
	size_t n;
};

/* A failure that means "the world is not what the plan expected" (EEXIST, ENOENT, ENOTDIR,
 * ELOOP, EXDEV, ENOTEMPTY, EISDIR) becomes GROVE_E_PRECONDITION in err; returns err's code, or r.
 */
int grove_exec_as_precondition(struct grove_error *err, int r);

/* Closes entry i, fsyncing it first when sync and it changed; returns the fsync's error. */
int grove_dcache_evict(struct grove_dcache *c, size_t i, bool sync, struct grove_error *err);

/* Closes every cached fd, fsyncing the changed folders first when sync; returns the first error. */
int grove_dcache_flush(struct grove_dcache *c, bool sync, struct grove_error *err);

/* Drops rel and everything under it (they are being removed: no fsync needed). */
void grove_dcache_forget(struct grove_dcache *c, const char *rel);

/* Closes the cached fds of rel and everything under it, fsyncing the changed ones first (rel is
 * about to move). */
int grove_dcache_settle(struct grove_dcache *c, const char *rel, struct grove_error *err);

/* Caches fd as folder rel; takes ownership of fd (closes it on failure). */
int grove_dcache_put(struct grove_dcache *c, const char *rel, int fd, bool dirty,
		     struct grove_error *err);

/* The fd of folder rel beneath the cache's root, opened with RESOLVE_NO_SYMLINKS; marked changed
 * when dirty. The fd stays the cache's. A failure that means the world changed is
 * GROVE_E_PRECONDITION. */
int grove_dcache_get(struct grove_dcache *c, const char *rel, bool dirty, struct grove_error *err);

/* ---- one run of the executor (exec.c) ---- */

enum undo_kind {
	U_LINK,     /* we created link dir/name -> text */
	U_UNLINK,   /* we removed link dir/name -> text */
	U_RELINK,   /* we replaced dir/name old_text by text */
	U_MKDIR,    /* we made folder dir/name */
	U_RMDIR,    /* we removed folder dir/name (mode) */
	U_EXCHANGE, /* we exchanged dir/name and dir/name2 */
	U_MOVE,     /* we moved (stow?)dir/name to (to_stow?)dir2/name2 */
	U_WRITE,    /* we wrote the regular file dir/name holding text */
	U_ERASE,    /* we removed the regular file dir/name, which held text */
};

/* An undo record's strings are copies in the run's arena (struct exec): recording costs no
 * malloc, and they are freed all at once when the run ends. */
struct undo {
	enum undo_kind kind;
	bool in_stow, to_stow;
	const char *dir, *name;
	const char *dir2, *name2;
	const char *text, *old_text;
	mode_t mode;
};

/* A bump allocator for the strings of one run: the folders and names an op acts on, and the
 * undo records. Every op needs a few; one malloc and free each made them a fifth of the
 * executor's own instructions on a 100k-link plan. */
struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	char data[];
};

#define ARENA_CHUNK ((size_t)64 * 1024)

struct aside {
	char *dir, *name; /* beneath the stow root */
};

struct exec {
	const struct grove_plan *plan;
	const struct grove_root *target, *stow;
	const struct grove_exec_opts *opts;
	struct grove_dcache tc, sc;
	struct undo *undo;
	size_t n_undo, cap_undo;
	struct aside *asides;
	size_t n_asides, cap_asides;
	size_t done;
	bool named; /* err already names the failing op (set by the innermost run_range) */
	/* Folders removed whole (see op_remove_aside): rm_end[i], when not 0, ends the block of
	 * removals that starts at op i (its last op the folder's RMDIR); rm_start[j], for an
	 * RMDIR j that ends such a block, is where the block starts (RM_NONE: it does not). */
	uint32_t *rm_end, *rm_start;
	bool aside; /* running ops inside a folder moved aside: nobody reaches it by path */
	struct arena_chunk *arena;
};

#define RM_NONE UINT32_MAX

/* The tag of the temporary entries this run makes (the options' temp_tag). */
const char *grove_exec_tag(const struct exec *ex);

/* Whether path lies strictly under the folder prefix. */
bool grove_exec_under(const char *path, const char *prefix);

/* s copied into the run's arena; NULL stays NULL (and is what a failed copy gives). */
const char *grove_exec_dup(struct exec *ex, const char *s);

/* "dir/name" (or name, when dir is the root's "") in the arena. */
const char *grove_exec_join(struct exec *ex, const char *dir, const char *name);

/* Splits path into its parent ("" for the root), in the arena, and a pointer to its last
 * component (inside path). -ENOMEM when the arena is out of memory. */
int grove_exec_split(struct exec *ex, const char *path, const char **ret_dir,
		     const char **ret_name);

/* The path an op acts on: its own, or re-rooted from a block's folder (from) to where that is
 * being built or was moved (to), in the arena. */
const char *grove_exec_map_path(struct exec *ex, const char *path, const char *from,
				const char *to);

/* Reserves room for `more` undo records, so that recording a change that already happened cannot
 * fail. */
int grove_exec_undo_reserve(struct exec *ex, size_t more, struct grove_error *err);

/* Records a change that just happened; room was reserved by grove_exec_undo_reserve. */
struct undo *grove_exec_undo_push(struct exec *ex, enum undo_kind kind, const char *dir,
				  const char *name);

/* The common start of an op on path: its parent folder (open, beneath the root, no symlinks on the
 * way) and last name, with room for `undos` undo records. Returns the parent's fd (cached). */
int grove_exec_enter_parent(struct exec *ex, const char *path, size_t undos, const char **ret_dir,
			    const char **ret_name, struct grove_error *err);

/* Removes the empty folder dir/name, recording its mode so undo can remake it. */
int grove_exec_remove_folder(struct exec *ex, const char *dir, const char *name,
			     struct grove_error *err);

/* An op done: counts it and tells the options' progress callback. */
void grove_exec_progress(struct exec *ex, const struct grove_op *op);

/* 0 when op has what its kind needs (a path, under from when from is given, its texts), else a
 * GROVE_E_INTERNAL "malformed op" in err. */
int grove_exec_check_op(const struct grove_op *op, const char *from, struct grove_error *err);

/* Runs ops [start, end) of the plan; inside a block, paths under from are re-rooted to to. */
int grove_exec_run_range(struct exec *ex, size_t start, size_t end, const char *from,
			 const char *to, struct grove_error *err);

/* ---- the FOLD and UNFOLD blocks (exec_block.c) ---- */

/* 1 if dir/name is a link with text, else 0 (err explains), or a negative errno. */
int grove_exec_check_link(int fd, const char *name, const char *text, struct grove_error *err);

/* Runs the FOLD or UNFOLD op i (acting on path) and its block: the ops after it under its path,
 * within [i, end); *next is where the block ends. */
int grove_exec_op_block(struct exec *ex, size_t i, const char *path, size_t end, size_t *next,
			struct grove_error *err);

/* Runs the plan as one batch of a streamed plan (the options' blocks): see grove_exec_opts. */
int grove_exec_run_batch(struct exec *ex, struct grove_error *err);

#endif
