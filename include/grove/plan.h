/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A plan: the ops that take a target from its scanned state to the wanted one, and the conflicts.
 */
#ifndef GROVE_PLAN_H
#define GROVE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "grove/error.h"

/*
 * Every op names a path relative to the target root ("bin/ls": no leading or
 * trailing '/', no "." or ".." components) and records the state it expects
 * before and leaves after, so the executor can check it at the moment of
 * change and invert it.
 *
 * Ops come in the order they must run. Two ops open a block: the ops right
 * after them whose paths lie under op->path + "/" belong to the block.
 *
 *  UNFOLD: before, path is a link (old_text); after, a folder. The block holds
 *          MKDIR and LINK ops that fill the new folder. The executor builds the
 *          folder aside under a temporary name, then swaps it in with
 *          RENAME_EXCHANGE (the path never disappears), then removes the old link.
 *  FOLD:   before, path is a folder holding only our links (and folders of
 *          them); after, a link (text). The block holds the UNLINK and RMDIR
 *          ops that empty the old folder. The executor makes the link under a
 *          temporary name, swaps it in with RENAME_EXCHANGE, then empties and
 *          removes the old folder under the temporary name.
 */
enum grove_op_kind {
	GROVE_OP_MKDIR,  /* none -> folder */
	GROVE_OP_LINK,   /* none -> link text */
	GROVE_OP_UNLINK, /* link old_text -> none */
	GROVE_OP_RELINK, /* link old_text -> link text, replaced atomically */
	GROVE_OP_RMDIR,  /* empty folder -> none */
	GROVE_OP_UNFOLD, /* link old_text -> folder (block follows) */
	GROVE_OP_FOLD,   /* folder -> link text (block follows) */
	GROVE_OP_ADOPT,  /* regular file -> moved to stow_path in the stow dir; path becomes link
			    text */
	/* Grove's own entries only (a profile's generation folders and their records): the
	 * planner never makes these, and the journal never logs them (a profile logs its summary
	 * ops; parse_kind reads MKDIR..ADOPT only). */
	GROVE_OP_WRITE, /* none -> regular file holding text, written and fsynced */
	GROVE_OP_ERASE, /* regular file holding exactly old_text -> none */
	GROVE_OP_MOVE,  /* entry path -> the same entry at path text (beneath the same root;
			   nothing there may be replaced), both parents fsynced at once */
};

struct grove_op {
	enum grove_op_kind kind;
	char *path;      /* relative to the target root */
	char *old_text;  /* UNLINK, RELINK, UNFOLD: the link's text before */
	char *text;      /* LINK, RELINK, FOLD, ADOPT: the link's text after */
	char *stow_path; /* ADOPT: where the file goes, relative to the stow dir root */
	char *package;   /* the package this op serves (may be NULL), for messages */
	/* A recorded op (LINK or UNLINK only) describes a link already on disk rather than a
	 * change: `grove import` records Stow's links as LINKs, and its undo forgets them with
	 * UNLINKs. The executor makes no change for it: it checks that the link is there with
	 * the op's text (LINK: text, UNLINK: old_text), at the moment the transaction runs. The
	 * log's ownership replays it as any op (a recorded LINK makes the link grove's, a
	 * recorded UNLINK forgets it); recovery and reverts treat it as leaving the disk as it
	 * was. */
	bool recorded;
	/* The op's strings lie in the plan's own blocks (grove_plan_add_op_packed), freed with the
	 * plan's ops (grove_plan_release, grove_plan_drop_ops), never one by one. Every other op
	 * owns each of its strings. */
	bool packed;
};

struct grove_conflict {
	char *action; /* "stow" or "unstow" */
	char *package;
	char *path;    /* target-relative path the conflict is about */
	char *message; /* Stow's wording, naming the path and the reason */
};

struct grove_plan;

/*
 * Where the ops of a plan too big to hold go while it is made (a streamed plan, docs/journal.md):
 * once the plan holds more than `batch` ops, grove_plan_add_op hands them to flush, which logs them
 * and calls grove_plan_drop_ops. A flush that fails makes grove_plan_add_op fail with its code (the
 * sink keeps the message in err); the sink is then off.
 */
struct grove_plan_sink {
	size_t batch;
	int (*flush)(struct grove_plan_sink *sink, struct grove_plan *plan);
	struct grove_error err;
};

struct grove_plan_texts;

struct grove_plan {
	struct grove_op *ops;
	size_t n_ops, cap_ops;
	/* Ops handed to the sink and dropped: the plan has n_logged + n_ops ops in all, the first
	 * n_logged of them in the log only. */
	size_t n_logged;
	struct grove_plan_sink *sink; /* borrowed; NULL: every op stays in ops */
	struct grove_conflict *conflicts;
	size_t n_conflicts, cap_conflicts;
	char **warnings; /* e.g. "skipping marked Stow directory x" */
	size_t n_warnings, cap_warnings;
	struct grove_plan_texts *texts; /* the blocks packed ops' strings lie in, or NULL */
};

/* Lifecycle: init zeroes; release frees everything owned; free accepts NULL, returns NULL. */
void grove_plan_init(struct grove_plan *plan);
void grove_plan_release(struct grove_plan *plan);

/* Appends an op; copies every string (NULL stays NULL). Returns 0 or -ENOMEM. */
int grove_plan_add_op(struct grove_plan *plan, enum grove_op_kind kind, const char *path,
		      const char *old_text, const char *text, const char *stow_path,
		      const char *package);
/* As grove_plan_add_op, with the op's strings copied into blocks the plan holds for all its packed
 * ops (no allocation per string, one free per block): for the planner's ops, which no one frees
 * field by field. */
int grove_plan_add_op_packed(struct grove_plan *plan, enum grove_op_kind kind, const char *path,
			     const char *old_text, const char *text, const char *stow_path,
			     const char *package);
/* Frees the ops from the n-th on (their packed strings stay in the plan's blocks until it is
 * released): the plan as it was when it held n ops. */
void grove_plan_truncate(struct grove_plan *plan, size_t n);
/* Frees the ops held (not conflicts or warnings) and counts them in n_logged: the sink logged them.
 */
void grove_plan_drop_ops(struct grove_plan *plan);

/* Appends a recorded op (see struct grove_op): kind is GROVE_OP_LINK (text) or GROVE_OP_UNLINK
 * (old_text). Returns 0 or -ENOMEM. */
int grove_plan_add_recorded(struct grove_plan *plan, enum grove_op_kind kind, const char *path,
			    const char *text, const char *package);
int grove_plan_add_conflict(struct grove_plan *plan, const char *action, const char *package,
			    const char *path, const char *message);
int grove_plan_add_warning(struct grove_plan *plan, const char *message);

/* Sorts conflicts by (action: unstow first, package, message), as Stow prints them,
 * and drops duplicates. */
void grove_plan_sort_conflicts(struct grove_plan *plan);

/* "mkdir", "link", ...; "?" for a kind that is none of them. */
const char *grove_op_kind_name(enum grove_op_kind kind);

/* One line per op, e.g. "link   bin/ls -> ../stow/core/bin/ls\n". */
void grove_plan_print(const struct grove_plan *plan, FILE *out);

/* True when path equals prefix or lies under prefix + "/". */
bool grove_path_under(const char *path, const char *prefix);

/* NOLINTBEGIN(bugprone-macro-parentheses): op is the name of the variable it declares. */
#define grove_plan_foreach_op(plan, op) \
	for (const struct grove_op *op = (plan)->ops; op < (plan)->ops + (plan)->n_ops; op++)
/* NOLINTEND(bugprone-macro-parentheses) */

#endif
