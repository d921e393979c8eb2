/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Profiles' private parts: the open profile and the helpers its files share (names and records in
 * profile_record.c, reading the disk in profile_read.c, undo and recovery in profile_undo.c, the
 * operations in profile.c). */
#ifndef GROVE_PROFILE_PRIVATE_H
#define GROVE_PROFILE_PRIVATE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grove/error.h"
#include "grove/fs.h"
#include "grove/plan.h"
#include "grove/profile.h"
#include "grove/session.h"
#include "formats/profile_log.h"
#include "formats/profile_log_names.h"

#define RECORD_MAX   (1 << 20)
#define NAME_LEN_MAX 200

struct grove_profile {
	char *name;
	char *link_path; /* D/NAME as given, for messages */
	char *gens_name; /* NAME.generations */
	struct grove_root dir;
	struct grove_root gens; /* fd -1 when missing (read-only open of a new profile) */
	struct grove_session session;
	bool have_session;
	bool mutate;
	/* What this run made to open the profile, removed again at close when the
	 * run changed nothing (a refused first build leaves nothing behind). */
	char *dir_path;   /* D as opened */
	char *made_below; /* the deepest folder above D that existed, when D did not */
	bool made_gens;   /* NAME.generations did not exist */
	bool began;       /* a transaction was logged */
	/* The tag of the temporary entries the running transaction (or its
	 * recovery) makes: its id, as the executor's temp_tag. */
	char tag[32];
	bool dry_run;
	struct grove_plan planned;        /* the last changing call's summary ops */
	struct grove_plan planned_forest; /* and, for a build, the new generation's forest */
};

static inline int
oom(struct grove_error *err)
{
	return grove_error_set(err, -ENOMEM, "out of memory");
}

/* ---- names and records (profile_record.c) ---- */

/* "NAME-<n>-link" and its text "NAME.generations/<n>" (malloc'd; NULL when out of memory). */
char *grove_profile_record_link_name(const struct grove_profile *p, long n);
char *grove_profile_record_link_text(const struct grove_profile *p, long n);
/* The record file's text for g (malloc'd), and parsing one (-EINVAL when not a valid record). */
char *grove_profile_record_format(const struct grove_generation *g);
int grove_profile_record_parse(char *buf, struct grove_generation *g);
int grove_profile_record_add_package(struct grove_generation *g, const char *name);

/* ---- reading the disk (profile_read.c) ---- */

/* The generation the profile link points at, or 0 when there is no link;
 * *ret_text (may be NULL) gets the link's text. */
int grove_profile_read_current(struct grove_profile *p, long *ret, char **ret_text,
			       struct grove_error *err);
/* The highest number any generation link or generation folder has. */
int grove_profile_read_highest(struct grove_profile *p, const struct grove_generation *gens,
			       size_t n, long *ret, struct grove_error *err);
const struct grove_generation *grove_profile_read_find(const struct grove_generation *gens,
						       size_t n, long num);
bool grove_profile_read_has(const struct grove_generation *gens, size_t n, long num);

/* ---- removing what grove made, undo and recovery (profile_undo.c) ---- */

/* The largest record a removal takes as grove's (and keeps, to put back on undo). */
#define GROVE_PROFILE_RECORD_MAX (16u << 20)

/* Appends to plan (paths relative to NAME.generations) the ops that remove the
 * generation folder name: when aside is given, first a MOVE of it to that
 * private name (so that it is never seen half-removed under its number); then
 * every link, the record and every folder beneath it, each checked at the
 * moment of change. A folder holding anything else (a user's file) refuses,
 * before anything is touched. */
int grove_profile_undo_plan_removal(struct grove_profile *p, const char *name, const char *aside,
				    struct grove_plan *plan, struct grove_error *err);
/* Runs plan (paths relative to NAME.generations) through the executor, its
 * temporary entries tagged with p->tag. */
int grove_profile_undo_run_gens(struct grove_profile *p, const struct grove_plan *plan,
				struct grove_error *err);
/* Renames the generation folder name aside (tagged with p->tag), then removes it. */
int grove_profile_undo_remove_folder(struct grove_profile *p, const char *name,
				     struct grove_error *err);
/* After the last component of "NAME.generations/<n>": the folder's name, or NULL. */
const char *grove_profile_undo_folder_of(const struct grove_profile *p, const char *path);
/* Puts the profile back to the state before transaction txn, or finishes it
 * forward (a gc: *ret_forward). The transaction driver's rollback. */
int grove_profile_undo_txn(struct grove_profile *p, int64_t txn, bool *ret_forward,
			   struct grove_error *err);

#endif
