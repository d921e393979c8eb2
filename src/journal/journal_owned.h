/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internal: replaying committed ops into what grove owns in a target (grove_journal_owned). */
#ifndef GROVE_JOURNAL_OWNED_H
#define GROVE_JOURNAL_OWNED_H

#include <stddef.h>

#include "grove/journal.h"
#include "grove/plan.h"

struct grove_owned_replay;

/* A fresh, empty replay, or NULL when out of memory. */
struct grove_owned_replay *grove_owned_replay_new(void);

/* Applies one committed op, in log order: MKDIR and UNFOLD make a folder entry,
 * LINK, RELINK and ADOPT a link entry (replacing what was there), UNLINK and
 * RMDIR end the entry, FOLD ends everything at and beneath path and makes a
 * link entry. Returns 0 or -ENOMEM. */
int grove_owned_replay_op(struct grove_owned_replay *m, enum grove_op_kind kind, const char *path,
			  const char *text, const char *package);

/* Hands out the live entries sorted bytewise by path and empties m. */
int grove_owned_replay_take(struct grove_owned_replay *m, struct grove_owned **ret, size_t *ret_n);

/* Accepts NULL; returns NULL. */
struct grove_owned_replay *grove_owned_replay_free(struct grove_owned_replay *m);

#endif
