/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Alternatives: link groups with update-alternatives' semantics, their choice rules and the plans
 * that realise them. */
#ifndef GROVE_ALT_H
#define GROVE_ALT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "grove/error.h"
#include "grove/plan.h"

/*
 * A link group (Debian's "alternative"): a generic link LINK (the master)
 * pointing to ALTDIR/NAME, which points to the chosen alternative's path;
 * followers (slaves), each a link pointing to ALTDIR/<follower name>, which
 * points to the chosen alternative's file for that follower, if it has one.
 *
 * The choice rules, as update-alternatives 1.21 has them: the best choice
 * starts as the current one (what ALTDIR/NAME points to, when that is a
 * choice), and a choice replaces it only with a strictly higher priority,
 * the first such in list order. So a tie keeps the current choice. The list
 * is kept sorted by path (bytewise) once saved and a newly installed path is
 * appended at its end, so without a current choice the first path in byte
 * order among the saved ones wins a tie.
 */

/* A follower of a group (name, link) or of a choice (name, file). */
struct grove_alt_slave {
	char *name;
	char *path;
};

struct grove_alt_choice {
	char *path;
	int priority;
	/* As the admin file wrote it, when it is no integer (priority is then 0):
	 * update-alternatives accepts that for a choice whose file is missing, which loading the
	 * group drops. */
	char *priority_text;
	struct grove_alt_slave *slaves; /* follower name -> file; only those the choice has */
	size_t n_slaves;
};

struct grove_alt_group {
	char *name;
	char *link;
	bool manual;
	struct grove_alt_slave *slaves; /* follower name -> link */
	size_t n_slaves;
	struct grove_alt_choice *choices;
	size_t n_choices;
};

/* Frees what the group owns and zeroes it; accepts a zeroed group. */
void grove_alt_group_release(struct grove_alt_group *g);
void grove_alt_groups_free(struct grove_alt_group *g, size_t n);
void grove_alt_choice_release(struct grove_alt_choice *c);

/* Deep copy. 0 or -ENOMEM. */
int grove_alt_group_copy(struct grove_alt_group *dst, const struct grove_alt_group *src);

/* Adds follower name with link, or changes the link of the existing one. 0 or -ENOMEM. */
int grove_alt_group_set_slave(struct grove_alt_group *g, const char *name, const char *link);

/* Adds (or changes) the file of follower name in choice c. 0 or -ENOMEM. */
int grove_alt_choice_set_slave(struct grove_alt_choice *c, const char *name, const char *path);

/* The file of follower name in choice c, or NULL when it has none. */
const char *grove_alt_choice_slave(const struct grove_alt_choice *c, const char *name);

/* The files of every choice for g's followers, in g's order, in one malloc'd array (*ret, NULL
 * when g has no follower or no choice): (*ret)[i * g->n_slaves + k] is the file of follower k in
 * choice i, or NULL when it has none; borrowed from g. Linear in the group's size. 0 or -ENOMEM. */
int grove_alt_group_files(const struct grove_alt_group *g, const char ***ret);

/* The link of follower name in g, or NULL. */
const char *grove_alt_group_slave_link(const struct grove_alt_group *g, const char *name);

/* Index of the choice with path, or -1. */
ssize_t grove_alt_find_choice(const struct grove_alt_group *g, const char *path);

/* Takes c (moved in, zeroed on success): replaces the choice with the same
 * path in place, or appends it. 0 or -ENOMEM. */
int grove_alt_add_choice(struct grove_alt_group *g, struct grove_alt_choice *c);

/* Removes the choice with path; false if there was none. */
bool grove_alt_remove_choice(struct grove_alt_group *g, const char *path);

/* Index of the best choice given the current value (may be NULL), or -1 when there is none. */
ssize_t grove_alt_best(const struct grove_alt_group *g, const char *current);

/* What saving does: sorts choices by path and followers by name, and drops
 * followers no choice has. Returns how many followers were dropped. */
size_t grove_alt_group_normalize(struct grove_alt_group *g);

/*
 * update-alternatives' administrative file (ADMINDIR/NAME): "auto" or
 * "manual", the generic link, the followers as name and link lines ended by
 * an empty line, then per choice its path, its priority and one line per
 * follower (its file, or empty), ended by an empty line. grove keeps a group
 * in this text in the journal's record of a transaction, and `grove alt
 * import` reads it.
 */

/* The text of g (malloc'd, into *ret). 0 or -ENOMEM. */
int grove_alt_group_format(const struct grove_alt_group *g, char **ret);

/* Parses text (len bytes) as group name, as update-alternatives 1.21 reads it: lines ended by a
 * newline without a NUL byte, up to the empty line that ends the choices (what follows is not
 * read); the choices in the file's order, a path written twice kept twice and a priority that
 * is no integer kept as written (priority_text), since update-alternatives accepts both for
 * choices whose file is missing (grove_alt_select_check decides, with the files at hand).
 * source names it in errors ("SOURCE corrupt: WHY", GROVE_E_CONFIG). *ret is written only on
 * success. Linear in the text's size. */
int grove_alt_group_parse(const char *name, const char *text, size_t len, const char *source,
			  struct grove_alt_group *ret, struct grove_error *err);

/* As grove_alt_group_parse, but a text cut short in its list of choices (a line missing or not
 * terminated) gives 1 with the error in err and *ret holding what was read before it, the last
 * choice as far as it was read (its path at least): update-alternatives reads those choices
 * first, and one of them may stop it before the cut (grove_alt_select_check). */
int grove_alt_group_parse_cut(const char *name, const char *text, size_t len, const char *source,
			      struct grove_alt_group *ret, struct grove_error *err);

/* True for a valid group or follower name: non-empty, no '/' and no space. */
bool grove_alt_name_ok(const char *name);

/* ---- the groups the journal keeps (src/alt/alt_state.c) ---- */

struct grove_journal;

/* Every group saved for the (admindir, altdir) pair dir_id (grove_journal_alt_dir), sorted by
 * name, each parsed from the text the journal keeps (a text that does not parse is an error naming
 * the journal). The caller frees with grove_alt_groups_free. */
int grove_alt_state_load(struct grove_journal *j, int64_t dir_id, struct grove_alt_group **ret,
			 size_t *ret_n, struct grove_error *err);

/* Replaces the saved group g->name of the pair by g in one write transaction; a group without
 * choices is deleted. */
int grove_alt_state_save(struct grove_journal *j, int64_t dir_id, const struct grove_alt_group *g,
			 struct grove_error *err);

/* ---- running a command (src/alt/alt_run.c) ---- */

enum grove_alt_action {
	GROVE_ALT_NONE = 0,
	GROVE_ALT_INSTALL,
	GROVE_ALT_REMOVE,
	GROVE_ALT_REMOVE_ALL,
	GROVE_ALT_SET,
	GROVE_ALT_AUTO,
	GROVE_ALT_QUERY,
	GROVE_ALT_DISPLAY,
	GROVE_ALT_LIST,
	GROVE_ALT_CONFIG,         /* asks req->config_ask, then as SET, AUTO or nothing */
	GROVE_ALT_GET_SELECTIONS, /* every group: name, mode, current value (res->sel) */
	GROVE_ALT_IMPORT,         /* take over the admindir's files (res->n_imported); no link */
};

struct grove_alt_result;

/* --config's answer. */
enum grove_alt_answer {
	GROVE_ALT_ANSWER_KEEP, /* empty answer or end of input: keep the current choice */
	GROVE_ALT_ANSWER_AUTO, /* selection 0 */
	GROVE_ALT_ANSWER_PATH, /* a choice, by number or path: manual mode */
};

/*
 * Called by CONFIG with the group as update-alternatives shows it (its mode
 * already corrected for a dangling or hand-changed current link) and the
 * current value (may be NULL); res holds the messages so far (the callback
 * may print them and advance res->n_shown). With display_only (--skip-auto
 * on a group in auto mode) it shows the group and returns KEEP. For PATH,
 * *ret_path is one of g's choice paths. Returns 0 or a negative error.
 */
typedef int (*grove_alt_config_fn)(void *ctx, struct grove_alt_result *res,
				   const struct grove_alt_group *g, const char *current,
				   bool display_only, enum grove_alt_answer *ret,
				   const char **ret_path);

struct grove_alt_request {
	enum grove_alt_action action;
	const char *name;
	const char *link;               /* INSTALL */
	const char *path;               /* INSTALL, REMOVE, SET */
	int priority;                   /* INSTALL */
	struct grove_alt_slave *slaves; /* INSTALL: --slave LINK NAME PATH, as (name, path); */
	const char **slave_links;       /* ... and their links, same index */
	size_t n_slaves;
	bool skip_auto; /* CONFIG: --skip-auto */
	bool lax_load;  /* drop vanished choices without a warning (--all, --set-selections) */
	bool selection; /* SET, AUTO from --set-selections: the mode is set before the current link
			   is looked at */
	grove_alt_config_fn config_ask; /* CONFIG */
	void *config_ctx;
	const char *root;      /* --root: paths are taken inside it (a chroot-like view), or NULL */
	const char *log_args;  /* logged as "run with ARGS" by a mutating command, or NULL */
	const char *altdir;    /* default /etc/alternatives */
	const char *admindir;  /* default /var/lib/dpkg/alternatives */
	const char *instdir;   /* default / */
	const char *log;       /* may be NULL */
	const char *state_opt; /* grove's --state */
	const char *command_line;
	const char *prog; /* the name in --log lines: "grove alt" (NULL) or "update-alternatives" */
	double wait_seconds; /* for the admindir's lock and the instdir's (alt sets it: 60 s) */
	/* Called once when a lock is still held after a second (may be NULL). */
	void (*lock_notice)(void *ctx, const char *what, const char *path, double seconds);
	void *lock_notice_ctx;
	int verbose; /* -1 quiet, 0, 1 verbose, 2 debug */
	bool debug;  /* --debug: the command line prints GROVE_ALT_DEBUG messages */
	/* A dry run: the command runs as it would (the admin files taken in, into memory; the same
	 * decisions and messages, told as what would be done) on a read-only session, and a
	 * mutating one puts what it would do into res->plan and res->group_* instead of doing
	 * it. Nothing is made, locked or written: no admindir, lock, log, state dir, journal or
	 * stamp cache; an interrupted transaction is not recovered (a warning says so). */
	bool dry_run;
	bool json; /* for the command line: print the prediction as JSON */
};

enum grove_alt_msg_kind {
	GROVE_ALT_INFO,    /* stdout, hidden by --quiet */
	GROVE_ALT_VERBOSE, /* stdout, only with --verbose */
	GROVE_ALT_WARNING, /* stderr, hidden by --quiet */
	GROVE_ALT_LOG,     /* a line for --log FILE (written by grove_alt_run), never printed */
	GROVE_ALT_PLAIN,   /* stdout without the program's name, always */
	GROVE_ALT_DEBUG, /* stderr as "DEBUG: TEXT", only with --debug (update-alternatives' lines)
			  */
};

struct grove_alt_msg {
	enum grove_alt_msg_kind kind;
	char *text;
};

/* What a command leaves for the command line to print. */
struct grove_alt_result {
	struct grove_alt_msg *msgs;
	size_t n_msgs, cap_msgs;
	size_t n_shown; /* messages the command line has printed already */
	/* QUERY, DISPLAY, LIST: the group as saved and its current value (NULL: none). */
	struct grove_alt_group group;
	char *current;
	bool current_failed; /* QUERY, DISPLAY: group filled, but ALTDIR/NAME is not a link */
	int64_t txn;         /* the logged transaction, or 0 */
	/* GET_SELECTIONS: every group by name, its mode and current value (NULL: none). */
	struct grove_alt_selection {
		char *name;
		bool manual;
		char *current;
	} * sel;
	size_t n_sel;      /* every group's name and mode, also when an error came later */
	size_t n_sel_read; /* how many of them have their current value read */
	size_t n_imported; /* IMPORT: the groups taken over */
	/* A dry run: the ops the real run would apply (paths relative to the root held: --root,
	 * else the instdir), and the group it would save (group_after NULL: it would be removed;
	 * group_name NULL: the saved group stays as it is). */
	struct grove_plan plan;
	char *group_name, *group_before, *group_after;
};

void grove_alt_result_release(struct grove_alt_result *res);

/*
 * Runs one command: holds instdir (the target root; every link must lie
 * beneath it), opens the journal (grove's state dir) and locks the target for
 * a mutating command, recovers an interrupted transaction, loads the groups of
 * the (admindir, altdir) pair, decides as update-alternatives does, applies
 * the links as one logged transaction, and saves the group.
 * Errors carry update-alternatives' wording where it has one; every failure
 * is exit status 2 for the command line.
 */
int grove_alt_run(const struct grove_alt_request *req, struct grove_alt_result *res,
		  struct grove_error *err);

/*
 * The n changes of one group (INSTALL, REMOVE, SET or AUTO; one name, root, instdir, altdir and
 * admindir; all dry runs or none) as one logged transaction (or the prediction of it), as grove
 * apply makes a group what its manifest says: each request is decided on the links and the group
 * the ones before it leave (in memory), the links are changed by one plan and the group is saved
 * once, at its commit. A failure of any request changes nothing; `grove undo` reverts them all. res
 * gathers every request's messages.
 */
int grove_alt_run_group(const struct grove_alt_request *reqs, size_t n,
			struct grove_alt_result *res, struct grove_error *err);

/*
 * Appends lines to req->log (nothing when it is NULL) in update-alternatives'
 * format, "PROG YYYY-MM-DD HH:MM:SS: LINE" (PROG is req->prog, default "grove alt"), local time.
 * The file is opened (created, mode 0644) beneath its held folder, never through a link.
 */
int grove_alt_log(const struct grove_alt_request *req, const char *const *lines, size_t n,
		  struct grove_error *err);

#endif
