/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Errors as values: filling, prefixing and naming error codes. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/error.h"

#include "banned.h" /* last */

#undef grove_error_set /* (only the analyzer sees these macros: error.h) */
#undef grove_error_errno

/* Copies s into dst (size bytes); a string too long keeps its head and tail
 * with "..." between, so the reason at the end of a message survives a long path. */
static void
fit(char *dst, size_t size, const char *s)
{
	size_t len = strlen(s);
	size_t head, tail;

	if (len < size) {
		memcpy(dst, s, len + 1);
		return;
	}
	head = (size - 4) / 3;
	tail = size - 4 - head;
	memcpy(dst, s, head);
	memcpy(dst + head, "...", 3);
	memcpy(dst + head + 3, s + len - tail, tail);
	dst[size - 1] = '\0';
}

static void
vset(struct grove_error *err, int code, const char *fmt, va_list ap)
{
	char *full = NULL;

	err->code = code;
	err->path[0] = '\0';
	if (vasprintf(&full, fmt, ap) < 0) {
		(void)snprintf(err->msg, sizeof(err->msg), "(out of memory formatting an error)");
		return;
	}
	fit(err->msg, sizeof(err->msg), full);
	free(full);
}

int
grove_error_set(struct grove_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	va_start(ap, fmt);
	vset(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int
grove_error_errno(struct grove_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	char *head = NULL;
	char *full = NULL;

	if (!err)
		return code;
	err->code = code;
	err->path[0] = '\0';
	va_start(ap, fmt);
	if (vasprintf(&head, fmt, ap) < 0)
		head = NULL;
	va_end(ap);
	if (!head || asprintf(&full, "%s: %s", head, grove_strerror(code)) < 0) {
		(void)snprintf(err->msg, sizeof(err->msg), "%s", grove_strerror(code)); /* fits */
		free(head);
		return code;
	}
	fit(err->msg, sizeof(err->msg), full);
	free(head);
	free(full);
	return code;
}

int
grove_error_prefix(struct grove_error *err, const char *fmt, ...)
{
	char *head = NULL;
	char *full = NULL;
	va_list ap;

	if (!err)
		return 0;
	va_start(ap, fmt);
	if (vasprintf(&head, fmt, ap) < 0)
		head = NULL;
	va_end(ap);
	if (head && asprintf(&full, "%s: %s", head, err->msg) >= 0)
		fit(err->msg, sizeof(err->msg), full);
	free(head);
	free(full);
	return err->code;
}

int
grove_error_path(struct grove_error *err, const char *path)
{
	if (!err)
		return 0;
	if (path && strlen(path) < sizeof(err->path))
		memcpy(err->path, path, strlen(path) + 1);
	else
		err->path[0] = '\0';
	return err->code;
}

int
grove_error_path_in(struct grove_error *err, const char *dir, const char *name)
{
	if (!err)
		return 0;
	if (snprintf(err->path, sizeof(err->path), "%s%s%s", dir, strcmp(dir, "/") ? "/" : "",
		     name) >= (int)sizeof(err->path))
		err->path[0] = '\0';
	return err->code;
}

void
grove_error_clear(struct grove_error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
	err->path[0] = '\0';
}

const char *
grove_strerror(int code)
{
	if (code < 0)
		code = -code;
	switch (code) {
	case GROVE_E_CONFLICT:
		return "conflicts found";
	case GROVE_E_USAGE:
		return "usage error";
	case GROVE_E_PRECONDITION:
		return "the target changed since it was planned";
	case GROVE_E_ESCAPE:
		return "path leaves its root";
	case GROVE_E_BADINPUT:
		return "invalid input";
	case GROVE_E_PARTIAL:
		return "failed part-way and rolled back";
	case GROVE_E_STUCK:
		return "failed part-way and could not roll back";
	case GROVE_E_CONFIG:
		return "bad configuration";
	case GROVE_E_UNSUPPORTED:
		return "operation not supported by the filesystem";
	case GROVE_E_INTERNAL:
		return "internal error";
	case GROVE_E_NOT_DURABLE:
		return "done, but not yet durable";
	case GROVE_E_NOPACKAGE:
		return "no such package";
	default:
		break;
	}
	if (code > 0 && code < GROVE_E_BASE)
		return strerror(code);
	return "unknown error";
}
