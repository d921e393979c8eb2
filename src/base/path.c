/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Lexical path arithmetic as GNU Stow does it; no I/O, so links the planner computes match Stow's
 * text. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "grove/path.h"

#include "banned.h" /* last */

char *
grove_path_canon(const char *path)
{
	size_t len = strlen(path);
	char *out = malloc(len + 2);
	size_t o = 0;
	const char *p = path;
	bool abs = path[0] == '/';

	if (!out)
		return NULL;
	if (abs)
		out[o++] = '/';
	/* Copy components, skipping empty ones and ".". */
	while (*p) {
		const char *s;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		s = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - s);
		if (n == 1 && s[0] == '.')
			continue;
		if (o > (abs ? 1u : 0u))
			out[o++] = '/';
		memcpy(out + o, s, n);
		o += n;
	}
	out[o] = '\0';
	/* canonpath keeps a lone "." for "." or "./"; "/.." at the root is "/". */
	if (o == 0 && len > 0 && !abs && path[0] == '.')
		memcpy(out, ".", 2);
	if (abs) {
		/* s|^/(?:\.\./)+|/| and s|^/\.\.$|/| */
		while (strncmp(out, "/../", 4) == 0)
			memmove(out, out + 3, strlen(out + 3) + 1);
		if (strcmp(out, "/..") == 0)
			memcpy(out, "/", 2);
	}
	return out;
}

/* Removes "x/.." pairs where x does not start with "..", as Stow's
 * `1 while s,(^|/)(?!\.\.)[^/]+/\.\.(/|$),$1,`. */
static void
collapse_dotdot(char *s)
{
	for (;;) {
		char *seg = s;
		bool changed = false;

		while (*seg) {
			char *end = strchr(seg, '/');
			if (!end)
				break;
			if (strncmp(seg, "..", 2) != 0 && strncmp(end, "/..", 3) == 0 &&
			    (end[3] == '/' || end[3] == '\0') && end != seg) {
				/* Replace "seg/.." plus its trailing '/' (if any) by nothing:
				 * $1 keeps the '/' before seg. */
				char *after = end + 3;
				if (*after == '/')
					after++;
				memmove(seg, after, strlen(after) + 1);
				changed = true;
				break;
			}
			seg = end + 1;
		}
		if (!changed)
			break;
	}
}

/*
 * join + canonpath + the ".." collapse in one pass, for the joins the planner
 * makes: the components of a and b glued with single slashes, a ".." after a
 * component that does not start with ".." removing that component (Stow's
 * collapse, which pairs them like brackets). Not for "." components, ".." in
 * an absolute path, an absolute b or an empty result: NULL then (and
 * *ret_oom says if memory ran out), and the caller takes the long way.
 */
static bool
join_plain_into(const char *a, size_t la, const char *b, char *out, size_t *ret_len)
{
	bool abs = a[0] == '/', prev_normal = false;
	char *o = out;

	if (!b[0] || b[0] == '/')
		return false;
	if (a[0] == '.' && !a[1])
		a = "", la = 0;
	if (abs)
		*o++ = '/';
	if (la > (size_t)abs && a[abs] != '.' && a[la - 1] != '/' && !strstr(a, "//") &&
	    !strstr(a, "/.")) {
		/* a is already clean, every component of it plain (the planner's
		 * folders): copied whole instead of component by component. */
		memcpy(o, a + abs, la - abs);
		o += la - abs;
		prev_normal = true;
		a = "";
	}
	for (int i = 0; i < 2; i++) {
		const char *p = i ? b : a;

		while (*p) {
			const char *e = strchrnul(p, '/');
			size_t n = (size_t)(e - p);
			bool up = n >= 2 && p[0] == '.' && p[1] == '.';

			if (n == 1 && p[0] == '.')
				goto slow;
			if (n == 2 && up && abs)
				goto slow;
			if (n == 2 && up && prev_normal) {
				/* Stow's collapse of "x/..": drop the last component. */
				char *last = o;

				while (last > out && last[-1] != '/')
					last--;
				o = last > out ? last - 1 : out;
				last = o;
				while (last > out && last[-1] != '/')
					last--;
				prev_normal = o > out &&
					      !(o - last >= 2 && last[0] == '.' && last[1] == '.');
			} else if (n) {
				prev_normal = !up;
				if (o > out + (abs ? 1 : 0))
					*o++ = '/';
				memcpy(o, p, n);
				o += n;
			}
			p = *e ? e + 1 : e;
		}
	}
	*o = '\0';
	*ret_len = (size_t)(o - out);
	return o > out + (abs ? 1 : 0);
slow:
	return false;
}

/* join_plain_into into a new string (out needs strlen(a) + strlen(b) + 2 bytes at most). */
static char *
join_plain(const char *a, const char *b, bool *ret_oom)
{
	size_t la = strlen(a), len;
	char *out;

	*ret_oom = false;
	if (!b[0] || b[0] == '/')
		return NULL;
	out = malloc(la + strlen(b) + 2);
	if (!out) {
		*ret_oom = true;
		return NULL;
	}
	if (join_plain_into(a, la, b, out, &len))
		return out;
	free(out);
	return NULL;
}

char *
grove_path_join(const char *a, const char *b)
{
	const char *parts[2] = { a, b };
	size_t cap;
	char *res, *out;
	bool oom;

	/* The planner's common cases (a folder and a name, ups and a package
	 * path): nothing to canonicalise or collapse. */
	res = join_plain(a, b ? b : "", &oom);
	if (res || oom)
		return res;
	cap = strlen(a) + (b ? strlen(b) : 0) + 3;
	res = calloc(1, cap);
	if (!res)
		return NULL;
	for (int i = 0; i < 2; i++) {
		char *c;

		if (!parts[i] || !parts[i][0])
			continue;
		c = grove_path_canon(parts[i]);
		if (!c) {
			free(res);
			return NULL;
		}
		if (c[0] == '/') {
			memcpy(res, c, strlen(c) + 1);
		} else {
			size_t l = strlen(res);
			if (l && strcmp(res, "/") != 0)
				res[l++] = '/';
			memcpy(res + l, c, strlen(c) + 1);
		}
		free(c);
	}
	out = grove_path_canon(res);
	free(res);
	if (!out)
		return NULL;
	collapse_dotdot(out);
	res = grove_path_canon(out);
	free(out);
	return res;
}

/* Copies the malloc'd s (freed) into buf: its length, or -1 (s NULL, or too long). */
static int
copy_into(char *s, char *buf, size_t size)
{
	size_t l = s ? strlen(s) : size;

	if (l >= size || l > INT_MAX) {
		free(s);
		return -1;
	}
	memcpy(buf, s, l + 1);
	free(s);
	return (int)l;
}

/*
 * The planner's commonest join, a link's text in its folder, in one pass over each: dir is
 * "" or relative with no empty component and none that is "." or starts with ".." (so that
 * each ".." of link removes one of its components, as Stow's collapse does), link is k ".."
 * components then names with no empty, "." or ".." one. The result is dir's first components
 * but k, '/', then link's names; when k is more than dir's count, the ".."s left over (nothing
 * before them to remove) then the names. -1 otherwise, or when it does not fit.
 */
static int
join_link_into(const char *dir, const char *link, char *buf, size_t size)
{
	size_t ends[64]; /* the end of each of dir's components, the last 64 */
	size_t d = 0, k = 0, keep, lr, ups = 0;
	const char *c = dir, *r = link;

	if (*c == '/')
		return -1;
	while (*c) {
		const char *s = c;

		if (c[0] == '.' && (c[1] == '/' || !c[1] || c[1] == '.'))
			return -1;
		while (*c && *c != '/')
			c++;
		if (c == s)
			return -1;
		ends[d++ % 64] = (size_t)(c - dir);
		if (*c && !*++c)
			return -1; /* a trailing '/' */
	}
	while (r[0] == '.' && r[1] == '.' && r[2] == '/') {
		r += 3;
		k++;
	}
	if (!*r || (k <= d && k >= 64))
		return -1;
	/* link's names: none empty (no leading, trailing or double '/'), "." or ".." (a '.' that
	 * starts a component, and ends it or is followed by one more that does). */
	lr = strlen(r);
	if (r[0] == '/' || r[lr - 1] == '/' || strstr(r, "//"))
		return -1;
	for (c = r; c; c = strstr(c + 1, "/.")) {
		const char *s = c == r ? c : c + 1;

		if (s[0] == '.' &&
		    (s[1] == '/' || !s[1] || (s[1] == '.' && (s[2] == '/' || !s[2]))))
			return -1;
	}
	if (k > d) {
		ups = k - d;
		keep = 0;
	} else {
		keep = d - k ? ends[(d - k - 1) % 64] : 0;
	}
	if (keep + 1 + 3 * ups + lr >= size)
		return -1;
	memmove(buf, dir, keep);
	if (keep)
		buf[keep++] = '/';
	keep = (size_t)(grove_path_put_ups(buf + keep, (int)ups) - buf);
	memcpy(buf + keep, r, lr + 1);
	return (int)(keep + lr);
}

bool
grove_path_link_prefix(const char *dir, const char *prefix, size_t len)
{
	const char *c = dir, *r = prefix, *end = prefix + len;
	size_t k = 0;

	/* dir as join_link_into takes it. */
	if (*c == '/')
		return false;
	while (*c) {
		const char *s = c;

		if (c[0] == '.' && (c[1] == '/' || !c[1] || c[1] == '.'))
			return false;
		while (*c && *c != '/')
			c++;
		if (c == s || (*c && !*++c))
			return false;
	}
	/* prefix: "" or components that each end with '/', some ".." then names. */
	if (len && end[-1] != '/')
		return false;
	while (end - r >= 3 && r[0] == '.' && r[1] == '.' && r[2] == '/') {
		r += 3;
		k++;
	}
	if (k >= 64)
		return false;
	while (r < end) {
		const char *s = r;

		if (r[0] == '.' && (r[1] == '/' || (r[1] == '.' && r[2] == '/')))
			return false;
		while (*r != '/')
			r++;
		if (r == s)
			return false;
		r++;
	}
	return true;
}

int
grove_path_join_into(const char *a, const char *b, char *buf, size_t size)
{
	size_t la, lb, len;
	int r = join_link_into(a, b, buf, size);

	if (r >= 0)
		return r;
	la = strlen(a);
	lb = strlen(b);

	/* join_plain_into writes at most la + lb + 2 bytes. */
	if (la + lb + 2 <= size && la + lb < INT_MAX && join_plain_into(a, la, b, buf, &len))
		return (int)len;
	return copy_into(grove_path_join(a, b), buf, size);
}

/* Whether s is one or more '/'-separated names, none empty, "." or "..": the paths the planner
 * builds from its folders' entries. */
static bool
plain_names(const char *s)
{
	return grove_path_plain_len(s) != 0; /* plain names are one byte long at least */
}

bool
grove_path_plain_names(const char *s)
{
	return plain_names(s);
}

size_t
grove_path_plain_len(const char *s)
{
	const char *c = s;

	for (;;) {
		const char *e = strchrnul(c, '/');
		size_t n = (size_t)(e - c);

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		if (!*e)
			return (size_t)(e - s);
		c = e + 1;
	}
}

/*
 * Whether s is what grove_path_join gives back unchanged as its first part, and what it leaves
 * as it is when joined after a prefix of ".." components: not "" or "/", no empty or "."
 * component, no ".." in an absolute path nor after a component that does not start with ".."
 * (Stow's collapse would remove that pair). Every join's result but ".", "" and "/" is one.
 */
static bool
canonical(const char *s)
{
	bool abs = s[0] == '/', prev_normal = false;
	const char *c = s + abs;

	if (!*c)
		return false;
	for (;;) {
		const char *e = strchrnul(c, '/');
		size_t n = (size_t)(e - c);
		bool up = n >= 2 && c[0] == '.' && c[1] == '.';

		if (n == 0 || (n == 1 && c[0] == '.'))
			return false;
		if (n == 2 && up && (abs || prev_normal))
			return false;
		prev_normal = !up;
		if (!*e)
			return true;
		c = e + 1;
	}
}

int
grove_path_join_names_into(const char *dir, const char *names, char *buf, size_t size)
{
	size_t ld, ln;

	if (!plain_names(names) || (dir[0] && strcmp(dir, ".") != 0 && !canonical(dir)))
		return copy_into(grove_path_join_names(dir, names), buf, size);
	ln = strlen(names);
	if (!dir[0] || strcmp(dir, ".") == 0) {
		if (ln >= size || ln > INT_MAX)
			return -1;
		memcpy(buf, names, ln + 1);
		return (int)ln;
	}
	ld = strlen(dir);
	if (ld + ln + 1 >= size || ld + ln + 1 > INT_MAX)
		return -1;
	memcpy(buf, dir, ld);
	buf[ld] = '/';
	memcpy(buf + ld + 1, names, ln + 1);
	return (int)(ld + ln + 1);
}

bool
grove_path_glues(const char *dir, const char *names)
{
	return dir[0] && strcmp(dir, ".") != 0 && canonical(dir) && (!names || plain_names(names));
}

const char *
grove_path_entry(const char *dir, const char *name, char *buf, size_t size, char **heap)
{
	if (*heap) {
		free(*heap);
		*heap = NULL;
	}
	if (grove_path_join_names_into(dir, name, buf, size) >= 0)
		return buf;
	*heap = grove_path_join_names(dir, name);
	return *heap;
}

bool
grove_path_plain_name(const char *name, size_t len)
{
	return len && !(name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'))) &&
	       !memchr(name, '/', len);
}

const char *
grove_path_glue(const char *dir, size_t dlen, bool glue, const char *name, size_t len, char *buf,
		size_t size, char **heap)
{
	if (!glue || !grove_path_plain_name(name, len) || dlen + len + 1 >= size)
		return grove_path_entry(dir, name, buf, size, heap);
	if (*heap) {
		free(*heap);
		*heap = NULL;
	}
	memcpy(buf, dir, dlen);
	buf[dlen] = '/';
	memcpy(buf + dlen + 1, name, len + 1);
	return buf;
}

char *
grove_path_put_ups(char *d, int level)
{
	for (int i = 0; i < level; i++) {
		*d++ = '.';
		*d++ = '.';
		*d++ = '/';
	}
	return d;
}

char *
grove_path_join_names(const char *dir, const char *names)
{
	size_t ld, ln;
	char *out;

	if (!plain_names(names))
		return grove_path_join(dir, names);
	if (!dir[0] || strcmp(dir, ".") == 0)
		return strdup(names);
	if (!canonical(dir))
		return grove_path_join(dir, names);
	ld = strlen(dir);
	ln = strlen(names);
	out = malloc(ld + ln + 2);
	if (!out)
		return NULL;
	memcpy(out, dir, ld);
	out[ld] = '/';
	memcpy(out + ld + 1, names, ln + 1);
	return out;
}

char *
grove_path_join_ups(int level, const char *path)
{
	size_t lp, o = 0;
	char *out;

	if (level < 0 || path[0] == '/' || !canonical(path)) {
		/* The long way, as the planner always did it. */
		char *ups = malloc((size_t)(level > 0 ? level : 0) * 3 + 1);

		if (!ups)
			return NULL;
		for (int i = 0; i < level; i++) {
			ups[o++] = '.';
			ups[o++] = '.';
			ups[o++] = '/';
		}
		ups[o] = '\0';
		out = grove_path_join(ups, path);
		free(ups);
		return out;
	}
	lp = strlen(path);
	out = malloc((size_t)level * 3 + lp + 1);
	if (!out)
		return NULL;
	for (int i = 0; i < level; i++) {
		out[o++] = '.';
		out[o++] = '.';
		out[o++] = '/';
	}
	memcpy(out + o, path, lp + 1);
	return out;
}

int
grove_path_join_ups_into(int level, const char *path, char *buf, size_t size)
{
	size_t lp, o;

	if (level < 0 || path[0] == '/' || !canonical(path))
		return copy_into(grove_path_join_ups(level, path), buf, size);
	lp = strlen(path);
	if ((size_t)level * 3 + lp >= size || (size_t)level * 3 + lp > INT_MAX)
		return -1;
	o = (size_t)(grove_path_put_ups(buf, level) - buf);
	memcpy(buf + o, path, lp + 1);
	return (int)(o + lp);
}

size_t
grove_path_parent_len(const char *path)
{
	size_t l = strlen(path);
	const char *slash;

	while (l > 0 && path[l - 1] == '/')
		l--;
	slash = memrchr(path, '/', l);
	if (!slash)
		return 0;
	l = (size_t)(slash - path);
	while (l > 0 && path[l - 1] == '/')
		l--;
	return l;
}

char *
grove_path_parent(const char *path)
{
	/* split m{/+} then pop: trailing empty fields are dropped by split. */
	char *c = strdup(path);
	size_t l;
	char *slash;

	if (!c)
		return NULL;
	l = strlen(c);
	while (l > 0 && c[l - 1] == '/')
		c[--l] = '\0';
	slash = strrchr(c, '/');
	if (!slash) {
		c[0] = '\0';
		return c;
	}
	/* Collapse the run of slashes before the last component. */
	while (slash > c && slash[-1] == '/')
		slash--;
	*slash = '\0';
	return c;
}

char *
grove_path_abs2rel(const char *path, const char *base)
{
	size_t common = 0, i = 0, ups = 0;
	size_t plen = strlen(path), blen = strlen(base);
	char *out;
	size_t o = 0;

	/* Longest common prefix ending at a component boundary. */
	while (i < plen && i < blen && path[i] == base[i]) {
		i++;
		if ((i == plen || path[i] == '/') && (i == blen || base[i] == '/'))
			common = i;
	}
	if (plen == blen && i == plen)
		return strdup(".");
	/* Each component of base after the common prefix becomes "..". */
	for (const char *s = base + common; *s;) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		ups++;
		while (*s && *s != '/')
			s++;
	}
	out = malloc(ups * 3 + plen + 2);
	if (!out)
		return NULL;
	for (size_t k = 0; k < ups; k++) {
		memcpy(out + o, "../", 3);
		o += 3;
	}
	{
		const char *rest = path + common;
		while (*rest == '/')
			rest++;
		size_t n = strlen(rest);

		memcpy(out + o, rest, n + 1);
		o += n;
	}
	while (o > 0 && out[o - 1] == '/')
		out[--o] = '\0';
	if (o == 0)
		memcpy(out, ".", 2);
	return out;
}

int
grove_path_slashes(const char *path)
{
	int n = 0;

	for (const char *s = path; (s = strchr(s, '/')); s++)
		n++;
	return n;
}

const char *
grove_path_strip_prefix(const char *path, const char *prefix)
{
	size_t l = strlen(prefix);

	if (strncmp(path, prefix, l) != 0 || path[l] != '/')
		return NULL;
	return path + l + 1;
}

char *
grove_dotfile_adjust(const char *name)
{
	char *out;

	if (strncmp(name, "dot-", 4) != 0 || name[4] == '\0' || name[4] == '.')
		return strdup(name);
	out = malloc(strlen(name));
	if (!out)
		return NULL;
	out[0] = '.';
	memcpy(out + 1, name + 4, strlen(name + 4) + 1);
	return out;
}

char *
grove_dotfile_unadjust(const char *name)
{
	char *out;

	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || name[0] != '.')
		return strdup(name);
	out = malloc(strlen(name) + 4);
	if (!out)
		return NULL;
	memcpy(out, "dot-", 4);
	memcpy(out + 4, name + 1, strlen(name + 1) + 1);
	return out;
}

bool
grove_path_is_clean_relative(const char *path)
{
	const char *c = path;

	if (!path || !*path || strlen(path) >= PATH_MAX)
		return false;
	for (;;) {
		const char *e = strchr(c, '/');
		size_t len = e ? (size_t)(e - c) : strlen(c);

		if (len == 0 || len > NAME_MAX || (len == 1 && c[0] == '.') ||
		    (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!e)
			return true;
		c = e + 1;
	}
}

bool
grove_path_is_name(const char *name)
{
	return name && !strchr(name, '/') && grove_path_is_clean_relative(name);
}

int
grove_path_lands_as(const char *tpath, const char *sub)
{
	bool dotted = false, dashed = false;

	if (!sub || !*sub || !*tpath)
		return 0;
	while (*tpath && *sub) {
		size_t lt = strcspn(tpath, "/"), ls = strcspn(sub, "/");
		bool dash = ls > 4 && !strncmp(sub, "dot-", 4);

		if (lt == ls && !memcmp(tpath, sub, lt))
			dashed = dashed || dash;
		else if (dash && tpath[0] == '.' && lt == ls - 3 &&
			 !memcmp(tpath + 1, sub + 4, lt - 1))
			dotted = true;
		else
			return 0;
		tpath += lt + (tpath[lt] == '/');
		sub += ls + (sub[ls] == '/');
	}
	if (*tpath || *sub || (dotted && dashed))
		return 0;
	return dotted ? GROVE_LANDS_DOTTED : dashed ? GROVE_LANDS_PLAIN : GROVE_LANDS_SAME;
}

bool
grove_path_is_package(const char *name)
{
	return name && ((name[0] == '.' && !name[1]) || grove_path_is_name(name));
}
