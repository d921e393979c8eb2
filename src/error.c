/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Errors as values: filling, prefixing and naming error codes. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "grove/error.h"

static void
vset(struct grove_error *err, int code, const char *fmt, va_list ap)
{
	err->code = code;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
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
	size_t len;

	if (!err)
		return code;
	va_start(ap, fmt);
	vset(err, code, fmt, ap);
	va_end(ap);
	len = strlen(err->msg);
	if (len < sizeof(err->msg))
		snprintf(err->msg + len, sizeof(err->msg) - len, ": %s", grove_strerror(code));
	return code;
}

int
grove_error_prefix(struct grove_error *err, const char *fmt, ...)
{
	char head[GROVE_ERROR_MSG_MAX];
	char old[GROVE_ERROR_MSG_MAX];
	va_list ap;

	if (!err)
		return 0;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", head, old);
	return err->code;
}

void
grove_error_clear(struct grove_error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
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
	default:
		break;
	}
	if (code > 0 && code < GROVE_E_BASE)
		return strerror(code);
	return "unknown error";
}
