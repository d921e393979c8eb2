/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the command line prints: conflicts in Stow's words, errors, exit codes. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "front.h"
#include "grove/text.h"

#include "../banned.h" /* last */

int
grove_conflict_cmp(const void *pa, const void *pb)
{
	const struct grove_conflict *a = *(const struct grove_conflict *const *)pa;
	const struct grove_conflict *b = *(const struct grove_conflict *const *)pb;
	bool a_unstow = !strcmp(a->action, "unstow");
	bool b_unstow = !strcmp(b->action, "unstow");
	int c;

	/* bin/stow walks ('unstow', 'stow'), then sorted packages, then sorted messages. */
	if (a_unstow != b_unstow)
		return a_unstow ? -1 : 1;
	c = strcmp(a->action, b->action);
	if (!c)
		c = strcmp(a->package ? a->package : "", b->package ? b->package : "");
	if (!c)
		c = strcmp(a->message ? a->message : "", b->message ? b->message : "");
	return c;
}

void
grove_print_conflicts(const struct grove_plan *plan, FILE *out)
{
	const struct grove_conflict **sorted;
	const struct grove_conflict *prev = NULL;

	if (!plan->n_conflicts)
		return;
	sorted = calloc(plan->n_conflicts, sizeof(*sorted));
	if (sorted) {
		for (size_t i = 0; i < plan->n_conflicts; i++)
			sorted[i] = &plan->conflicts[i];
		qsort(sorted, plan->n_conflicts, sizeof(*sorted), grove_conflict_cmp);
	}
	for (size_t i = 0; i < plan->n_conflicts; i++) {
		const struct grove_conflict *c = sorted ? sorted[i] : &plan->conflicts[i];
		const char *pkg = c->package ? c->package : "";

		if (!prev || strcmp(prev->action, c->action) != 0 ||
		    strcmp(prev->package ? prev->package : "", pkg) != 0) {
			fprintf(out, "WARNING! %sing ", c->action);
			grove_fput_shown(pkg, out);
			fputs(" would cause conflicts:\n", out);
		}
		fputs("  * ", out);
		grove_fput_shown(c->message ? c->message : "", out);
		fputc('\n', out);
		prev = c;
	}
	fputs("All operations aborted.\n", out);
	free(sorted);
}

/* The command line as the log records it: "grove" and the arguments, shell-quoted where needed. */
char *
grove_command_line(int argc, char **argv)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fputs("grove", f);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool plain = *a != '\0';

		for (const char *c = a; *c && plain; c++)
			plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
				       "-_./=:,+@%",
				       *c) != NULL;
		if (plain) {
			fprintf(f, " %s", a);
			continue;
		}
		fputs(" '", f);
		for (const char *c = a; *c; c++)
			*c == '\'' ? fputs("'\\''", f) : fputc(*c, f);
		fputc('\'', f);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The exit status for a failure code (DESIGN.md, command line contract). */
int
grove_exit_status(int code)
{
	if (code == -EWOULDBLOCK)
		return GROVE_EXIT_LOCKED;
	switch (-code) {
	case GROVE_E_USAGE:
		return GROVE_EXIT_USAGE;
	case GROVE_E_CONFIG:
		return GROVE_EXIT_CONFIG;
	case GROVE_E_PARTIAL:
		return GROVE_EXIT_PARTIAL;
	case GROVE_E_STUCK:
		return GROVE_EXIT_ATTENTION;
	case GROVE_E_NOT_DURABLE:
		return GROVE_EXIT_NOT_DURABLE;
	default:
		/* Refusals, bad input, preconditions and errno values: 1, as Stow. */
		return GROVE_EXIT_REFUSED;
	}
}

void
grove_print_warning(FILE *out, const char *msg, bool as_stow)
{
	/* Stow warns "WARNING: skipping …" but prints its absolute-link notice bare. */
	if (!as_stow || strncmp(msg, "Ignoring an absolute symlink: ", 30) != 0)
		fputs("WARNING: ", out);
	grove_fput_shown(msg, out);
	fputc('\n', out);
}

/* The last error printed, for the error document of --json (grove_last_error). */
static int last_code;
static char last_message[GROVE_ERROR_MSG_MAX];
static char last_path[GROVE_ERROR_PATH_MAX];

int
grove_last_error(const char **ret_message, const char **ret_path)
{
	*ret_message = last_message;
	*ret_path = last_path[0] ? last_path : NULL;
	return last_code;
}

void
grove_fail(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_message, sizeof(last_message), fmt, ap);
	va_end(ap);
	last_code = code;
	last_path[0] = '\0';
	grove_paint(stderr, GROVE_SGR_ERROR, "grove:");
	fputc(' ', stderr);
	grove_fput_shown(last_message, stderr);
	fputc('\n', stderr);
}

void
grove_fail_path(const char *path)
{
	snprintf(last_path, sizeof(last_path), "%s", path ? path : "");
}

int
grove_report_error(const struct grove_error *err, int code)
{
	last_code = code;
	snprintf(last_message, sizeof(last_message), "%s",
		 err->msg[0] ? err->msg : grove_strerror(code));
	snprintf(last_path, sizeof(last_path), "%s", err->code == code ? err->path : "");
	grove_paint(stderr, GROVE_SGR_ERROR, "grove:");
	fputc(' ', stderr);
	grove_fput_shown(err->msg[0] ? err->msg : grove_strerror(code), stderr);
	fputc('\n', stderr);
	if (grove_term_hints())
		grove_hint_error(err, code);
	return grove_exit_status(code);
}
