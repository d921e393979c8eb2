/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The fs layer's walk of a folder path beneath a root that follows the symlinks on the way inside
 * the root (merged /usr's bin -> usr/bin, as update-alternatives sees an installation root). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grove/fs.h"

#include "banned.h" /* last */

/* The kernel's own bound on the symlinks one lookup follows (ELOOP past it). */
#define CHASE_MAX_LINKS 40

/* How often a name that changed kind between two looks at it is looked at again. */
#define CHASE_RETRIES 16

/* One folder of the walk: held open, reached from the one before by its name alone. */
struct step {
	int fd;
	char *name;
};

struct walk {
	int rootfd;
	const char *relpath; /* for messages */
	uid_t owner;         /* the root folder's owner */
	struct step *v;      /* v[0..n): the folders below the root, in order */
	size_t n, cap;
	char *todo; /* the components still to walk, '/'-separated */
	size_t pos;
	size_t link_end; /* todo[0..link_end) came from the text of a followed link */
	int links;
};

static void
walk_release(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++) {
		grove_fd_close(w->v[i].fd);
		free(w->v[i].name);
	}
	free(w->v);
	free(w->todo);
}

static int
cur_fd(const struct walk *w)
{
	return w->n ? w->v[w->n - 1].fd : w->rootfd;
}

static void
pop(struct walk *w)
{
	w->n--;
	grove_fd_close(w->v[w->n].fd);
	free(w->v[w->n].name);
}

/* Takes fd (closed on failure). */
static int
push(struct walk *w, int fd, const char *name)
{
	char *copy = strdup(name);

	if (copy && w->n == w->cap) {
		size_t cap = w->cap * 2 + 8;
		struct step *nv = realloc(w->v, cap * sizeof(*nv));

		if (nv) {
			w->v = nv;
			w->cap = cap;
		}
	}
	if (!copy || w->n == w->cap) {
		free(copy);
		grove_fd_close(fd);
		return -ENOMEM;
	}
	w->v[w->n].fd = fd;
	w->v[w->n].name = copy;
	w->n++;
	return 0;
}

/* Appends "/" (unless at the start) and s at *q. */
static void
put_name(char **q, const char *start, const char *s)
{
	size_t l = strlen(s);

	if (*q != start)
		*(*q)++ = '/';
	memcpy(*q, s, l + 1);
	*q += l;
}

/* The physical path of the folders held, then extra (NULL: none); malloc'd. */
static char *
phys_path(const struct walk *w, const char *extra)
{
	size_t len = 1 + (extra ? strlen(extra) + 1 : 0);
	char *p, *q;

	for (size_t i = 0; i < w->n; i++)
		len += strlen(w->v[i].name) + 1;
	p = q = malloc(len);
	if (!p)
		return NULL;
	*p = '\0';
	for (size_t i = 0; i < w->n; i++)
		put_name(&q, p, w->v[i].name);
	if (extra && *extra)
		put_name(&q, p, extra);
	return p;
}

/* The next component of todo into buf ("" when none is left); *ret_start is where it began. */
static const char *
next_name(struct walk *w, char *buf, size_t *ret_start)
{
	size_t i = 0;

	while (w->todo[w->pos] == '/')
		w->pos++;
	*ret_start = w->pos;
	while (w->todo[w->pos] && w->todo[w->pos] != '/' && i < NAME_MAX)
		buf[i++] = w->todo[w->pos++];
	buf[i] = '\0';
	return buf;
}

/* todo becomes text followed by what was left of it; the walk goes on from text's start. */
static int
splice_text(struct walk *w, const char *text)
{
	const char *rest = w->todo + w->pos;
	size_t tl = strlen(text), rl = strlen(rest);
	char *nt = malloc(tl + rl + 2);

	if (!nt)
		return -ENOMEM;
	(void)snprintf(nt, tl + rl + 2, "%s/%s", text, rest); /* sized above: nothing is cut */
	free(w->todo);
	w->todo = nt;
	w->pos = 0;
	w->link_end = tl;
	return 0;
}

/* Whether the rest of todo (after a missing folder) holds a ".." (it then names no place). */
static bool
rest_has_dotdot(const struct walk *w)
{
	const char *p = w->todo + w->pos;

	while (*p) {
		size_t l;

		while (*p == '/')
			p++;
		l = strcspn(p, "/");
		if (l == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p += l;
	}
	return false;
}

/* The rest of todo, without empty and "." components; malloc'd. */
static char *
rest_clean(const struct walk *w)
{
	const char *p = w->todo + w->pos;
	char *out = malloc(strlen(p) + 1), *q = out;

	if (!out)
		return NULL;
	while (*p) {
		size_t l;

		while (*p == '/')
			p++;
		l = strcspn(p, "/");
		if (l && !(l == 1 && *p == '.')) {
			if (q != out)
				*q++ = '/';
			memcpy(q, p, l);
			q += l;
		}
		p += l;
	}
	*q = '\0';
	return out;
}

/* The symlink name in the current folder, open at lfd (O_PATH): checked and followed. */
static int
follow(struct walk *w, int lfd, const struct stat *st, const char *name, const char *root_path,
       struct grove_error *err)
{
	char text[PATH_MAX + 1];
	ssize_t tl;
	const char *t = text;

	if (++w->links > CHASE_MAX_LINKS)
		return grove_error_errno(err, -ELOOP, "open '%s'", w->relpath);
	/* The link followed is the one whose owner was checked: both read through lfd. */
	if (st->st_uid != 0 && st->st_uid != w->owner) {
		char *at = phys_path(w, name);
		int r = grove_error_set(
			err, -EPERM,
			"open '%s': the symlink '%s' belongs to uid %u, neither root "
			"nor the owner of the root folder (uid %u): not followed",
			w->relpath, at ? at : name, (unsigned)st->st_uid, (unsigned)w->owner);

		free(at);
		return r;
	}
	tl = readlinkat(lfd, "", text, sizeof(text));
	if (tl < 0)
		return grove_error_errno(err, -errno, "read link '%s' in '%s'", name, w->relpath);
	if ((size_t)tl >= sizeof(text))
		return grove_error_errno(err, -ENAMETOOLONG, "read link '%s' in '%s'", name,
					 w->relpath);
	text[tl] = '\0';
	if (!*text)
		return grove_error_errno(err, -ENOENT, "open '%s'", w->relpath);
	if (*t == '/') {
		/* A chroot's absolute link starts again at the root; an instdir's must name a place
		 * beneath it. */
		size_t rl = root_path ? strlen(root_path) : 0;

		while (rl > 0 && root_path[rl - 1] == '/')
			rl--;
		if (root_path && rl && (strncmp(t, root_path, rl) != 0 || (t[rl] && t[rl] != '/')))
			return grove_error_set(err, -EXDEV,
					       "open '%s': the symlink '%s' leads outside the root "
					       "('%s')",
					       w->relpath, name, text);
		t += rl;
		while (w->n)
			pop(w);
	}
	return splice_text(w, t) < 0 ? grove_error_errno(err, -ENOMEM, "open '%s'", w->relpath) : 0;
}

enum look { LOOK_DIR, LOOK_FOLLOWED, LOOK_MISSING, LOOK_NOTDIR };

/* Looks at name in the current folder: a folder is entered, a symlink followed. */
static int
look(struct walk *w, const char *name, const char *root_path, bool make, bool from_link,
     mode_t mode, struct grove_error *err)
{
	for (int tries = 0; tries < CHASE_RETRIES; tries++) {
		int fd = openat(cur_fd(w), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int lfd, r;
		struct stat st;

		if (fd >= 0)
			return push(w, fd, name) < 0
				       ? grove_error_errno(err, -ENOMEM, "open '%s'", w->relpath)
				       : LOOK_DIR;
		if (errno == ENOENT && make && !from_link) {
			if (mkdirat(cur_fd(w), name, mode) < 0 && errno != EEXIST)
				return grove_error_errno(err, -errno, "make folder '%s' in '%s'",
							 name, w->relpath);
			continue;
		}
		if (errno == ENOENT)
			return LOOK_MISSING;
		if (errno != ENOTDIR && errno != ELOOP)
			return grove_error_errno(err, -errno, "open '%s'", w->relpath);
		/* Not a folder: a symlink, or a file. Looked at again through one fd. */
		lfd = openat(cur_fd(w), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (lfd < 0 && errno == ENOENT)
			continue;
		if (lfd < 0)
			return grove_error_errno(err, -errno, "open '%s'", w->relpath);
		r = fstat(lfd, &st) < 0 ? -errno : 0;
		if (r == 0 && S_ISLNK(st.st_mode))
			r = follow(w, lfd, &st, name, root_path, err);
		else if (r < 0)
			r = grove_error_errno(err, r, "stat '%s' in '%s'", name, w->relpath);
		grove_fd_close(lfd);
		if (r < 0)
			return r;
		if (S_ISLNK(st.st_mode))
			return LOOK_FOLLOWED;
		if (!S_ISDIR(st.st_mode))
			return LOOK_NOTDIR;
		/* A folder again (it was swapped back): look once more. */
	}
	return grove_error_set(err, -EAGAIN, "open '%s': it keeps changing, giving up", w->relpath);
}

int
grove_fs_chase_dir(int rootfd, const char *root_path, const char *relpath, bool make, mode_t mode,
		   struct grove_chase *ret, struct grove_error *err)
{
	struct walk w = { .rootfd = rootfd, .relpath = relpath ? relpath : "" };
	struct stat rst;
	char name[NAME_MAX + 1];
	bool at_top = !root_path || !strcmp(root_path, "/");
	int r = 0, fd;

	ret->fd = -1;
	ret->phys = NULL;
	/* The common case first: no link on the way (one openat2, as every other lookup). */
	if (!make) {
		struct grove_error e = { 0 };
		char *clean = rest_clean(&(struct walk){ .todo = (char *)w.relpath });

		if (!clean)
			return grove_error_errno(err, -ENOMEM, "open '%s'", w.relpath);
		fd = strstr(clean, "..") ? -ELOOP
					 : grove_fs_open_beneath(rootfd, clean,
								 O_RDONLY | O_DIRECTORY, false, &e);
		if (fd >= 0 || fd == -ENOENT || fd == -ENOTDIR) {
			ret->fd = fd >= 0 ? fd : -1;
			ret->phys = clean;
			return 0;
		}
		free(clean);
	}
	if (fstat(rootfd, &rst) < 0)
		return grove_error_errno(err, -errno, "stat root of '%s'", w.relpath);
	w.owner = rst.st_uid;
	if (!(w.todo = strdup(w.relpath)))
		return grove_error_errno(err, -ENOMEM, "open '%s'", w.relpath);
	for (;;) {
		size_t start;

		next_name(&w, name, &start);
		if (!*name)
			break;
		if (strlen(name) == NAME_MAX && w.todo[w.pos] && w.todo[w.pos] != '/') {
			r = grove_error_errno(err, -ENAMETOOLONG, "open '%s'", w.relpath);
			break;
		}
		if (!strcmp(name, "."))
			continue;
		if (!strcmp(name, "..")) {
			/* As in a chroot (RESOLVE_IN_ROOT), ".." at the root stays there; above an
			 * instdir that is not / it would leave the root. */
			if (w.n)
				pop(&w);
			else if (!at_top)
				r = grove_error_set(err, -EXDEV,
						    "open '%s': the path leads outside its root",
						    w.relpath);
			if (r < 0)
				break;
			continue;
		}
		r = look(&w, name, root_path, make, start < w.link_end, mode, err);
		if (r < 0)
			break;
		if (r == LOOK_MISSING || r == LOOK_NOTDIR) {
			/* The rest is where the folder would be: no ".." in it, or no place. */
			if (make) {
				r = r == LOOK_NOTDIR
					    ? grove_error_errno(err, -ENOTDIR, "open '%s'",
								w.relpath)
					    : grove_error_set(err, -ENOENT,
							      "open '%s': a symlink on the "
							      "way leads to a folder that "
							      "does not exist",
							      w.relpath);
				break;
			}
			r = 0;
			if (!rest_has_dotdot(&w)) {
				char *rest = rest_clean(&w);
				char *tail = rest ? malloc(strlen(name) + strlen(rest) + 2) : NULL;
				char *q = tail;

				if (tail) {
					put_name(&q, tail, name);
					if (*rest)
						put_name(&q, tail, rest);
				}
				ret->phys = tail ? phys_path(&w, tail) : NULL;
				free(rest);
				free(tail);
				if (!ret->phys)
					r = grove_error_errno(err, -ENOMEM, "open '%s'", w.relpath);
			}
			walk_release(&w);
			return r;
		}
		r = 0;
	}
	if (r >= 0) {
		ret->phys = phys_path(&w, NULL);
		fd = w.n ? w.v[w.n - 1].fd : fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
		if (w.n)
			w.v[w.n - 1].fd = -1;
		if (!ret->phys || fd < 0) {
			r = grove_error_errno(err, !ret->phys ? -ENOMEM : -errno, "open '%s'",
					      w.relpath);
			grove_fd_close(fd);
			free(ret->phys);
			ret->phys = NULL;
		} else {
			ret->fd = fd;
		}
	}
	walk_release(&w);
	return r;
}

void
grove_chase_release(struct grove_chase *c)
{
	if (!c)
		return;
	grove_fd_close(c->fd);
	free(c->phys);
	c->fd = -1;
	c->phys = NULL;
}

int
grove_root_open_chase(struct grove_root *root, const struct grove_root *parent,
		      const char *root_path, const char *relpath, bool make, mode_t mode,
		      struct grove_error *err)
{
	struct grove_chase ch;
	struct stat st;
	int r = grove_fs_chase_dir(parent->fd, root_path, relpath, make, mode, &ch, err);

	if (r >= 0 && ch.fd < 0) {
		free(ch.phys);
		return grove_error_errno(err, -ENOENT, "open '%s/%s'", parent->path, relpath);
	}
	if (r < 0)
		return r;
	if (fstat(ch.fd, &st) < 0) {
		r = grove_error_errno(err, -errno, "open '%s/%s'", parent->path, relpath);
		grove_chase_release(&ch);
		return r;
	}
	size_t pl = strlen(parent->path) + strlen(relpath) + 2;
	size_t rl = parent->real ? strlen(parent->real) + strlen(ch.phys) + 2 : 0;

	root->path = malloc(pl);
	root->real = parent->real ? malloc(rl) : NULL;
	if (!root->path || (parent->real && !root->real)) {
		free(root->path);
		free(root->real);
		root->path = root->real = NULL;
		grove_chase_release(&ch);
		return grove_error_errno(err, -ENOMEM, "open '%s/%s'", parent->path, relpath);
	}
	(void)snprintf(root->path, pl, "%s/%s", parent->path, relpath);
	/* The canonical path is the physical one: what a replay opens again by name. */
	if (root->real) {
		bool slash = parent->real[strlen(parent->real) - 1] == '/' || !*ch.phys;

		(void)snprintf(root->real, rl, "%s%s%s", parent->real, slash ? "" : "/", ch.phys);
	}
	root->fd = ch.fd;
	root->dev = st.st_dev;
	root->ino = st.st_ino;
	root->born = grove_fd_born(root->fd);
	free(ch.phys);
	return 0;
}
