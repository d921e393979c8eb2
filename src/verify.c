/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove verify's checks: each entry the log says grove owns, looked at beneath the held target. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grove/fs.h"
#include "grove/journal.h"
#include "grove/path.h"
#include "grove/verify.h"
#include "util.h"

#include "banned.h" /* last */

struct stow_roots {
	struct grove_root *r;
	size_t n;
};

static void
stow_roots_release(struct stow_roots *sr)
{
	for (size_t i = 0; i < sr->n; i++)
		grove_root_release(&sr->r[i]);
	free(sr->r);
}

/* Opens every stow dir the target's transactions used (those still there); the others, and all
 * of them when the log cannot list them, are simply not looked into. */
static void
open_stow_roots(struct grove_session *s, struct stow_roots *sr)
{
	struct grove_txn *txns = NULL;
	struct grove_error err;
	size_t n = 0;

	memset(sr, 0, sizeof(*sr));
	if (grove_journal_list(s->journal, s->target_id, 0, &txns, &n, &err) < 0)
		return;
	sr->r = calloc(n ? n : 1, sizeof(*sr->r));
	for (size_t i = 0; sr->r && i < n; i++) {
		bool seen = false;

		if (!txns[i].stow_dir)
			continue;
		for (size_t k = 0; k < sr->n && !seen; k++)
			seen = !strcmp(sr->r[k].real, txns[i].stow_dir);
		if (!seen && grove_root_open(&sr->r[sr->n], txns[i].stow_dir, &err) == 0)
			sr->n++;
	}
	grove_txns_free(txns, n);
}

/* Whether the link at path (text) resolves to something, when it points into a known stow dir;
 * true when it cannot be told (grove only looks beneath roots it holds). */
static bool
link_resolves(const struct grove_root *target, const struct stow_roots *sr, const char *path,
	      const char *text)
{
	char *parent = grove_path_parent(path);
	char *dir = parent ? grove_path_join(target->real, parent) : NULL;
	char *abs = dir ? grove_path_join(dir, text) : NULL;
	bool ok = true;

	for (size_t i = 0; abs && i < sr->n; i++) {
		const char *rest = grove_path_strip_prefix(abs, sr->r[i].real);
		struct grove_stat st;
		struct grove_error err;

		if (!rest)
			continue;
		if (grove_fs_stat_beneath_follow(sr->r[i].fd, rest, &st, &err) == 0)
			ok = st.type != GROVE_FT_NONE;
		break;
	}
	free(parent);
	free(dir);
	free(abs);
	return ok;
}

static int
cmp_owned_path(const void *key, const void *elem)
{
	return strcmp(key, ((const struct grove_owned *)elem)->path);
}

/* Appends a finding (path taken over, expected copied). */
static int
add_finding(struct grove_verify_report *rep, enum grove_verify_issue issue, char *path,
	    const char *expected)
{
	struct grove_verify_finding *nf =
		realloc(rep->findings, (rep->n_findings + 1) * sizeof(*nf));
	char *exp = expected ? strdup(expected) : NULL;

	if (nf)
		rep->findings = nf;
	if (!nf || (expected && !exp)) {
		free(exp);
		free(path);
		return -ENOMEM;
	}
	nf[rep->n_findings++] = (struct grove_verify_finding){
		.issue = issue,
		.path = path,
		.expected = exp,
	};
	return 0;
}

/* Entries inside a folder grove made (own[i]) that grove does not own: the user's (or
 * someone's) additions, counted as drift. A folder that cannot be read shows none. */
static int
find_foreign(struct grove_session *s, const struct grove_owned *own, size_t n, size_t i,
	     struct grove_verify_report *rep)
{
	struct grove_error err;
	struct grove_dirent *ents = NULL;
	size_t n_ents = 0;
	int r = 0;
	int fd = grove_fs_open_dir_beneath(s->target->fd, own[i].path, &err);

	if (fd < 0)
		return 0;
	if (grove_fs_list(fd, &ents, &n_ents, &err) < 0)
		n_ents = 0;
	for (size_t k = 0; k < n_ents && r == 0; k++) {
		char *p = grove_strdupf("%s/%s", own[i].path, ents[k].name);

		if (!p)
			r = -ENOMEM;
		else if (bsearch(p, own, n, sizeof(*own), cmp_owned_path))
			free(p);
		else
			r = add_finding(rep, GROVE_VERIFY_FOREIGN, p, NULL);
	}
	grove_dirents_free(ents, n_ents);
	grove_fd_close(fd);
	return r;
}

/* Checks one owned entry: true, with *ret_issue, when it is not as grove made it; a folder grove
 * made that is still one sets *ret_foreign_dir (its entries are looked at next). */
static bool
check_entry(struct grove_session *s, const struct grove_owned *o, const struct stow_roots *sr,
	    bool *ret_foreign_dir, enum grove_verify_issue *ret_issue)
{
	char *dir = grove_path_parent(o->path);
	const char *name = strrchr(o->path, '/');
	char *text = NULL;
	struct grove_stat st = { 0 };
	struct grove_error err;
	bool bad = true;
	int fd;

	*ret_foreign_dir = false;
	name = name ? name + 1 : o->path;
	fd = dir ? grove_fs_open_dir_beneath(s->target->fd, dir[0] ? dir : ".", &err) : -1;
	if (fd < 0 || grove_fs_stat_at(fd, name, &st, &err) < 0)
		st.type = GROVE_FT_NONE;
	if (st.type == GROVE_FT_NONE) {
		*ret_issue = GROVE_VERIFY_MISSING;
	} else if (!o->text) {
		*ret_issue = GROVE_VERIFY_CHANGED;
		bad = st.type != GROVE_FT_DIR;
		*ret_foreign_dir = !bad;
	} else if (st.type != GROVE_FT_LINK || grove_fs_readlink_at(fd, name, &text, &err) < 0 ||
		   strcmp(text, o->text) != 0) {
		*ret_issue = GROVE_VERIFY_CHANGED;
	} else if (!link_resolves(s->target, sr, o->path, o->text)) {
		*ret_issue = GROVE_VERIFY_BROKEN;
	} else {
		bad = false;
	}
	free(text);
	free(dir);
	grove_fd_close(fd);
	return bad;
}

/* Whether path is, or is a temporary entry of, one of txn's ops (plan). */
static bool
part_of(const struct grove_plan *ops, const char *tag, const char *path)
{
	const char *base = strrchr(path, '/');

	if (grove_fs_is_temp_of(base ? base + 1 : path, tag))
		return true;
	grove_plan_foreach_op (ops, op)
		if (!strcmp(op->path, path))
			return true;
	return false;
}

/* Marks the findings the log's unfinished transaction accounts for, and counts them all. */
static int
mark_unfinished(struct grove_session *s, struct grove_verify_report *rep, struct grove_error *err)
{
	struct grove_plan ops;
	char tag[32];
	int r = grove_journal_unfinished(s->journal, s->target_id, &rep->unfinished, err);

	grove_plan_init(&ops);
	if (r == 0 && rep->unfinished)
		r = grove_journal_ops(s->journal, rep->unfinished, &ops, err);
	snprintf(tag, sizeof(tag), "%lld", (long long)rep->unfinished);
	for (size_t i = 0; r == 0 && i < rep->n_findings; i++) {
		struct grove_verify_finding *f = &rep->findings[i];

		if (rep->unfinished && part_of(&ops, tag, f->path)) {
			f->txn = rep->unfinished;
			rep->unfinished_entries++;
			continue;
		}
		switch (f->issue) {
		case GROVE_VERIFY_MISSING:
			rep->missing++;
			break;
		case GROVE_VERIFY_CHANGED:
			rep->changed++;
			break;
		case GROVE_VERIFY_BROKEN:
			rep->broken++;
			break;
		case GROVE_VERIFY_FOREIGN:
			rep->foreign++;
			break;
		}
	}
	grove_plan_release(&ops);
	return r;
}

int
grove_verify(struct grove_session *s, struct grove_verify_report *ret, struct grove_error *err)
{
	struct grove_verify_report rep = { 0 };
	struct grove_owned *own = NULL;
	struct stow_roots sr;
	size_t n = 0;
	int r = grove_journal_owned(s->journal, s->target_id, &own, &n, err);

	if (r < 0)
		return r;
	open_stow_roots(s, &sr);
	rep.checked = n;
	for (size_t i = 0; i < n && r == 0; i++) {
		enum grove_verify_issue issue;
		bool foreign_dir;
		char *p;

		if (!check_entry(s, &own[i], &sr, &foreign_dir, &issue)) {
			if (foreign_dir)
				r = find_foreign(s, own, n, i, &rep);
			continue;
		}
		p = strdup(own[i].path);
		r = p ? add_finding(&rep, issue, p, own[i].text) : -ENOMEM;
	}
	stow_roots_release(&sr);
	grove_owned_free(own, n);
	if (r == 0)
		r = mark_unfinished(s, &rep, err);
	if (r < 0 && r != -ENOMEM) {
		grove_verify_report_release(&rep);
		return r;
	}
	if (r < 0) {
		grove_verify_report_release(&rep);
		return grove_error_set(err, r, "out of memory");
	}
	*ret = rep;
	return 0;
}

void
grove_verify_report_release(struct grove_verify_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_findings; i++) {
		free(r->findings[i].path);
		free(r->findings[i].expected);
	}
	free(r->findings);
	memset(r, 0, sizeof(*r));
}

const char *
grove_verify_issue_name(enum grove_verify_issue issue)
{
	switch (issue) {
	case GROVE_VERIFY_MISSING:
		return "missing";
	case GROVE_VERIFY_CHANGED:
		return "changed";
	case GROVE_VERIFY_BROKEN:
		return "broken";
	case GROVE_VERIFY_FOREIGN:
		return "foreign";
	}
	return "?";
}
