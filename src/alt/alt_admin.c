/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove alt beside update-alternatives: the admin files (ADMINDIR/NAME) it writes are taken in
 * before a command reads the groups. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alt_int.h"
#include "grove/alt.h"
#include "formats/altfile.h"
#include "grove/fs.h"
#include "grove/journal.h"
#include "grove/plan.h"
#include "grove/session.h"
#include "base/util.h"

#include "banned.h" /* last */

#define ADMIN_FILE_MAX (16u << 20)

/* A group's text as the command must see it, and the group when it was parsed already (the
 * file's: it reads as its meaning does). */
struct truth {
	char *name, *text;
	struct grove_alt_group g;
};

struct take_in {
	struct truth *v;
	size_t n, cap;
	struct grove_journal_alt_change *ch;
	size_t n_ch;
};

static void
take_in_release(struct take_in *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].name);
		free(t->v[i].text);
		grove_alt_group_release(&t->v[i].g);
	}
	free(t->v);
	grove_journal_alt_changes_free(t->ch, t->n_ch);
	memset(t, 0, sizeof(*t));
}

/* Notes that group name reads as text (NULL: no group, or one passed over), and with take, that
 * its change from saved (the journal's) to text is to be taken in (its file written when it was
 * never written: an unwritten group). */
static int
add(struct take_in *t, int64_t dir_id, const char *name, const char *saved, const char *text,
    bool take, struct grove_alt_group *g)
{
	if (text) {
		struct truth *nv = t->v;

		if (t->n == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 16;

			if (!(nv = realloc(t->v, cap * sizeof(*nv))))
				return -ENOMEM;
			t->v = nv;
			t->cap = cap;
		}
		nv[t->n].name = strdup(name);
		nv[t->n].text = strdup(text);
		nv[t->n].g = *g; /* (moved in: a zeroed group when none was parsed) */
		memset(g, 0, sizeof(*g));
		t->n++;
		if (!nv[t->n - 1].name || !nv[t->n - 1].text)
			return -ENOMEM;
	}
	if (take) {
		struct grove_journal_alt_change *nc = realloc(t->ch, (t->n_ch + 1) * sizeof(*nc));

		if (!nc)
			return -ENOMEM;
		t->ch = nc;
		memset(&nc[t->n_ch], 0, sizeof(nc[0]));
		nc[t->n_ch].dir_id = dir_id;
		t->n_ch++;
		if (!(nc[t->n_ch - 1].name = strdup(name)) ||
		    (saved && !(nc[t->n_ch - 1].before = strdup(saved))) ||
		    (text && !(nc[t->n_ch - 1].after = strdup(text))))
			return -ENOMEM;
	}
	return 0;
}

/* Whether update-alternatives reads g whatever the files on disk: no priority that is no
 * integer, no path twice (grove_alt_select_check looks at the disk only for those). */
static bool
plain(const struct grove_alt_group *g)
{
	for (size_t i = 0; i < g->n_choices; i++) {
		if (g->choices[i].priority_text)
			return false;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(g->choices[k].path, g->choices[i].path))
				return false;
	}
	return true;
}

/*
 * The group name as its admin file says (file: its text, NULL when there is none or it is
 * empty, as update-alternatives reads an empty file): *ret its meaning (grove_altfile_meaning:
 * what update-alternatives reads, in the file's order), and *ret_take whether that differs from
 * saved in meaning (a file update-alternatives wrote, or a hand edit), so it must be taken in.
 * The file itself is left as it is: grove writes its own form only when a command changes the
 * group. A file update-alternatives would refuse (its parser is the reference) is an error for
 * the group the command names (its words, exit 2) and is passed over for the others (no group,
 * the journal's record untouched), as update-alternatives' lax reading of the other groups
 * skips it.
 */
static int
file_truth(struct grove_alt_ctx *c, const struct grove_root *adm,
	   const struct grove_journal_alt_state *st, const char *name, const char *file, size_t len,
	   char **ret, bool *ret_take, struct grove_alt_group *ret_group, bool *ret_plain,
	   struct grove_error *err)
{
	const char *saved = st ? st->text : NULL;
	bool named = c->req->name && name && !strcmp(c->req->name, name);
	cleanup_free char *src = NULL, *meaning = NULL;
	struct grove_alt_group g = { 0 };
	int r;

	*ret = NULL;
	*ret_plain = false;
	/* A group saved before grove wrote admin files (schema v6) has none yet: it stays, and
	 * the next mutating command writes its file. */
	*ret_take = st && st->unwritten;
	if ((!file || len == 0) && *ret_take)
		return (*ret = strdup(saved)) ? 0 : -ENOMEM;
	if (!file || len == 0) {
		*ret_take = saved != NULL;
		return 0;
	}
	if (!(src = grove_strdupf("%s/%s", adm->path, name)))
		return -ENOMEM;
	r = grove_alt_group_parse_cut(name, file, len, src, &g, err);
	if (r >= 0) {
		struct grove_error cut = *err;
		bool was_cut = r == 1;

		*ret_plain = !was_cut && plain(&g);

		r = grove_alt_select_check(c, &g, src, was_cut ? &cut : NULL,
					   named && !c->req->lax_load, err);
		if (r < 0 || was_cut)
			grove_alt_group_release(&g);
	}
	/* (checked also when it is grove's text: a missing choice's file may be back) */
	if (r >= 0 && saved && len == strlen(saved) && !memcmp(file, saved, len))
		meaning = strdup(saved);
	else if (r >= 0)
		r = grove_altfile_meaning(file, len, &meaning);
	if (r >= 0 && !meaning)
		r = -ENOMEM;
	if (r < 0)
		grove_alt_group_release(&g);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		if (named)
			return r;
		grove_error_clear(err);
		*ret_take = false;
		return 0;
	}
	*ret_take = *ret_take || !saved || strcmp(saved, meaning) != 0;
	*ret = steal_ptr(meaning);
	*ret_group = g;
	return 0;
}

/* The kernel's clock for file times (a file changed from now on gets a change time no
 * earlier), in ns. */
static int64_t
coarse_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME_COARSE, &ts) < 0)
		return INT64_MIN;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Whether a file read with stamp st, taken before now, can be known unchanged by its stamp
 * alone later: its change time is before now (racy otherwise, as git's index says: a change
 * within the same tick could keep every field), and two seconds before it on a filesystem
 * that keeps whole seconds.
 */
static bool
stamp_settled(const struct grove_fs_stamp *st, int64_t now)
{
	int64_t margin = st->ctime_ns % 1000000000 == 0 ? 2000000000 : 0;

	return now != INT64_MIN && st->ctime_ns >= 0 && st->mtime_ns >= 0 &&
	       st->ctime_ns < now - margin;
}

/*
 * The stamp cache's answer for the admin file fname of the saved group sv: true when the file
 * is as it was when it read as sv's text (its stamp the same), so neither its reading nor its
 * meaning can differ from what the journal holds. Only for a group whose text is plain and
 * not the command's own group (whose file is read for its messages); any doubt (no entry, a
 * stat that fails) says false, and the file is read.
 */
static bool
unchanged(const struct grove_alt_stamps *old, const struct grove_root *adm,
	  const struct grove_journal_alt_state *sv, const char *fname, bool named,
	  struct grove_fs_stamp *ret_st)
{
	const struct grove_alt_stamp *e =
		old->n && sv && !sv->unwritten && !named ? grove_alt_stamps_find(old, fname) : NULL;
	struct grove_error err = { 0 };
	enum grove_ftype ft;

	if (!e || strcmp(e->text, sv->text) != 0)
		return false;
	if (grove_fs_stamp_at(adm->fd, fname, ret_st, &ft, &err) < 0)
		return false;
	return ft == GROVE_FT_REG && grove_alt_stamp_eq(ret_st, &e->st);
}

/* Walks the journal's groups and the admindir's files together, both sorted by name. */
static int
collect(struct grove_alt_ctx *c, const struct grove_root *adm, int64_t dir_id,
	const struct grove_journal_alt_state *st, size_t n_st, bool apply,
	const struct grove_alt_stamps *old, struct grove_alt_stamps *stamps, struct take_in *t,
	struct grove_error *err)
{
	struct grove_dirent *ents = NULL;
	size_t n_ents = 0, i = 0, k = 0;
	/* (before any file's stamp is taken) */
	int64_t now = coarse_now();
	int r = grove_fs_list(adm->fd, &ents, &n_ents, err);

	while (r >= 0 && (i < n_st || k < n_ents)) {
		const char *fname = k < n_ents ? ents[k].name : NULL;
		int cmp = !fname ? -1 : i >= n_st ? 1 : strcmp(st[i].name, fname);
		size_t l = fname ? strlen(fname) : 0;
		cleanup_free char *file = NULL, *truth = NULL;
		const struct grove_journal_alt_state *sv = cmp <= 0 ? &st[i] : NULL;
		const char *name = sv ? sv->name : fname;
		const char *saved = sv ? sv->text : NULL;
		bool take = false, plain_text = false, named = false;
		struct grove_alt_group g = { 0 };
		struct grove_fs_stamp fst = { 0 };
		size_t len = 0;

		if (cmp >= 0) {
			k++;
			/* update-alternatives skips its temporary files (grove's end the same). */
			enum grove_ftype ty = ents[k - 1].type;
			bool skip = (l > 9 && !strcmp(fname + l - 9, ".dpkg-tmp")) ||
				    (ty != GROVE_FT_REG && ty != GROVE_FT_UNKNOWN) ||
				    !grove_alt_name_ok(fname);

			named = c->req->name && !strcmp(c->req->name, fname);
			if (!skip && cmp == 0 && unchanged(old, adm, sv, fname, named, &fst)) {
				i++;
				r = grove_alt_stamps_add(stamps, sv->name, sv->text, &fst);
				if (r >= 0)
					r = add(t, dir_id, fname, saved, saved, false, &g);
				continue;
			}
			if (!skip)
				r = grove_fs_read_file_stamped_at(adm->fd, fname, ADMIN_FILE_MAX,
								  &file, &len, &fst, err);
			/* Without d_type, reading tells: not a regular file is no admin file. */
			if (r < 0 && ty == GROVE_FT_UNKNOWN && r != -ENOMEM) {
				grove_error_clear(err);
				skip = true;
				r = 0;
			}
			if (r < 0)
				break;
			if (skip && cmp > 0)
				continue;
		}
		if (cmp <= 0)
			i++;
		r = file_truth(c, adm, sv, name, file, len, &truth, &take, &g, &plain_text, err);
		/* What the journal will hold for the file, as it read (when the take-in is
		 * made), and a stamp that will tell a later change. */
		if (r >= 0)
			r = add(t, dir_id, name, saved, truth, take, &g);
		if (r >= 0 && file && truth && plain_text && !(sv && sv->unwritten) &&
		    (!take || apply) && stamp_settled(&fst, now))
			r = grove_alt_stamps_add(stamps, t->v[t->n - 1].name, t->v[t->n - 1].text,
						 &fst);
		grove_alt_group_release(&g);
	}
	grove_dirents_free(ents, n_ents);
	if (r == -ENOMEM)
		grove_error_set(err, r, "out of memory");
	return r;
}

/* Whether the command looks at its named group only: every one but --install (whose arguments
 * are checked against every group), --get-selections and import. */
static bool
one_group(const struct grove_alt_ctx *c)
{
	enum grove_alt_action a = c->req->action;

	return c->req->name && a != GROVE_ALT_INSTALL && a != GROVE_ALT_GET_SELECTIONS &&
	       a != GROVE_ALT_IMPORT;
}

int
grove_alt_admin_load(struct grove_alt_ctx *c, struct grove_session *s, const struct grove_root *adm,
		     int64_t dir_id, bool readonly, struct grove_alt_group **ret, size_t *ret_n,
		     struct grove_error *err)
{
	struct grove_journal_alt_state *st = NULL;
	struct take_in t = { 0 };
	struct grove_alt_group *v = NULL;
	struct grove_alt_stamps old = { 0 }, stamps = { 0 };
	struct grove_plan plan;
	size_t n_st = 0, n = 0;
	/* (No session: a reader whose journal does not exist yet; the files alone.) */
	int r = s ? grove_journal_alt_states(s->journal, dir_id, &st, &n_st, err) : 0;

	grove_plan_init(&plan);
	if (r >= 0 && s)
		grove_alt_stamps_load(s->state.fd, dir_id, &old);
	if (r >= 0)
		r = collect(c, adm, dir_id, st, n_st, !readonly && s, &old, &stamps, &t, err);
	/* What update-alternatives changed becomes grove's, undoably, before anything else. */
	if (r >= 0 && t.n_ch && !readonly && s) {
		cleanup_free char *cmd =
			grove_strdupf("alt: take in changes to '%s' made outside grove", adm->path);

		if (!cmd) {
			r = grove_error_set(err, -ENOMEM, "out of memory");
		} else {
			grove_session_take_alt(s, steal_ptr(t.ch), t.n_ch);
			t.n_ch = 0;
			r = grove_session_apply(s, &plan, NULL, cmd, NULL, 0, NULL, err);
		}
	}
	/* (after the take-in: the journal holds the texts the stamps were read as; a dry run
	 * reads the cache but writes nothing) */
	if (r >= 0 && s && !c->req->dry_run)
		grove_alt_stamps_save(s->state.fd, dir_id, &old, &stamps);
	if (r >= 0 && t.n && !(v = calloc(t.n, sizeof(*v))))
		r = grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t k = 0; r >= 0 && k < t.n; k++) {
		/* A command on one group reads no other (as update-alternatives loads only it). */
		if (one_group(c) && strcmp(t.v[k].name, c->req->name) != 0)
			continue;
		if (t.v[k].g.name) {
			v[n++] = t.v[k].g;
			memset(&t.v[k].g, 0, sizeof(t.v[k].g));
			continue;
		}
		r = grove_alt_group_parse(t.v[k].name, t.v[k].text, strlen(t.v[k].text),
					  s ? grove_journal_name(s->journal) : adm->path, &v[n],
					  err);
		n++;
	}
	if (r >= 0) {
		*ret = steal_ptr(v);
		*ret_n = n;
	} else {
		grove_alt_groups_free(v, n);
	}
	grove_plan_release(&plan);
	grove_alt_stamps_release(&old);
	grove_alt_stamps_release(&stamps);
	take_in_release(&t);
	grove_journal_alt_states_free(st, n_st);
	return r;
}
