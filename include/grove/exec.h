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

struct grove_exec_opts {
	mode_t dir_mode; /* for MKDIR; 0 means 0777 (umask applies) */
	grove_exec_progress_fn progress;
	void *progress_ctx;
	/* Names every temporary entry the ops make (grove_fs_temp_name): the
	 * transaction's id, so that recovery finds them; NULL makes untagged
	 * ".grove-tmp.<pid>." names. */
	const char *temp_tag;
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
