/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Recognising a profile's log target (NAME.generations), which only `grove profile` may change:
 * asked by sessions, so it depends on no session. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/journal.h"
#include "grove/path.h"
#include "formats/profile_log.h"
#include "profile_log_names.h"
#include "base/util.h"

#include "banned.h" /* last */

/* A generation number as written in names: decimal, no sign, no leading zero. */
bool
grove_profile_record_number(const char *s, size_t len, long *ret)
{
	long n = 0;

	if (len == 0 || len > 10 || s[0] == '0')
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		n = n * 10 + (s[i] - '0');
	}
	if (n > GEN_MAX)
		return false;
	*ret = n;
	return true;
}

/* "PROFILE-<n>-link" -> n, for the profile named profile. */
bool
grove_profile_record_link_of(const char *profile, const char *name, long *ret)
{
	size_t nl = strlen(profile), l = strlen(name);

	if (l < nl + 7 || strncmp(name, profile, nl) != 0 || name[nl] != '-' ||
	    strcmp(name + l - 5, "-link") != 0)
		return false;
	return grove_profile_record_number(name + nl + 1, l - nl - 6, ret);
}

/* The profile name NAME when target's folder is called NAME.generations, or NULL. */
static char *
log_candidate(const struct grove_root *target)
{
	const char *base = strrchr(target->real, '/');
	size_t l;

	base = base ? base + 1 : target->real;
	l = strlen(base);
	if (l <= 12 || strcmp(base + l - 12, ".generations") != 0)
		return NULL;
	return strndup(base, l - 12);
}

/* "NAME.generations/<n>", a generation's folder seen from the profile dir. */
static bool
is_gen_folder_text(const char *name, const char *text)
{
	size_t nl = strlen(name);
	long num;

	return text && strncmp(text, name, nl) == 0 && !strncmp(text + nl, ".generations/", 13) &&
	       grove_profile_record_number(text + nl + 13, strlen(text + nl + 13), &num);
}

/* The disk's evidence: the profile's links beside the folder, or a generation
 * (a numbered folder holding a record) inside it. */
static bool
log_on_disk(const struct grove_root *target, const char *name, const char *parent_path)
{
	struct grove_error ignore = { 0 };
	struct grove_root parent = { .fd = -1 };
	struct grove_dirent *ents = NULL;
	size_t n = 0;
	bool found = false;
	long num;

	if (grove_root_open(&parent, *parent_path ? parent_path : "/", &ignore) >= 0 &&
	    grove_fs_list(parent.fd, &ents, &n, &ignore) >= 0) {
		for (size_t i = 0; i < n && !found; i++) {
			cleanup_free char *text = NULL;
			bool profile_link = !strcmp(ents[i].name, name);

			if (ents[i].type != GROVE_FT_LINK ||
			    (!profile_link &&
			     !grove_profile_record_link_of(name, ents[i].name, &num)) ||
			    grove_fs_readlink_at(parent.fd, ents[i].name, &text, &ignore) < 0)
				continue;
			found = profile_link ? grove_profile_record_link_of(name, text, &num)
					     : is_gen_folder_text(name, text);
		}
	}
	grove_dirents_free(ents, n);
	grove_root_release(&parent);
	ents = NULL;
	n = 0;
	if (!found && grove_fs_list(target->fd, &ents, &n, &ignore) >= 0) {
		for (size_t i = 0; i < n && !found; i++) {
			cleanup_fd int fd = -1;
			struct grove_stat st;

			if (ents[i].type != GROVE_FT_DIR ||
			    !grove_profile_record_number(ents[i].name, strlen(ents[i].name), &num))
				continue;
			fd = grove_fs_open_dir_at(target->fd, ents[i].name, &ignore);
			found = fd >= 0 &&
				grove_fs_stat_at(fd, GROVE_PROFILE_RECORD, &st, &ignore) >= 0 &&
				st.type == GROVE_FT_REG;
		}
	}
	grove_dirents_free(ents, n);
	return found;
}

/* The log's evidence: a transaction of the target with an op only a profile
 * makes (its link to a generation link, a generation link, a generation folder). */
static int
log_in_journal(struct grove_journal *j, int64_t target_id, const char *name, bool *ret,
	       struct grove_error *err)
{
	struct grove_txn *txns = NULL;
	size_t n = 0;
	int r = grove_journal_list(j, target_id, 0, &txns, &n, err);

	*ret = false;
	for (size_t i = n; i-- > 0 && r >= 0 && !*ret;) {
		struct grove_plan ops;

		grove_plan_init(&ops);
		r = grove_journal_ops(j, txns[i].id, &ops, err);
		for (size_t k = 0; k < ops.n_ops && r >= 0 && !*ret; k++) {
			const struct grove_op *op = &ops.ops[k];
			const char *text = op->text ? op->text : op->old_text;
			long num;

			switch (op->kind) {
			case GROVE_OP_MKDIR:
			case GROVE_OP_RMDIR:
				*ret = is_gen_folder_text(name, op->path);
				break;
			case GROVE_OP_LINK:
			case GROVE_OP_UNLINK:
			case GROVE_OP_RELINK:
				*ret = (!strcmp(op->path, name) && text &&
					grove_profile_record_link_of(name, text, &num)) ||
				       (grove_profile_record_link_of(name, op->path, &num) &&
					is_gen_folder_text(name, text));
				break;
			default:
				break;
			}
		}
		grove_plan_release(&ops);
	}
	grove_txns_free(txns, n);
	return r;
}

int
grove_profile_log_owner(const struct grove_root *target, struct grove_journal *j, int64_t target_id,
			char **ret_profile, struct grove_error *err)
{
	cleanup_free char *name = log_candidate(target);
	cleanup_free char *parent = NULL;
	bool found = false;
	int r;

	*ret_profile = NULL;
	if (!name || !*name)
		return 0;
	parent = grove_path_parent(target->real);
	if (!parent)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (j) {
		r = log_in_journal(j, target_id, name, &found, err);
		if (r < 0)
			return r;
	} else {
		found = log_on_disk(target, name, parent);
	}
	if (found && !(*ret_profile = grove_strdupf("%s/%s", parent, name)))
		return grove_error_set(err, -ENOMEM, "out of memory");
	return 0;
}
