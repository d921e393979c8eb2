/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A stow request's lifecycle and the check every package name must pass. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/path.h"
#include "grove/stow.h"
#include "base/util.h"

#include "banned.h" /* last */

void
grove_stow_request_init(struct grove_stow_request *req)
{
	memset(req, 0, sizeof(*req));
}

void
grove_stow_request_release(struct grove_stow_request *req)
{
	if (!req)
		return;
	free(req->dir);
	free(req->target);
	grove_names_free(req->unstow, req->n_unstow);
	grove_names_free(req->stow, req->n_stow);
	grove_pattern_set_free(req->ignore);
	grove_pattern_set_free(req->defer);
	grove_pattern_set_free(req->override);
	free(req->global_ignore_text);
	free(req->global_ignore_source);
	free(req->command);
	memset(req, 0, sizeof(*req));
}

int
grove_stow_request_add(struct grove_stow_request *req, bool unstow, const char *name)
{
	char ***v = unstow ? &req->unstow : &req->stow;
	size_t *n = unstow ? &req->n_unstow : &req->n_stow;
	char **grown;
	char *copy = strdup(name);

	if (!copy)
		return -ENOMEM;
	grown = realloc(*v, (*n + 1) * sizeof(**v));
	if (!grown) {
		free(copy);
		return -ENOMEM;
	}
	grown[(*n)++] = copy;
	*v = grown;
	return 0;
}

/* Length of the valid UTF-8 sequence at s (no overlongs, no surrogates, at most U+10FFFF), or 0. */
static size_t
utf8_seq_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Writes name into buf with bytes outside printable ASCII as \xHH (and '\\' doubled). */
static void
escape_name(const char *name, char *buf, size_t size)
{
	size_t w = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p && w + 5 < size; p++) {
		if (*p == '\\') {
			buf[w++] = '\\';
			buf[w++] = '\\';
		} else if (*p < 0x20 || *p >= 0x7f) {
			w += (size_t)snprintf(buf + w, size - w, "\\x%02x", *p);
		} else {
			buf[w++] = (char)*p;
		}
	}
	buf[w] = '\0';
}

static int
refuse(const char *name, const char *reason, struct grove_error *err)
{
	char shown[256];

	escape_name(name, shown, sizeof(shown));
	return grove_error_set(err, -GROVE_E_BADINPUT, "invalid package name '%s': %s", shown,
			       reason);
}

int
grove_stow_check_package_name(const char *name, struct grove_error *err)
{
	const unsigned char *p = (const unsigned char *)name;

	if (!*name)
		return grove_error_set(err, -GROVE_E_BADINPUT, "invalid package name '': empty");
	if (strchr(name, '/'))
		return refuse(name, "contains '/'", err);
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return refuse(name, "not a folder name", err);
	if (strlen(name) > NAME_MAX)
		return refuse(name, "longer than NAME_MAX bytes", err);
	while (*p) {
		size_t n;

		/* C0, DEL and C1 (U+0080..U+009F, encoded 0xc2 0x80..0x9f). */
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0))
			return refuse(name, "contains a control character", err);
		n = utf8_seq_len(p);
		if (!n)
			return refuse(name, "not valid UTF-8", err);
		p += n;
	}
	return 0;
}

int
grove_stow_check_package(const char *name, struct grove_error *err)
{
	if (!strcmp(name, GROVE_STOW_DIR_PACKAGE))
		return 0;
	return grove_stow_check_package_name(name, err);
}
