/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internal to grove alt's files (alt_run.c, alt_disk.c, alt_select.c, alt_log.c): the state of
 * one command and the functions the files share. */
#ifndef GROVE_ALT_INT_H
#define GROVE_ALT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "grove/alt.h"
#include "grove/error.h"
#include "grove/fs.h"
#include "grove/plan.h"

/* One path the command may change: what it was and what it should become. */
struct grove_alt_rec {
	char *abs; /* as written in the group (absolute) */
	char *rel; /* beneath the installation root */
	enum grove_ftype orig, want;
	char *orig_text, *want_text;
};

struct grove_alt_ctx {
	const struct grove_alt_request *req;
	struct grove_alt_result *res;
	struct grove_root inst;
	char *altdir; /* without trailing '/' */
	struct grove_alt_rec *recs;
	size_t n_recs;
	bool oom;
	/* Followers evolve added or moved: broken links of only these are an update
	 * ("has changed slave links"), not a repair. */
	const char **updated;
	size_t n_updated;
};

/* What grove_alt_disk_is_broken finds. */
enum { GROVE_ALT_NOT_BROKEN, GROVE_ALT_BROKEN, GROVE_ALT_SLAVES_CHANGED };

/* alt_run.c */
void grove_alt_run_msg(struct grove_alt_ctx *c, enum grove_alt_msg_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* alt_disk.c */
void grove_alt_disk_mark_updated(struct grove_alt_ctx *c, const char *name);
bool grove_alt_disk_rel_ok(const char *rel);
char *grove_alt_disk_under_root(const char *root, const char *path);
const char *grove_alt_disk_rootp(const struct grove_alt_ctx *c);
int grove_alt_disk_state(struct grove_alt_ctx *c, const char *abs, enum grove_ftype *type,
			 const char **text, struct grove_error *err);
int grove_alt_disk_want(struct grove_alt_ctx *c, const char *abs, const char *text,
			struct grove_error *err);
char *grove_alt_disk_path(const struct grove_alt_ctx *c, const char *name);
bool grove_alt_disk_file_exists(struct grove_alt_ctx *c, const char *file);
int grove_alt_disk_prepare_install(struct grove_alt_ctx *c, const struct grove_alt_group *g,
				   const char *choice, struct grove_error *err);
int grove_alt_disk_remove_files(struct grove_alt_ctx *c, const struct grove_alt_group *g,
				struct grove_error *err);
int grove_alt_disk_link_text(struct grove_alt_ctx *c, const char *abs, char **ret,
			     struct grove_error *err);
int grove_alt_disk_current_of(struct grove_alt_ctx *c, const char *name, char **ret,
			      struct grove_error *err);
int grove_alt_disk_is_broken(struct grove_alt_ctx *c, const struct grove_alt_group *g, int *ret,
			     struct grove_error *err);
int grove_alt_disk_build_plan(struct grove_alt_ctx *c, struct grove_plan *plan,
			      struct grove_error *err);

/* alt_select.c */
struct grove_alt_group *grove_alt_select_find_group(struct grove_alt_group *v, size_t n,
						    const char *name);
void grove_alt_select_prune(struct grove_alt_ctx *c, struct grove_alt_group *g);
int grove_alt_select_decide(struct grove_alt_ctx *c, struct grove_alt_group *all, size_t n,
			    struct grove_alt_group *w, bool *ret_save, struct grove_error *err);

/* alt_log.c */
int grove_alt_log_open(const struct grove_alt_request *req, const struct grove_root *inst,
		       struct grove_error *err);
int grove_alt_log_flush(int fd, const struct grove_alt_request *req,
			const struct grove_alt_result *res, struct grove_error *err);

#endif
