/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Stow's ignore lists and --ignore/--defer/--override patterns, compiled with PCRE2 as Perl would.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <errno.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/ignore.h"

#include "banned.h" /* last */

/*
 * Stow matches with Perl regexes on byte strings: no UTF mode, '$' matching
 * before a final newline (PCRE2's default too), and an unknown escape such
 * as "\i" taken literally (Perl warns; PCRE2 would refuse it).
 */
#define GROVE_PCRE2_EXTRA PCRE2_EXTRA_BAD_ESCAPE_IS_LITERAL

struct grove_ignore_list {
	pcre2_code *path_re;    /* "(^|/)(q1|...)(/|$)" against "/" + path; NULL if none */
	pcre2_code *segment_re; /* "^(p1|...)$" against the basename; NULL if none */
	/* For a match over budget: the source, and the patterns one per line, to
	 * name the one that is too costly. */
	char *source;
	char *patterns;
	/* Stow's list: builtin_match() decides paths without '\n'; the regexes
	 * (for the others) are compiled on the first such path, into regexes. */
	bool builtin;
	struct grove_ignore_list *regexes;
};

struct grove_pattern_set {
	enum grove_pattern_anchor anchor;
	pcre2_code **res;
	char **src; /* the patterns as given, for messages */
	size_t n, cap;
};

/* Stow's built-in list, the __DATA__ section of Stow.pm 2.4.1, verbatim. */
static const char default_list[] = "# Comments and blank lines are allowed.\n"
				   "\n"
				   "RCS\n"
				   ".+,v\n"
				   "\n"
				   "CVS\n"
				   "\\.\\#.+       # CVS conflict files / emacs lock files\n"
				   "\\.cvsignore\n"
				   "\n"
				   "\\.svn\n"
				   "_darcs\n"
				   "\\.hg\n"
				   "\n"
				   "\\.git\n"
				   "\\.gitignore\n"
				   "\\.gitmodules\n"
				   "\n"
				   ".+~          # emacs backup files\n"
				   "\\#.*\\#       # emacs autosave files\n"
				   "\n"
				   "^/README.*\n"
				   "^/LICENSE.*\n"
				   "^/COPYING\n";

struct strbuf {
	char *buf;
	size_t len, cap;
};

static int
sb_add(struct strbuf *sb, const char *s, size_t n)
{
	if (sb->len + n + 1 > sb->cap) {
		size_t cap = sb->cap ? sb->cap : 64;
		char *p;

		while (cap < sb->len + n + 1)
			cap *= 2;
		p = realloc(sb->buf, cap);
		if (!p)
			return -ENOMEM;
		sb->buf = p;
		sb->cap = cap;
	}
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
	return 0;
}

static int
sb_adds(struct strbuf *sb, const char *s)
{
	return sb_add(sb, s, strlen(s));
}

/* Perl's \s on a byte string: space, \t, \n, \v, \f, \r. */
static bool
perl_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static pcre2_code *
compile_opts(const char *re, size_t len, uint32_t opts, char *why, size_t why_size,
	     size_t *ret_offset)
{
	pcre2_compile_context *ctx = pcre2_compile_context_create(NULL);
	pcre2_code *code;
	PCRE2_SIZE off = 0;
	int rc = 0;

	if (!ctx) {
		(void)snprintf(why, why_size, "%s", strerror(ENOMEM)); /* a message: may be cut */
		return NULL;
	}
	pcre2_set_compile_extra_options(ctx, GROVE_PCRE2_EXTRA);
	code = pcre2_compile((PCRE2_SPTR)re, len, opts, &rc, &off, ctx);
	pcre2_compile_context_free(ctx);
	if (!code) {
		pcre2_get_error_message(rc, (PCRE2_UCHAR *)why, why_size);
		if (ret_offset)
			*ret_offset = off;
	}
	return code;
}

static pcre2_code *
compile(const char *re, size_t len, char *why, size_t why_size, size_t *ret_offset)
{
	return compile_opts(re, len, 0, why, why_size, ret_offset);
}

/*
 * Budgets (DESIGN.md invariant 8): a pattern comes from a file another user
 * may write, and a backtracking regex can cost exponential time in the length
 * of a name. Every match first runs under MATCH_LIMIT_CHEAP, which honest
 * patterns over names and paths never reach, so the cost of the cheap matches
 * grows linearly with the number of entries. A match that hits it runs again
 * under the rest of the process's budget for such matches (at most
 * MATCH_LIMIT_ONE), and is charged that limit: a pattern has at most
 * MATCH_BUDGET / MATCH_LIMIT_ONE costly matches in a whole run. A match that
 * hits the second limit, or the PCRE2 depth or heap limits, is an error:
 * never a silent "no match" (an ignored file would then be linked).
 */
#define MATCH_LIMIT_CHEAP 10000u
#define MATCH_LIMIT_ONE   2000000u
#define MATCH_BUDGET      40000000u
#define DEPTH_LIMIT       10000u
#define HEAP_LIMIT_KIB    (64u * 1024u)

static uint64_t budget_left = MATCH_BUDGET;

void
grove_ignore_budget_reset(void)
{
	budget_left = MATCH_BUDGET;
}

/* Only whether a pattern matches is asked, so one match block with a single
 * pair serves every pattern (pcre2_match then returns 0 on a match with more
 * groups). Made once and kept for the process: a planner asks this for every
 * package entry. */
static pcre2_match_data *match_block;
static pcre2_match_context *match_cheap, *match_costly;

static pcre2_match_context *
match_context(uint32_t limit)
{
	pcre2_match_context *c = pcre2_match_context_create(NULL);

	if (c) {
		pcre2_set_match_limit(c, limit);
		pcre2_set_depth_limit(c, DEPTH_LIMIT);
		pcre2_set_heap_limit(c, HEAP_LIMIT_KIB);
	}
	return c;
}

static int
run_match(const pcre2_code *code, const char *s, size_t len, pcre2_match_context *ctx)
{
	/* The JIT's own entry skips pcre2_match's checks of the arguments (a
	 * quarter of a match's instructions); patterns are never in UTF mode, so
	 * there is no UTF check to lose. A pattern the JIT refused says so and
	 * runs in the interpreter. Both honour the match context's limits. */
	int rc = pcre2_jit_match(code, (PCRE2_SPTR)s, len, 0, 0, match_block, ctx);

	if (rc == PCRE2_ERROR_JIT_BADOPTION)
		rc = pcre2_match(code, (PCRE2_SPTR)s, len, 0, 0, match_block, ctx);
	return rc;
}

static bool
over_limit(int rc)
{
	return rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
	       rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT;
}

/* 1 on a match, 0 on none, -GROVE_E_BADINPUT when the match is over budget,
 * -ENOMEM; err is left to the caller, who knows what to name. */
static int
re_match(const pcre2_code *code, const char *s, size_t len)
{
	uint64_t limit;
	int rc;

	if (!match_block)
		match_block = pcre2_match_data_create(1, NULL);
	if (!match_cheap)
		match_cheap = match_context(MATCH_LIMIT_CHEAP);
	if (!match_costly)
		match_costly = match_context(MATCH_LIMIT_ONE);
	if (!match_block || !match_cheap || !match_costly)
		return -ENOMEM;
	rc = run_match(code, s, len, match_cheap);
	if (over_limit(rc)) {
		limit = budget_left < MATCH_LIMIT_ONE ? budget_left : MATCH_LIMIT_ONE;
		budget_left -= limit;
		if (limit <= MATCH_LIMIT_CHEAP)
			return -GROVE_E_BADINPUT;
		pcre2_set_match_limit(match_costly, (uint32_t)limit);
		rc = run_match(code, s, len, match_costly);
		if (over_limit(rc))
			return -GROVE_E_BADINPUT;
	}
	if (rc == PCRE2_ERROR_NOMEMORY)
		return -ENOMEM;
	return rc >= 0 ? 1 : 0;
}

struct patterns {
	char **v;
	size_t n, cap;
};

static void
patterns_release(struct patterns *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
}

/* Adds s unless already there: Stow keeps the patterns as hash keys. */
static int
patterns_add(struct patterns *p, const char *s, size_t len)
{
	char *copy;

	for (size_t i = 0; i < p->n; i++)
		if (strlen(p->v[i]) == len && !memcmp(p->v[i], s, len))
			return 0;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		char **v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	copy = strndup(s, len);
	if (!copy)
		return -ENOMEM;
	p->v[p->n++] = copy;
	return 0;
}

/*
 * One line as get_ignore_regexps_from_fh treats it: trim; skip '#' lines and
 * empty ones; strip a comment (whitespace, '#', at least one more character);
 * unescape "\#". Returns the pattern length in line (rewritten in place), or
 * 0 to skip the line.
 */
static size_t
clean_line(char *line, size_t len, char **ret_start)
{
	char *s = line;
	size_t w = 0;

	while (len && perl_space(*s)) {
		s++;
		len--;
	}
	while (len && perl_space(s[len - 1]))
		len--;
	if (!len || s[0] == '#')
		return 0;
	for (size_t i = 0; i < len; i++) {
		size_t j = i;

		if (!perl_space(s[i]))
			continue;
		while (j < len && perl_space(s[j]))
			j++;
		if (j + 1 < len && s[j] == '#') {
			len = i;
			break;
		}
		i = j - 1;
	}
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 1 < len && s[i + 1] == '#')
			i++;
		s[w++] = s[i];
	}
	*ret_start = s;
	return w;
}

/* Compiles "pre(p1|p2|...)post" from the patterns that do (path) or do not contain '/'. */
static int
compile_group(const struct patterns *p, bool path, bool jit, const char *source, pcre2_code **ret,
	      struct grove_error *err)
{
	struct strbuf sb = { 0 };
	size_t count = 0;
	pcre2_code *code;
	char why[256];

	if (sb_adds(&sb, path ? "(^|/)(" : "^(") < 0)
		goto nomem;
	for (size_t i = 0; i < p->n; i++) {
		if ((strchr(p->v[i], '/') != NULL) != path)
			continue;
		if ((count++ && sb_adds(&sb, "|") < 0) || sb_adds(&sb, p->v[i]) < 0)
			goto nomem;
	}
	if (sb_adds(&sb, path ? ")(/|$)" : ")$") < 0)
		goto nomem;
	if (!count) {
		free(sb.buf);
		*ret = NULL;
		return 0;
	}
	code = compile(sb.buf, sb.len, why, sizeof(why), NULL);
	if (!code) {
		/* Stow compiles the joined regex; name the pattern that breaks it alone, if any. */
		for (size_t i = 0; i < p->n; i++) {
			pcre2_code *one;

			if ((strchr(p->v[i], '/') != NULL) != path)
				continue;
			one = compile(p->v[i], strlen(p->v[i]), why, sizeof(why), NULL);
			if (!one) {
				grove_error_set(err, -GROVE_E_CONFIG,
						"ignore list %s: bad regex '%s': %s", source,
						p->v[i], why);
				free(sb.buf);
				return -GROVE_E_CONFIG;
			}
			pcre2_code_free(one);
		}
		compile(sb.buf, sb.len, why, sizeof(why), NULL);
		grove_error_set(err, -GROVE_E_CONFIG, "ignore list %s: bad regex '%s': %s", source,
				sb.buf, why);
		free(sb.buf);
		return -GROVE_E_CONFIG;
	}
	free(sb.buf);
	if (jit)
		(void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
	*ret = code;
	return 0;
nomem:
	free(sb.buf);
	return grove_error_errno(err, -ENOMEM, "ignore list %s", source);
}

static int
list_parse(const char *text, const char *source, bool builtin, struct grove_ignore_list **ret,
	   struct grove_error *err)
{
	struct patterns pats = { 0 };
	struct grove_ignore_list *list = NULL;
	char *copy = strdup(text);
	char *line = copy;
	int r;

	if (!copy)
		return grove_error_errno(err, -ENOMEM, "ignore list %s", source);
	while (line) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char *start = NULL;

		if (!nl && !len)
			break;
		len = clean_line(line, len, &start);
		if (len && patterns_add(&pats, start, len) < 0)
			goto nomem;
		line = nl ? nl + 1 : NULL;
	}
	/* Local ignore lists always stay within their package. */
	if (patterns_add(&pats, "^/\\.stow\\-local\\-ignore$", 24) < 0)
		goto nomem;
	list = calloc(1, sizeof(*list));
	if (!list)
		goto nomem;
	/* The built-in list's regexes only see paths with a newline (see
	 * builtin_match): the interpreter serves them, no JIT compile (which
	 * costs as much as a few hundred JIT matches). */
	r = compile_group(&pats, true, !builtin, source, &list->path_re, err);
	if (r >= 0)
		r = compile_group(&pats, false, !builtin, source, &list->segment_re, err);
	if (r >= 0) {
		struct strbuf sb = { 0 };

		for (size_t i = 0; i < pats.n && r >= 0; i++)
			if (sb_adds(&sb, pats.v[i]) < 0 || sb_add(&sb, "\n", 1) < 0)
				r = -ENOMEM;
		list->patterns = sb.buf;
		list->source = strdup(source);
		if (r < 0 || !list->source || !list->patterns)
			r = grove_error_errno(err, -ENOMEM, "ignore list %s", source);
	}
	free(copy);
	patterns_release(&pats);
	if (r < 0) {
		grove_ignore_list_free(list);
		return r;
	}
	*ret = list;
	return 0;
nomem:
	free(copy);
	patterns_release(&pats);
	return grove_error_errno(err, -ENOMEM, "ignore list %s", source);
}

int
grove_ignore_list_parse(const char *text, const char *source, struct grove_ignore_list **ret,
			struct grove_error *err)
{
	return list_parse(text, source, false, ret, err);
}

int
grove_ignore_list_default(struct grove_ignore_list **ret, struct grove_error *err)
{
	struct grove_ignore_list *list = calloc(1, sizeof(*list));

	if (!list)
		return grove_error_errno(err, -ENOMEM, "ignore list (built-in)");
	list->builtin = true;
	*ret = list;
	return 0;
}

const char *
grove_ignore_list_default_text(void)
{
	return default_list;
}

static bool
starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * The built-in list's two regexes, decided in C for a path without a newline
 * (with one, "$" and "." behave differently and the regexes decide):
 *   "(^|/)(^/README.*|^/LICENSE.*|^/COPYING|^/\.stow\-local\-ignore$)(/|$)"
 *   against "/" + path: every alternative starts with "^/", so the match
 *   starts at the added slash; ".*" runs to the end, where "$" holds.
 *   "^(RCS|.+,v|CVS|\.\#.+|\.cvsignore|\.svn|_darcs|\.hg|\.git|\.gitignore|
 *   \.gitmodules|.+~|\#.*\#)$" against the basename (after the last '/'
 *   past the first character, as segment_match takes it).
 * tests/unit/test-ignore.c checks this against the regexes on generated paths.
 */
static bool
builtin_match(const char *path)
{
	static const char *const names[] = { "RCS", "CVS",  ".cvsignore", ".svn",       "_darcs",
					     ".hg", ".git", ".gitignore", ".gitmodules" };
	const char *base = path, *slash;
	size_t n;

	/* Each test first looks at a character it needs, so that the common path (none of these)
	 * costs a few comparisons, not a dozen string calls: it is asked for every entry. */
	if ((path[0] == 'R' && starts_with(path, "README")) ||
	    (path[0] == 'L' && starts_with(path, "LICENSE")) ||
	    (path[0] == 'C' && (strcmp(path, "COPYING") == 0 || starts_with(path, "COPYING/"))) ||
	    (path[0] == '.' && strcmp(path, ".stow-local-ignore") == 0))
		return true;
	slash = path[0] ? strrchr(path + 1, '/') : NULL;
	if (slash)
		base = slash + 1;
	n = strlen(base);
	if (n >= 3 && base[n - 2] == ',' && base[n - 1] == 'v')
		return true;
	if (n >= 3 && base[0] == '.' && base[1] == '#')
		return true;
	if (n >= 2 && base[n - 1] == '~')
		return true;
	if (n >= 2 && base[0] == '#' && base[n - 1] == '#')
		return true;
	if (base[0] != 'R' && base[0] != 'C' && base[0] != '.' && base[0] != '_')
		return false; /* the first characters of names[] */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(base, names[i]) == 0)
			return true;
	return false;
}

/*
 * The basename as Stow computes it, s!.+/!!: the leftmost run of characters
 * other than newline that ends in a '/' (greedily, the last one in that run)
 * is removed, whatever comes before it stays.
 */
static int
segment_match(const pcre2_code *code, const char *path)
{
	size_t len = strlen(path);
	size_t a = 0;

	while (a < len) {
		size_t b = a, k = 0;
		bool found = false;

		while (b < len && path[b] != '\n') {
			if (path[b] == '/' && b > a) {
				k = b;
				found = true;
			}
			b++;
		}
		if (found) {
			char buf[256];
			char *base = len + 1 <= sizeof(buf) ? buf : malloc(len + 1);
			int hit;

			if (!base)
				return -ENOMEM;
			memcpy(base, path, a);
			memcpy(base + a, path + k + 1, len - k);
			hit = re_match(code, base, a + len - k - 1);
			if (base != buf)
				free(base);
			return hit;
		}
		a = b + 1;
	}
	return re_match(code, path, len);
}

static int
list_match(const struct grove_ignore_list *list, const char *path)
{
	int hit = 0;

	if (list->path_re) {
		size_t len = strlen(path);
		char buf[256];
		char *slashed = len + 2 <= sizeof(buf) ? buf : malloc(len + 2);

		if (!slashed)
			return -ENOMEM;
		slashed[0] = '/';
		memcpy(slashed + 1, path, len + 1);
		hit = re_match(list->path_re, slashed, len + 1);
		if (slashed != buf)
			free(slashed);
		if (hit != 0)
			return hit;
	}
	if (!list->segment_re)
		return 0;
	return segment_match(list->segment_re, path);
}

/* The first pattern of list that is over the cheap limit on path alone (for
 * the message), or NULL. Each is tried once, under the cheap limit only. */
static char *
costly_pattern(const struct grove_ignore_list *list, const char *path)
{
	const char *line = list->patterns;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		bool is_path = memchr(line, '/', len) != NULL;
		struct strbuf sb = { 0 };
		struct grove_ignore_list one = { 0 };
		pcre2_code *code = NULL;
		char why[256];
		int rc = 0;

		if (sb_adds(&sb, is_path ? "(^|/)(" : "^(") == 0 && sb_add(&sb, line, len) == 0 &&
		    sb_adds(&sb, is_path ? ")(/|$)" : ")$") == 0)
			/* Without start-up optimisations: alone, a pattern may be
			 * refused at once for a literal the subject lacks, which inside
			 * the alternation does not save it. */
			code = compile_opts(sb.buf, sb.len, PCRE2_NO_START_OPTIMIZE, why,
					    sizeof(why), NULL);
		free(sb.buf);
		if (code) {
			uint64_t saved = budget_left;

			*(is_path ? &one.path_re : &one.segment_re) = code;
			budget_left = 0; /* the cheap limit only */
			rc = list_match(&one, path);
			budget_left = saved;
			pcre2_code_free(code);
		}
		if (rc == -GROVE_E_BADINPUT)
			return strndup(line, len);
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

int
grove_ignore_list_match(const struct grove_ignore_list *list, const char *path,
			struct grove_error *err)
{
	int r;

	if (!list || !path || !*path)
		return 0;
	if (list->builtin) {
		struct grove_ignore_list *l = (struct grove_ignore_list *)list;

		if (!strchr(path, '\n'))
			return builtin_match(path);
		/* Made once, on the first path with a newline (rare). */
		if (!l->regexes) {
			r = list_parse(default_list, "(built-in)", true, &l->regexes, err);
			if (r < 0)
				return r;
		}
		list = l->regexes;
		if (!list)
			return 0;
	}
	r = list_match(list, path);
	if (r == -ENOMEM)
		return grove_error_errno(err, r, "ignore list %s", list->source);
	if (r == -GROVE_E_BADINPUT) {
		char *pat = costly_pattern(list, path);

		grove_error_set(err, r,
				"ignore list %s: pattern '%s' costs too much on '%s' (over grove's "
				"match budget; simplify the pattern)",
				list->source, pat ? pat : "(one of its patterns)", path);
		free(pat);
	}
	return r;
}

struct grove_ignore_list *
grove_ignore_list_free(struct grove_ignore_list *list)
{
	if (!list)
		return NULL;
	pcre2_code_free(list->path_re);
	pcre2_code_free(list->segment_re);
	grove_ignore_list_free(list->regexes);
	free(list->source);
	free(list->patterns);
	free(list);
	return NULL;
}

struct grove_pattern_set *
grove_pattern_set_new(enum grove_pattern_anchor anchor)
{
	struct grove_pattern_set *set = calloc(1, sizeof(*set));

	if (set)
		set->anchor = anchor;
	return set;
}

int
grove_pattern_set_add(struct grove_pattern_set *set, const char *re, struct grove_error *err)
{
	const char *opt = set->anchor == GROVE_ANCHOR_END ? "--ignore" : "--defer/--override";
	struct strbuf sb = { 0 };
	pcre2_code *code;
	char why[256];

	/* As Stow: qr{($re)\z} for --ignore, qr{\A($re)} for --defer and --override. */
	if (sb_adds(&sb, set->anchor == GROVE_ANCHOR_END ? "(" : "\\A(") < 0 ||
	    sb_adds(&sb, re) < 0 ||
	    sb_adds(&sb, set->anchor == GROVE_ANCHOR_END ? ")\\z" : ")") < 0)
		goto nomem;
	code = compile(sb.buf, sb.len, why, sizeof(why), NULL);
	free(sb.buf);
	if (!code)
		return grove_error_set(err, -GROVE_E_USAGE, "option '%s': bad regex '%s': %s", opt,
				       re, why);
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 4;
		pcre2_code **v = realloc(set->res, cap * sizeof(*v));
		char **src = v ? realloc(set->src, cap * sizeof(*src)) : NULL;

		if (v)
			set->res = v;
		if (src)
			set->src = src;
		if (!v || !src) {
			pcre2_code_free(code);
			return grove_error_errno(err, -ENOMEM, "option '%s'", opt);
		}
		set->cap = cap;
	}
	set->src[set->n] = strdup(re);
	if (!set->src[set->n]) {
		pcre2_code_free(code);
		return grove_error_errno(err, -ENOMEM, "option '%s'", opt);
	}
	set->res[set->n++] = code;
	return 0;
nomem:
	free(sb.buf);
	return grove_error_errno(err, -ENOMEM, "option '%s'", opt);
}

int
grove_pattern_set_match(const struct grove_pattern_set *set, const char *path,
			struct grove_error *err)
{
	const char *opt =
		set && set->anchor == GROVE_ANCHOR_END ? "--ignore" : "--defer/--override";

	if (!set || !path)
		return 0;
	for (size_t i = 0; i < set->n; i++) {
		int r = re_match(set->res[i], path, strlen(path));

		if (r == -ENOMEM)
			return grove_error_errno(err, r, "option '%s'", opt);
		if (r == -GROVE_E_BADINPUT)
			return grove_error_set(err, r,
					       "option '%s': pattern '%s' costs too much on '%s' "
					       "(over grove's match budget; simplify the pattern)",
					       opt, set->src[i], path);
		if (r)
			return 1;
	}
	return 0;
}

size_t
grove_pattern_set_count(const struct grove_pattern_set *set)
{
	return set ? set->n : 0;
}

struct grove_pattern_set *
grove_pattern_set_free(struct grove_pattern_set *set)
{
	if (!set)
		return NULL;
	for (size_t i = 0; i < set->n; i++) {
		pcre2_code_free(set->res[i]);
		free(set->src[i]);
	}
	free(set->res);
	free(set->src);
	free(set);
	return NULL;
}
