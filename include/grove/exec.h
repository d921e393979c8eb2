/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The executor: applies a plan through the fs layer, checking each op's precondition at the moment
 * of change. */
#ifndef GROVE_EXEC_H
#define GROVE_EXEC_H

#include <stdbool.h>
#include <stddef.h>

#include "grove/error.h"
#include "grove/fs.h"
#include "grove/plan.h"

/* Called after each op is done (for progress and, later, the journal). May be NULL. */
typedef void (*grove_exec_progress_fn)(void *ctx, size_t done, size_t total,
				       const struct grove_op *op);

/*
 * A FOLD or UNFOLD whose block (the ops after it under its path) goes on past one batch of a
 * streamed plan: begun by one grove_exec_apply, its ops run by the next ones, finished by the one
 * that reaches the first op past it or the plan's end. The strings are the stack's (malloc).
 */
struct grove_exec_block {
	enum grove_op_kind kind;
	char *path;     /* the op's path in the plan */
	char *at;       /* where it acts: path re-rooted into the open blocks around it */
	char *tmp;      /* the temporary entry beside at: the folder being built (UNFOLD) or the
			 * old folder moved aside (FOLD) */
	char *old_text; /* UNFOLD: the link it replaces */
};

/* The open blocks, outermost first. */
struct grove_exec_blocks {
	struct grove_exec_block *v;
	size_t n, cap;
};

void grove_exec_blocks_release(struct grove_exec_blocks *blocks);

struct grove_exec_opts {
	mode_t dir_mode; /* for MKDIR; 0 means 0777 (umask applies) */
	grove_exec_progress_fn progress;
	void *progress_ctx;
	/* Names every temporary entry the ops make (grove_fs_temp_name): the
	 * transaction's id, so that recovery finds them; NULL makes untagged
	 * ".grove-tmp.<pid>." names. */
	const char *temp_tag;
	/* A batch of a streamed plan (session_stream.c): blocks holds the blocks earlier batches
	 * left open, and the ops under one run inside it. A block still open at the batch's end
	 * stays open when more_ops (batches follow), else is finished. NULL: the plan is whole.
	 * After a failure, blocks must be released and not used again (the blocks this call began
	 * were undone with the rest of its changes; the earlier ones are recovery's). */
	struct grove_exec_blocks *blocks;
	bool more_ops;
};

/*
 * Applies plan to the target held by target (and, for ADOPT, the stow dir held
 * by stow; may be NULL if the plan has no ADOPT op).
 *
 * Every op opens the parent folder of its path beneath the target root with
 * RESOLVE_NO_SYMLINKS (so a folder swapped for a symlink fails the op rather
 * than escaping), checks the entry is still what the plan expected, and acts on
 * a single name. Touched folders are fsynced at the end.
 *
 * Returns 0 when every op is done. On a failure, undoes what it did in reverse
 * order and returns:
 *   GROVE_E_PRECONDITION (negative) when the first op's check failed and nothing changed
 *     (a failing syscall before any change returns its own -errno, e.g. -EIO);
 *   GROVE_E_PARTIAL when some ops were done and all were undone (target as before);
 *   GROVE_E_STUCK when undoing failed too (err says where).
 * err names the op, the path and the reason.
 */
int grove_exec_apply(const struct grove_plan *plan, const struct grove_root *target,
		     const struct grove_root *stow, const struct grove_exec_opts *opts,
		     struct grove_error *err);

#endif
