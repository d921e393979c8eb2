/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The scan: reads the packages and the parts of the target a plan needs into in-memory trees,
 * beneath held roots. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "grove/path.h"
#include "grove/plan.h"
#include "grove/world.h"
#include "util.h"

/* .stow-local-ignore files larger than this are refused. */
#define IGNORE_FILE_MAX (1024 * 1024)
/* Followed package links nest at most this deep (a guard against link farms of links). */
#define FOLLOW_DEPTH_MAX 32
/* A package's folders are kept whole until it has this many entries loaded; past that, a
 * folder of at least PRUNE_MIN entries (its whole subtree) that the planner cannot enter is
 * dropped once read and checked (see load_dir). Small packages never pay for the checks. */
#define PRUNE_START 1024
#define PRUNE_MIN   16
/* Checking where a folder lands costs a stat per other package: beyond this many, no pruning. */
#define PRUNE_PKGS_MAX 32

void
grove_world_init(struct grove_world *w)
{
	memset(w, 0, sizeof(*w));
}

void
grove_world_release(struct grove_world *w)
{
	if (!w)
		return;
	grove_node_free(w->target);
	grove_node_free(w->stow);
	free(w->stow_path);
	for (size_t i = 0; i < w->n_pkgs; i++) {
		free(w->pkgs[i].name);
		grove_ignore_list_free(w->pkgs[i].local_ignore);
	}
	free(w->pkgs);
	free(w->pkg_slots);
	grove_ignore_list_free(w->global_ignore);
	for (size_t i = 0; i < w->n_needs; i++)
		free(w->needs[i]);
	free(w->needs);
	for (size_t i = 0; i < w->n_tneeds; i++)
		free(w->tneeds[i]);
	free(w->tneeds);
	grove_world_init(w);
}

static size_t
pkg_hash(const char *s)
{
	size_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

struct grove_world_pkg *
grove_world_pkg(const struct grove_world *w, const char *name)
{
	if (!w->pkg_slots) {
		for (size_t i = 0; i < w->n_pkgs; i++)
			if (strcmp(w->pkgs[i].name, name) == 0)
				return &w->pkgs[i];
		return NULL;
	}
	for (size_t i = pkg_hash(name) & (w->pkg_slots_cap - 1); w->pkg_slots[i];
	     i = (i + 1) & (w->pkg_slots_cap - 1))
		if (strcmp(w->pkgs[w->pkg_slots[i] - 1].name, name) == 0)
			return &w->pkgs[w->pkg_slots[i] - 1];
	return NULL;
}

/* Indexes w->pkgs[w->n_pkgs - 1] (just added) by name; the hash stays under half full. */
static int
pkg_index_added(struct grove_world *w)
{
	if (2 * w->n_pkgs > w->pkg_slots_cap) {
		size_t cap = w->pkg_slots_cap ? w->pkg_slots_cap * 2 : 64;
		size_t *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		free(w->pkg_slots);
		w->pkg_slots = slots;
		w->pkg_slots_cap = cap;
		for (size_t k = 0; k < w->n_pkgs; k++) {
			size_t i = pkg_hash(w->pkgs[k].name) & (cap - 1);

			while (slots[i])
				i = (i + 1) & (cap - 1);
			slots[i] = k + 1;
		}
		return 0;
	}
	{
		size_t i = pkg_hash(w->pkgs[w->n_pkgs - 1].name) & (w->pkg_slots_cap - 1);

		while (w->pkg_slots[i])
			i = (i + 1) & (w->pkg_slots_cap - 1);
		w->pkg_slots[i] = w->n_pkgs;
	}
	return 0;
}

struct scan {
	struct grove_world *w;
	const struct grove_root *stow;
	const struct grove_root *target;
	const struct grove_scan_opts *o;
	struct grove_error *err;
	/* (dev, ino) of the folders being loaded, to stop at a link back to an ancestor */
	struct dev_ino {
		dev_t dev;
		ino_t ino;
		int zone; /* pruning: 0 not checked, 1 the planner cannot enter it, -1 it can */
	} * stack;
	size_t depth, cap_stack;
	size_t follows; /* package links being followed, nested */
	/* Pruning (grove_scan_opts.prune), while load_package reads a package: */
	bool prune;
	const char *package; /* the package being read */
	char *const *pkgs;   /* every package of the request */
	size_t n_pkgs;
	size_t loaded; /* nodes made for the package so far */
	size_t bad;    /* entries validate_tree refuses, seen so far */
	/* owned links whose destinations must be known: (stow-relative dest, pkg subpaths) */
	struct pending {
		char *dest;   /* stow-relative path the link points at */
		char *unfold; /* stow-relative folder the plan may unfold, or NULL */
		struct grove_node *tnode;
	} * pend;
	size_t n_pend, cap_pend;
};

static int
oom(struct scan *s)
{
	return grove_error_set(s->err, -ENOMEM, "scan: out of memory");
}

/* ---- the stow dir ---- */

static int load_dir(struct scan *s, struct grove_node *node, int dfd, const char *relpath,
		    dev_t dev, ino_t ino);

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

		if (strncmp(t, r, l) || t[l] != '/')
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
static int
stat_follow(struct scan *s, const char *relpath, char **ret_phys, struct grove_stat *st,
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
		return oom(s);
	r = grove_fs_stat_beneath_follow(s->stow->fd, alt, st, err);
	*ret_phys = alt;
	return r;
}

static bool
on_stack(struct scan *s, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < s->depth; i++)
		if (s->stack[i].dev == dev && s->stack[i].ino == ino)
			return true;
	return false;
}

/* Loads what a package link points at: its type, and a folder's listing. */
static int
load_link_dest(struct scan *s, struct grove_node *n, const char *relpath)
{
	struct grove_stat st;
	struct grove_error e;
	cleanup_fd int fd = -1;
	cleanup_free char *phys = NULL;
	int r;

	/* A link to its own folder or above it would be followed forever. */
	if (n->link && n->link[0] != '/') {
		cleanup_free char *parent = grove_path_parent(relpath);
		cleanup_free char *dest = parent ? grove_path_join(parent, n->link) : NULL;
		if (!dest)
			return oom(s);
		if (grove_path_under(relpath, dest)) {
			n->escapes = true;
			n->dest_type = GROVE_FT_NONE;
			s->bad++;
			return 0;
		}
	}
	r = stat_follow(s, relpath, &phys, &st, &e);
	if (r == -EXDEV || r == -ELOOP) {
		n->escapes = true;
		n->dest_type = GROVE_FT_NONE;
		s->bad++;
		return 0;
	}
	if (r < 0) {
		*s->err = e;
		return r;
	}
	n->dest_type = st.type;
	if (st.type != GROVE_FT_DIR)
		return 0;
	if (on_stack(s, st.dev, st.ino) || s->follows >= FOLLOW_DEPTH_MAX) {
		/* A link back to a folder being loaded: following it never ends. */
		n->escapes = true;
		s->bad++;
		return 0;
	}
	fd = grove_fs_open_beneath(s->stow->fd, phys ? phys : relpath, O_RDONLY | O_DIRECTORY, true,
				   s->err);
	if (fd < 0)
		return fd;
	s->follows++;
	r = load_dir(s, n, fd, relpath, st.dev, st.ino);
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

/*
 * Whether the planner can enter the package folder at the stow-relative path
 * prefix ("pkg/a/b"): only when something is at the same place in the target
 * ("a/b", links followed) but a link to this folder, or another package of the
 * request has "a/b". Any error counts as "it can".
 */
static bool
enterable(struct scan *s, const char *prefix)
{
	const char *sub = strchr(prefix, '/') + 1;
	struct grove_stat st;
	struct grove_error e;

	int r = grove_fs_stat_beneath_follow(s->target->fd, sub, &st, &e);

	/* A link leaving the target (EXDEV) may be the fold into the stow dir. */
	if ((r < 0 && r != -EXDEV && r != -ELOOP) ||
	    ((r < 0 || st.type != GROVE_FT_NONE) && !folded_here(s, sub, prefix)))
		return true;
	for (size_t i = 0; i < s->n_pkgs; i++) {
		cleanup_free char *other = NULL;

		if (strcmp(s->pkgs[i], s->package) == 0)
			continue;
		cleanup_free char *phys = NULL;

		other = grove_strdupf("%s/%s", s->pkgs[i], sub);
		if (!other || stat_follow(s, other, &phys, &st, &e) < 0 || st.type != GROVE_FT_NONE)
			return true;
	}
	return false;
}

/*
 * Whether the folder node (at relpath, the top of the load stack), read whole
 * and holding nothing validate_tree refuses, can be dropped: the planner will
 * fold it into one link and never look inside. That holds when no folder on
 * the way to it, below the package root, can be entered (enterable): then
 * the target has nothing there either, so the plan links it whole. Each
 * folder on the stack is checked once. Should the planner ask for it all the
 * same, the node is marked pruned and the planner asks for it again (need).
 */
static bool
may_prune(struct scan *s, const struct grove_node *node, const char *relpath)
{
	char prefix[PATH_MAX];
	size_t len = 0;

	if (!s->prune || s->follows || node->type != GROVE_FT_DIR || s->depth < 2 ||
	    s->loaded < PRUNE_START || strlen(relpath) >= sizeof(prefix))
		return false;
	for (size_t i = 0; i < s->depth; i++) {
		/* prefix = the first i + 1 components of relpath */
		const char *end = strchr(relpath + len + (i ? 1 : 0), '/');

		len = end ? (size_t)(end - relpath) : strlen(relpath);
		if (i == 0)
			continue; /* the package root: the target root itself */
		if (s->stack[i].zone == 0) {
			memcpy(prefix, relpath, len);
			prefix[len] = '\0';
			s->stack[i].zone = enterable(s, prefix) ? -1 : 1;
		}
		if (s->stack[i].zone > 0)
			return true;
	}
	return false;
}

/* Whether the model node at the stow-relative path is a pruned folder. */
static bool
pruned_at(struct scan *s, const char *relpath)
{
	struct grove_node *n = grove_node_lookup(s->w->stow, relpath);

	return n && n->pruned;
}

/* Drops a folder's entries, keeping the node: unlisted and marked pruned. */
static void
prune(struct grove_node *node)
{
	for (size_t i = 0; i < node->n_kids; i++)
		grove_node_free(node->kids[i]);
	free(node->kids);
	free(node->index);
	node->kids = node->index = NULL;
	node->n_kids = node->cap_kids = node->index_cap = 0;
	node->listed = false;
	node->pruned = true;
}

/* Fills node (a folder, or a link to one) with the listing of dfd, recursively.
 * Kids already present and listed are kept, so partial loads merge. */
/* (dev, ino) identify the folder open at dfd, for the loop check of followed
 * links: a subfolder's come from its parent's listing (d_ino, same device), so
 * reading a folder costs no fstat. */
static int
load_dir(struct scan *s, struct grove_node *node, int dfd, const char *relpath, dev_t dev,
	 ino_t ino)
{
	struct grove_dirent *ents = NULL;
	size_t n = 0, loaded, bad;
	int r;

	if (node->listed)
		return 0;
	if (grove_path_slashes(relpath) >= GROVE_TREE_MAX_DEPTH)
		return grove_error_set(s->err, -GROVE_E_BADINPUT,
				       "read package folder '%s/%.200s...': more than %d folders "
				       "deep, which grove does not support",
				       s->stow->path, relpath, GROVE_TREE_MAX_DEPTH);
	r = grove_fs_list(dfd, &ents, &n, s->err);
	if (r < 0)
		return grove_error_prefix(s->err, "read package folder '%s/%s'", s->stow->path,
					  relpath);
	if (s->depth == s->cap_stack) {
		size_t cap = s->cap_stack ? s->cap_stack * 2 : 64;
		struct dev_ino *st = realloc(s->stack, cap * sizeof(*st));

		if (!st) {
			grove_dirents_free(ents, n);
			return oom(s);
		}
		s->stack = st;
		s->cap_stack = cap;
	}
	s->stack[s->depth].dev = dev;
	s->stack[s->depth].ino = ino;
	s->stack[s->depth].zone = 0;
	s->depth++;
	loaded = s->loaded;
	bad = s->bad;
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct grove_node *kid = grove_node_child(node, ents[i].name);
		cleanup_free char *kpath = grove_child_path(relpath, ents[i].name);
		cleanup_free char *text = NULL;

		if (!kpath) {
			r = oom(s);
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
			kid = grove_node_new(ents[i].name, ents[i].type, text);
			if (!kid || grove_node_add(node, kid) < 0) {
				grove_node_free(kid);
				r = oom(s);
				break;
			}
			s->loaded++;
			if (ents[i].type == GROVE_FT_OTHER)
				s->bad++;
		}
		if (ents[i].type == GROVE_FT_DIR) {
			cleanup_fd int kfd = grove_fs_open_dir_at(dfd, ents[i].name, s->err);
			if (kfd < 0) {
				r = grove_error_prefix(s->err, "read package folder '%s/%s'",
						       s->stow->path, kpath);
				break;
			}
			kid->type = kid->orig_type = GROVE_FT_DIR;
			r = load_dir(s, kid, kfd, kpath, dev, ents[i].ino);
		} else if (ents[i].type == GROVE_FT_LINK) {
			if (kid->link && kid->link[0] == '/') {
				kid->dest_type = GROVE_FT_NONE; /* never followed */
				continue;
			}
			r = load_link_dest(s, kid, kpath);
		}
	}
	grove_dirents_free(ents, n);
	if (r >= 0 && s->bad == bad && s->loaded - loaded >= PRUNE_MIN &&
	    may_prune(s, node, relpath))
		prune(node);
	else if (r >= 0)
		node->listed = true, node->pruned = false;
	s->depth--;
	return r;
}

/* The model node for a stow-relative path, made (unlisted folders) as needed.
 * Returns NULL when a listed folder on the way says the path does not exist. */
static struct grove_node *
model_path(struct scan *s, const char *relpath, bool *ret_absent)
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

static int model_answer(struct scan *s, const char *relpath, enum grove_ftype *ret_type);

/* Loads the folder at a stow-relative path completely (for unfolding). */
static int
load_subtree(struct scan *s, const char *relpath)
{
	bool absent;
	struct grove_node *n = model_path(s, relpath, &absent);
	struct grove_stat st;
	cleanup_fd int fd = -1;
	cleanup_free char *phys = NULL;
	int r;

	if (!n)
		return absent ? 0 : oom(s);
	if (n->listed)
		return 0;
	{
		enum grove_ftype known;
		if (model_answer(s, relpath, &known) && known != GROVE_FT_DIR)
			return 0; /* a file (or nothing) the model already knows */
	}
	r = stat_follow(s, relpath, &phys, &st, s->err);
	if (r == -EXDEV || r == -ELOOP)
		return 0;
	if (r < 0)
		return r;
	if (st.type != GROVE_FT_DIR) {
		n->type = n->orig_type = st.type;
		return 0;
	}
	fd = grove_fs_open_beneath(s->stow->fd, phys ? phys : relpath, O_RDONLY | O_DIRECTORY, true,
				   s->err);
	if (fd < 0)
		return fd;
	s->depth = 0;
	return load_dir(s, n, fd, relpath, st.dev, st.ino);
}

/*
 * What following relpath finds, from the model alone: 1 when known (a node
 * in a folder read whole, or known missing), 0 when the scan has not read
 * that far.
 */
static int
model_answer(struct scan *s, const char *relpath, enum grove_ftype *ret_type)
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
static int
note_dest(struct scan *s, const char *relpath, enum grove_ftype *ret_type)
{
	bool absent;
	struct grove_node *n;
	struct grove_stat st;
	cleanup_free char *phys = NULL;
	int r;

	if (model_answer(s, relpath, ret_type))
		return 0;

	r = stat_follow(s, relpath, &phys, &st, s->err);
	if (r == -EXDEV || r == -ELOOP) {
		st.type = GROVE_FT_NONE;
		r = 0;
	}
	if (r < 0)
		return r;
	*ret_type = st.type;
	n = model_path(s, relpath, &absent);
	if (!n)
		return absent ? 0 : oom(s);
	if (!n->listed && n->n_kids == 0)
		n->type = n->orig_type = st.type == GROVE_FT_NONE ? GROVE_FT_NONE : st.type;
	return 0;
}

static int
load_package_ignore(struct scan *s, const char *package)
{
	struct grove_world *w = s->w;
	struct grove_world_pkg *pkg = grove_world_pkg(w, package);
	cleanup_free char *rel = NULL;
	cleanup_free char *phys = NULL;
	cleanup_free char *text = NULL;
	cleanup_fd int pfd = -1;
	struct grove_stat st;
	size_t len;
	int r;

	if (!pkg) {
		if (w->n_pkgs == w->cap_pkgs) {
			size_t cap = w->cap_pkgs ? w->cap_pkgs * 2 : 8;
			struct grove_world_pkg *np = realloc(w->pkgs, cap * sizeof(*np));
			if (!np)
				return oom(s);
			w->pkgs = np;
			w->cap_pkgs = cap;
		}
		pkg = &w->pkgs[w->n_pkgs];
		memset(pkg, 0, sizeof(*pkg));
		pkg->name = strdup(package);
		if (!pkg->name)
			return oom(s);
		w->n_pkgs++;
		if (pkg_index_added(w) < 0)
			return oom(s);
	}
	if (pkg->ignore_loaded)
		return 0;
	pkg->ignore_loaded = true;
	rel = grove_strdupf("%s/.stow-local-ignore", package);
	if (!rel)
		return oom(s);
	/* A package read whole answers from memory: no file, no syscall. */
	{
		struct grove_node *root = grove_node_child(w->stow, package);
		if (root && root->listed && !grove_node_child(root, ".stow-local-ignore"))
			return 0;
	}
	r = stat_follow(s, rel, &phys, &st, s->err);
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
			return oom(s);
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
	int r;

	if (!n || (!n->listed && n->type == GROVE_FT_DIR)) {
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
			return oom(s);
		}
	}
	if (!n->listed && n->type == GROVE_FT_DIR) {
		cleanup_fd int fd = grove_fs_open_dir_at(s->stow->fd, package, s->err);
		if (fd < 0)
			return fd;
		s->depth = 0;
		r = load_dir(s, n, fd, package, s->stow->dev, st.ino);
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
	return load_package_ignore(s, package);
}

/* ---- the target ---- */

/* A requested package's node at the current folder, with its package-relative path. */
struct pkg_at {
	const char *package;
	struct grove_node *node; /* a folder (or link to one) in the package */
	char *subpath;           /* "." at the package root */
};

static int
add_pending(struct scan *s, struct grove_node *tnode, const char *dest, const char *unfold)
{
	struct pending *p;

	if (s->n_pend == s->cap_pend) {
		size_t cap = s->cap_pend ? s->cap_pend * 2 : 64;
		struct pending *np = realloc(s->pend, cap * sizeof(*np));
		if (!np)
			return oom(s);
		s->pend = np;
		s->cap_pend = cap;
	}
	p = &s->pend[s->n_pend];
	p->tnode = tnode;
	p->dest = strdup(dest);
	p->unfold = unfold ? strdup(unfold) : NULL;
	if (!p->dest || (unfold && !p->unfold)) {
		free(p->dest);
		free(p->unfold);
		return oom(s);
	}
	s->n_pend++;
	return 0;
}

static bool
pkg_is_dir(const struct grove_node *n)
{
	return n &&
	       (n->type == GROVE_FT_DIR ||
		(n->type == GROVE_FT_LINK && n->dest_type == GROVE_FT_DIR)) &&
	       n->listed;
}

/*
 * Where a target folder's entries come from when many packages share it: every
 * package entry of the folder under the target name it lands on (its own name,
 * and with --dotfiles ".X" for "dot-X"), sorted by that name, then package,
 * then form. Built once per folder, so matching a folder of E entries against
 * P packages costs O((E + package entries) log) instead of E * P lookups.
 */
struct match_key {
	const char *key; /* the target name */
	char *own;       /* key, when it had to be made (".X" for "dot-X") */
	size_t pkg;      /* index into the folder's pkgs */
	int form;        /* 0: same name, 1: dot-X for .X (matching_kids' order) */
	struct grove_node *kid;
};

struct match_index {
	struct match_key *k;
	size_t n;
};

/* Below this many packages a folder is matched by a lookup in each. */
#define MATCH_INDEX_MIN 8

static int
match_key_cmp(const void *a, const void *b)
{
	const struct match_key *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	if (x->pkg != y->pkg)
		return x->pkg < y->pkg ? -1 : 1;
	return x->form - y->form;
}

static void
match_index_release(struct match_index *mi)
{
	for (size_t i = 0; i < mi->n; i++)
		free(mi->k[i].own);
	free(mi->k);
	mi->k = NULL;
	mi->n = 0;
}

static int
match_index_build(const struct scan *s, const struct pkg_at *pkgs, size_t n_pkgs,
		  struct match_index *mi)
{
	size_t total = 0, k = 0;

	for (size_t i = 0; i < n_pkgs; i++)
		total += pkgs[i].node->n_kids;
	mi->k = calloc(total ? 2 * total : 1, sizeof(*mi->k));
	if (!mi->k)
		return -ENOMEM;
	for (size_t i = 0; i < n_pkgs; i++) {
		const struct grove_node *pn = pkgs[i].node;

		for (size_t j = 0; j < pn->n_kids; j++) {
			struct grove_node *kid = pn->kids[j];
			const char *rest = kid->name + 4;

			mi->k[k++] = (struct match_key){ .key = kid->name, .pkg = i, .kid = kid };
			/* The target name ".X" looks for "dot-X" when X is not empty and does
			 * not start with '.' (matching_kids' dotted form, read backwards). */
			if (s->o->dotfiles && strncmp(kid->name, "dot-", 4) == 0 && rest[0] &&
			    rest[0] != '.') {
				char *own = grove_strdupf(".%s", rest);

				if (!own) {
					mi->n = k;
					match_index_release(mi);
					return -ENOMEM;
				}
				mi->k[k++] = (struct match_key){
					.key = own, .own = own, .pkg = i, .form = 1, .kid = kid
				};
			}
		}
	}
	mi->n = k;
	qsort(mi->k, mi->n, sizeof(*mi->k), match_key_cmp);
	return 0;
}

/* The first index entry whose key is name, or mi->n. */
static size_t
match_index_find(const struct match_index *mi, const char *name)
{
	size_t lo = 0, hi = mi->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(mi->k[mid].key, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < mi->n && strcmp(mi->k[lo].key, name) == 0 ? lo : mi->n;
}

/* Appends package entry kid of the folder at pa to out[*k]; on failure frees
 * every subpath appended so far and returns -ENOMEM. */
static int
put_match(struct pkg_at *out, size_t *k, const struct pkg_at *pa, struct grove_node *kid)
{
	char *sub = grove_path_join(pa->subpath, kid->name);

	if (!sub) {
		while (*k > 0)
			free(out[--*k].subpath);
		return -ENOMEM;
	}
	out[*k] = (struct pkg_at){ .package = pa->package, .node = kid, .subpath = sub };
	(*k)++;
	return 0;
}

/*
 * The package entries that land on target name `name` in this folder: the
 * entry of that name and, with --dotfiles, "dot-X" for ".X", in package order.
 * A hash lookup per package, or with mi (many packages) a search of the
 * folder's index. out must hold 2 * n_pkgs entries; each out[k].subpath is
 * malloc'd (the package-relative path).
 */
static int
matching_kids(const struct scan *s, const struct pkg_at *pkgs, size_t n_pkgs,
	      const struct match_index *mi, const char *name, struct pkg_at *out, size_t *ret_n)
{
	cleanup_free char *dotted = NULL;
	size_t k = 0;

	if (mi) {
		for (size_t x = match_index_find(mi, name);
		     x < mi->n && strcmp(mi->k[x].key, name) == 0; x++) {
			if (put_match(out, &k, &pkgs[mi->k[x].pkg], mi->k[x].kid) < 0)
				return -ENOMEM;
		}
		*ret_n = k;
		return 0;
	}
	if (s->o->dotfiles && name[0] == '.' && name[1] && name[1] != '.') {
		dotted = grove_strdupf("dot-%s", name + 1);
		if (!dotted)
			return -ENOMEM;
	}
	for (size_t i = 0; i < n_pkgs; i++) {
		const char *forms[2] = { name, dotted };

		for (size_t f = 0; f < 2; f++) {
			struct grove_node *kid =
				forms[f] ? grove_node_child(pkgs[i].node, forms[f]) : NULL;

			if (kid && put_match(out, &k, &pkgs[i], kid) < 0)
				return -ENOMEM;
		}
	}
	*ret_n = k;
	return 0;
}

static int scan_target_dir(struct scan *s, struct grove_node *dir, int dfd, const char *tpath,
			   const struct pkg_at *pkgs, size_t n_pkgs);

static int
scan_target_entry(struct scan *s, struct grove_node *kid, int dfd, const char *tpath,
		  const char *kpath, const struct pkg_at *pkgs, size_t n_pkgs,
		  const struct match_index *mi)
{
	struct pkg_at *m = NULL;
	size_t nm = 0;
	int r = 0;

	if (n_pkgs) {
		/* With an index the matches are counted first: a folder shared by
		 * many packages must not cost 2 * n_pkgs per entry. */
		size_t cap = 2 * n_pkgs;

		if (mi) {
			size_t x = match_index_find(mi, kid->name);

			cap = 1;
			while (x < mi->n && strcmp(mi->k[x].key, kid->name) == 0)
				x++, cap++;
		}
		m = calloc(cap, sizeof(*m));
		if (!m || matching_kids(s, pkgs, n_pkgs, mi, kid->name, m, &nm) < 0) {
			free(m);
			return oom(s);
		}
	}

	if (kid->orig_type == GROVE_FT_LINK) {
		cleanup_free char *parent = grove_path_parent(kpath);
		cleanup_free char *joined = parent ? grove_path_join(parent, kid->orig_link) : NULL;
		const char *rest;

		if (!parent || !joined) {
			r = oom(s);
			goto out;
		}
		rest = kid->orig_link[0] == '/' ? NULL
						: grove_path_strip_prefix(joined, s->w->stow_path);
		if (rest && rest[0]) {
			enum grove_ftype t;

			/* Ours: the plan may ask what it points at, and unfold it. What the
			 * model already knows (a package read whole) is final: answered now,
			 * not kept as a pending entry (100,000 of them for a restow of
			 * nofold100k). */
			if (s->w->stow && model_answer(s, rest, &t))
				kid->dest_type = t;
			else
				r = add_pending(s, kid, rest, NULL);
			for (size_t i = 0; i < nm && r >= 0; i++) {
				const char *slash = strchr(rest, '/');
				cleanup_free char *owner = NULL;
				cleanup_free char *unfold = NULL;

				/* Only a folder (or a link to one) of a requested package
				 * unfolds a link: a file there is a conflict. */
				if (m[i].node->type == GROVE_FT_REG)
					continue;
				owner = slash ? strndup(rest, (size_t)(slash - rest))
					      : strdup(rest);
				unfold = owner ? grove_strdupf("%s/%s", owner, m[i].subpath) : NULL;
				if (!unfold) {
					r = oom(s);
					break;
				}
				r = add_pending(s, kid, rest, unfold);
			}
		}
	} else if (kid->orig_type == GROVE_FT_DIR && (s->o->full_target || nm > 0)) {
		struct pkg_at *sub = NULL;
		size_t ns = 0;

		if (strcmp(kpath, s->w->stow_path) == 0)
			goto out; /* the stow dir itself: never planned into */
		sub = calloc(nm ? nm : 1, sizeof(*sub));
		if (!sub) {
			r = oom(s);
			goto out;
		}
		for (size_t i = 0; i < nm; i++)
			if (pkg_is_dir(m[i].node))
				sub[ns++] = m[i];
		if (ns || s->o->full_target) {
			cleanup_fd int kfd = grove_fs_open_dir_at(dfd, kid->name, s->err);
			if (kfd < 0)
				r = grove_error_prefix(s->err, "read target folder '%s/%s'",
						       s->target->path, kpath);
			else
				r = scan_target_dir(s, kid, kfd, kpath, sub, ns);
		}
		free(sub);
	}
out:
	for (size_t i = 0; i < nm; i++)
		free(m[i].subpath);
	free(m);
	(void)tpath;
	return r;
}

static int
scan_target_dir(struct scan *s, struct grove_node *dir, int dfd, const char *tpath,
		const struct pkg_at *pkgs, size_t n_pkgs)
{
	struct match_index mi = { 0 };
	struct grove_dirent *ents = NULL;
	size_t n = 0;
	int r;

	r = grove_fs_list(dfd, &ents, &n, s->err);
	if (r < 0)
		return grove_error_prefix(s->err, "read target folder '%s%s%s'", s->target->path,
					  tpath[0] ? "/" : "", tpath);
	dir->listed = true;
	if (n_pkgs >= MATCH_INDEX_MIN && match_index_build(s, pkgs, n_pkgs, &mi) < 0) {
		grove_dirents_free(ents, n);
		return oom(s);
	}
	for (size_t i = 0; i < n && r >= 0; i++) {
		cleanup_free char *text = NULL;
		cleanup_free char *kpath = grove_child_path(tpath, ents[i].name);
		struct grove_node *kid;

		if (!kpath) {
			r = oom(s);
			break;
		}
		if (ents[i].type == GROVE_FT_LINK) {
			r = grove_fs_readlink_at(dfd, ents[i].name, &text, s->err);
			if (r < 0) {
				grove_error_prefix(s->err, "read target '%s/%s'", s->target->path,
						   kpath);
				break;
			}
		}
		kid = grove_node_new(ents[i].name, ents[i].type, text);
		if (!kid || grove_node_add(dir, kid) < 0) {
			grove_node_free(kid);
			r = oom(s);
			break;
		}
		r = scan_target_entry(s, kid, dfd, tpath, kpath, pkgs, n_pkgs,
				      n_pkgs >= MATCH_INDEX_MIN ? &mi : NULL);
	}
	match_index_release(&mi);
	grove_dirents_free(ents, n);
	return r;
}

int
grove_scan(struct grove_world *w, const struct grove_root *stow, const struct grove_root *target,
	   char *const *pkgs, size_t n_pkgs, const struct grove_scan_opts *opts,
	   struct grove_error *err)
{
	struct scan s = { .w = w, .stow = stow, .target = target, .o = opts, .err = err };
	struct pkg_at *at = NULL;
	size_t n_at = 0;
	int r = 0;

	w->stow = grove_node_new("", GROVE_FT_DIR, NULL);
	w->target = grove_node_new("", GROVE_FT_DIR, NULL);
	at = calloc(n_pkgs ? n_pkgs : 1, sizeof(*at));
	if (!w->stow || !w->target || !at) {
		free(at);
		return oom(&s);
	}
	s.prune = opts->prune && !opts->dotfiles && !opts->full_target && n_pkgs <= PRUNE_PKGS_MAX;
	s.pkgs = pkgs;
	s.n_pkgs = n_pkgs;
	for (size_t i = 0; i < n_pkgs && r >= 0; i++) {
		struct grove_node *pn;

		s.package = pkgs[i];
		s.loaded = 0;
		r = load_package(&s, pkgs[i]);
		if (r < 0)
			break;
		pn = grove_node_child(w->stow, pkgs[i]);
		if (pkg_is_dir(pn)) {
			at[n_at].package = pkgs[i];
			at[n_at].node = pn;
			at[n_at].subpath = (char *)".";
			n_at++;
		}
	}
	s.prune = false; /* what is read from here on, the planner asks for */
	if (r >= 0) {
		w->target->listed = true;
		r = scan_target_dir(&s, w->target, target->fd, "", at, n_at);
	}
	/* What the target's links into the stow dir point at, and what may be unfolded. */
	for (size_t i = 0; i < s.n_pend && r >= 0; i++) {
		struct pending *p = &s.pend[i];
		if (p->unfold) {
			const char *slash = strchr(p->unfold, '/');
			cleanup_free char *owner =
				slash ? strndup(p->unfold, (size_t)(slash - p->unfold))
				      : strdup(p->unfold);
			if (!owner) {
				r = oom(&s);
				break;
			}
			if (strcmp(p->unfold, p->dest) == 0 && pruned_at(&s, p->dest))
				continue; /* its own fold, of a folder no other package has */
			r = load_package_ignore(&s, owner);
			if (r >= 0)
				r = load_subtree(&s, p->unfold);
			if (r >= 0)
				r = load_subtree(&s, p->dest);
		}
	}
	for (size_t i = 0; i < s.n_pend && r >= 0; i++) {
		enum grove_ftype t = GROVE_FT_UNKNOWN;
		r = note_dest(&s, s.pend[i].dest, &t);
		if (r >= 0)
			s.pend[i].tnode->dest_type = t;
	}
	for (size_t i = 0; i < s.n_pend; i++) {
		free(s.pend[i].dest);
		free(s.pend[i].unfold);
	}
	free(s.pend);
	free(s.stack);
	free(at);
	return r < 0 ? r : 0;
}

int
grove_world_need(struct grove_world *w, const char *relpath)
{
	char *c;

	for (size_t i = 0; i < w->n_needs; i++)
		if (strcmp(w->needs[i], relpath) == 0)
			return 0;
	if (w->n_needs == w->cap_needs) {
		size_t cap = w->cap_needs ? w->cap_needs * 2 : 8;
		char **n = realloc(w->needs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		w->needs = n;
		w->cap_needs = cap;
	}
	if (!(c = strdup(relpath)))
		return -ENOMEM;
	w->needs[w->n_needs++] = c;
	return 0;
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

		if (!pkg)
			return oom(&s);
		r = load_package_ignore(&s, pkg);
		if (r >= 0)
			r = load_subtree(&s, w->needs[i]);
	}
	for (size_t i = 0; i < w->n_needs; i++)
		free(w->needs[i]);
	w->n_needs = 0;
	free(s.stack);
	return r < 0 ? r : 0;
}

static void
reset_node(struct grove_node *n)
{
	n->type = n->orig_type;
	grove_node_set_link(n, n->orig_link);
	free(n->adopt_to);
	n->adopt_to = NULL;
	n->cleaned = false;
	if (n->orig_type == GROVE_FT_NONE)
		n->listed = false;
	for (size_t i = 0; i < n->n_kids; i++)
		reset_node(n->kids[i]);
}

void
grove_world_reset_plan(struct grove_world *w)
{
	if (w->target)
		reset_node(w->target);
}

/* Lists the target folder at node (path tpath) into the view, once. */
static int
list_target_node(struct scan *s, struct grove_node *node, const char *tpath)
{
	cleanup_fd int fd = -1;

	if (node->listed || node->orig_type != GROVE_FT_DIR)
		return 0;
	fd = grove_fs_open_dir_beneath(s->target->fd, tpath[0] ? tpath : ".", s->err);
	if (fd < 0)
		return grove_error_prefix(s->err, "read target folder '%s/%s'", s->target->path,
					  tpath);
	return scan_target_dir(s, node, fd, tpath, NULL, 0);
}

int
grove_scan_target_paths(struct grove_world *w, const struct grove_root *target, char *const *paths,
			size_t n, struct grove_error *err)
{
	struct grove_scan_opts so = { 0 };
	struct scan s = { .w = w, .target = target, .o = &so, .err = err };
	int r = 0;

	if (!w->target) {
		w->target = grove_node_new("", GROVE_FT_DIR, NULL);
		if (!w->target)
			return oom(&s);
	}
	if (!w->stow_path && !(w->stow_path = strdup("\x01")))
		return oom(&s); /* owns nothing: no link is taken for a stow dir's */
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct grove_node *node = w->target;
		const char *p = paths[i];
		char *prefix = calloc(1, strlen(paths[i]) + 1);

		if (!prefix)
			return oom(&s);
		for (;;) {
			const char *e = strchr(p, '/');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			cleanup_free char *name = strndup(p, len);

			r = list_target_node(&s, node, prefix);
			if (r < 0 || !name)
				break;
			node = grove_node_child(node, name);
			if (!node || node->orig_type != GROVE_FT_DIR)
				break;
			/* prefix: paths[i] up to the end of this name */
			memcpy(prefix, paths[i], (size_t)(p - paths[i]) + len);
			if (!e) {
				/* The path itself, when a folder: its entries matter too. */
				r = list_target_node(&s, node, prefix);
				break;
			}
			p = e + 1;
		}
		free(prefix);
	}
	for (size_t i = 0; i < s.n_pend; i++) {
		free(s.pend[i].dest);
		free(s.pend[i].unfold);
	}
	free(s.pend);
	free(s.stack);
	return r < 0 ? r : 0;
}

int
grove_world_tneed(struct grove_world *w, const char *tpath)
{
	char *c;

	for (size_t i = 0; i < w->n_tneeds; i++)
		if (strcmp(w->tneeds[i], tpath) == 0)
			return 0;
	if (w->n_tneeds == w->cap_tneeds) {
		size_t cap = w->cap_tneeds ? w->cap_tneeds * 2 : 8;
		char **n = realloc(w->tneeds, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		w->tneeds = n;
		w->cap_tneeds = cap;
	}
	if (!(c = strdup(tpath)))
		return -ENOMEM;
	w->tneeds[w->n_tneeds++] = c;
	return 0;
}

int
grove_scan_target_needs(struct grove_world *w, const struct grove_root *target,
			struct grove_error *err)
{
	int r = 0;

	if (w->n_tneeds)
		r = grove_scan_target_paths(w, target, w->tneeds, w->n_tneeds, err);
	for (size_t i = 0; i < w->n_tneeds; i++)
		free(w->tneeds[i]);
	w->n_tneeds = 0;
	return r;
}
