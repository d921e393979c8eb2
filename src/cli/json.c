/* SPDX-License-Identifier: GPL-3.0-or-later */
/* JSON output: the envelope every document shares and the plan's members (schema: docs/json.md). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "front.h"
#include "grove/error.h"

#include "../banned.h" /* last */

void
grove_json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Whether this run printed a document: main prints the error document only when none was. */
static bool doc_begun;

void
grove_json_begin(FILE *f, const char *command)
{
	doc_begun = true;
	fprintf(f, "{\"grove\": %d, \"command\": ", GROVE_JSON_VERSION);
	grove_json_str(f, command);
}

bool
grove_json_printed(void)
{
	return doc_begun;
}

/* The name of an error code: grove's own, or the errno's symbolic name. */
static const char *
code_name(int code)
{
	static const char *const names[] = {
		[GROVE_E_CONFLICT - GROVE_E_BASE] = "conflict",
		[GROVE_E_USAGE - GROVE_E_BASE] = "usage",
		[GROVE_E_PRECONDITION - GROVE_E_BASE] = "precondition",
		[GROVE_E_ESCAPE - GROVE_E_BASE] = "escape",
		[GROVE_E_BADINPUT - GROVE_E_BASE] = "bad-input",
		[GROVE_E_PARTIAL - GROVE_E_BASE] = "partial",
		[GROVE_E_STUCK - GROVE_E_BASE] = "stuck",
		[GROVE_E_CONFIG - GROVE_E_BASE] = "config",
		[GROVE_E_UNSUPPORTED - GROVE_E_BASE] = "unsupported",
		[GROVE_E_INTERNAL - GROVE_E_BASE] = "internal",
		[GROVE_E_NOT_DURABLE - GROVE_E_BASE] = "not-durable",
		[GROVE_E_NOPACKAGE - GROVE_E_BASE] = "no-package",
	};
	int c = -code;

	if (c > GROVE_E_BASE && c - GROVE_E_BASE < (int)(sizeof(names) / sizeof(names[0])))
		return names[c - GROVE_E_BASE];
	if (c > 0 && c < GROVE_E_BASE)
		return strerrorname_np(c);
	return NULL;
}

void
grove_json_error_doc(FILE *f, const char *command, int status, int code, const char *message)
{
	grove_json_begin(f, command);
	fprintf(f, ", \"exit\": %d, \"error\": {\"code\": ", status);
	grove_json_str(f, code_name(code));
	fputs(", \"message\": ", f);
	grove_json_str(f, message && *message ? message : NULL);
	fputs("}}\n", f);
}

void
grove_json_time(FILE *f, double unix_time)
{
	time_t secs = (time_t)unix_time;
	struct tm tm;
	char buf[32];

	if (!gmtime_r(&secs, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm)) {
		fputs("null", f);
		return;
	}
	grove_json_str(f, buf);
}

void
grove_json_op(FILE *f, const struct grove_op *op)
{
	fprintf(f, "{\"op\": \"%s\", \"path\": ", grove_op_kind_name(op->kind));
	grove_json_str(f, op->path);
	fputs(", \"text\": ", f);
	grove_json_str(f, op->text);
	fputs(", \"old_text\": ", f);
	grove_json_str(f, op->old_text);
	fputs(", \"package\": ", f);
	grove_json_str(f, op->package);
	/* Only on a recorded op (docs/json.md): readers comparing op objects whole keep working. */
	fputs(op->recorded ? ", \"recorded\": true}" : "}", f);
}

void
grove_json_ops(FILE *f, const struct grove_plan *plan)
{
	fputc('[', f);
	for (size_t i = 0; i < plan->n_ops; i++) {
		fputs(i ? ", " : "", f);
		grove_json_op(f, &plan->ops[i]);
	}
	fputc(']', f);
}

void
grove_json_strv(FILE *f, char *const *v, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		grove_json_str(f, v[i]);
	}
	fputc(']', f);
}

void
grove_json_conflict(FILE *f, const struct grove_conflict *c, const char *hint)
{
	grove_json_conflict_at(f, c, hint, 0);
}

void
grove_json_conflict_at(FILE *f, const struct grove_conflict *c, const char *hint, unsigned line)
{
	fputs("{\"action\": ", f);
	grove_json_str(f, c->action);
	fputs(", \"package\": ", f);
	grove_json_str(f, c->package);
	fputs(", \"path\": ", f);
	grove_json_str(f, c->path);
	fputs(", \"message\": ", f);
	grove_json_str(f, c->message);
	fputs(", \"hint\": ", f);
	grove_json_str(f, hint);
	if (line)
		fprintf(f, ", \"line\": %u", line);
	fputc('}', f);
}

void
grove_json_plan_members(FILE *f, const struct grove_plan *plan, const char *stow_path)
{
	size_t i = 0;

	fputs(", \"ops\": [", f);
	grove_plan_foreach_op (plan, op) {
		fputs(i++ ? ",\n  " : "\n  ", f);
		grove_json_op(f, op);
	}
	fputs(i ? "\n], \"conflicts\": [" : "], \"conflicts\": [", f);
	for (i = 0; i < plan->n_conflicts; i++) {
		const struct grove_conflict *c = &plan->conflicts[i];
		char buf[512];

		fputs(i ? ",\n  " : "\n  ", f);
		grove_json_conflict(f, c, grove_conflict_hint(c, stow_path, buf, sizeof(buf)));
	}
	fputs(plan->n_conflicts ? "\n], \"warnings\": [" : "], \"warnings\": [", f);
	for (i = 0; i < plan->n_warnings; i++) {
		fputs(i ? ", " : "", f);
		grove_json_str(f, plan->warnings[i]);
	}
	fputs("]", f);
}
