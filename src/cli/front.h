/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The users' front of the command line: help, colour, the progress line, conflict hints, JSON. */
#ifndef GROVE_FRONT_H
#define GROVE_FRONT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "grove/plan.h"

/* ---- help (help.c) ---- */

/* Prints the overview: every command and option (grove(1) documents each; a test checks). */
void grove_help(FILE *out);

/* Prints the help of one command; -1 when grove has no page for it (alt, profile and apply
 * print their own). */
int grove_help_command(FILE *out, const char *cmd);

/* Whether argv[1..] (argv[0] is the command) asks for help (-h or --help before any "--"). */
bool grove_help_wanted(int argc, char **argv);

/* ---- colour and progress (term.c) ---- */

enum grove_color_mode {
	GROVE_COLOR_AUTO, /* colour on a terminal, unless NO_COLOR is set and not empty */
	GROVE_COLOR_ALWAYS,
	GROVE_COLOR_NEVER,
};

/* SGR codes grove uses. */
#define GROVE_SGR_ERROR "1;31"
#define GROVE_SGR_WARN  "1;33"
#define GROVE_SGR_HINT  "36"
#define GROVE_SGR_ADD   "32"
#define GROVE_SGR_DEL   "31"
#define GROVE_SGR_MOVE  "33"
#define GROVE_SGR_BOLD  "1"

/* "auto", "always", "never" (and git's synonyms yes/force, no/none); -1 otherwise. */
int grove_color_parse(const char *when, enum grove_color_mode *ret);

/* Sets the colour mode and -q for the whole run (main calls it once). */
void grove_term_setup(enum grove_color_mode mode, bool quiet);
bool grove_term_quiet(void);
/* Whether hints are printed: grove's command line (not Stow's, invoked as stow), without -q. */
bool grove_term_hints(void);

/* Whether output to f (stdout or stderr) is coloured. */
bool grove_color_on(FILE *f);

/* Prints fmt to f, wrapped in the SGR code when colour is on for f (sgr may be NULL). */
void grove_paint(FILE *f, const char *sgr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A plan at least this long shows a progress line. */
#define GROVE_PROGRESS_MIN_OPS 100

/*
 * "WHAT: done/total ops" on stderr, rewritten in place, erased at the end. Only when stderr is
 * a terminal, -q was not given, and the plan has GROVE_PROGRESS_MIN_OPS ops or more:
 *
 *	struct grove_progress pg;
 *	grove_progress_begin(&pg, "stow", plan.n_ops);
 *	session.progress = grove_progress_update; session.progress_ctx = &pg;
 *	... grove_session_apply ...
 *	grove_progress_end(&pg);     (before printing a result or an error)
 */
struct grove_progress {
	const char *what;
	size_t total;
	bool on, shown;
	double last;
};
void grove_progress_begin(struct grove_progress *p, const char *what, size_t total);
void grove_progress_update(void *ctx, size_t done, size_t total, const struct grove_op *op);
void grove_progress_end(struct grove_progress *p);

/* ---- what the commands print (report.c) ---- */

/*
 * Prints conflicts grouped per action and package, in Stow's words, each package's group
 * followed by "  hint: …" lines naming what resolves them (--adopt, --override, unstowing the
 * other package), then "All operations aborted.". stow_path is the stow dir relative to the
 * target (to name the package owning a link; may be NULL).
 */
void grove_print_conflicts_hinted(const struct grove_plan *plan, const char *stow_path, FILE *out);
/* Each distinct hint of plan's conflicts once, as "  hint: …" lines (nothing with -q, or invoked
 * as stow): for commands that print the conflicts their own way (apply, by manifest line). */
void grove_print_conflict_hints(const struct grove_plan *plan, const char *stow_path, FILE *out);

/* The hint for one conflict (static text or written into buf), or NULL when no option
 * resolves it. */
const char *grove_conflict_hint(const struct grove_conflict *c, const char *stow_path, char *buf,
				size_t size);

/* Prints the plan one op per line as grove_plan_print does, the op's kind coloured when colour
 * is on for out. */
void grove_print_plan(const struct grove_plan *plan, FILE *out);
/* The same, each line after prefix ("  " under a `grove log -v` entry). */
void grove_print_plan_prefixed(const struct grove_plan *plan, const char *prefix, FILE *out);

/* qsort order of pointers to conflicts, as bin/stow reports them: unstow before stow, then
 * package, then message (output.c). */
int grove_conflict_cmp(const void *pa, const void *pb);

/* ---- JSON (json.c: every document is built and printed there; the schema is docs/json.md) ----
 *
 * A document is built with jansson's values behind these calls and printed whole:
 *
 *	struct json_t *doc = grove_json_doc("stow");
 *	grove_json_put_str(doc, "target", path);
 *	grove_json_print(doc);
 *
 * Fields print in the order they are put. A put_* of a name that is not UTF-8 writes the name's
 * shown form and a sibling "KEY_hex" with its bytes (docs/json.md, "Names that are not UTF-8").
 * A put or append takes the value it is given (NULL values are ignored: out of memory). */

/* The schema version in every document's "grove" field. */
#define GROVE_JSON_VERSION 2

struct json_t;

/* A new document: {"grove": 2, "command": command}. */
struct json_t *grove_json_doc(const char *command);
/* A new empty object, list. */
struct json_t *grove_json_obj(void);
struct json_t *grove_json_list(void);

/* o[key] = value (taken), an object or list made above. */
void grove_json_put(struct json_t *o, const char *key, struct json_t *value);
/* Appends value (taken) to list; an integer. */
void grove_json_append(struct json_t *list, struct json_t *value);
void grove_json_append_int(struct json_t *list, long long v);
/* o[key] = s as a string (null for NULL), lossless; plus o[key_hex] when s is not UTF-8. */
void grove_json_put_str(struct json_t *o, const char *key, const char *s);
void grove_json_put_int(struct json_t *o, const char *key, long long v);
void grove_json_put_bool(struct json_t *o, const char *key, bool v);
void grove_json_put_null(struct json_t *o, const char *key);
/* o[key] = the time as RFC 3339 in UTC ("2026-12-03T09:32:03Z"). */
void grove_json_put_time(struct json_t *o, const char *key, double unix_time);
/* o[key] = the n strings as a list; plus o[key_hex] (hex or null each) when one is not UTF-8. */
void grove_json_put_strv(struct json_t *o, const char *key, char *const *v, size_t n);

/* One op object of docs/json.md: {"op", "path", "text", "old_text", "package"}. */
struct json_t *grove_json_op(const struct grove_op *op);
/* o[key] = the plan's ops, a list of op objects. */
void grove_json_put_ops(struct json_t *o, const char *key, const struct grove_plan *plan);
/* One conflict object of docs/json.md; hint may be NULL (null); "line" (apply: the manifest line
 * behind it) when line is not 0. */
struct json_t *grove_json_conflict(const struct grove_conflict *c, const char *hint, unsigned line);

/* doc as text, one line without a newline (malloc'd; NULL when out of memory). */
char *grove_json_text(const struct json_t *doc);
/* Prints doc on stdout, one line, and frees it. */
void grove_json_print(struct json_t *doc);
/* Frees doc (any value made above), not printed. */
void grove_json_free(struct json_t *doc);
/* Streaming, for a list too long to hold (a transaction's ops, read a batch at a time): the
 * document is printed as it is built. begin opens it with head's fields (head taken, as every
 * head and value below); inside an object, key names the member; inside a list, key is ignored
 * (NULL). end closes the innermost object or list (the document itself last, with a newline).
 * A run that fails part-way leaves the document cut short, its error on stderr. */
void grove_json_stream_begin(struct json_t *head);
/* A member: an object opened with head's fields, a list opened empty, or a whole value. */
void grove_json_stream_object(const char *key, struct json_t *head);
void grove_json_stream_list(const char *key);
void grove_json_stream_put(const char *key, struct json_t *value);
void grove_json_stream_end(void);
/* The plan's ops as a list of op objects, streamed one by one. */
void grove_json_stream_ops(const char *key, const struct grove_plan *plan);
/* Each field of the object fields (taken), as members of the innermost object. */
void grove_json_stream_fields(struct json_t *fields);

/* Prints the plan document: head's fields (taken), then the plan's "ops" (streamed),
 * "conflicts" (with their hints) and "warnings". */
void grove_json_print_plan(struct json_t *head, const struct grove_plan *plan,
			   const char *stow_path);

/* Whether a document was printed (or begun, streaming) in this run. */
bool grove_json_printed(void);

/* The document of a command that failed before printing its own (docs/json.md, "Errors"):
 * {"grove", "command", "exit": status, "error": {"code": the code's name or null, "message",
 * "path": the failing path or null}}. */
void grove_json_error_doc(const char *command, int status, int code, const char *message,
			  const char *path);

/* The last error a run printed on stderr (grove_report_error, grove_fail): its code (0 when
 * unknown), message and path (NULL when not known), for the error document. */
int grove_last_error(const char **ret_message, const char **ret_path);

/* Prints "grove: MESSAGE" on stderr as an error (and remembers it for the error document). */
void grove_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Names path as the path the error grove_fail just printed is about (the error document's). */
void grove_fail_path(const char *path);

/* ---- the command line's shape (argv.c) ---- */

struct grove_global_opts;

/* A command line with grove's global options taken out: v[0] is the command (cmd), followed by
 * the Stow options written in front of it and the words after it; or, for GNU Stow's spelling
 * (cmd NULL), the program name and every remaining word. v is NULL-terminated; the words are
 * argv's. */
struct grove_cmdline {
	char **v;
	int n;
	const char *cmd;
};

/*
 * Reads grove's global options wherever they are (grove(1), COMMAND LINE): in front of the
 * command, --state, --json, -v (bundled: -vv), --verbose[=N], -n/--dry-run, -q, --wait, --color,
 * --version, --help; after it the same until "--", but never the value of one of the command's
 * own options, and for `alt` only --state, --wait and --color (update-alternatives has its own
 * --verbose and --quiet). Stow's options in front of the command (-d DIR, -t DIR, --no-folding…)
 * are moved after it. The first word is the command when it is one of grove's; when Stow's
 * options precede a word that is none, or -S/-D/-R or "--" comes first, the command line is GNU
 * Stow's spelling. Returns 0, or -1 - the exit status when the run ends here (--version, --help,
 * a usage error, printed).
 */
int grove_cmdline_parse(int argc, char **argv, struct grove_global_opts *g,
			enum grove_color_mode *color, bool *quiet, struct grove_cmdline *ret);
void grove_cmdline_release(struct grove_cmdline *c);

/* Whether word is one of grove's commands; the command a mistyped word is nearest to, or NULL. */
bool grove_is_command(const char *word);
const char *grove_nearest_command(const char *word);

/* ---- hints (hint.c) ---- */

/* The candidate nearest to word (one edit for words of 3 to 6 bytes, two for longer; adjacent
 * letters swapped count as one), or NULL when none is that near or two are equally near. */
const char *grove_nearest(const char *word, const char *const *cands, size_t n);

/* Prints "hint: MESSAGE" (coloured on a terminal) to out. */
void grove_hint(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* For each of names that the stow dir dir does not have, "hint: no package 'vmi': did you mean
 * 'vim'?" on stderr when one of its folders is that near. Prints nothing when dir cannot be read.
 */
void grove_hint_packages(const char *dir, char *const *names, size_t n);

/* For a folder path that is not there, "hint: no folder 'dotfilez': did you mean 'dotfiles'?"
 * when its parent has one that near. */
void grove_hint_folder(const char *path);

/* After an error: a hint when a normal user was refused a change (run as root). */
struct grove_error;
void grove_hint_error(const struct grove_error *err, int code);

#endif
