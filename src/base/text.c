/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Showing names and link texts safely: control bytes and broken UTF-8 as \xHH. */
#include <stdlib.h>
#include <string.h>

#include "grove/text.h"

#include "banned.h" /* last */

/* The length of the valid, printable UTF-8 sequence at s (1 for printable ASCII), or 0 when the
 * byte at s must be escaped. */
static size_t
printable_len(const unsigned char *s)
{
	size_t n;
	unsigned int cp;

	if (*s >= 0x20 && *s < 0x7f)
		return 1;
	if (*s < 0xc2 || *s > 0xf4)
		return 0; /* controls, DEL, continuation bytes, overlong leads, beyond U+10FFFF */
	n = *s >= 0xf0 ? 4 : *s >= 0xe0 ? 3 : 2;
	cp = *s & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
		return 0; /* overlong, surrogate, out of range, C1 control */
	return n;
}

int
grove_text_is_plain(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = printable_len(p);

		if (!n)
			return 0;
		p += n;
	}
	return 1;
}

static size_t
shown(const char *s, char *out)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t w = 0;

	while (*p) {
		size_t n = printable_len(p);

		if (n) {
			if (out)
				memcpy(out + w, p, n);
			w += n;
			p += n;
			continue;
		}
		if (out) {
			out[w] = '\\';
			out[w + 1] = 'x';
			out[w + 2] = hex[*p >> 4];
			out[w + 3] = hex[*p & 15];
		}
		w += 4;
		p++;
	}
	return w;
}

char *
grove_text_shown(const char *s)
{
	size_t len = shown(s, NULL);
	char *buf = malloc(len + 1);

	if (buf) {
		shown(s, buf);
		buf[len] = '\0';
	}
	return buf;
}

void
grove_fput_shown(const char *s, FILE *f)
{
	char *buf;

	if (grove_text_is_plain(s)) {
		fputs(s, f);
		return;
	}
	buf = grove_text_shown(s);
	if (buf) {
		fputs(buf, f);
		free(buf);
		return;
	}
	/* Out of memory: byte by byte. */
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		fprintf(f, *p >= 0x20 && *p < 0x7f ? "%c" : "\\x%02x", *p);
}
