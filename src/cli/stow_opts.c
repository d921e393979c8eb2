/* SPDX-License-Identifier: GPL-3.0-or-later */
/* GNU Stow's command line: Getopt::Long parsing, .stowrc merging and the defaults bin/stow applies.
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "grove/names.h"

#include "../banned.h" /* last */

#define RC_MAX 1048576 /* 1 MiB */

enum opt_id {
	O_VERBOSE,
	O_HELP,
	O_SIMULATE,
	O_VERSION,
	O_COMPAT,
	O_DIR,
	O_TARGET,
	O_ADOPT,
	O_NO_FOLDING,
	O_FOLDING,
	O_DOTFILES,
	O_NO_DOTFILES,
	O_IGNORE,
	O_OVERRIDE,
	O_DEFER,
	O_UNSTOW,
	O_STOW,
	O_RESTOW,
};

enum opt_type {
	T_FLAG,    /* no value */
	T_STRING,  /* "=s": a mandatory value */
	T_VERBOSE, /* ":+": an optional integer, else add 1 */
};

/* Every name of bin/stow's GetOptions spec (plus grove's --dry-run, and grove's --folding and
 * --no-dotfiles, which only grove's own spelling takes), in Getopt::Long's sort order. */
static const struct opt_name {
	const char *name;
	enum opt_id id;
	enum opt_type type;
} opt_names[] = {
	{ "D", O_UNSTOW, T_FLAG },
	{ "R", O_RESTOW, T_FLAG },
	{ "S", O_STOW, T_FLAG },
	{ "V", O_VERSION, T_FLAG },
	{ "adopt", O_ADOPT, T_FLAG },
	{ "compat", O_COMPAT, T_FLAG },
	{ "d", O_DIR, T_STRING },
	{ "defer", O_DEFER, T_STRING },
	{ "delete", O_UNSTOW, T_FLAG },
	{ "dir", O_DIR, T_STRING },
	{ "dotfiles", O_DOTFILES, T_FLAG },
	{ "dry-run", O_SIMULATE, T_FLAG },
	{ "folding", O_FOLDING, T_FLAG },
	{ "h", O_HELP, T_FLAG },
	{ "help", O_HELP, T_FLAG },
	{ "ignore", O_IGNORE, T_STRING },
	{ "n", O_SIMULATE, T_FLAG },
	{ "no", O_SIMULATE, T_FLAG },
	{ "no-dotfiles", O_NO_DOTFILES, T_FLAG },
	{ "no-folding", O_NO_FOLDING, T_FLAG },
	{ "override", O_OVERRIDE, T_STRING },
	{ "p", O_COMPAT, T_FLAG },
	{ "restow", O_RESTOW, T_FLAG },
	{ "simulate", O_SIMULATE, T_FLAG },
	{ "stow", O_STOW, T_FLAG },
	{ "t", O_TARGET, T_STRING },
	{ "target", O_TARGET, T_STRING },
	{ "v", O_VERBOSE, T_VERBOSE },
	{ "verbose", O_VERBOSE, T_VERBOSE },
	{ "version", O_VERSION, T_FLAG },
};

#define N_OPT_NAMES (sizeof(opt_names) / sizeof(opt_names[0]))

struct strv {
	char **v;
	size_t n;
};

/* One parse of an argument list (the command line, or the words of the rc files). */
struct opts {
	bool grove; /* grove's own options too (not invoked as "stow"); set before parsing */
	char *dir, *target; /* NULL when not given */
	bool has_verbose;
	int verbose;
	bool help, version, simulate, compat, adopt;
	int no_folding, dotfiles; /* 1 given, -1 given negated (--folding, --no-dotfiles), 0 not */
	struct strv ignore, defer, override;
	struct strv unstow, stow;
};

static int
strv_push(struct strv *sv, const char *s)
{
	char *copy = strdup(s);
	char **v;

	if (!copy)
		return -ENOMEM;
	v = realloc(sv->v, (sv->n + 2) * sizeof(*v));
	if (!v) {
		free(copy);
		return -ENOMEM;
	}
	v[sv->n++] = copy;
	v[sv->n] = NULL;
	sv->v = v;
	return 0;
}

static void
strv_release(struct strv *sv)
{
	grove_names_free(sv->v, sv->n);
	sv->v = NULL;
	sv->n = 0;
}

static void
opts_release(struct opts *o)
{
	free(o->dir);
	free(o->target);
	strv_release(&o->ignore);
	strv_release(&o->defer);
	strv_release(&o->override);
	strv_release(&o->unstow);
	strv_release(&o->stow);
	memset(o, 0, sizeof(*o));
}

/* ---- Text::ParseWords::shellwords ---- */

/* Perl's \s on a byte string. */
static bool
perl_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

struct strbuf {
	char *buf;
	size_t len, cap;
};

static int
sb_addc(struct strbuf *sb, char c)
{
	if (sb->len + 2 > sb->cap) {
		size_t cap = sb->cap ? sb->cap * 2 : 32;
		char *p = realloc(sb->buf, cap);

		if (!p)
			return -ENOMEM;
		sb->buf = p;
		sb->cap = cap;
	}
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
	return 0;
}

/* Appends n bytes of s; with n == 0, makes sure the buffer exists (an empty string, not NULL). */
static int
sb_adds(struct strbuf *sb, const char *s, size_t n)
{
	if (!sb->buf) {
		sb->buf = calloc(1, 32);
		if (!sb->buf)
			return -ENOMEM;
		sb->cap = 32;
		sb->len = 0;
	}
	for (size_t i = 0; i < n; i++)
		if (sb_addc(sb, s[i]) < 0)
			return -ENOMEM;
	return 0;
}

/*
 * parse_line('\s+', 0, $line) after shellwords' leading-space strip: double
 * quotes take backslash escapes, single quotes keep everything (but "\'" does
 * not end them), unquoted text takes backslash escapes; adjacent pieces join
 * into one word. An unmatched quote or a trailing backslash makes Perl return
 * no words for the line: here an error.
 */
int
grove_shellwords(const char *line, char ***ret_words, size_t *ret_n, struct grove_error *err)
{
	struct strv words = { 0 };
	struct strbuf word = { 0 };
	bool have_word = false;
	size_t len = strlen(line);
	size_t i = 0;
	int r = -ENOMEM;

	while (i < len && perl_space(line[i]))
		i++;
	while (i < len) {
		char c = line[i];

		if (c == '"' || c == '\'') {
			size_t j = i + 1;

			while (j < len && line[j] != c) {
				if (line[j] == '\\') {
					if (j + 1 >= len)
						break;
					j++;
				}
				j++;
			}
			if (j >= len) {
				r = grove_error_set(err, -GROVE_E_CONFIG,
						    "unmatched %s quote in '%s'",
						    c == '"' ? "double" : "single", line);
				goto fail;
			}
			for (size_t k = i + 1; k < j; k++) {
				if (c == '"' && line[k] == '\\')
					k++;
				if (sb_addc(&word, line[k]) < 0)
					goto fail;
			}
			if (!word.buf && sb_adds(&word, "", 0) < 0)
				goto fail;
			have_word = true;
			i = j + 1;
			continue;
		}
		/* Unquoted: up to whitespace, a quote, or the end. */
		while (i < len && !perl_space(line[i]) && line[i] != '"' && line[i] != '\'') {
			if (line[i] == '\\') {
				if (i + 1 >= len) {
					r = grove_error_set(err, -GROVE_E_CONFIG,
							    "trailing backslash in '%s'", line);
					goto fail;
				}
				i++;
			}
			if (sb_addc(&word, line[i]) < 0)
				goto fail;
			have_word = true;
			i++;
		}
		if (i < len && perl_space(line[i])) {
			/* A delimiter ends the word, even an empty one. */
			if (strv_push(&words, word.buf ? word.buf : "") < 0)
				goto fail;
			word.len = 0;
			if (word.buf)
				word.buf[0] = '\0';
			have_word = false;
			while (i < len && perl_space(line[i]))
				i++;
		}
	}
	if (have_word && strv_push(&words, word.buf ? word.buf : "") < 0)
		goto fail;
	free(word.buf);
	*ret_words = words.v;
	*ret_n = words.n;
	return 0;
fail:
	if (r == -ENOMEM)
		grove_error_errno(err, r, "split '%s'", line);
	free(word.buf);
	strv_release(&words);
	return r;
}

/* ---- Getopt::Long ---- */

/* Getopt::Long's PAT_INT: [-+]?_*[0-9][0-9_]*, returning its length at s (0 if none). */
static size_t
int_prefix(const char *s)
{
	size_t i = 0;

	if (s[i] == '-' || s[i] == '+')
		i++;
	while (s[i] == '_')
		i++;
	if (s[i] < '0' || s[i] > '9')
		return 0;
	while ((s[i] >= '0' && s[i] <= '9') || s[i] == '_')
		i++;
	return i;
}

/* Perl's 0+$s, optionally after tr/_//d, clamped to int. */
static int
int_value(const char *s, size_t n, bool drop_underscores)
{
	char buf[64];
	size_t w = 0;
	long long v;

	for (size_t i = 0; i < n && w + 1 < sizeof(buf); i++)
		if (!(drop_underscores && s[i] == '_'))
			buf[w++] = s[i];
	buf[w] = '\0';
	v = strtoll(buf, NULL, 10);
	if (v > INT_MAX)
		return INT_MAX;
	if (v < INT_MIN)
		return INT_MIN;
	return (int)v;
}

/* Not GNU Stow's: unknown when invoked as "stow". */
static bool
grove_only(const struct opt_name *opt)
{
	return opt->id == O_FOLDING || opt->id == O_NO_DOTFILES;
}

static const struct opt_name *
find_exact(const char *name, size_t len, bool grove)
{
	for (size_t i = 0; i < N_OPT_NAMES; i++)
		if (strlen(opt_names[i].name) == len && !strncmp(opt_names[i].name, name, len) &&
		    (grove || !grove_only(&opt_names[i])))
			return &opt_names[i];
	return NULL;
}

/* A long option by exact name or unique prefix (of names that are all one option). */
static int
find_long(const char *name, size_t len, bool grove, const struct opt_name **ret,
	  struct grove_error *err)
{
	const struct opt_name *hit = find_exact(name, len, grove);
	char list[512] = "";
	bool ambiguous = false;

	if (hit) {
		*ret = hit;
		return 0;
	}
	for (size_t i = 0; i < N_OPT_NAMES; i++) {
		if (strncmp(opt_names[i].name, name, len) != 0 ||
		    (!grove && grove_only(&opt_names[i])))
			continue;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 *list ? ", " : "", opt_names[i].name);
		if (hit && hit->id != opt_names[i].id)
			ambiguous = true;
		hit = &opt_names[i];
	}
	if (ambiguous)
		return grove_error_set(err, -GROVE_E_USAGE, "option '--%.*s' is ambiguous (%s)",
				       (int)len, name, list);
	if (!hit)
		return grove_error_set(err, -GROVE_E_USAGE, "unknown option '--%.*s'", (int)len,
				       name);
	*ret = hit;
	return 0;
}

/* The argument list being parsed, with Getopt::Long's push-back of unbundled rests. */
struct args {
	char **argv;
	int argc, i;
	char *pushed; /* "-" + the rest of a bundle, processed next */
};

static bool
args_more(const struct args *a)
{
	return a->pushed || a->i < a->argc;
}

/* Takes the next argument; *own is set when the caller must free it. */
static char *
args_next(struct args *a, bool *own)
{
	char *s;

	if (a->pushed) {
		s = a->pushed;
		a->pushed = NULL;
		*own = true;
		return s;
	}
	*own = false;
	return a->argv[a->i++];
}

static int
args_push_bundle(struct args *a, const char *rest)
{
	char *s;

	if (asprintf(&s, "-%s", rest) < 0)
		return -ENOMEM;
	free(a->pushed);
	a->pushed = s;
	return 0;
}

static int
add_package(struct opts *o, enum grove_stow_action action, const char *name)
{
	if (action != GROVE_ACTION_STOW && strv_push(&o->unstow, name) < 0)
		return -ENOMEM;
	if (action != GROVE_ACTION_UNSTOW && strv_push(&o->stow, name) < 0)
		return -ENOMEM;
	return 0;
}

static int
set_string(struct opts *o, const struct opt_name *opt, const char *val, struct grove_error *err)
{
	struct grove_pattern_set *check = NULL;
	char **slot = NULL;
	struct strv *list = NULL;
	int r;

	switch (opt->id) {
	case O_DIR:
		slot = &o->dir;
		break;
	case O_TARGET:
		slot = &o->target;
		break;
	case O_IGNORE:
		list = &o->ignore;
		break;
	case O_DEFER:
		list = &o->defer;
		break;
	case O_OVERRIDE:
		list = &o->override;
		break;
	default:
		return grove_error_set(err, -GROVE_E_INTERNAL, "option '%s' takes no value",
				       opt->name);
	}
	if (slot) {
		char *copy = strdup(val);

		if (!copy)
			return grove_error_errno(err, -ENOMEM, "option '%s'", opt->name);
		free(*slot);
		*slot = copy;
		return 0;
	}
	/* Stow compiles each regex as it parses it, so a bad one is a command line error. */
	check = grove_pattern_set_new(opt->id == O_IGNORE ? GROVE_ANCHOR_END : GROVE_ANCHOR_START);
	if (!check)
		return grove_error_errno(err, -ENOMEM, "option '--%s'", opt->name);
	r = grove_pattern_set_add(check, val, err);
	grove_pattern_set_free(check);
	if (r < 0)
		return r;
	if (strv_push(list, val) < 0)
		return grove_error_errno(err, -ENOMEM, "option '--%s'", opt->name);
	return 0;
}

static void
set_flag(struct opts *o, enum opt_id id, enum grove_stow_action *action)
{
	switch (id) {
	case O_HELP:
		o->help = true;
		break;
	case O_SIMULATE:
		o->simulate = true;
		break;
	case O_VERSION:
		o->version = true;
		break;
	case O_COMPAT:
		o->compat = true;
		break;
	case O_ADOPT:
		o->adopt = true;
		break;
	case O_NO_FOLDING:
		o->no_folding = 1;
		break;
	case O_FOLDING:
		o->no_folding = -1;
		break;
	case O_DOTFILES:
		o->dotfiles = 1;
		break;
	case O_NO_DOTFILES:
		o->dotfiles = -1;
		break;
	case O_UNSTOW:
		*action = GROVE_ACTION_UNSTOW;
		break;
	case O_STOW:
		*action = GROVE_ACTION_STOW;
		break;
	case O_RESTOW:
		*action = GROVE_ACTION_RESTOW;
		break;
	default:
		break;
	}
}

static void
verbose_add(struct opts *o)
{
	o->verbose = o->has_verbose && o->verbose < INT_MAX ? o->verbose + 1 : 1;
	o->has_verbose = true;
}

/*
 * One option argument. dash is "-" or "--"; body follows it. For "-" the first
 * character is the option and the rest is a bundle (or its value).
 */
static int
parse_option(struct args *a, struct opts *o, enum grove_stow_action *action, bool long_opt,
	     const char *body, struct grove_error *err)
{
	const struct opt_name *opt = NULL;
	const char *opt_value = NULL; /* --opt=VALUE */
	const char *rest = NULL;      /* -xREST */
	char shown[64];
	int r;

	if (long_opt) {
		const char *eq = body[0] ? strchr(body + 1, '=') : NULL;
		size_t len = eq ? (size_t)(eq - body) : strlen(body);

		if (eq)
			opt_value = eq + 1;
		r = find_long(body, len, o->grove, &opt, err);
		if (r < 0)
			return r;
		snprintf(shown, sizeof(shown), "--%s", opt->name);
	} else {
		opt = find_exact(body, 1, o->grove);
		if (body[1])
			rest = body + 1;
		if (!opt)
			return grove_error_set(err, -GROVE_E_USAGE, "unknown option '-%c'",
					       body[0]);
		snprintf(shown, sizeof(shown), "-%s", opt->name);
	}

	switch (opt->type) {
	case T_FLAG:
		if (opt_value)
			return grove_error_set(err, -GROVE_E_USAGE,
					       "option '%s' does not take a value", shown);
		set_flag(o, opt->id, action);
		if (rest && args_push_bundle(a, rest) < 0)
			return grove_error_errno(err, -ENOMEM, "option '%s'", shown);
		return 0;
	case T_STRING: {
		const char *val;
		bool own = false;
		char *next = NULL;

		if (rest) {
			val = rest;
		} else if (opt_value) {
			if (!*opt_value)
				return grove_error_set(err, -GROVE_E_USAGE,
						       "option '%s' requires a value", shown);
			val = opt_value;
		} else if (args_more(a)) {
			/* A mandatory value takes whatever comes next, even "--" or "-x". */
			next = args_next(a, &own);
			val = next;
		} else {
			return grove_error_set(err, -GROVE_E_USAGE, "option '%s' requires a value",
					       shown);
		}
		r = set_string(o, opt, val, err);
		if (own)
			free(next);
		return r;
	}
	case T_VERBOSE:
		break;
	}

	/* -v/--verbose: an integer sets the level, anything else adds one. */
	if (opt_value) {
		size_t n = int_prefix(opt_value);

		if (!*opt_value) {
			verbose_add(o);
		} else if (n && !opt_value[n]) {
			o->verbose = int_value(opt_value, n, true);
			o->has_verbose = true;
		} else {
			return grove_error_set(err, -GROVE_E_USAGE,
					       "option '%s': value '%s' is not a number", shown,
					       opt_value);
		}
		return 0;
	}
	if (rest) {
		size_t n = int_prefix(rest);

		if (n) {
			o->verbose = int_value(rest, n, false);
			o->has_verbose = true;
			if (rest[n] && args_push_bundle(a, rest + n) < 0)
				return grove_error_errno(err, -ENOMEM, "option '%s'", shown);
		} else {
			verbose_add(o);
			if (args_push_bundle(a, rest) < 0)
				return grove_error_errno(err, -ENOMEM, "option '%s'", shown);
		}
		return 0;
	}
	if (a->pushed || a->i < a->argc) {
		const char *next = a->pushed ? a->pushed : a->argv[a->i];
		size_t n = int_prefix(next);

		if (n && !next[n]) {
			bool own;
			char *s = args_next(a, &own);

			o->verbose = int_value(s, n, true);
			o->has_verbose = true;
			if (own)
				free(s);
			return 0;
		}
	}
	verbose_add(o);
	return 0;
}

bool
grove_stow_opt_takes_next(const char *arg, bool grove)
{
	const struct opt_name *opt = NULL;

	if (arg[0] != '-' || !arg[1] || !strcmp(arg, "--"))
		return false;
	if (arg[1] == '-') {
		const char *body = arg + 2, *eq = body[0] ? strchr(body + 1, '=') : NULL;

		/* (An unknown or ambiguous name is the parser's usage error, whatever follows.) */
		return !eq && find_long(body, strlen(body), grove, &opt, NULL) == 0 &&
		       opt->type == T_STRING;
	}
	/* A bundle, as parse_option reads it: a value option takes the rest of the word, or the
	 * next word when it is last; -v takes the digits after it. */
	for (const char *c = arg + 1; *c;) {
		opt = find_exact(c, 1, grove);
		if (!opt)
			return false;
		if (opt->type == T_STRING)
			return !c[1];
		c += 1 + (opt->type == T_VERBOSE ? int_prefix(c + 1) : 0);
	}
	return false;
}

/* Getopt::Long with 'no_ignore_case', 'bundling', 'permute', as bin/stow's parse_options. */
static int
parse_args(int argc, char **argv, enum grove_stow_action action, struct opts *o,
	   struct grove_error *err)
{
	struct args a = { .argv = argv, .argc = argc, .i = 0 };
	int r = 0;

	while (args_more(&a)) {
		bool own;
		char *arg = args_next(&a, &own);

		if (!strcmp(arg, "--")) {
			if (own)
				free(arg);
			break;
		}
		if (arg[0] == '-' && arg[1]) {
			bool long_opt = arg[1] == '-';

			r = parse_option(&a, o, &action, long_opt, arg + (long_opt ? 2 : 1), err);
		} else if (add_package(o, action, arg) < 0) {
			r = grove_error_errno(err, -ENOMEM, "package '%s'", arg);
		}
		if (own)
			free(arg);
		if (r < 0)
			break;
	}
	free(a.pushed);
	a.pushed = NULL;
	while (r >= 0 && a.i < a.argc)
		if (add_package(o, action, a.argv[a.i++]) < 0)
			r = grove_error_errno(err, -ENOMEM, "package '%s'", a.argv[a.i - 1]);
	return r;
}

/* ---- .stowrc ---- */

/* Looks up an environment variable, as bin/stow's _safe_expand_env_var (stow: its words when
 * the variable is undefined, the line it dies with). */
static int
env_value(const char *name, size_t len, const char *option, bool stow, const char **ret,
	  struct grove_error *err)
{
	char buf[256];
	const char *v;

	snprintf(buf, sizeof(buf), "%.*s", (int)len, name);
	v = len < sizeof(buf) ? getenv(buf) : NULL;
	if (!v && stow)
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "%s option references undefined environment variable $%s; "
				       "aborting!",
				       option, buf);
	if (!v)
		return grove_error_set(
			err, -GROVE_E_CONFIG,
			"rc option '%s' references undefined environment variable '$%s'", option,
			buf);
	*ret = v;
	return 0;
}

static bool
perl_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* One s///g pass of expand_environment: braced (${VAR}) or bare ($VAR). */
static int
expand_pass(const char *in, bool braced, const char *option, bool stow, char **ret,
	    struct grove_error *err)
{
	struct strbuf sb = { 0 };
	size_t len = strlen(in);
	size_t i = 0;
	int r;

	if (sb_adds(&sb, "", 0) < 0)
		goto nomem;
	while (i < len) {
		size_t start = i + (braced ? 2 : 1), j = start;
		const char *v = NULL;

		if (in[i] != '$' || (i > 0 && in[i - 1] == '\\') || (braced && in[i + 1] != '{')) {
			if (sb_addc(&sb, in[i++]) < 0)
				goto nomem;
			continue;
		}
		while (j < len && (perl_word(in[j]) || (braced && perl_space(in[j]))))
			j++;
		if (j == start || (braced && in[j] != '}')) {
			if (sb_addc(&sb, in[i++]) < 0)
				goto nomem;
			continue;
		}
		r = env_value(in + start, j - start, option, stow, &v, err);
		if (r < 0) {
			free(sb.buf);
			return r;
		}
		if (sb_adds(&sb, v, strlen(v)) < 0)
			goto nomem;
		i = braced ? j + 1 : j;
	}
	*ret = sb.buf;
	return 0;
nomem:
	free(sb.buf);
	return grove_error_errno(err, -ENOMEM, "rc option '%s'", option);
}

/* bin/stow's expand_filepath: ${VAR}, then $VAR, then "\$" -> "$"; then a leading ~ or ~user, then
 * "\~" -> "~". An undefined variable is refused (in Stow's words when stow) and sets *ret_died:
 * Stow dies there. */
static int
expand_filepath(char **path, const char *option, const char *home, bool stow, bool *ret_died,
		struct grove_error *err)
{
	char *a = NULL, *b = NULL;
	struct strbuf sb = { 0 };
	const char *s;
	int r;

	r = expand_pass(*path, true, option, stow, &a, err);
	if (r >= 0) {
		r = expand_pass(a, false, option, stow, &b, err);
		free(a);
	}
	if (r < 0) {
		*ret_died = r == -GROVE_E_CONFIG; /* an undefined variable: Stow dies */
		return r;
	}
	if (sb_adds(&sb, "", 0) < 0)
		goto nomem;
	s = b;
	if (s[0] == '~') {
		size_t n = strcspn(s + 1, "/");
		const char *dir = NULL;

		/* Perl's truth: "~0" is "~" followed by a false "0", so it means $HOME. */
		if (n && !(n == 1 && s[1] == '0')) {
			char user[256];
			struct passwd *pw;

			snprintf(user, sizeof(user), "%.*s", (int)n, s + 1);
			pw = getpwnam(user);
			dir = pw ? pw->pw_dir : "";
		} else {
			dir = home && *home ? home : getenv("LOGDIR");
			if (!dir || !*dir) {
				struct passwd *pw = getpwuid(getuid());

				dir = pw ? pw->pw_dir : "";
			}
		}
		if (sb_adds(&sb, dir, strlen(dir)) < 0)
			goto nomem;
		s += 1 + n;
	}
	for (; *s; s++) {
		/* "\$" and "\~" lose their backslash. */
		if (s[0] == '\\' && (s[1] == '$' || s[1] == '~'))
			s++;
		if (sb_addc(&sb, *s) < 0)
			goto nomem;
	}
	free(b);
	free(*path);
	*path = sb.buf;
	return 0;
nomem:
	free(b);
	free(sb.buf);
	return grove_error_errno(err, -ENOMEM, "rc option '%s'", option);
}

/* Reads one rc file and appends its words. Missing or unreadable files are skipped, as Stow's -r
 * test. */
static int
read_rc(const char *path, struct strv *words, char *names, size_t names_size, int *ret_errno,
	struct grove_error *err)
{
	char *text = NULL;
	size_t len = 0;
	char *line;
	int r;

	r = grove_stow_read_user_file(path, RC_MAX, &text, &len, err);
	/* What Stow's -r test of the file leaves in errno (a folder passes it). */
	*ret_errno = r == -EACCES || r == -ENOENT || r == -ENOTDIR ? -r : 0;
	if (r == -EACCES || r == -EISDIR || r == -ENOENT || r == -ENOTDIR) {
		grove_error_clear(err);
		return 0;
	}
	if (r < 0) {
		/* (One another user can write says so in full: no prefix.) */
		if (r != -GROVE_E_CONFIG)
			grove_error_prefix(err, "read rc file '%s'", path);
		return -GROVE_E_CONFIG;
	}
	if (!text) {
		*ret_errno = ENOENT; /* missing */
		return 0;
	}
	r = 0;
	snprintf(names + strlen(names), names_size - strlen(names), "%s'%s'", *names ? " and " : "",
		 path);
	line = text;
	while (line && *line) {
		char *nl = strchr(line, '\n');
		char **w = NULL;
		size_t n = 0;
		struct grove_error ignored;

		if (nl)
			*nl = '\0';
		/* shellwords gives nothing for a line with an unmatched quote: Stow skips it. */
		if (grove_shellwords(line, &w, &n, &ignored) == 0) {
			for (size_t i = 0; i < n && r >= 0; i++)
				if (strv_push(words, w[i]) < 0)
					r = -ENOMEM;
			grove_names_free(w, n);
		}
		if (r < 0) {
			free(text);
			return grove_error_errno(err, r, "read rc file '%s'", path);
		}
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	return 0;
}

/* Stow's rc files (~/.stowrc, then cwd_rc): their options into rc. cli->rc_errno is what the
 * last one's -r test leaves in errno; cli->rc_died is set when Stow dies on them (an undefined
 * variable in --dir or --target, said in Stow's words when stow). */
static int
rc_options(const char *home, const char *cwd_rc, bool stow, struct opts *rc,
	   struct grove_stow_cli *cli, struct grove_error *err)
{
	struct strv words = { 0 };
	char *home_rc = NULL;
	char names[2 * PATH_MAX] = "";
	int r = 0;

	if (home && asprintf(&home_rc, "%s/.stowrc", home) < 0)
		return grove_error_errno(err, -ENOMEM, "rc file '~/.stowrc'");
	if (home_rc)
		r = read_rc(home_rc, &words, names, sizeof(names), &cli->rc_errno, err);
	if (r >= 0 && cwd_rc)
		r = read_rc(cwd_rc, &words, names, sizeof(names), &cli->rc_errno, err);
	if (r >= 0) {
		/* Stow parses all the rc words as one argument list; the packages it finds are
		 * ignored. */
		r = parse_args((int)words.n, words.v, GROVE_ACTION_STOW, rc, err);
		if (r < 0) {
			/* Stow joins the words of both files into one list: name whichever exist.
			 */
			grove_error_prefix(err, "rc file %s", names);
			if (err)
				err->code = -GROVE_E_CONFIG;
			r = -GROVE_E_CONFIG;
		}
	}
	if (r >= 0 && rc->target)
		r = expand_filepath(&rc->target, "--target", home, stow, &cli->rc_died, err);
	if (r >= 0 && rc->dir)
		r = expand_filepath(&rc->dir, "--dir", home, stow, &cli->rc_died, err);
	free(home_rc);
	strv_release(&words);
	return r;
}

/* ---- merging and defaults ---- */

/* Stow::Util::parent: split on runs of '/', drop the last element, join with '/'. */
static char *
stow_parent(const char *path)
{
	char *out = strdup(path);
	size_t len;
	char *w;

	if (!out)
		return NULL;
	/* Collapse runs of '/', drop trailing ones (Perl's split drops trailing empty fields). */
	w = out;
	for (const char *s = path; *s; s++)
		if (!(*s == '/' && w > out && w[-1] == '/'))
			*w++ = *s;
	*w = '\0';
	len = strlen(out);
	while (len && out[len - 1] == '/')
		out[--len] = '\0';
	w = strrchr(out, '/');
	if (w)
		*w = '\0';
	else
		out[0] = '\0';
	if (!out[0]) {
		free(out);
		return strdup(".");
	}
	return out;
}

static int
add_patterns(struct grove_pattern_set **set, enum grove_pattern_anchor anchor,
	     const struct strv *first, const struct strv *second, struct grove_error *err)
{
	const struct strv *lists[] = { first, second };
	int r;

	if (!first->n && !second->n)
		return 0;
	*set = grove_pattern_set_new(anchor);
	if (!*set)
		return grove_error_errno(err, -ENOMEM, "patterns");
	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; i < lists[l]->n; i++) {
			r = grove_pattern_set_add(*set, lists[l]->v[i], err);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int
take_packages(struct grove_stow_request *req, bool unstow, const struct strv *names,
	      struct grove_error *err)
{
	for (size_t i = 0; i < names->n; i++) {
		char *name = names->v[i];
		size_t len = strlen(name);

		/* bin/stow's check_packages: s{/+$}{} */
		while (len && name[len - 1] == '/')
			name[--len] = '\0';
		if (grove_stow_request_add(req, unstow, name) < 0)
			return grove_error_errno(err, -ENOMEM, "package '%s'", name);
	}
	return 0;
}

static int
global_ignore(const char *home, struct grove_stow_request *req, struct grove_error *err)
{
	char *path = NULL;
	char *text = NULL;
	size_t len;
	int r;

	if (!home)
		return 0;
	if (asprintf(&path, "%s/.stow-global-ignore", home) < 0)
		return grove_error_errno(err, -ENOMEM, "'~/.stow-global-ignore'");
	r = grove_stow_read_user_file(path, RC_MAX, &text, &len, err);
	if (r == -ENOENT || r == -EACCES || r == -EISDIR || r == -ENOTDIR) {
		grove_error_clear(err);
		r = 0;
	}
	if (r < 0 || !text) {
		free(path);
		return r;
	}
	req->global_ignore_text = text;
	req->global_ignore_source = path;
	return 0;
}

int
grove_stow_cli_parse(int argc, char **argv, enum grove_stow_action initial, const char *home,
		     const char *cwd_rc, bool read_rc, struct grove_stow_request *req,
		     struct grove_stow_cli *cli, struct grove_error *err)
{
	struct opts c = { 0 }, rc = { 0 };
	const char *stow_dir = getenv("STOW_DIR");
	char *dir = NULL, *target = NULL;
	int r;

	memset(cli, 0, sizeof(*cli));
	c.grove = rc.grove = !req->stow_words;
	r = parse_args(argc > 1 ? argc - 1 : 0, argc > 1 ? argv + 1 : NULL, initial, &c, err);
	if (r < 0)
		goto out;
	/* bin/stow answers --help and --version before it reads any rc file. */
	cli->help = c.help;
	cli->version = c.version;
	if (c.help || c.version)
		goto out;
	if (read_rc) {
		r = rc_options(home, cwd_rc, req->stow_words, &rc, cli, err);
		if (r < 0)
			goto out;
		cli->help = rc.help;
		cli->version = rc.version;
		if (rc.help || rc.version)
			goto out;
	}

	cli->simulate = c.simulate || rc.simulate;
	req->compat = c.compat || rc.compat;
	req->adopt = c.adopt || rc.adopt;
	/* The command line wins over the rc files; the last of --dotfiles and --no-dotfiles wins
	 * within each (as Getopt::Long's negatable options). */
	req->no_folding = (c.no_folding ? c.no_folding : rc.no_folding) > 0;
	req->no_folding_given = c.no_folding || rc.no_folding;
	req->dotfiles = (c.dotfiles ? c.dotfiles : rc.dotfiles) > 0;
	req->dotfiles_given = c.dotfiles || rc.dotfiles;
	req->verbose = c.has_verbose ? c.verbose : rc.has_verbose ? rc.verbose : 0;

	r = add_patterns(&req->ignore, GROVE_ANCHOR_END, &rc.ignore, &c.ignore, err);
	if (r >= 0)
		r = add_patterns(&req->defer, GROVE_ANCHOR_START, &rc.defer, &c.defer, err);
	if (r >= 0)
		r = add_patterns(&req->override, GROVE_ANCHOR_START, &rc.override, &c.override,
				 err);
	if (r < 0)
		goto out;

	cli->dir_given = c.dir || rc.dir || (stow_dir && *stow_dir);
	cli->target_given = c.target || rc.target;
	if (c.dir || rc.dir) {
		dir = strdup(c.dir ? c.dir : rc.dir);
	} else if (stow_dir && *stow_dir) {
		dir = strdup(stow_dir);
	} else {
		dir = getcwd(NULL, 0);
		if (!dir) {
			r = grove_error_errno(err, -errno, "current folder");
			goto out;
		}
	}
	if (!dir)
		goto nomem;
	target = c.target || rc.target ? strdup(c.target ? c.target : rc.target) : stow_parent(dir);
	if (!target)
		goto nomem;

	/* Stow ignores the package names in rc files (comments there become such names). */
	if (!c.unstow.n && !c.stow.n) {
		r = grove_error_set(err, -GROVE_E_USAGE, "no packages to stow or unstow");
		goto out;
	}
	r = take_packages(req, true, &c.unstow, err);
	if (r >= 0)
		r = take_packages(req, false, &c.stow, err);
	if (r >= 0)
		r = global_ignore(home, req, err);
	if (r < 0)
		goto out;
	free(req->dir);
	free(req->target);
	req->dir = dir;
	req->target = target;
	dir = target = NULL;
out:
	free(dir);
	free(target);
	opts_release(&c);
	opts_release(&rc);
	return r;
nomem:
	r = grove_error_errno(err, -ENOMEM, "options");
	goto out;
}

void
grove_stow_usage(FILE *out)
{
	fputs("grove: a safe symlink farm manager, compatible with GNU Stow 2.4\n"
	      "\n"
	      "Usage:\n"
	      "    grove [GLOBAL OPTION ...] COMMAND [OPTION ...] PACKAGE ...\n"
	      "    grove [OPTION ...] [-D|-S|-R] PACKAGE ... [-D|-S|-R] PACKAGE ...\n"
	      "    stow [OPTION ...] [-D|-S|-R] PACKAGE ...      (when installed as 'stow')\n"
	      "\n"
	      "Commands:\n"
	      "    stow PACKAGE ...       link the packages into the target\n"
	      "    unstow PACKAGE ...     remove the packages' links\n"
	      "    restow PACKAGE ...     unstow then stow, in one transaction\n"
	      "    plan [stow|unstow|restow] ...\n"
	      "                           print what would change; change nothing\n"
	      "    apply [-f FILE] [--check] [--diff]\n"
	      "                           converge to a manifest (grove.yaml; see grove.yaml(5))\n"
	      "\n"
	      "Global options (before the command):\n"
	      "    --state DIR            keep the transaction log in DIR\n"
	      "    --json                 machine-readable output on stdout\n"
	      "    -v                     be more verbose\n"
	      "    -n, --dry-run          plan and check, change nothing\n"
	      "    --version              show the version\n"
	      "    --help                 show this help\n"
	      "\n"
	      "Package options (GNU Stow's):\n"
	      "    -d DIR, --dir=DIR      the stow dir (default: $STOW_DIR, else the current folder)\n"
	      "    -t DIR, --target=DIR   the target (default: the stow dir's parent)\n"
	      "    -S, --stow             stow the packages that follow\n"
	      "    -D, --delete           unstow the packages that follow\n"
	      "    -R, --restow           restow the packages that follow\n"
	      "    --ignore=REGEX         ignore files ending in this Perl regex\n"
	      "    --defer=REGEX          don't stow files beginning with this Perl regex\n"
	      "                           if the file is already stowed to another package\n"
	      "    --override=REGEX       force stowing files beginning with this Perl regex\n"
	      "                           if the file is already stowed to another package\n"
	      "    --adopt                (use with care) move existing files into the package\n"
	      "    --no-folding           make folders of links, never a link to a folder\n"
	      "    --dotfiles             a package entry 'dot-x' is linked as '.x'\n"
	      "    -p, --compat           legacy unstow that walks the target\n"
	      "    -n, --no, --simulate, --dry-run\n"
	      "                           change nothing\n"
	      "    -v, --verbose[=N]      more output (-v adds 1; --verbose=N sets the level)\n"
	      "    -V, --version          show the version\n"
	      "    -h, --help             show this help\n"
	      "\n"
	      "Options are also read from ~/.stowrc and ./.stowrc, as GNU Stow reads them.\n"
	      "Exit status: 0 done, 1 refused (nothing changed), 2 usage, 3 failed and rolled back,\n"
	      "4 needs attention, 75 locked, 78 bad configuration.\n",
	      out);
}
