/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The transaction driver's part of alternatives: the admin files (ADMINDIR/NAME) of the groups a
 * transaction changes, written as its commit's last step and put back by its rollback; and the
 * groups' earlier states a revert (undo, rollback) puts back. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/altfile.h"
#include "grove/fs.h"
#include "grove/journal.h"
#include "grove/session.h"
#include "session_int.h"
#include "base/util.h"

#include "banned.h" /* last */

/* update-alternatives' admin files are small; anything bigger is not one grove wrote. */
#define ADMIN_FILE_MAX (16u << 20)

/* A group's name from the log: one path component (the log may have been written by anyone). */
static bool
name_ok(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

static bool
same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* What the admin file name means (grove_altfile_meaning; NULL: no file, or an empty one, which
 * update-alternatives reads as no group either). The journal keeps each group as what its file
 * means, so a file update-alternatives reads alike (its choices in another order than grove
 * writes them, a priority written "010", text after the last choice) is the text grove keeps,
 * and one it cannot read is none. */
static int
read_admin(int dfd, const char *name, char **ret, bool *ret_exact, struct grove_error *err)
{
	cleanup_free char *text = NULL;
	size_t len = 0;
	int r = grove_fs_read_file_at(dfd, name, ADMIN_FILE_MAX, &text, &len, err);

	*ret = NULL;
	*ret_exact = true;
	if (r == -ENOENT) {
		grove_error_clear(err);
		return 0;
	}
	if (r < 0 || len == 0)
		return r < 0 ? r : 0;
	r = grove_altfile_meaning(text, len, ret);
	/* Unreadable for update-alternatives: no text grove keeps, never equal to one. */
	if (r == -EINVAL)
		*ret = strdup("\n");
	*ret_exact = *ret && len == strlen(*ret) && !memcmp(text, *ret, len);
	return !*ret ? grove_error_set(err, -ENOMEM, "out of memory") : 0;
}

/*
 * Makes ADMINDIR/NAME hold text (NULL: removed), as update-alternatives does: the new text
 * under a temporary name (grove_fs_temp_name with the transaction's tag, ending ".dpkg-tmp" so
 * that update-alternatives' listing of the admindir skips it), synced, then renamed over the old
 * file. The caller syncs the folder.
 */
static int
put_admin(int dfd, const char *name, const char *text, const char *tag, struct grove_error *err)
{
	char tmp[256], base[256];
	int r;

	if (!text) {
		r = grove_fs_unlink_file(dfd, name, err);
		if (r == -ENOENT) {
			grove_error_clear(err);
			r = 0;
		}
		return r;
	}
	snprintf(base, sizeof(base), "%s.dpkg-tmp", name);
	grove_fs_temp_name(tmp, sizeof(tmp), tag, base);
	r = grove_fs_write_new_file(dfd, tmp, text, strlen(text), 0666, err);
	if (r >= 0)
		r = grove_fs_move(dfd, tmp, dfd, name, 0, err);
	if (r < 0) {
		struct grove_error xerr = { 0 };

		(void)grove_fs_unlink_file(dfd, tmp, &xerr);
	}
	return r;
}

/* Removes the temporary files of the transaction tag left in the admindir by a crash. */
static int
remove_temps(int dfd, const char *tag, struct grove_error *err)
{
	struct grove_dirent *ents = NULL;
	size_t n = 0;
	int r = grove_fs_list(dfd, &ents, &n, err);

	for (size_t i = 0; i < n && r >= 0; i++)
		if (ents[i].type == GROVE_FT_REG && grove_fs_is_temp_of(ents[i].name, tag))
			r = grove_fs_unlink_file(dfd, ents[i].name, err);
	grove_dirents_free(ents, n);
	return r;
}

/* ---- the roots a replay reopens (DESIGN.md invariant 11) ---- */

/* The root of kind and pair dir_id in v[0..n), or NULL. */
static const struct grove_journal_root *
find_root(const struct grove_journal_root *v, size_t n, enum grove_journal_root_kind kind,
	  int64_t dir_id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].kind == kind && v[i].dir_id == dir_id)
			return &v[i];
	return NULL;
}

/*
 * Holds the admindir of the pair dir_id (or the root rec records, of any kind) for a replay, into
 * own: as rec records it (grove_session_reopen_recorded), or, for a transaction logged before
 * schema v13 (rec NULL), by the path the log names (grove_session_reopen_path, no identity to
 * check). Anything else is -GROVE_E_STUCK.
 */
static int
reopen_admin(struct grove_session *s, int64_t dir_id, const struct grove_journal_root *rec,
	     struct grove_root *own, struct grove_error *err)
{
	const char *what = rec && rec->kind == GROVE_JOURNAL_ROOT_ALTDIR
				   ? "alternatives directory"
				   : "administrative directory";
	cleanup_free char *path = NULL;
	int r;

	if (rec)
		return grove_session_reopen_recorded(s, rec, what, own, err);
	r = grove_journal_alt_admindir(s->journal, dir_id, &path, err);
	if (r < 0)
		return r;
	return grove_session_reopen_path(s, path, NULL, what, own, err);
}

/* Holds the admindir of the pair dir_id for txn: the one the command holds when it is that
 * very folder, else reopened (reopen_admin). */
static int
open_admin(struct grove_session *s, int64_t dir_id, const struct grove_journal_root *roots,
	   size_t n_roots, struct grove_root *own, const struct grove_root **ret,
	   struct grove_error *err)
{
	const struct grove_journal_root *rec =
		find_root(roots, n_roots, GROVE_JOURNAL_ROOT_ADMINDIR, dir_id);
	int r;

	if (s->alt_admin && rec && grove_root_is(s->alt_admin, &rec->id)) {
		*ret = s->alt_admin;
		return 0;
	}
	grove_root_release(own);
	r = reopen_admin(s, dir_id, rec, own, err);
	if (r < 0)
		return r;
	*ret = own;
	return 0;
}

/* Reopens every root of v[0..n) and the admindir of every pair of changes[0..n_ch) as a replay
 * would (nothing is written): -GROVE_E_STUCK naming the first that is not as recorded. */
static int
check_roots(struct grove_session *s, const struct grove_journal_root *v, size_t n,
	    const struct grove_journal_alt_change *ch, size_t n_ch, struct grove_error *err)
{
	int r = 0;

	/* The altdirs: their links are the transaction's ops, resolved beneath the target, but a
	 * recorded one must still be the same folder. */
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct grove_root own = { .fd = -1 };

		if (v[i].kind != GROVE_JOURNAL_ROOT_ALTDIR)
			continue;
		r = reopen_admin(s, v[i].dir_id, &v[i], &own, err);
		grove_root_release(&own);
	}
	for (size_t i = 0; i < n_ch && r >= 0; i++) {
		struct grove_root own = { .fd = -1 };
		const struct grove_root *adm = NULL;

		if (i > 0 && ch[i].dir_id == ch[i - 1].dir_id)
			continue;
		r = open_admin(s, ch[i].dir_id, v, n, &own, &adm, err);
		grove_root_release(&own);
	}
	return r;
}

int
grove_session_check_roots(struct grove_session *s, int64_t txn, struct grove_error *err)
{
	struct grove_journal_alt_change *ch = NULL;
	struct grove_journal_root *v = NULL;
	size_t n = 0, n_ch = 0;
	int r = grove_journal_alt_changes(s->journal, txn, &ch, &n_ch, err);

	/* A transaction without groups records no roots (grove alt notes them with its groups). */
	if (r >= 0 && n_ch)
		r = grove_journal_txn_roots(s->journal, txn, &v, &n, err);
	if (r >= 0 && n_ch)
		r = check_roots(s, v, n, ch, n_ch, err);
	grove_journal_roots_free(v, n);
	grove_journal_alt_changes_free(ch, n_ch);
	return r;
}

int
grove_session_alt_files(struct grove_session *s, int64_t txn, bool forward, const char *tag,
			struct grove_error *err)
{
	struct grove_journal_alt_change *v = NULL;
	struct grove_root own = { .fd = -1 };
	const struct grove_root *adm = NULL;
	struct grove_journal_root *roots = NULL;
	int64_t dir = 0;
	size_t n = 0, n_roots = 0;
	int r = grove_journal_alt_changes(s->journal, txn, &v, &n, err);

	if (r >= 0 && n)
		r = grove_journal_txn_roots(s->journal, txn, &roots, &n_roots, err);

	/* The changes come ordered by pair: one folder at a time, synced before the next. */
	for (size_t i = 0; i < n && r >= 0; i++) {
		const char *want = forward ? v[i].after : v[i].before;
		const char *other = forward ? v[i].before : v[i].after;
		cleanup_free char *now = NULL;
		bool exact = true;

		if (!name_ok(v[i].name)) {
			r = grove_error_set(err, -GROVE_E_BADINPUT,
					    "journal names an alternatives group '%s'", v[i].name);
			break;
		}
		if (!adm || v[i].dir_id != dir) {
			if (adm && (r = grove_fs_sync(adm->fd, err)) < 0)
				break;
			dir = v[i].dir_id;
			adm = NULL;
			if ((r = open_admin(s, dir, roots, n_roots, &own, &adm, err)) < 0)
				break;
			if (!forward && (r = remove_temps(adm->fd, tag, err)) < 0)
				break;
		}
		r = read_admin(adm->fd, v[i].name, &now, &exact, err);
		if (r < 0)
			break;
		/* A file that means what is wanted stays as it is (a take-in leaves
		 * update-alternatives' file alone), unless the group is saved as it was: then,
		 * as update-alternatives saves a group it changed, in its own form. */
		if (same(now, want) && (exact || !forward || !same(now, other)))
			continue;
		/* Putting back touches only a file as the transaction left it; anything else
		 * was written since by someone else (update-alternatives), and is theirs. */
		if (!forward && !same(now, other))
			continue;
		/* The commit overwrites only what grove last wrote (grove alt takes in a change
		 * first; undo and rollback do not), or writes a group's first file. */
		if (forward && !same(now, other) && !(same(other, want) && !now)) {
			r = grove_error_set(
				err, -GROVE_E_PRECONDITION,
				"'%s' was changed outside grove (by update-alternatives?); "
				"run a grove alt command on its group to take the change in",
				v[i].name);
			break;
		}
		r = put_admin(adm->fd, v[i].name, want, tag, err);
	}
	if (r >= 0 && adm)
		r = grove_fs_sync(adm->fd, err);
	if (r < 0 && adm)
		grove_error_prefix(err, "administrative directory '%s'", adm->path);
	grove_root_release(&own);
	grove_journal_roots_free(roots, n_roots);
	grove_journal_alt_changes_free(v, n);
	return r;
}

/* The groups txns changed: each group's state before the first of them and after the last. The
 * saved group must still be as the last left it; otherwise a conflict. */
int
grove_session_revert_groups(struct grove_session *s, const int64_t *txns, size_t n,
			    struct grove_plan *plan, struct grove_error *err)
{
	struct grove_journal_alt_change *acc = NULL;
	struct grove_journal_root *roots = NULL;
	size_t n_acc = 0, n_roots = 0;
	int r = 0;

	for (size_t i = 0; i < n && r >= 0; i++) {
		struct grove_journal_alt_change *v = NULL;
		struct grove_journal_root *rv = NULL;
		size_t nv = 0, nrv = 0;

		/* The revert uses each root as the newest of txns recorded it. */
		r = grove_journal_txn_roots(s->journal, txns[i], &rv, &nrv, err);
		for (size_t k = 0; k < nrv && r >= 0; k++) {
			struct grove_journal_root *o = (struct grove_journal_root *)find_root(
				roots, n_roots, rv[k].kind, rv[k].dir_id);
			struct grove_journal_root *nr;

			if (o) {
				free(o->rel);
				*o = rv[k];
				rv[k].rel = NULL;
				continue;
			}
			nr = realloc(roots, (n_roots + 1) * sizeof(*nr));
			if (!nr) {
				r = grove_error_set(err, -ENOMEM, "out of memory");
				break;
			}
			roots = nr;
			roots[n_roots++] = rv[k];
			rv[k].rel = NULL;
		}
		grove_journal_roots_free(rv, nrv);
		if (r >= 0)
			r = grove_journal_alt_changes(s->journal, txns[i], &v, &nv, err);
		for (size_t k = 0; k < nv && r >= 0; k++) {
			size_t a;

			for (a = 0; a < n_acc; a++)
				if (acc[a].dir_id == v[k].dir_id && !strcmp(acc[a].name, v[k].name))
					break;
			if (a == n_acc) {
				struct grove_journal_alt_change *na =
					realloc(acc, (n_acc + 1) * sizeof(*na));

				if (!na) {
					r = grove_error_set(err, -ENOMEM, "out of memory");
					break;
				}
				acc = na;
				acc[n_acc++] = v[k];
				memset(&v[k], 0, sizeof(v[k]));
				continue;
			}
			/* Later: keep the first before, take the last after. */
			free(acc[a].after);
			acc[a].after = steal_ptr(v[k].after);
		}
		grove_journal_alt_changes_free(v, nv);
	}
	for (size_t a = 0; a < n_acc && r >= 0; a++) {
		cleanup_free char *now = NULL;
		char *t;

		r = grove_journal_alt_text(s->journal, acc[a].dir_id, acc[a].name, &now, err);
		if (r < 0)
			break;
		if ((now || acc[a].after) &&
		    (!now || !acc[a].after || strcmp(now, acc[a].after) != 0)) {
			cleanup_free char *m = grove_strdupf(
				"cannot revert: alternatives group %s was changed since",
				acc[a].name);

			if (!m || grove_plan_add_conflict(plan, "revert", NULL, acc[a].name, m) < 0)
				r = grove_error_set(err, -ENOMEM, "out of memory");
			continue;
		}
		/* The revert goes from after to before. */
		t = acc[a].before;
		acc[a].before = acc[a].after;
		acc[a].after = t;
	}
	/* A group the reverted transactions leave as it is now (they cancel out: a rollback run
	 * again) is no change, and a revert with nothing else to do commits no transaction. */
	if (r >= 0) {
		size_t k = 0;

		for (size_t a = 0; a < n_acc; a++) {
			if (acc[a].before ? acc[a].after && !strcmp(acc[a].before, acc[a].after)
					  : !acc[a].after) {
				free(acc[a].name);
				free(acc[a].before);
				free(acc[a].after);
				continue;
			}
			acc[k++] = acc[a];
		}
		n_acc = k;
	}
	/* Every admindir the revert will write is checked before anything is logged or changed:
	 * one that is not the folder the transactions used stops it with nothing written. */
	if (r >= 0 && n_acc)
		r = check_roots(s, roots, n_roots, acc, n_acc, err);
	if (r < 0) {
		grove_journal_roots_free(roots, n_roots);
		grove_journal_alt_changes_free(acc, n_acc);
		return r;
	}
	grove_journal_alt_changes_free(s->alt, s->n_alt);
	s->alt = acc;
	s->n_alt = n_acc;
	grove_journal_roots_free(s->roots, s->n_roots);
	s->roots = roots;
	s->n_roots = n_roots;
	return 0;
}
