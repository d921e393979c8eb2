/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The scan of the stow dir: reads the packages a plan needs into an in-memory tree, beneath the
 * held stow root, and drives the target scan (scan_target.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "grove/path.h"
#include "grove/plan.h"
#include "plan/world.h"
#include "scan_int.h"
#include "base/util.h"

#include "banned.h" /* last */

/* Followed package links nest at most this deep (a guard against link farms of links). */
#define FOLLOW_DEPTH_MAX 32
/* Beyond this many packages, every folder of the packages is read (see may_skip). */
#define PRUNE_PKGS_MAX 32

int
grove_scan_oom(struct scan *s)
{
	return grove_error_set(s->err, -ENOMEM, "scan: out of memory");
}

static unsigned
list_flags(signed char *known, int rootfd, bool on_mount)
{
	if (!on_mount)
		return 0;
	if (!*known)
		*known = grove_fs_fills_listings(rootfd) ? 1 : -1;
	return *known > 0 ? GROVE_LIST_SHORT_END : 0;
}

unsigned
grove_scan_stow_list_flags(struct scan *s, bool on_mount)
{
	return list_flags(&s->w->stow_fills, s->stow->fd, on_mount);
}

unsigned
grove_scan_target_list_flags(struct scan *s, bool on_mount)
{
	return list_flags(&s->w->target_fills, s->target->fd, on_mount);
}

/* ---- the stow dir ---- */

static int load_dir(struct scan *s, struct grove_node *node, int dfd, unsigned list_flags,
		    const char *relpath, dev_t dev, ino_t ino, bool ino_known);

/*
 * Where the text of a package that is a link leads, beneath the stow dir at real, when
 * it climbs out and comes straight back in ("../stow/pkg7a/stow/pkg7b" for the stow dir
 * "/x/stow", as Stow's own tests write it) or is absolute into it: the rest of the path
 * below the stow dir ("pkg7a/stow/pkg7b"). RESOLVE_BENEATH refuses any ".." above the
 * held stow dir, even one that comes back, so such a text is rebased lexically (the stow
 * dir's path is canonical: going up k folders and down the same k names is the stow dir).
 * NULL when the text does not do that (whatever it leads to is resolved as it is).
 */
/* Whether path has a ".." component (the rebased rest must only go down). */
static bool
has_dotdot(const char *path)
{
	for (const char *c = path; *c; c += strcspn(c, "/"), c += *c == '/')
		if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || !c[2]))
			return true;
	return false;
}

static const char *
package_link_rest(const char *real, const char *text)
{
	const char *t = text, *r;
	size_t up = 0;

	if (text[0] == '/') {
		r = grove_path_strip_prefix(text, real);
		if (!r || strstr(text, "/../") || strstr(text, "/./") || strstr(text, "//"))
			return NULL;
		return r[0] && !has_dotdot(r) ? r : NULL;
	}
	while (!strncmp(t, "../", 3))
		t += 3, up++;
	if (up == 0)
		return NULL;
	/* The last `up` components of real, in order, must be the next ones of t. */
	r = real + strlen(real);
	for (size_t i = 0; i < up; i++) {
		if (r == real)
			return NULL;
		do
			r--;
		while (r > real && *r != '/');
	}
	if (*r != '/')
		return NULL;
	r++;
	while (*r) {
		size_t l = strcspn(r, "/");

		if (strncmp(t, r, l) != 0 || t[l] != '/')
			return NULL;
		t += l + 1;
		r += l;
		if (*r == '/')
			r++;
	}
	while (*t == '/')
		t++;
	return *t && !has_dotdot(t) ? t : NULL;
}

/*
 * Stats relpath beneath the stow dir, links followed. Where the kernel refuses it (EXDEV: a
 * ".." above the held stow dir) because its first component is a package link that leaves
 * and comes straight back (package_link_rest), tries the rebased path; *ret_phys is then that
 * path (malloc'd, to open it by), else NULL. The usual case costs nothing more.
 */
int
grove_scan_stat_follow(struct scan *s, const char *relpath, char **ret_phys, struct grove_stat *st,
		       struct grove_error *err)
{
	size_t l = strcspn(relpath, "/");
	char name[NAME_MAX + 1];
	cleanup_free char *text = NULL;
	struct grove_node *n;
	struct grove_error e;
	const char *rest;
	char *alt;
	int r = grove_fs_stat_beneath_follow(s->stow->fd, relpath, st, err);

	*ret_phys = NULL;
	if (r != -EXDEV || l > NAME_MAX)
		return r;
	memcpy(name, relpath, l);
	name[l] = '\0';
	n = grove_node_child(s->w->stow, name);
	if (n && n->type == GROVE_FT_LINK && n->link)
		rest = package_link_rest(s->stow->real, n->link);
	else if (grove_fs_readlink_at(s->stow->fd, name, &text, &e) == 0)
		rest = package_link_rest(s->stow->real, text);
	else
		rest = NULL;
	if (!rest)
		return r;
	alt = grove_strdupf("%s%s", rest, relpath + l);
	if (!alt)
		return grove_scan_oom(s);
	r = grove_fs_stat_beneath_follow(s->stow->fd, alt, st, err);
	*ret_phys = alt;
	return r;
}

/* Whether (dev, ino) is a folder being loaded: 1, 0, or -errno. A package root's inode, not
 * known when it was opened, is asked of its fd now (a package with a link to a folder only). */
static int
on_stack(struct scan *s, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < s->depth; i++) {
		struct dev_ino *d = &s->stack[i];

		if (d->fd >= 0) {
			struct grove_stat st;
			int r = grove_fs_stat_fd(d->fd, &st, s->err);

			if (r < 0)
				return r;
			d->ino = st.ino;
			d->fd = -1;
		}
		if (d->dev == dev && d->ino == ino)
			return 1;
	}
	return 0;
}

/* Loads what a package link points at: its type, and a folder's listing. */
static int
load_link_dest(struct scan *s, struct grove_node *n, const char *relpath)
{
	struct grove_stat st;
	struct grove_error e;
	cleanup_fd int fd = -1;
	cleanup_free char *phys = NULL;
	bool on_mount;
	int r;

	/* A link to its own folder or above it would be followed forever. */
	if (n->link && n->link[0] != '/') {
		cleanup_free char *parent = grove_path_parent(relpath);
		cleanup_free char *dest = parent ? grove_path_join(parent, n->link) : NULL;
		if (!dest)
			return grove_scan_oom(s);
		if (grove_path_under(relpath, dest)) {
			n->escapes = true;
			n->dest_type = GROVE_FT_NONE;
			return 0;
		}
	}
	r = grove_scan_stat_follow(s, relpath, &phys, &st, &e);
	if (r == -EXDEV || r == -ELOOP) {
		n->escapes = true;
		n->dest_type = GROVE_FT_NONE;
		return 0;
	}
	if (r < 0) {
		*s->err = e;
		return r;
	}
	n->dest_type = st.type;
	if (st.type != GROVE_FT_DIR)
		return 0;
	r = on_stack(s, st.dev, st.ino);
	if (r < 0)
		return r;
	if (r || s->follows >= FOLLOW_DEPTH_MAX) {
		/* A link back to a folder being loaded: following it never ends. */
		n->escapes = true;
		return 0;
	}
	fd = grove_fs_open_beneath_mount(s->stow->fd, phys ? phys : relpath, O_RDONLY | O_DIRECTORY,
					 true, &on_mount, s->err);
	if (fd < 0)
		return fd;
	s->follows++;
	r = load_dir(s, n, fd, grove_scan_stow_list_flags(s, on_mount), relpath, st.dev, st.ino,
		     true);
	s->follows--;
	return r;
}

/* Whether the target entry sub is a link to the stow-relative path prefix (this very folder:
 * the package folded there). */
static bool
folded_here(struct scan *s, const char *sub, const char *prefix)
{
	cleanup_free char *parent = grove_path_parent(sub);
	const char *base = strrchr(sub, '/');
	cleanup_free char *text = NULL;
	cleanup_free char *joined = NULL;
	cleanup_fd int fd = -1;
	struct grove_stat st;
	struct grove_error e;
	const char *rest;

	if (!parent)
		return false;
	base = base ? base + 1 : sub;
	fd = grove_fs_open_dir_beneath(s->target->fd, parent[0] ? parent : ".", &e);
	if (fd < 0 || grove_fs_stat_at(fd, base, &st, &e) < 0 || st.type != GROVE_FT_LINK ||
	    grove_fs_readlink_at(fd, base, &text, &e) < 0 || text[0] == '/')
		return false;
	joined = grove_path_join(parent, text);
	rest = joined ? grove_path_strip_prefix(joined, s->w->stow_path) : NULL;
	return rest && strcmp(rest, prefix) == 0;
}

/* a "/" b into buf (size bytes), or NULL when it does not fit. */
static char *
join_in(char *buf, size_t size, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la + 1 + lb + 1 > size)
		return NULL;
	memcpy(buf, a, la + 1);
	buf[la] = '/';
	memcpy(buf + la + 1, b, lb + 1);
	return buf;
}

/*
 * grove_scan_model_answer of package's sub (a path of plain names beneath it), asked of every
 * other package for each folder of a request: the package's node looked up once and sub walked
 * from it, without the model's path memo (which serves one walk after another beneath the same
 * folder, not one package after another).
 */
static int
model_answer_in(struct scan *s, const char *package, const char *sub, enum grove_ftype *ret)
{
	const struct grove_node *n = grove_node_child(s->w->stow, package);
	const char *p = sub;

	if (!n) {
		char other[PATH_MAX];

		return join_in(other, sizeof(other), package, sub) &&
		       grove_scan_model_answer(s, other, ret);
	}
	while (*p) {
		const char *end = strchrnul(p, '/');
		const struct grove_node *kid = grove_node_child_n(n, p, (size_t)(end - p));

		if (!kid) {
			bool dir = n->type == GROVE_FT_DIR ||
				   (n->type == GROVE_FT_LINK && n->dest_type == GROVE_FT_DIR);

			if ((size_t)(end - p) > NAME_MAX || !dir || !n->listed)
				return 0;
			*ret = GROVE_FT_NONE;
			return 1;
		}
		n = kid;
		p = *end ? end + 1 : end;
	}
	if (n->type == GROVE_FT_LINK) {
		if (n->escapes || n->dest_type == GROVE_FT_UNKNOWN)
			return 0;
		*ret = n->dest_type;
		return 1;
	}
	if (n->type == GROVE_FT_DIR && !n->listed && n->n_kids == 0)
		return 0; /* an intermediate folder made by model_path: not checked */
	*ret = n->type;
	return 1;
}

/* Of the other packages of a request, at most this many the model cannot answer for a folder
 * are asked by a stat; past it, the folder is read. */
#define ASK_OTHERS_MAX 2

/*
 * Whether the planner can enter the package folder at the stow-relative path
 * prefix ("pkg/a/b"): only when something is at the same place in the target
 * ("a/b", links followed) but a link to this folder, or another package of the
 * request has "a/b". The other packages are asked of the model first: when more
 * than ASK_OTHERS_MAX of them are not read that far, the folder counts as
 * enterable and is read (as it was before issue 41), so that a request of many
 * small packages pays no stat per package for its folders; the target is asked
 * next, and the few others unknown to the model last. Any error counts as "it
 * can".
 */
static bool
enterable(struct scan *s, const char *prefix)
{
	const char *sub = strchr(prefix, '/') + 1;
	const char *unknown[ASK_OTHERS_MAX];
	size_t n_unknown = 0;
	struct grove_stat st;
	struct grove_error e;
	int r;

	for (size_t i = 0; i < s->n_pkgs; i++) {
		enum grove_ftype known;

		if (strcmp(s->pkgs[i], s->package) == 0)
			continue;
		if (model_answer_in(s, s->pkgs[i], sub, &known)) {
			if (known != GROVE_FT_NONE)
				return true;
			continue;
		}
		if (n_unknown == ASK_OTHERS_MAX)
			return true;
		unknown[n_unknown++] = s->pkgs[i];
	}
	r = grove_fs_stat_beneath_follow(s->target->fd, sub, &st, &e);
	/* A link leaving the target (EXDEV) may be the fold into the stow dir. Whether the target
	 * entry is this folder's fold costs three calls more: worth it for one package (a big one
	 * restowed or unstowed), not for each folder of a request of several (reading a dotfiles
	 * package's folder costs about as much). */
	if ((r < 0 && r != -EXDEV && r != -ELOOP) ||
	    ((r < 0 || st.type != GROVE_FT_NONE) &&
	     (s->n_pkgs > 1 || !folded_here(s, sub, prefix))))
		return true;
	for (size_t i = 0; i < n_unknown; i++) {
		char other[PATH_MAX];
		cleanup_free char *phys = NULL;

		if (!join_in(other, sizeof(other), unknown[i], sub) ||
		    grove_scan_stat_follow(s, other, &phys, &st, &e) < 0 ||
		    st.type != GROVE_FT_NONE)
			return true;
	}
	return false;
}

/*
 * Whether the package folder kid (at kpath, an entry of the folder on top of the load stack) is
 * left unread: the planner will fold it into one link and never look inside. That holds when
 * it lies below the package root and cannot be entered (enterable): the target has nothing
 * there, or a link to this very folder, and no other package of the request has it, so the plan
 * links it whole (or, unstowing, removes that one link). Its ancestors were entered, or it would
 * not be asked. GNU Stow does not read below a folder it folds either; what grove checks there,
 * and why no more, is docs/stow.md's "What grove reads below a folded folder". Should the
 * planner ask for it all the same (an unfold), the node is marked pruned and the planner asks
 * for it again (a need), and it is read then, whole and with every check.
 */
static bool
may_skip(struct scan *s, const char *kpath)
{
	return s->prune && !s->follows && s->depth >= 1 && !enterable(s, kpath);
}

/* Whether the model node at the stow-relative path is a pruned folder. */
static bool
pruned_at(struct scan *s, const char *relpath)
{
	struct grove_node *n = grove_node_lookup(s->w->stow, relpath);

	return n && n->pruned;
}

/*
 * Heap for what the scan and the planner will make, populated ahead (grove_tree_heap_reserve)
 * so that it does not come a page fault per page: RESERVE_PER_PACKAGE per package requested, at
 * the start (at most RESERVE_PACKAGES_MAX); then, every RESERVE_STEP nodes made (package and
 * target), that many nodes' worth more (the nodes, their folders' arrays, and what the planner and
 * the plan make per entry), up to RESERVE_SCAN_MAX in all. Sized to the request: a dotfiles stow of
 * 20 packages reserves 60 KiB here, 200 packages of 13 entries 600 KiB and then 128 KiB per 512
 * entries read; the bounds keep what is reserved ahead of use small against issue 18's memory goal
 * (peak RSS).
 */
#define RESERVE_PER_PACKAGE  ((size_t)3 << 10)
#define RESERVE_PACKAGES_MAX ((size_t)1 << 20)
#define RESERVE_STEP         512
#define RESERVE_PER_NODE     256
#define RESERVE_SCAN_MAX     ((size_t)4 << 20)

void
grove_scan_note_made(struct scan *s)
{
	if (++s->made % RESERVE_STEP == 0 && s->reserved < RESERVE_SCAN_MAX) {
		grove_tree_heap_reserve((size_t)RESERVE_STEP * RESERVE_PER_NODE);
		s->reserved += (size_t)RESERVE_STEP * RESERVE_PER_NODE;
	}
}

int
grove_scan_maker_init(struct grove_node *dir, const struct grove_dirent *ents, size_t n,
		      struct grove_node_maker *m)
{
	size_t bytes = 0;

	if (dir->n_kids) {
		grove_node_maker_init(m, 0); /* a merge: the kids present are skipped */
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		bytes += grove_node_size(strlen(ents[i].name), NULL);
	grove_node_maker_init(m, bytes);
	return grove_node_reserve_kids(dir, n);
}

/* Fills node (a folder, or a link to one) with the listing of dfd, recursively.
 * Kids already present and listed are kept, so partial loads merge. */
/* (dev, ino) identify the folder open at dfd, for the loop check of followed
 * links: a subfolder's come from its parent's listing (d_ino, same device), so
 * reading a folder costs no fstat. A package root is opened without a stat
 * (!ino_known): its inode is asked of dfd only if a link is followed beneath it
 * (on_stack). */
static int
load_dir(struct scan *s, struct grove_node *node, int dfd, unsigned list_flags, const char *relpath,
	 dev_t dev, ino_t ino, bool ino_known)
{
	struct grove_dirent *ents = NULL;
	size_t n = 0, rlen;
	char kbuf[256]; /* each entry's path, when it fits: no allocation per entry */
	cleanup_free char *kheap = NULL;
	struct grove_node_maker maker;
	int r;

	if (node->listed)
		return 0;
	if (grove_path_slashes(relpath) >= GROVE_TREE_MAX_DEPTH)
		return grove_error_set(s->err, -GROVE_E_BADINPUT,
				       "read package folder '%s/%.200s...': more than %d folders "
				       "deep, which grove does not support",
				       s->stow->path, relpath, GROVE_TREE_MAX_DEPTH);
	r = grove_fs_list_flags(dfd, list_flags, &ents, &n, s->err);
	if (r < 0)
		return grove_error_prefix(s->err, "read package folder '%s/%s'", s->stow->path,
					  relpath);
	if (s->depth == s->cap_stack) {
		size_t cap = s->cap_stack ? s->cap_stack * 2 : 64;
		struct dev_ino *st = realloc(s->stack, cap * sizeof(*st));

		if (!st) {
			grove_dirents_free(ents, n);
			return grove_scan_oom(s);
		}
		s->stack = st;
		s->cap_stack = cap;
	}
	s->stack[s->depth].dev = dev;
	s->stack[s->depth].ino = ino;
	s->stack[s->depth].fd = ino_known ? -1 : dfd;
	s->depth++;
	rlen = strlen(relpath);
	if (grove_scan_maker_init(node, ents, n, &maker) < 0)
		r = grove_scan_oom(s);
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct grove_node *kid = grove_node_child(node, ents[i].name);
		const char *kpath = grove_child_path_buf(relpath, rlen, ents[i].name, kbuf,
							 sizeof(kbuf), &kheap);
		cleanup_free char *text = NULL;

		if (!kpath) {
			r = grove_scan_oom(s);
			break;
		}
		if (kid && (kid->listed || kid->type != GROVE_FT_DIR))
			continue;
		if (!kid) {
			if (ents[i].type == GROVE_FT_LINK) {
				r = grove_fs_readlink_at(dfd, ents[i].name, &text, s->err);
				if (r < 0) {
					grove_error_prefix(s->err, "read package '%s/%s'",
							   s->stow->path, kpath);
					break;
				}
			}
			kid = grove_node_make(&maker, ents[i].name, ents[i].type, text);
			if (!kid || grove_node_add(node, kid) < 0) {
				grove_node_free(kid);
				r = grove_scan_oom(s);
				break;
			}
			grove_scan_note_made(s);
			if (s->o->walk_above && ++s->total > s->o->walk_above) {
				s->w->too_big = true;
				r = grove_error_set(s->err, -ECANCELED,
						    "scan: over %zu package entries",
						    s->o->walk_above);
				break;
			}
		}
		if (ents[i].type == GROVE_FT_DIR && may_skip(s, kpath)) {
			kid->type = kid->orig_type = GROVE_FT_DIR;
			kid->pruned = true;
		} else if (ents[i].type == GROVE_FT_DIR) {
			bool on_mount;
			int kfd = grove_fs_open_dir_at_mount(dfd, ents[i].name, &on_mount, s->err);

			if (kfd < 0) {
				r = grove_error_prefix(s->err, "read package folder '%s/%s'",
						       s->stow->path, kpath);
				break;
			}
			kid->type = kid->orig_type = GROVE_FT_DIR;
			r = load_dir(s, kid, kfd, on_mount ? list_flags : 0, kpath, dev,
				     ents[i].ino, true);
			grove_fd_batch_add(&s->done_fds, kfd);
		} else if (ents[i].type == GROVE_FT_LINK) {
			if (kid->link && kid->link[0] == '/') {
				kid->dest_type = GROVE_FT_NONE; /* never followed */
				continue;
			}
			r = load_link_dest(s, kid, kpath);
		}
	}
	grove_node_maker_done(&maker);
	grove_dirents_free(ents, n);
	if (r >= 0)
		node->listed = true, node->pruned = false;
	s->depth--;
	return r;
}

/* The model node for a stow-relative path, made (unlisted folders) as needed.
 * Returns NULL when a listed folder on the way says the path does not exist. */
struct grove_node *
grove_scan_model_path(struct scan *s, const char *relpath, bool *ret_absent)
{
	size_t off;
	struct grove_node *n = grove_node_walk(s->w->stow, relpath, &off);
	const char *p = relpath + off;

	*ret_absent = false;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		cleanup_free char *name = strndup(p, len);
		struct grove_node *kid;

		if (!name)
			return NULL;
		kid = grove_node_child(n, name);
		if (!kid) {
			if (n->listed) {
				*ret_absent = true;
				return NULL;
			}
			kid = grove_node_new(name, GROVE_FT_DIR, NULL);
			if (!kid || grove_node_add(n, kid) < 0) {
				grove_node_free(kid);
				return NULL;
			}
		}
		n = kid;
		p += len + (e ? 1 : 0);
	}
	return n;
}

/* Loads the folder at a stow-relative path completely (for unfolding). */
static int
load_subtree(struct scan *s, const char *relpath)
{
	bool absent;
	struct grove_node *n = grove_scan_model_path(s, relpath, &absent);
	struct grove_stat st;
	cleanup_fd int fd = -1;
	cleanup_free char *phys = NULL;
	bool on_mount;
	int r;

	if (!n)
		return absent ? 0 : grove_scan_oom(s);
	if (n->listed)
		return 0;
	{
		enum grove_ftype known;
		if (grove_scan_model_answer(s, relpath, &known) && known != GROVE_FT_DIR)
			return 0; /* a file (or nothing) the model already knows */
	}
	r = grove_scan_stat_follow(s, relpath, &phys, &st, s->err);
	if (r == -EXDEV || r == -ELOOP)
		return 0;
	if (r < 0)
		return r;
	if (st.type != GROVE_FT_DIR) {
		n->type = n->orig_type = st.type;
		return 0;
	}
	fd = grove_fs_open_beneath_mount(s->stow->fd, phys ? phys : relpath, O_RDONLY | O_DIRECTORY,
					 true, &on_mount, s->err);
	if (fd < 0)
		return fd;
	s->depth = 0;
	return load_dir(s, n, fd, grove_scan_stow_list_flags(s, on_mount), relpath, st.dev, st.ino,
			true);
}

/*
 * What following relpath finds, from the model alone: 1 when known (a node
 * in a folder read whole, or known missing), 0 when the scan has not read
 * that far.
 */
int
grove_scan_model_answer(struct scan *s, const char *relpath, enum grove_ftype *ret_type)
{
	size_t off;
	struct grove_node *n = grove_node_walk(s->w->stow, relpath, &off);

	if (relpath[off]) {
		bool dir = n->type == GROVE_FT_DIR ||
			   (n->type == GROVE_FT_LINK && n->dest_type == GROVE_FT_DIR);

		if (strcspn(relpath + off, "/") > NAME_MAX)
			return 0;
		if (dir && n->listed) {
			*ret_type = GROVE_FT_NONE;
			return 1;
		}
		return 0;
	}
	if (n->type == GROVE_FT_LINK) {
		if (n->escapes || n->dest_type == GROVE_FT_UNKNOWN)
			return 0;
		*ret_type = n->dest_type;
		return 1;
	}
	if (n->type == GROVE_FT_DIR && !n->listed && n->n_kids == 0 && n != s->w->stow)
		return 0; /* an intermediate folder made by model_path: not checked */
	*ret_type = n->type;
	return 1;
}

/* Records what following the stow-relative path finds, unless already known. */
int
grove_scan_note_dest(struct scan *s, const char *relpath, enum grove_ftype *ret_type)
{
	bool absent;
	struct grove_node *n;
	struct grove_stat st;
	cleanup_free char *phys = NULL;
	int r;

	if (grove_scan_model_answer(s, relpath, ret_type))
		return 0;

	r = grove_scan_stat_follow(s, relpath, &phys, &st, s->err);
	if (r == -EXDEV || r == -ELOOP) {
		st.type = GROVE_FT_NONE;
		r = 0;
	}
	if (r < 0)
		return r;
	*ret_type = st.type;
	n = grove_scan_model_path(s, relpath, &absent);
	if (!n)
		return absent ? 0 : grove_scan_oom(s);
	if (!n->listed && n->n_kids == 0)
		n->type = n->orig_type = st.type == GROVE_FT_NONE ? GROVE_FT_NONE : st.type;
	return 0;
}

int
grove_scan_note_pending(struct scan *s)
{
	int r = 0;

	for (size_t i = 0; i < s->n_pend && r >= 0; i++) {
		enum grove_ftype t = GROVE_FT_UNKNOWN;

		r = grove_scan_note_dest(s, s->pend[i].dest, &t);
		if (r >= 0)
			s->pend[i].tnode->dest_type = t;
	}
	return r;
}

void
grove_scan_end(struct scan *s)
{
	for (size_t i = 0; i < s->n_pend; i++) {
		free(s->pend[i].dest);
		free(s->pend[i].unfold);
	}
	free(s->pend);
	free(s->stack);
	grove_fd_batch_flush(&s->done_fds);
}

int
grove_scan_package_ignore(struct scan *s, const char *package)
{
	struct grove_world *w = s->w;
	struct grove_world_pkg *pkg = grove_world_pkg_add(w, package);
	cleanup_free char *rel = NULL;
	cleanup_free char *phys = NULL;
	cleanup_free char *text = NULL;
	cleanup_fd int pfd = -1;
	struct grove_stat st;
	size_t len;
	int r;

	if (!pkg)
		return grove_scan_oom(s);
	if (pkg->ignore_loaded)
		return 0;
	pkg->ignore_loaded = true;
	rel = grove_strdupf("%s/.stow-local-ignore", package);
	if (!rel)
		return grove_scan_oom(s);
	/* A package read whole answers from memory: no file, no syscall. */
	{
		struct grove_node *root = grove_node_child(w->stow, package);
		if (root && root->listed && !grove_node_child(root, ".stow-local-ignore"))
			return 0;
	}
	r = grove_scan_stat_follow(s, rel, &phys, &st, s->err);
	if (r == -EXDEV || r == -ELOOP || (r == 0 && st.type == GROVE_FT_NONE))
		return 0;
	if (r < 0)
		return r;
	pfd = grove_fs_open_beneath(s->stow->fd, phys ? phys : rel, O_RDONLY, true, s->err);
	if (pfd < 0)
		return pfd;
	r = grove_fs_read_fd(pfd, IGNORE_FILE_MAX, &text, &len, s->err);
	if (r < 0)
		return grove_error_prefix(s->err, "read '%s/%s'", s->stow->path, rel);
	{
		cleanup_free char *source = grove_strdupf("'%s/%s'", s->stow->path, rel);
		if (!source)
			return grove_scan_oom(s);
		r = grove_ignore_list_parse(text, source, &pkg->local_ignore, s->err);
	}
	return r < 0 ? r : 0;
}

static int
load_package(struct scan *s, const char *package)
{
	struct grove_node *n = grove_node_child(s->w->stow, package);
	struct grove_stat st = { 0 };
	cleanup_free char *text = NULL;
	bool on_mount = false;
	int fd = -1;
	int r;

	/* A package is nearly always a folder: opened first, it needs no stat (its inode is asked
	 * of the fd if ever needed, load_dir). Whatever else the open says (nothing there, a file,
	 * a link, a refusal), the stat below answers, and its messages are the same as ever. */
	if (!n || (!n->listed && n->type == GROVE_FT_DIR)) {
		fd = grove_fs_try_open_dir_at(s->stow->fd, package, &on_mount);
		if (fd >= 0)
			st.type = GROVE_FT_DIR;
	}
	if (fd < 0 && (!n || (!n->listed && n->type == GROVE_FT_DIR))) {
		r = grove_fs_stat_at(s->stow->fd, package, &st, s->err);
		if (r < 0)
			return r;
	}
	if (!n) {
		if (st.type == GROVE_FT_LINK) {
			r = grove_fs_readlink_at(s->stow->fd, package, &text, s->err);
			if (r < 0)
				return r;
		}
		n = grove_node_new(package, st.type, text);
		if (!n || grove_node_add(s->w->stow, n) < 0) {
			grove_node_free(n);
			if (fd >= 0)
				grove_fd_close(fd);
			return grove_scan_oom(s);
		}
	}
	if (!n->listed && n->type == GROVE_FT_DIR) {
		bool ino_known = fd < 0;

		if (fd < 0)
			fd = grove_fs_open_dir_at_mount(s->stow->fd, package, &on_mount, s->err);
		if (fd < 0)
			return fd;
		s->depth = 0;
		r = load_dir(s, n, fd, grove_scan_stow_list_flags(s, on_mount), package,
			     s->stow->dev, st.ino, ino_known);
		grove_fd_batch_add(&s->done_fds, fd);
	} else if (!n->listed && n->type == GROVE_FT_LINK) {
		s->depth = 0;
		r = load_link_dest(s, n, package);
	} else {
		r = 0; /* not a folder: the planner reports it */
	}
	if (r < 0)
		return r;
	/* A file named as a package (`stow *` in a folder with a README) has no ignore file
	 * to look for: the planner says the stow dir does not contain it. */
	if (n->type != GROVE_FT_DIR &&
	    (n->type != GROVE_FT_LINK || n->escapes || n->dest_type != GROVE_FT_DIR))
		return 0;
	return grove_scan_package_ignore(s, package);
}

/* ---- the target ---- */

/* A requested package's node at the current folder, with its package-relative path. */
int
grove_scan(struct grove_world *w, const struct grove_root *stow, const struct grove_root *target,
	   char *const *pkgs, size_t n_pkgs, const struct grove_scan_opts *opts,
	   struct grove_error *err)
{
	struct scan s = { .w = w, .stow = stow, .target = target, .o = opts, .err = err };
	struct pkg_at *at = NULL;
	size_t n_at = 0;
	int r = 0;

	w->stow_real = stow->real;
	w->stow = grove_node_new("", GROVE_FT_DIR, NULL);
	w->target = grove_node_new("", GROVE_FT_DIR, NULL);
	at = calloc(n_pkgs ? n_pkgs : 1, sizeof(*at));
	if (!w->stow || !w->target || !at) {
		free(at);
		return grove_scan_oom(&s);
	}
	/* What a package costs the heap before it is read (its root, its records, its part of the
	 * plan): reserved now, when the heap's top is still whole. */
	grove_tree_heap_reserve(n_pkgs < RESERVE_PACKAGES_MAX / RESERVE_PER_PACKAGE
					? n_pkgs * RESERVE_PER_PACKAGE
					: RESERVE_PACKAGES_MAX);
	s.prune = opts->prune && !opts->dotfiles && !opts->full_target && n_pkgs <= PRUNE_PKGS_MAX;
	s.pkgs = pkgs;
	s.n_pkgs = n_pkgs;
	for (size_t i = 0; i < n_pkgs && r >= 0; i++) {
		struct grove_node *pn;

		s.package = pkgs[i];
		r = load_package(&s, pkgs[i]);
		if (r < 0)
			break;
		pn = grove_node_child(w->stow, pkgs[i]);
		if (grove_scan_pkg_is_dir(pn)) {
			at[n_at].package = pkgs[i];
			at[n_at].node = pn;
			at[n_at].subpath = (char *)".";
			n_at++;
		}
	}
	s.prune = false; /* what is read from here on, the planner asks for */
	s.lookup = opts->lookup && !opts->full_target && !opts->dotfiles;
	if (r >= 0)
		r = grove_scan_target_dir(&s, w->target, target->fd, true, "", at, n_at);
	/* What the target's links into the stow dir point at, and what may be unfolded. */
	for (size_t i = 0; i < s.n_pend && r >= 0; i++) {
		struct pending *p = &s.pend[i];
		if (p->unfold) {
			const char *slash = strchr(p->unfold, '/');
			cleanup_free char *owner =
				slash ? strndup(p->unfold, (size_t)(slash - p->unfold))
				      : strdup(p->unfold);
			if (!owner) {
				r = grove_scan_oom(&s);
				break;
			}
			if (strcmp(p->unfold, p->dest) == 0 && pruned_at(&s, p->dest))
				continue; /* its own fold, of a folder no other package has */
			r = grove_scan_package_ignore(&s, owner);
			if (r >= 0)
				r = load_subtree(&s, p->unfold);
			if (r >= 0)
				r = load_subtree(&s, p->dest);
		}
	}
	if (r >= 0)
		r = grove_scan_note_pending(&s);
	grove_scan_end(&s);
	free(at);
	return r < 0 ? r : 0;
}

int
grove_scan_needs(struct grove_world *w, const struct grove_root *stow, struct grove_error *err)
{
	struct grove_scan_opts so = { 0 };
	struct scan s = { .w = w, .stow = stow, .o = &so, .err = err };
	int r = 0;

	for (size_t i = 0; i < w->n_needs && r >= 0; i++) {
		const char *slash = strchr(w->needs[i], '/');
		cleanup_free char *pkg = slash ? strndup(w->needs[i], (size_t)(slash - w->needs[i]))
					       : strdup(w->needs[i]);

		if (!pkg) {
			grove_fd_batch_flush(&s.done_fds);
			return grove_scan_oom(&s);
		}
		r = grove_scan_package_ignore(&s, pkg);
		if (r >= 0)
			r = load_subtree(&s, w->needs[i]);
	}
	for (size_t i = 0; i < w->n_needs; i++)
		free(w->needs[i]);
	w->n_needs = 0;
	free(s.stack);
	grove_fd_batch_flush(&s.done_fds);
	return r < 0 ? r : 0;
}
