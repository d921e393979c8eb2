/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The terminal: colour (--color, NO_COLOR, only on a terminal) and the progress line of long runs.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "front.h"

#include "../banned.h" /* last */

static enum grove_color_mode color_mode = GROVE_COLOR_AUTO;
static bool quiet;
static bool set_up; /* grove's own command line (invoked as stow: Stow's words, no hints) */

int
grove_color_parse(const char *when, enum grove_color_mode *ret)
{
	if (!strcmp(when, "auto"))
		*ret = GROVE_COLOR_AUTO;
	else if (!strcmp(when, "always") || !strcmp(when, "yes") || !strcmp(when, "force"))
		*ret = GROVE_COLOR_ALWAYS;
	else if (!strcmp(when, "never") || !strcmp(when, "no") || !strcmp(when, "none"))
		*ret = GROVE_COLOR_NEVER;
	else
		return -1;
	return 0;
}

void
grove_term_setup(enum grove_color_mode mode, bool be_quiet)
{
	color_mode = mode;
	quiet = be_quiet;
	set_up = true;
}

bool
grove_term_hints(void)
{
	return set_up && !quiet;
}

bool
grove_term_quiet(void)
{
	return quiet;
}

/* A terminal that understands escapes: not TERM=dumb. */
static bool
is_terminal(FILE *f)
{
	const char *term = getenv("TERM");

	return isatty(fileno(f)) && !(term && !strcmp(term, "dumb"));
}

bool
grove_color_on(FILE *f)
{
	const char *no_color;

	if (color_mode != GROVE_COLOR_AUTO)
		return color_mode == GROVE_COLOR_ALWAYS;
	/* no-color.org: NO_COLOR present and not empty disables colour; an explicit --color=always
	 * still wins. */
	no_color = getenv("NO_COLOR");
	if (no_color && *no_color)
		return false;
	return is_terminal(f);
}

void
grove_paint(FILE *f, const char *sgr, const char *fmt, ...)
{
	bool on = sgr && grove_color_on(f);
	va_list ap;

	if (on)
		fprintf(f, "\033[%sm", sgr);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (on)
		fputs("\033[0m", f);
}

/* ---- progress ---- */

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
grove_progress_begin(struct grove_progress *p, const char *what, size_t total)
{
	memset(p, 0, sizeof(*p));
	p->what = what;
	p->total = total;
	/* Only a person watching a terminal wants it: never in a pipe, a file or with -q, and
	 * not for a plan that finishes before anyone could read it. */
	p->on = !quiet && total >= GROVE_PROGRESS_MIN_OPS && is_terminal(stderr);
}

void
grove_progress_update(void *ctx, size_t done, size_t total, const struct grove_op *op)
{
	struct grove_progress *p = ctx;
	double t;

	(void)op;
	if (!p || !p->on)
		return;
	t = now();
	/* The first op, the last, and at most ten updates a second in between. */
	if (p->shown && done != total && t - p->last < 0.1)
		return;
	p->last = t;
	p->shown = true;
	fprintf(stderr, "\r\033[K%s: %zu/%zu ops", p->what, done, total);
	(void)fflush(stderr); /* standard error has nowhere to report to */
}

void
grove_progress_end(struct grove_progress *p)
{
	if (p->on && p->shown) {
		/* Erase the line: what follows (a result, an error) starts on a clean line. */
		fputs("\r\033[K", stderr);
		(void)fflush(stderr);
	}
	p->shown = false;
}
