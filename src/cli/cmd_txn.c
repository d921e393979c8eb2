/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The log commands: log, show, status, verify, undo, rollback and recover, on one target. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "grove/text.h"
#include "front.h"
#include "grove/history.h"
#include "grove/path.h"
#include "grove/session.h"
#include "grove/stow.h"
#include "grove/verify.h"
#include "../banned.h" /* last */

/* The options these commands take besides Stow's -d/-t (and .stowrc, STOW_DIR). */
struct txn_args {
	bool json;
	bool force;
	bool have_to;
	long long to; /* rollback --to N; show N */
	bool have_before;
	long long before;    /* rollback --before T */
	size_t limit;        /* log --limit N (-n N): at most N transactions; 0: all */
	const char *package; /* log PKG: only the transactions that stow or unstow PKG */
	int verbose;
	bool dry_run;
	struct grove_status_farm farm; /* status: the stow dir's packages on disk */
	bool dir_given;
	bool target_given; /* -t or an rc file named the target (not the stow dir's parent) */
	char *global_ignore, *global_ignore_source;
	/* What the read-only commands say besides their own output. */
	bool system_log; /* the system log is shown: the user's own does not know the target */
	struct grove_session_pending pending;
};

static void
ta_release(struct txn_args *ta)
{
	free(ta->global_ignore);
	free(ta->global_ignore_source);
	ta->global_ignore = ta->global_ignore_source = NULL;
}

/*
 * Finds the target: -t/-d (and .stowrc, STOW_DIR) parsed as Stow does, after
 * taking out this command's own options. A placeholder package name keeps
 * Stow's parser from asking for one.
 */
static int
parse_target(int argc, char **argv, const char *cmd, struct txn_args *ta, char **ret_target,
	     char **ret_dir, struct grove_error *err)
{
	char **v = calloc((size_t)argc + 3, sizeof(char *));
	struct grove_stow_request req;
	struct grove_stow_cli cli;
	int n = 0, r;

	if (!v)
		return grove_error_set(err, -ENOMEM, "out of memory");
	v[n++] = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool show = !strcmp(cmd, "show");

		/* A value of Stow's options (-t DIR, --target DIR, -nt DIR…) is Stow's, whatever
		 * it looks like: "-t --json" names a target "--json". */
		if (grove_stow_opt_takes_next(a, true) && i + 1 < argc) {
			v[n++] = argv[i++];
			v[n++] = argv[i];
		} else if (!strcmp(cmd, "log") &&
			   (!strcmp(a, "--limit") || !strncmp(a, "--limit=", 8) ||
			    (!strcmp(a, "-n") && i + 1 < argc && argv[i + 1][0] >= '0' &&
			     argv[i + 1][0] <= '9'))) {
			const char *val = a[7] == '=' ? a + 8 : (i + 1 < argc ? argv[++i] : NULL);
			char *end = NULL;
			long long lim = val && *val ? strtoll(val, &end, 10) : -1;

			if (!val || !*val || *end || lim < 1) {
				free(v);
				return grove_error_set(err, -GROVE_E_USAGE,
						       "option '--limit' needs a number of "
						       "transactions (1 or more)");
			}
			ta->limit = (size_t)lim;
		} else if (!strcmp(cmd, "log") && a[0] != '-') {
			if (ta->package) {
				free(v);
				return grove_error_set(err, -GROVE_E_USAGE,
						       "'log' takes one package name, not '%s' and "
						       "'%s'",
						       ta->package, a);
			}
			ta->package = a;
		} else if (show && a[0] != '-' && !ta->have_to &&
			   strspn(a, "0123456789") == strlen(a) && *a) {
			ta->to = strtoll(a, NULL, 10);
			ta->have_to = true;
		} else if (!strcmp(a, "--json")) {
			ta->json = true;
		} else if (!strcmp(a, "--force") && !strcmp(cmd, "recover")) {
			ta->force = true;
		} else if ((!strcmp(a, "--to") || !strncmp(a, "--to=", 5)) &&
			   !strcmp(cmd, "rollback")) {
			const char *val = a[4] == '=' ? a + 5 : (i + 1 < argc ? argv[++i] : NULL);
			char *end = NULL;

			if (!val || !*val || (ta->to = strtoll(val, &end, 10), *end) ||
			    ta->to < 0) {
				free(v);
				return grove_error_set(err, -GROVE_E_USAGE,
						       "option '--to' needs a transaction number");
			}
			ta->have_to = true;
		} else if ((!strcmp(a, "--before") || !strncmp(a, "--before=", 9)) &&
			   !strcmp(cmd, "rollback")) {
			const char *val = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
			char *end = NULL;

			if (!val || !*val || (ta->before = strtoll(val, &end, 10), *end) ||
			    ta->before < 1) {
				free(v);
				return grove_error_set(
					err, -GROVE_E_USAGE,
					"option '--before' needs a transaction number "
					"(1 or more)");
			}
			ta->have_before = true;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			ta->verbose++;
		} else if (!strcmp(a, "-n") || !strcmp(a, "--dry-run") ||
			   !strcmp(a, "--simulate")) {
			ta->dry_run = true;
		} else {
			v[n++] = argv[i];
		}
	}
	v[n++] = "--";
	v[n++] = "\x01";
	grove_stow_request_init(&req);
	r = grove_stow_cli_parse(n, v, GROVE_ACTION_STOW, getenv("HOME"), ".stowrc", true, &req,
				 &cli, err);
	free(v);
	if (r >= 0) {
		if (req.n_stow != 1 || req.n_unstow) {
			r = grove_error_set(err, -GROVE_E_USAGE,
					    "'%s' takes no package names (try 'grove --help')",
					    cmd);
		} else {
			*ret_target = req.target;
			req.target = NULL;
			*ret_dir = req.dir;
			req.dir = NULL;
			ta->dir_given = cli.dir_given;
			ta->target_given = cli.target_given;
			ta->global_ignore = req.global_ignore_text;
			req.global_ignore_text = NULL;
			ta->global_ignore_source = req.global_ignore_source;
			req.global_ignore_source = NULL;
		}
	}
	grove_stow_request_release(&req);
	return r;
}

/* A transaction's state for `grove log` and `show`: an INTENT transaction is in progress while
 * a live run holds the target lock, interrupted when none does (pending says which). */
static const char *
txn_state_name(const struct grove_txn *t, const struct grove_session_pending *p)
{
	if (t->state != GROVE_TXN_INTENT)
		;
	else if (p->txn == t->id && p->state == GROVE_PENDING_IN_PROGRESS)
		return "in-progress";
	else if (p->txn == t->id && p->state == GROVE_PENDING_UNKNOWN)
		return "unfinished";
	switch (t->state) {
	case GROVE_TXN_INTENT:
		return "interrupted";
	case GROVE_TXN_COMMITTED:
		return "committed";
	case GROVE_TXN_ROLLED_BACK:
		return "rolled-back";
	case GROVE_TXN_STUCK:
		return "stuck";
	}
	return "?";
}

static const char *
state_sgr(enum grove_txn_state st, const char *name)
{
	if (!strcmp(name, "in-progress"))
		return GROVE_SGR_WARN;
	switch (st) {
	case GROVE_TXN_COMMITTED:
		return GROVE_SGR_ADD;
	case GROVE_TXN_ROLLED_BACK:
		return GROVE_SGR_MOVE;
	default:
		return GROVE_SGR_ERROR;
	}
}

static void
fmt_time(double t, char *buf, size_t size)
{
	time_t secs = (time_t)t;
	struct tm tm;

	if (!localtime_r(&secs, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, size, "%.0f", t);
}

/* "N op" or "N ops". */
static const char *
ops_word(size_t n)
{
	return n == 1 ? "op" : "ops";
}

/* One transaction as `grove log` and `grove show` print it: a line (and its ops under it), or a
 * JSON object (its ops as "changes"), when ops is not NULL. */
/* The ops of transaction t as the log holds them, a batch of the plan budget at a time (a
 * transaction of a million ops is shown in the memory of a batch): as text, indented, or as the
 * items of the JSON list being streamed. */
static int
print_ops(struct grove_session *s, const struct grove_txn *t, bool json, struct grove_error *err)
{
	size_t batch = grove_session_plan_budget(), shown = 0;
	int r = 0;

	for (;;) {
		struct grove_plan b;
		size_t n;

		grove_plan_init(&b);
		r = grove_journal_ops_range(s->journal, t->id, shown, batch, &b, err);
		n = r < 0 ? 0 : b.n_ops;
		for (size_t i = 0; json && i < n; i++)
			grove_json_stream_put(NULL, grove_json_op(&b.ops[i]));
		if (!json && n)
			grove_print_plan_prefixed(&b, "        ", stdout);
		grove_plan_release(&b);
		shown += n;
		if (r < 0 || n < batch)
			break;
	}
	return r;
}

/* The name of the user uid, or NULL (no such user here, or an older transaction). */
static const char *
user_name(const struct grove_txn *t, char *buf, size_t size)
{
	struct passwd pw, *found = NULL;
	char scratch[1024];

	if (!t->uid_known || t->uid < 0)
		return NULL;
	if (getpwuid_r((uid_t)t->uid, &pw, scratch, sizeof(scratch), &found) != 0 || !found) {
		snprintf(buf, size, "%lld", (long long)t->uid);
		return buf;
	}
	snprintf(buf, size, "%s", found->pw_name);
	return buf;
}

/* log PKG: keeps, in order, the transactions whose packages (docs/journal.md, "Packages") name
 * ta->package, at most ta->limit of them; *n is updated and the rest freed. */
static int
keep_package(struct grove_session *s, const struct txn_args *ta, struct grove_txn *txns, size_t *n,
	     struct grove_error *err)
{
	size_t kept = 0;
	int r = 0;

	for (size_t i = 0; i < *n; i++) {
		struct grove_journal_pkg *pkgs = NULL;
		size_t np = 0;
		bool named = false;

		if (r >= 0 && (!ta->limit || kept < ta->limit))
			r = grove_journal_txn_pkgs(s->journal, txns[i].id, &pkgs, &np, err);
		for (size_t k = 0; k < np; k++)
			named = named || !strcmp(pkgs[k].package, ta->package);
		grove_journal_pkgs_free(pkgs, np);
		if (named)
			txns[kept++] = txns[i];
		else
			grove_txn_release(&txns[i]);
	}
	*n = kept;
	return r;
}

/* A transaction's line of `grove log`, with its ops when with_ops; or, with json, its object of
 * --json streamed as the member key of the document being streamed (NULL in a list), the ops
 * as "changes". */
static int
print_txn(struct grove_session *s, const struct grove_txn *t, bool with_ops, bool json,
	  const char *key, const struct txn_args *ta, struct grove_error *err)
{
	const struct grove_session_pending *p = &ta->pending;
	/* Whose log this is: root's when a user reads the system log, else the reader's. */
	int64_t owner = ta->system_log ? 0 : (int64_t)geteuid();
	const char *state = txn_state_name(t, p);
	char when[64], name[256];
	const char *user = user_name(t, name, sizeof(name));
	int r = 0;

	fmt_time(t->started, when, sizeof(when));
	if (json) {
		struct json_t *o = grove_json_obj();

		grove_json_put_int(o, "id", t->id);
		grove_json_put_time(o, "time", t->started);
		grove_json_put_str(o, "state", state);
		grove_json_put_int(o, "ops", (long long)t->n_ops);
		grove_json_put_str(o, "command", t->command);
		grove_json_put_int(o, "undoes", t->undoes);
		grove_json_put_str(o, "note", t->note);
		if (t->uid_known)
			grove_json_put_int(o, "uid", t->uid);
		else
			grove_json_put_null(o, "uid");
		grove_json_put_str(o, "user", user);
		grove_json_put_str(o, "sudo_user", t->sudo_user);
		if (!with_ops) {
			grove_json_stream_put(key, o);
			return 0;
		}
		grove_json_stream_object(key, o);
		grove_json_stream_list("changes");
		r = print_ops(s, t, true, err);
		grove_json_stream_end();
		grove_json_stream_end();
		return r;
	}
	printf("%6lld  %s  ", (long long)t->id, when);
	grove_paint(stdout, state_sgr(t->state, state), "%-11s", state);
	printf("  %4zu %-3s  ", t->n_ops, ops_word(t->n_ops));
	grove_fput_shown(t->command ? t->command : "", stdout);
	if (t->undoes)
		printf("  (undoes %lld)", (long long)t->undoes);
	/* Who, when it is not the reader: through sudo, or another user (root's shared log). */
	if (t->sudo_user) {
		fputs("  (by ", stdout);
		grove_fput_shown(t->sudo_user, stdout);
		fputs(" with sudo)", stdout);
	} else if (user && t->uid != owner) {
		fputs("  (by ", stdout);
		grove_fput_shown(user, stdout);
		putchar(')');
	}
	if (t->note && t->state != GROVE_TXN_COMMITTED) {
		fputs("  [", stdout);
		grove_fput_shown(t->note, stdout);
		putchar(']');
	}
	putchar('\n');
	return with_ops ? print_ops(s, t, false, err) : 0;
}

/* "target" and, for every reading command, which log it read: "log" (its file) and
 * "system_log" (docs/json.md). */
static void
print_json_source(struct json_t *doc, const struct grove_session *s, const struct txn_args *ta)
{
	grove_json_put_str(doc, "target", s->target->real);
	grove_json_put_str(doc, "log", grove_journal_name(s->journal));
	grove_json_put_bool(doc, "system_log", ta->system_log);
}

/* One line saying whose log is shown, when it is not the user's own. */
static void
print_source(const struct grove_session *s, const struct txn_args *ta, const char *indent)
{
	if (!ta->system_log)
		return;
	printf("%s(from the system log ", indent);
	grove_fput_shown(grove_journal_name(s->journal), stdout);
	fputs(")\n", stdout);
}

/* The unfinished transaction and the lock's holder, as JSON fields (docs/json.md). */
static void
print_json_pending(struct json_t *doc, const struct grove_session_pending *p)
{
	struct json_t *holder;

	grove_json_put_int(doc, "unfinished", p->txn);
	grove_json_put_str(doc, "unfinished_state", grove_session_pending_name(p->state));
	grove_json_put_str(doc, "unfinished_command", p->txn ? p->command : NULL);
	if (p->holder.state != GROVE_LOCK_HELD) {
		grove_json_put_null(doc, "holder");
		return;
	}
	holder = grove_json_obj();
	if (p->holder.pid)
		grove_json_put_int(holder, "pid", p->holder.pid);
	else
		grove_json_put_null(holder, "pid");
	grove_json_put_str(holder, "command", p->holder.command);
	grove_json_put(doc, "holder", holder);
}

/* "transaction 35 (grove stow vim)" */
static void
put_txn(FILE *f, const struct grove_session_pending *p)
{
	fprintf(f, "transaction %lld", (long long)p->txn);
	if (p->command) {
		fputs(" (", f);
		grove_fput_shown(p->command, f);
		fputc(')', f);
	}
}

/* " (grove pid 1234: grove stow vim)" (without the command when it is same) or nothing when the
 * holder's record is gone. */
static void
put_holder(FILE *f, const struct grove_lock_holder *h, const char *same)
{
	if (!h->pid)
		return;
	fprintf(f, " (grove pid %ld", h->pid);
	if (h->command && !(same && !strcmp(same, h->command))) {
		fputs(": ", f);
		grove_fput_shown(h->command, f);
	}
	fputc(')', f);
}

/*
 * The one line on the target's unfinished transaction (to f: stderr for status, stdout first
 * for verify, whose findings it explains), or on a run holding the target lock: in progress
 * only while a live run holds the lock; otherwise interrupted, and what recovers it.
 */
static void
print_pending(FILE *f, const struct grove_session *s, const struct grove_session_pending *p,
	      bool say_holder)
{
	const char *t = s->target->real;
	const char *pre = f == stderr ? "grove: " : "";

	switch (p->state) {
	case GROVE_PENDING_NONE:
		if (!say_holder || p->holder.state != GROVE_LOCK_HELD)
			return;
		fprintf(f, "%sa grove run holds the lock of this target", pre);
		put_holder(f, &p->holder, NULL);
		fputs("; what it changes shows once it commits\n", f);
		return;
	case GROVE_PENDING_IN_PROGRESS:
		fputs(pre, f);
		put_txn(f, p);
		fputs(" is in progress", f);
		if (p->holder.pid)
			put_holder(f, &p->holder, p->command);
		else
			fputs(" in another grove run", f);
		fputs("; what it changes shows once it commits\n", f);
		return;
	case GROVE_PENDING_INTERRUPTED:
		fputs(pre, f);
		put_txn(f, p);
		fputs(" was interrupted (no grove run holds the target's lock); 'grove recover -t ",
		      f);
		grove_fput_shown(t, f);
		fputs("' rolls it back, as does the next change\n", f);
		return;
	case GROVE_PENDING_STUCK:
		fputs(pre, f);
		put_txn(f, p);
		fputs(" is stuck", f);
		if (p->note) {
			fputs(": ", f);
			grove_fput_shown(p->note, f);
		}
		fputs("; fix that, then 'grove recover -t ", f);
		grove_fput_shown(t, f);
		fputs("' (or abandon it with 'grove recover --force')\n", f);
		return;
	case GROVE_PENDING_UNKNOWN:
		fputs(pre, f);
		put_txn(f, p);
		fputs(" is unfinished: in progress, or interrupted (the lock of this target in '",
		      f);
		grove_fput_shown(s->state_path, f);
		fputs("/locks' cannot be read to tell)\n", f);
		return;
	}
}

/* Exit 4 when an unfinished transaction needs someone: one no live run is at. */
static bool
pending_needs_attention(const struct grove_session_pending *p)
{
	return p->state != GROVE_PENDING_NONE && p->state != GROVE_PENDING_IN_PROGRESS;
}

static int
cmd_log(struct grove_session *s, const struct txn_args *ta)
{
	struct grove_txn *txns = NULL;
	struct grove_error err = { 0 };
	size_t n = 0;
	bool alt = false;
	int r = grove_journal_list(s->journal, s->target_id, ta->package ? 0 : ta->limit, &txns, &n,
				   &err);

	/* Not a target the log knows: an altdir or admindir, whose changes are its target's (the
	 * root update-alternatives links under, "/" for the system's). */
	if (r >= 0 && !s->target_id && !ta->package) {
		r = grove_history_alt_txns(s, s->target, ta->limit, &txns, &n, &err);
		alt = n > 0;
	}
	if (r >= 0 && ta->package)
		r = keep_package(s, ta, txns, &n, &err);
	if (r < 0) {
		grove_txns_free(txns, n);
		return grove_report_error(&err, r);
	}
	if (ta->json) {
		struct json_t *head = grove_json_doc("log");

		print_json_source(head, s, ta);
		grove_json_put_bool(head, "alternatives", alt);
		grove_json_stream_begin(head);
		grove_json_stream_list("transactions");
	} else {
		print_source(s, ta, "");
		if (alt) {
			fputs("(alternatives changes under ", stdout);
			grove_fput_shown(s->target->real, stdout);
			fputs(")\n", stdout);
		}
	}
	/* -v: each transaction's ops, as the log recorded them. */
	for (size_t i = 0; i < n && r >= 0; i++)
		r = print_txn(s, &txns[i], ta->verbose, ta->json, NULL, ta, &err);
	if (ta->json && r >= 0) {
		grove_json_stream_end();
		grove_json_stream_end();
	}
	grove_txns_free(txns, n);
	return r < 0 ? grove_report_error(&err, r) : GROVE_EXIT_OK;
}

static int
cmd_show(struct grove_session *s, const struct txn_args *ta)
{
	struct grove_txn t = { 0 };
	struct grove_error err = { 0 };
	int r;

	if (!ta->have_to) {
		grove_fail(-GROVE_E_USAGE, "'show' needs a transaction number (see 'grove log')");
		return GROVE_EXIT_USAGE;
	}
	r = grove_history_own_txn(s, ta->to, &t, &err);
	if (r < 0)
		return grove_report_error(&err, r);
	if (ta->json) {
		struct json_t *head = grove_json_doc("show");

		print_json_source(head, s, ta);
		grove_json_stream_begin(head);
		r = print_txn(s, &t, true, true, "transaction", ta, &err);
		if (r >= 0)
			grove_json_stream_end();
	} else {
		print_source(s, ta, "");
		r = print_txn(s, &t, true, false, NULL, ta, &err);
	}
	grove_txn_release(&t);
	return r < 0 ? grove_report_error(&err, r) : GROVE_EXIT_OK;
}

/* What status counts of one package (NULL: entries the log gives no package). */
struct pkg_count {
	char *package;
	size_t links, dirs;
};

/* The packages seen so far, sorted by name (NULL first), and the last one counted. */
struct pkg_counts {
	struct pkg_count *v;
	size_t n, cap, last;
};

static int
cmp_pkg_name(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* Counts one entry of grove_journal_owned_walk: memory grows with the packages, not the links. */
static int
count_owned(void *arg, const struct grove_owned *o)
{
	struct pkg_counts *pc = arg;
	size_t lo = 0, hi = pc->n;
	struct pkg_count *c;

	if (pc->n && !cmp_pkg_name(pc->v[pc->last].package, o->package)) {
		c = &pc->v[pc->last];
	} else {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			int k = cmp_pkg_name(pc->v[mid].package, o->package);

			if (k < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == pc->n || cmp_pkg_name(pc->v[lo].package, o->package)) {
			char *name = o->package ? strdup(o->package) : NULL;

			if (o->package && !name)
				return -ENOMEM;
			if (pc->n == pc->cap) {
				size_t ncap = pc->cap ? pc->cap * 2 : 16;
				struct pkg_count *nv = realloc(pc->v, ncap * sizeof(*nv));

				if (!nv) {
					free(name);
					return -ENOMEM;
				}
				pc->v = nv;
				pc->cap = ncap;
			}
			memmove(pc->v + lo + 1, pc->v + lo, (pc->n - lo) * sizeof(*pc->v));
			pc->v[lo] = (struct pkg_count){ .package = name };
			pc->n++;
		}
		pc->last = lo;
		c = &pc->v[lo];
	}
	o->text ? c->links++ : c->dirs++;
	return 0;
}

static int
cmd_status(struct grove_session *s, const struct txn_args *ta)
{
	struct pkg_counts pc = { 0 };
	struct grove_owned *own =
		NULL; /* one per package grove has links of, for the farm's lines */
	struct grove_stow_farm_pkg *farm = NULL;
	struct grove_error err = { 0 };
	struct json_t *doc = NULL, *list = NULL;
	size_t n = 0, groups = 0, n_farm = 0;
	int r = grove_journal_owned_walk(s->journal, s->target_id, count_owned, &pc, &err);

	if (r == -ENOMEM)
		r = grove_error_set(&err, r, "out of memory");
	if (r >= 0)
		r = grove_status_farm_load(&ta->farm, s->target, &farm, &n_farm, &err);
	if (r >= 0 && !(own = calloc(pc.n ? pc.n : 1, sizeof(*own))))
		r = grove_error_set(&err, -ENOMEM, "out of memory");
	if (r < 0) {
		for (size_t i = 0; i < pc.n; i++)
			free(pc.v[i].package);
		free(pc.v);
		grove_stow_farm_free(farm, n_farm);
		return grove_report_error(&err, r);
	}
	if (ta->json) {
		doc = grove_json_doc("status");
		print_json_source(doc, s, ta);
		print_json_pending(doc, &ta->pending);
		list = grove_json_list();
	} else {
		fputs("target ", stdout);
		grove_fput_shown(s->target->real, stdout);
		putchar('\n');
		print_source(s, ta, "  ");
	}
	for (size_t i = 0; i < pc.n; i++) {
		const char *pkg = pc.v[i].package;
		size_t links = pc.v[i].links;

		if (pkg && links)
			own[n++] = (struct grove_owned){ .path = (char *)"",
							 .text = (char *)"",
							 .package = pkg };
		if (!pkg)
			continue;
		if (ta->json) {
			struct json_t *o = grove_json_obj();

			grove_json_put_str(o, "package", pkg);
			grove_json_put_int(o, "links", (long long)links);
			grove_json_append(list, o);
		} else {
			fputs("  ", stdout);
			char *shown = grove_text_shown(pkg);

			grove_paint(stdout, GROVE_SGR_BOLD, "%-24s", shown ? shown : "");
			free(shown);
			printf(" %zu link%s\n", links, links == 1 ? "" : "s");
		}
		groups++;
	}
	if (ta->json) {
		grove_json_put(doc, "packages", list);
		grove_status_farm_json(doc, &ta->farm, farm, n_farm, own, n);
		grove_json_print(doc);
	} else {
		if (!groups)
			puts("  (nothing stowed by grove)");
		grove_status_farm_print(&ta->farm, farm, n_farm, own, n);
	}
	grove_stow_farm_free(farm, n_farm);
	(void)fflush(stdout); /* the packages, then the line on what is unfinished */
	print_pending(stderr, s, &ta->pending, true);
	free(own);
	for (size_t i = 0; i < pc.n; i++)
		free(pc.v[i].package);
	free(pc.v);
	return pending_needs_attention(&ta->pending) ? GROVE_EXIT_ATTENTION : GROVE_EXIT_OK;
}

/* ---- verify ---- */

static struct json_t *
finding_json(const struct grove_verify_finding *f)
{
	struct json_t *o = grove_json_obj();

	grove_json_put_str(o, "path", f->path);
	grove_json_put_str(o, "issue", grove_verify_issue_name(f->issue));
	grove_json_put_str(o, "expected", f->expected);
	if (f->txn)
		grove_json_put_int(o, "transaction", f->txn);
	else
		grove_json_put_null(o, "transaction");
	return o;
}

/* "interrupted transaction 3", "transaction 3, in progress"... */
static void
put_txn_kind(FILE *f, const struct grove_session_pending *p, int64_t txn)
{
	switch (p->state) {
	case GROVE_PENDING_IN_PROGRESS:
		fprintf(f, "transaction %lld, in progress", (long long)txn);
		return;
	case GROVE_PENDING_INTERRUPTED:
		fprintf(f, "interrupted transaction %lld", (long long)txn);
		return;
	case GROVE_PENDING_STUCK:
		fprintf(f, "stuck transaction %lld", (long long)txn);
		return;
	default:
		fprintf(f, "unfinished transaction %lld", (long long)txn);
		return;
	}
}

static void
print_finding_text(const struct grove_verify_finding *f, const struct grove_session_pending *p)
{
	bool foreign = f->issue == GROVE_VERIFY_FOREIGN;

	grove_paint(stdout, foreign || f->txn ? GROVE_SGR_WARN : GROVE_SGR_ERROR, "%-8s",
		    grove_verify_issue_name(f->issue));
	putchar(' ');
	grove_fput_shown(f->path, stdout);
	if (f->txn) {
		/* Not drift and not someone else's: grove's own half-made change. */
		fputs(" (part of ", stdout);
		put_txn_kind(stdout, p, f->txn);
		fputs(")\n", stdout);
	} else if (foreign) {
		fputs(" (in a folder grove made, but not grove's)\n", stdout);
	} else if (f->expected) {
		fputs(" (grove made it a link to ", stdout);
		grove_fput_shown(f->expected, stdout);
		fputs(")\n", stdout);
	} else {
		fputs(" (grove made it a folder)\n", stdout);
	}
}

static int
cmd_verify(struct grove_session *s, const struct txn_args *ta)
{
	struct grove_verify_report rep = { 0 };
	struct grove_error err = { 0 };
	int r = grove_verify(s, &rep, &err);

	if (r < 0)
		return grove_report_error(&err, r);
	if (ta->json) {
		struct json_t *doc = grove_json_doc("verify");
		struct json_t *issues = grove_json_list();

		print_json_source(doc, s, ta);
		print_json_pending(doc, &ta->pending);
		for (size_t i = 0; i < rep.n_findings; i++)
			grove_json_append(issues, finding_json(&rep.findings[i]));
		grove_json_put(doc, "issues", issues);
		grove_json_put_int(doc, "checked", (long long)rep.checked);
		grove_json_put_int(doc, "missing", (long long)rep.missing);
		grove_json_put_int(doc, "changed", (long long)rep.changed);
		grove_json_put_int(doc, "broken", (long long)rep.broken);
		grove_json_put_int(doc, "foreign", (long long)rep.foreign);
		grove_json_put_int(doc, "unfinished_entries", (long long)rep.unfinished_entries);
		grove_json_print(doc);
	} else {
		/* The unfinished transaction first: it explains the findings marked with it. */
		print_source(s, ta, "");
		print_pending(stdout, s, &ta->pending, false);
		for (size_t i = 0; i < rep.n_findings; i++)
			print_finding_text(&rep.findings[i], &ta->pending);
		printf("verified %zu entr%s: %zu missing, %zu changed, %zu broken, %zu foreign",
		       rep.checked, rep.checked == 1 ? "y" : "ies", rep.missing, rep.changed,
		       rep.broken, rep.foreign);
		if (rep.unfinished_entries) {
			printf("; %zu part of ", rep.unfinished_entries);
			put_txn_kind(stdout, &ta->pending, rep.unfinished);
		}
		putchar('\n');
	}
	/* Drift, or a transaction no live run is at, needs someone; the entries of a run at
	 * work are its business. */
	r = rep.missing + rep.changed + rep.broken + rep.foreign ||
			    pending_needs_attention(&ta->pending)
		    ? GROVE_EXIT_ATTENTION
		    : GROVE_EXIT_OK;
	grove_verify_report_release(&rep);
	return r;
}

/* ---- undo, rollback ---- */

/*
 * The "undo"/"rollback" document (docs/json.md): what was (or, with -n, would be) reverted,
 * and the transaction made, so a script need not diff the log to learn it.
 */
static void
print_revert_json(const char *target, const char *name, const struct grove_plan *plan,
		  const int64_t *txns, size_t n, bool dry_run, int64_t made)
{
	struct json_t *doc = grove_json_doc(name);
	struct json_t *reverts = grove_json_list();

	grove_json_put_str(doc, "target", target);
	grove_json_put_bool(doc, "dry_run", dry_run);
	grove_json_put_bool(doc, "changed", plan->n_ops && !plan->n_conflicts);
	grove_json_put_int(doc, "transaction", made);
	for (size_t i = 0; i < n; i++)
		grove_json_append_int(reverts, txns[i]);
	grove_json_put(doc, "reverts", reverts);
	grove_json_print_plan(doc, plan, NULL);
}

/* ", 2 links forgotten (left on disk)": the recorded ops of a revert (grove import's). */
static void
print_recorded_counts(const struct grove_plan *plan, const char **sep)
{
	size_t forgot = 0, taken = 0;

	grove_plan_foreach_op (plan, op) {
		forgot += op->recorded && op->kind == GROVE_OP_UNLINK;
		taken += op->recorded && op->kind == GROVE_OP_LINK;
	}
	if (forgot)
		printf("%s%zu link%s forgotten, left on disk", *sep, forgot,
		       forgot == 1 ? "" : "s");
	if (forgot)
		*sep = ", ";
	if (taken)
		printf("%s%zu link%s taken back as grove's", *sep, taken, taken == 1 ? "" : "s");
	if (taken)
		*sep = ", ";
}

/* What a revert changed, on stdout: "reverted transaction 7 as transaction 9: 3 ops (2 unlink,
 * 1 rmdir)"; with -n "would revert …". by_kind counts the ops that change the disk; plan, when
 * not NULL, adds its recorded ones. */
static void
print_revert_line(const size_t *by_kind, size_t n_ops, const struct grove_plan *plan,
		  const int64_t *txns, size_t n, bool dry_run, int64_t made)
{
	static const enum grove_op_kind kinds[] = {
		GROVE_OP_LINK,  GROVE_OP_UNLINK, GROVE_OP_RELINK, GROVE_OP_MKDIR,
		GROVE_OP_RMDIR, GROVE_OP_UNFOLD, GROVE_OP_FOLD,   GROVE_OP_ADOPT,
	};
	const char *sep = " (";

	printf("%s transaction%s", dry_run ? "would revert" : "reverted", n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++)
		printf("%s%lld", i ? ", " : " ", (long long)txns[i]);
	if (!n_ops && made) {
		/* A transaction of recorded options alone (a restow that changed no link). */
		printf(" as transaction %lld: no link to change, the packages' options as "
		       "before\n",
		       (long long)made);
		return;
	}
	if (!n_ops) {
		fputs(": they cancel out, nothing to change\n", stdout);
		return;
	}
	if (!dry_run)
		printf(" as transaction %lld", (long long)made);
	printf(": %zu %s", n_ops, ops_word(n_ops));
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		if (by_kind[kinds[k]]) {
			printf("%s%zu %s", sep, by_kind[kinds[k]], grove_op_kind_name(kinds[k]));
			sep = ", ";
		}
	}
	if (plan)
		print_recorded_counts(plan, &sep);
	fputs(*sep == ',' ? ")\n" : "\n", stdout);
}

static void
print_revert_text(const struct grove_plan *plan, const int64_t *txns, size_t n, bool dry_run,
		  int64_t made)
{
	size_t by_kind[GROVE_OP_MOVE + 1] = { 0 };

	grove_plan_foreach_op (plan, op)
		by_kind[op->kind] += !op->recorded;
	print_revert_line(by_kind, plan->n_ops, plan, txns, n, dry_run, made);
}

/* The CLI's side of a revert's callbacks (grove_history_revert_cb): its lines and progress. */
struct revert_out {
	struct grove_progress pg;
	const struct txn_args *ta;
	const char *cmd;
	const char *target;
};

static void
on_recovered(void *ctx, int64_t txn)
{
	(void)ctx;
	fprintf(stderr, "grove: rolled back interrupted transaction %lld\n", (long long)txn);
}

/* A dry run of undo, rollback or recover: the interrupted transaction the real run would roll back
 * first, which a preview cannot (it writes nothing), said. */
static void
on_pending(void *ctx, int64_t txn)
{
	const struct revert_out *o = ctx;

	if (!strcmp(o->cmd, "recover"))
		printf("would roll back interrupted transaction %lld on '%s'\n", (long long)txn,
		       o->target);
	else if (!grove_term_quiet())
		fprintf(stderr,
			"grove: warning: transaction %lld was interrupted: a real run rolls it back "
			"first (grove recover); this preview is of the target as it is now\n",
			(long long)txn);
}

static void
on_planned(void *ctx, const struct grove_plan *plan)
{
	const struct txn_args *ta = ((const struct revert_out *)ctx)->ta;

	if (ta->verbose || (ta->dry_run && !ta->json))
		grove_print_plan(plan, ta->dry_run && !ta->json ? stdout : stderr);
}

static void
on_begin(void *ctx, size_t total)
{
	grove_progress_begin(&((struct revert_out *)ctx)->pg, "grove", total);
}

static void
on_progress(void *ctx, size_t done, size_t total, const struct grove_op *op)
{
	grove_progress_update(&((struct revert_out *)ctx)->pg, done, total, op);
}

static void
on_end(void *ctx)
{
	grove_progress_end(&((struct revert_out *)ctx)->pg);
}

/* A revert refused for conflicts: the document (with --json) and Stow's warning. */
static int
print_conflicts(const struct grove_history_reverted *res, const struct txn_args *ta,
		const char *target, const char *name)
{
	const struct grove_plan *plan = &res->plan;

	if (ta->json)
		print_revert_json(target, name, plan, res->txns, res->n_txns, ta->dry_run, 0);
	fprintf(stderr, "WARNING! %s would cause conflicts:\n", res->command);
	for (size_t i = 0; i < plan->n_conflicts; i++) {
		fputs("  * ", stderr);
		grove_fput_shown(plan->conflicts[i].message, stderr);
		fputc('\n', stderr);
	}
	fputs("All operations aborted.\n", stderr);
	return GROVE_EXIT_REFUSED;
}

/* Nothing to undo (refused) or to roll back (done). */
static int
print_nothing(const struct txn_args *ta, const char *target, const char *cmd)
{
	struct grove_plan none;

	grove_plan_init(&none);
	if (ta->json)
		print_revert_json(target, cmd, &none, NULL, 0, ta->dry_run, 0);
	grove_plan_release(&none);
	if (!strcmp(cmd, "undo")) {
		fprintf(stderr, "grove: nothing to undo on '%s'\n", target);
		return GROVE_EXIT_REFUSED;
	}
	if (ta->json)
		;
	else if (ta->have_to)
		printf("nothing to roll back: no committed transaction after %lld\n", ta->to);
	else
		printf("nothing to roll back: no committed transaction from %lld on\n", ta->before);
	return GROVE_EXIT_OK;
}

/*
 * undo, rollback and recover: the library decides and runs (grove_history_revert); this prints
 * what it did.
 */
static int
cmd_revert(const struct grove_root *target, const struct grove_root *stow,
	   const struct txn_args *ta, const char *cmd, const struct grove_global_opts *global)
{
	struct revert_out out = { .ta = ta, .cmd = cmd, .target = target->real };
	struct grove_history_revert_request req = {
		.kind = !strcmp(cmd, "undo")       ? GROVE_HISTORY_UNDO
			: !strcmp(cmd, "rollback") ? GROVE_HISTORY_ROLLBACK
						   : GROVE_HISTORY_RECOVER,
		.point = { .have_to = ta->have_to,
			   .to = ta->to,
			   .have_before = ta->have_before,
			   .before = ta->before },
		.dry_run = ta->dry_run,
		.whole = ta->json || ta->verbose,
		.force = ta->force,
		.stow = stow->path ? stow : NULL,
		.state_opt = global->state_dir,
		.wait_seconds = global->wait_seconds,
		.command_line = global->command_line,
		.cb = { .recovered = on_recovered,
			.pending = on_pending,
			.planned = on_planned,
			.begin = on_begin,
			.progress = on_progress,
			.end = on_end,
			.ctx = &out },
	};
	struct grove_history_reverted res;
	struct grove_error err = { 0 };
	int r = grove_history_revert(target, &req, &res, &err);
	int status = GROVE_EXIT_OK;

	if (r == -GROVE_E_CONFLICT && res.plan.n_conflicts)
		status = print_conflicts(&res, ta, target->real, cmd);
	else if (r < 0)
		status = grove_report_error(&err, r);
	else if (req.kind == GROVE_HISTORY_RECOVER && !res.recovered && !res.pending)
		printf("nothing to recover on '%s'\n", target->real);
	else if (req.kind == GROVE_HISTORY_RECOVER)
		;
	else if (!res.n_txns)
		status = print_nothing(ta, target->real, cmd);
	else if (res.streamed)
		print_revert_line(res.by_kind, res.n_ops, NULL, res.txns, res.n_txns, false,
				  res.made);
	else if (ta->json)
		print_revert_json(target->real, cmd, &res.plan, res.txns, res.n_txns, ta->dry_run,
				  res.made);
	else
		print_revert_text(&res.plan, res.txns, res.n_txns, ta->dry_run, res.made);
	grove_history_reverted_release(&res);
	return status;
}

/* Whether two state dir paths are the same string, trailing slashes aside. */
static bool
same_dir(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (lb > 1 && b[lb - 1] == '/')
		lb--;
	return la == lb && !memcmp(a, b, la);
}

static bool
root_owned(const struct grove_root *target)
{
	struct grove_stat st;
	struct grove_error err;

	return grove_fs_stat_fd(target->fd, &st, &err) == 0 && st.uid == 0;
}

/*
 * Replaces s (the user's own log, which does not know the target) by the system log when that
 * one knows it: what root stowed into /usr/local is root's log's. The system log is opened
 * read-only (nothing made, written or migrated); one that is there and cannot be read is said
 * in one line, and the user's own log stays.
 */
static bool
use_system_log(struct grove_session *s, const struct grove_root *target,
	       const struct grove_session_opts *own)
{
	struct grove_session_opts so = *own;
	struct grove_session sys;
	struct grove_error err = { 0 };
	char *path = NULL;
	bool same;
	int r;

	if (grove_journal_system_state_dir(&path, &err) < 0)
		return false;
	same = same_dir(path, s->state_path);
	free(path);
	if (same)
		return false;
	so.system_log = true;
	so.no_lock = so.read_only = so.no_create = true;
	r = grove_session_open(&sys, target, &so, &err);
	if (r == -ENOENT)
		return false;
	/* A system log made 0700 by an older grove: worth a line only for a target of root's (as
	 * /usr/local is), not for every folder of the user's own. */
	if ((r == -EACCES || r == -EPERM) && !root_owned(target))
		return false;
	if (r < 0) {
		fprintf(stderr, "grove: not reading the system log: ");
		grove_fput_shown(err.msg, stderr);
		fputc('\n', stderr);
		return false;
	}
	if (!sys.target_id) {
		grove_session_close(&sys);
		return false;
	}
	grove_session_close(s);
	*s = sys;
	return true;
}

/*
 * log, show, status and verify without -t read the stow dir's parent's history: say so, and when
 * the log knows nothing of that folder, point to the targets it knows (a `grove log` from ~ with
 * the dotfiles stowed into ~ by `-t ~` finds nothing, and used to say nothing).
 */
static void
say_target(const struct grove_session *s, const struct txn_args *ta, const char *cmd)
{
	struct grove_txn *txns = NULL;
	size_t n = 0;

	if (s->target_id && !ta->system_log &&
	    grove_journal_list(s->journal, s->target_id, 1, &txns, &n, NULL) >= 0 && n) {
		grove_txns_free(txns, n);
		if (strcmp(cmd, "status") != 0)
			grove_hint(stderr, "target '%s', the stow dir's parent (-t names another)",
				   s->target->real);
		return;
	}
	grove_txns_free(txns, n);
	grove_hint(stderr,
		   "the log has nothing of '%s', the stow dir's parent: -t names the target, and "
		   "'grove targets' lists those it knows",
		   s->target->real);
}

int
grove_cmd_txn(int argc, char **argv, const char *cmd, const struct grove_global_opts *global)
{
	struct txn_args ta = { 0 };
	struct grove_session_opts so = { 0 };
	struct grove_session s;
	struct grove_root target = { .fd = -1 };
	struct grove_error err = { 0 };
	char *target_path = NULL, *stow_path = NULL;
	struct grove_root stow = { .fd = -1 };
	bool writes = !strcmp(cmd, "undo") || !strcmp(cmd, "rollback") || !strcmp(cmd, "recover");
	int r, status;

	ta.json = global->json;
	ta.verbose = global->verbose;
	ta.dry_run = global->dry_run;
	r = parse_target(argc, argv, cmd, &ta, &target_path, &stow_path, &err);
	if (r < 0)
		return grove_report_error(&err, r);
	if (strcmp(cmd, "status") != 0 || !ta.dir_given)
		ta_release(&ta); /* only status reads the global ignore list */
	/* The stow dir (-d, else Stow's default) lets recovery use the folder the
	 * user names for an interrupted --adopt; recovery checks it is the one the
	 * log recorded, and does without it when it cannot be opened. */
	if (writes && !ta.dry_run && stow_path && grove_root_open(&stow, stow_path, NULL) < 0)
		stow.fd = -1;
	/* status lists the packages of a stow dir the user named (-d, an rc file, $STOW_DIR). */
	if (!strcmp(cmd, "status") && ta.dir_given && stow_path) {
		r = grove_root_open(&stow, stow_path, &err);
		if (r < 0) {
			free(stow_path);
			free(target_path);
			ta_release(&ta);
			grove_error_prefix(&err, "stow directory");
			return grove_report_error(&err, r);
		}
		ta.farm.stow = &stow;
		ta.farm.global_ignore = ta.global_ignore;
		ta.farm.global_ignore_source = ta.global_ignore_source;
	}
	free(stow_path);
	r = grove_root_open(&target, target_path, &err);
	free(target_path);
	if (r < 0) {
		grove_root_release(&stow);
		ta_release(&ta);
		grove_error_prefix(&err, "target");
		return grove_report_error(&err, r);
	}
	if (writes) {
		status = cmd_revert(&target, &stow, &ta, cmd, global);
		grove_root_release(&stow);
		grove_root_release(&target);
		ta_release(&ta);
		return status;
	}
	so.state_opt = global->state_dir;
	so.wait_seconds = global->wait_seconds;
	/* Reading locks nothing and makes nothing: before grove ever wrote, the log is an empty
	 * one. */
	so.no_lock = so.read_only = so.no_create = so.absent_empty = true;
	/* grove log and show show a profile's history; the others would read its ops as a
	 * target's. */
	so.profile_log = !strcmp(cmd, "log") || !strcmp(cmd, "show");
	so.command = global->command_line;
	r = grove_session_open(&s, &target, &so, &err);
	if (r < 0) {
		grove_root_release(&stow);
		grove_root_release(&target);
		ta_release(&ta);
		return grove_report_error(&err, r);
	}
	/* The reading commands: root's log when the user's own does not know the target (a
	 * --state named is the log asked for), and what is unfinished there now. */
	if (!global->state_dir && !s.target_id)
		ta.system_log = use_system_log(&s, &target, &so);
	r = grove_session_pending(&s, &ta.pending, &err);
	if (r < 0) {
		status = grove_report_error(&err, r);
		goto out;
	}
	if (!ta.json && !ta.target_given && !grove_term_quiet())
		say_target(&s, &ta, cmd);
	if (!strcmp(cmd, "log"))
		status = cmd_log(&s, &ta);
	else if (!strcmp(cmd, "show"))
		status = cmd_show(&s, &ta);
	else if (!strcmp(cmd, "status"))
		status = cmd_status(&s, &ta);
	else
		status = cmd_verify(&s, &ta);
out:
	grove_session_pending_release(&ta.pending);
	grove_session_close(&s);
	grove_root_release(&stow);
	grove_root_release(&target);
	ta_release(&ta);
	return status;
}
