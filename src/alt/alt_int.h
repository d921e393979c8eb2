/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internal to grove alt's files (alt_run.c, alt_disk.c, alt_select.c, alt_log.c): the state of
 * one command and the functions the files share. */
#ifndef GROVE_ALT_INT_H
#define GROVE_ALT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grove/alt.h"
#include "grove/error.h"
#include "grove/fs.h"
#include "grove/plan.h"
#include "grove/session.h"

/* One path the command may change: what it was and what it should become. */
struct grove_alt_rec {
	char *abs; /* as written in the group (absolute) */
	char *rel; /* beneath the installation root */
	enum grove_ftype orig, want;
	char *orig_text, *want_text;
	/* 1 + the index of the record of the same file reached by another path (merged /usr's
	 * /bin/X and /usr/bin/X), whose state this one shares; 0 for a record of its own. */
	size_t same;
	bool nodir; /* its folder is missing */
};

struct grove_alt_ctx {
	const struct grove_alt_request *req;
	struct grove_alt_result *res;
	struct grove_root inst;
	char *altdir; /* without trailing '/' */
	/* A relative altdir (update-alternatives writes it into the generic links as given)
	 * taken against the current folder: absolute, in the links' space (inside --root);
	 * NULL when altdir is absolute or the current folder is outside the root. */
	char *altdir_abs;
	struct grove_alt_rec *recs;
	size_t n_recs;
	bool oom;
	/* The folders of the links walked so far (lexical path beneath the root, physical path,
	 * held fd or -1 when missing): one walk per folder, not per link. */
	struct grove_alt_dir {
		char *rel, *phys;
		int fd;
	} * dirs;
	size_t n_dirs;
	/* Followers evolve added or moved: broken links of only these are an update
	 * ("has changed slave links"), not a repair. */
	const char **updated;
	size_t n_updated;
};

/* What grove_alt_disk_is_broken finds. */
enum { GROVE_ALT_NOT_BROKEN, GROVE_ALT_BROKEN, GROVE_ALT_SLAVES_CHANGED };

/* alt_run.c */
/* Adds a message of kind to the result (out of memory sets c->oom). */
void grove_alt_run_msg(struct grove_alt_ctx *c, enum grove_alt_msg_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A message's verb: done as update-alternatives words it, or would (what a dry run would do). */
const char *grove_alt_verb(const struct grove_alt_ctx *c, const char *done, const char *would);

/* The text w is saved as after the command, as update-alternatives saves a group (its modified
 * flag): *ret_changed false when the command changed nothing in the group (before stays, and its
 * file as it is), else *ret_after the text in update-alternatives' order (w normalized; it may be
 * before again, an --install of a choice as it was), NULL when the group goes (no choice left).
 * 0 or -ENOMEM. */
int grove_alt_run_saved_text(const struct grove_alt_ctx *c, const char *before,
			     struct grove_alt_group *w, bool *ret_changed, char **ret_after);

/* alt_disk.c */
/* Notes that evolve added or moved follower name (c->updated). */
void grove_alt_disk_mark_updated(struct grove_alt_ctx *c, const char *name);

/* A relative path without ".." components. */
bool grove_alt_disk_rel_ok(const char *rel);

/* How a command follows the symlinks on the way to its links' folders (grove_fs_chase_dir's
 * root_path): as in a chroot with --root, else relative to the instdir's real path. */
const char *grove_alt_disk_chase_root(const struct grove_alt_request *req,
				      const struct grove_root *inst);

/* Sets c->altdir from altdir, without trailing '/' (0 or -ENOMEM). */
int grove_alt_disk_set_altdir(struct grove_alt_ctx *c, const char *altdir);

/* A relative c->altdir: c->altdir_abs from the current folder, held as a root once (c->inst
 * held first). */
int grove_alt_disk_place_altdir(struct grove_alt_ctx *c, struct grove_error *err);

/* Frees the records. */
void grove_alt_disk_release(struct grove_alt_ctx *c);

/* path's part beneath root (both as the user gave them), canonical and without "..", or NULL when
 * path is not beneath root; malloc'd. */
char *grove_alt_disk_under_root(const char *root, const char *path);

/* abs beneath the installation root (as the command's links are found there), or NULL when it
 * is not beneath it. */
const char *grove_alt_disk_rel_of(const struct grove_alt_ctx *c, const char *abs);

/* What update-alternatives puts before a path in some messages: its --root. */
const char *grove_alt_disk_rootp(const struct grove_alt_ctx *c);

/* The pending state of abs: its type and link text (valid until the next grove_alt_disk_state or
 * grove_alt_disk_want). */
int grove_alt_disk_state(struct grove_alt_ctx *c, const char *abs, enum grove_ftype *type,
			 const char **text, struct grove_error *err);

/* Wants abs to be a link to text (NULL: absent). */
int grove_alt_disk_want(struct grove_alt_ctx *c, const char *abs, const char *text,
			struct grove_error *err);

/* ALTDIR/NAME, malloc'd; NULL when out of memory. */
char *grove_alt_disk_path(const struct grove_alt_ctx *c, const char *name);

/* Whether file exists, following links, beneath the installation root (stat(2) as
 * update-alternatives does it). A path outside the root counts as missing. */
bool grove_alt_disk_file_exists(struct grove_alt_ctx *c, const char *file);

/* Wants the group's links (generic link, followers, ALTDIR entries) to point to choice. */
int grove_alt_disk_prepare_install(struct grove_alt_ctx *c, const struct grove_alt_group *g,
				   const char *choice, struct grove_error *err);

/* Wants the group's links and ALTDIR entries gone (a group left without choices). */
int grove_alt_disk_remove_files(struct grove_alt_ctx *c, const struct grove_alt_group *g,
				struct grove_error *err);

/* Reads the link text at abs (pending state), or NULL when it is not a link. */
int grove_alt_disk_link_text(struct grove_alt_ctx *c, const char *abs, char **ret,
			     struct grove_error *err);

/* The current value (what ALTDIR/NAME points to). Like update-alternatives, anything there
 * that is not a link is an error ("cannot stat file '…': Invalid argument"). */
int grove_alt_disk_current_of(struct grove_alt_ctx *c, const char *name, char **ret,
			      struct grove_error *err);

/* update-alternatives' needs_update: whether the group's links are as its current choice wants. */
int grove_alt_disk_is_broken(struct grove_alt_ctx *c, const struct grove_alt_group *g, int *ret,
			     struct grove_error *err);

/* The plan: MKDIR ops for a missing altdir, then a LINK, RELINK or UNLINK for every recorded
 * path whose wanted state differs from the one on disk. */
int grove_alt_disk_build_plan(struct grove_alt_ctx *c, struct grove_plan *plan,
			      struct grove_error *err);

/* alt_stamps.c: per (journal, admindir) a cache in the state dir of the admin files taken in:
 * each file's stamp when it was read and the group text it read as. An entry holds as long as
 * the file keeps its stamp and the journal its text; the cache is never synced, and a lost,
 * old or unreadable one only makes the next command read the files again. */
struct grove_alt_stamp {
	const char *name, *text; /* borrowed: the loaded file's, or the caller's */
	struct grove_fs_stamp st;
};
struct grove_alt_stamps {
	struct grove_alt_stamp *v; /* sorted by name */
	size_t n, cap;
	char *buf; /* the loaded file */
};

/* The cache of dir_id (empty when there is none or it cannot be read). */
void grove_alt_stamps_load(int state_fd, int64_t dir_id, struct grove_alt_stamps *ret);

/* The entry of name, or NULL. */
const struct grove_alt_stamp *grove_alt_stamps_find(const struct grove_alt_stamps *s,
						    const char *name);

/* Adds an entry (names in increasing order; name and text are borrowed, and must outlive s).
 * 0 or -ENOMEM. */
int grove_alt_stamps_add(struct grove_alt_stamps *s, const char *name, const char *text,
			 const struct grove_fs_stamp *st);

bool grove_alt_stamp_eq(const struct grove_fs_stamp *a, const struct grove_fs_stamp *b);

/* Writes s as dir_id's cache unless it is old's again; failures are ignored. */
void grove_alt_stamps_save(int state_fd, int64_t dir_id, const struct grove_alt_stamps *old,
			   const struct grove_alt_stamps *s);

void grove_alt_stamps_release(struct grove_alt_stamps *s);

/* alt_select.c */
/* The group called name in v, or NULL. */
struct grove_alt_group *grove_alt_select_find_group(struct grove_alt_group *v, size_t n,
						    const char *name);

/* What update-alternatives' load of g decides with the files at hand, for a group whose text
 * has a path twice or a priority that is no integer, or was cut short (cut: the error where it
 * was, grove_alt_group_parse_cut; nothing to check otherwise): a path kept
 * before (its file exists) written again is "SOURCE corrupt: duplicate path P", an existing
 * choice's priority that is no integer "SOURCE corrupt: priority of P: TEXT" (or "… is out of
 * range: TEXT"); a missing file's choice is dropped unread. With warn, the warning for each
 * choice dropped before the error, as update-alternatives prints it. 0 when update-alternatives
 * reads the group, else its error (cut's, when nothing stops it before the cut). */
int grove_alt_select_check(struct grove_alt_ctx *c, const struct grove_alt_group *g,
			   const char *source, const struct grove_error *cut, bool warn,
			   struct grove_error *err);

/* update-alternatives drops, when it loads a group, the choices whose file is gone. */
void grove_alt_select_prune(struct grove_alt_ctx *c, struct grove_alt_group *g);

/* Decides as update-alternatives does; fills the records and the saved group. */
int grove_alt_select_decide(struct grove_alt_ctx *c, struct grove_alt_group *all, size_t n,
			    struct grove_alt_group *w, bool *ret_save, struct grove_error *err);

/* alt_admin.c */
/* Every group of the admindir adm (pair dir_id) as the command must see it: where an admin file
 * (ADMINDIR/NAME) differs from the group saved in the journal, or there is none, the file is the
 * truth (update-alternatives wrote it). Unless readonly, those changes are first taken over as a
 * transaction without ops (logged, undoable; its commit rewrites the files as grove formats them).
 * A corrupt file of the group the command names is update-alternatives' error ("FILE corrupt:
 * …"), nothing changed; one of another group is passed over. Sorted by name; the caller frees
 * with grove_alt_groups_free. A command on one group (all but --install, --get-selections and
 * import) gets that group alone (or none): the others are taken in but not parsed. */
int grove_alt_admin_load(struct grove_alt_ctx *c, struct grove_session *s,
			 const struct grove_root *adm, int64_t dir_id, bool readonly,
			 struct grove_alt_group **ret, size_t *ret_n, struct grove_error *err);

/* alt_log.c */
/* Opens req->log for appending beneath its held folder: the fd, 0 when there is no log or it
 * may not be written (EACCES: update-alternatives then logs nothing either), or an error. */
int grove_alt_log_open(const struct grove_alt_request *req, const struct grove_root *inst,
		       struct grove_error *err);

/* A dry run's look at req->log: the error grove_alt_log_open would give for what is there now (a
 * symlink, a folder, a folder on the way it cannot hold), making and opening nothing for writing;
 * 0 when the real run would log or pass over the log (a missing file or folder it makes, one it
 * may not write). */
int grove_alt_log_check(const struct grove_alt_request *req, const struct grove_root *inst,
			struct grove_error *err);

/* The LOG messages of res, in order, into the log. */
int grove_alt_log_flush(int fd, const struct grove_alt_request *req,
			const struct grove_alt_result *res, struct grove_error *err);

#endif
