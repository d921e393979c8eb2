/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The planner: GNU Stow 2.4's stow/unstow algorithm over in-memory trees, then the plan as a tree
 * difference (planner_view.c's emit walk). grove: long file: stow and unstow share the walks'
 * frames, struct known and join3; the unstow half is to move to a file of its own. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/path.h"
#include "grove/planner.h"
#include "planner_int.h"
#include "util.h"

/*
 * Stow plans by queueing tasks and answering "is this a link?" from pending
 * tasks before the disk. Here the target tree carries both states: orig_* is
 * the disk as scanned and type/link what the tasks so far leave, so the
 * current state *is* Stow's task-aware view, and the plan is the difference.
 * Stow's checks that look at the disk regardless of tasks (the stow dir, the
 * target's listing in cleanup_invalid_links and compat unstow, -e/-d of
 * package paths) use the orig state or the stow model.
 */

/* ---- stow ---- */

/* What stow_contents knows of an entry it hands to stow_node: the target folder's node and the
 * entry's name in it; the entry's package path from the target and its link text when glued
 * from the folder's (NULL: stow_node joins them into the buffers full and dest); whether the
 * entry's package path, target path and package path from the target are known to glue (as
 * struct known's glue_*; false: not known). */
struct entry {
	struct grove_node *tdir;
	const char *tname;
	const char *pkg_path, *link_dest;
	char *full, *dest;
	size_t full_cap, dest_cap;
	bool glue_p, glue_t, glue_f;
};

static void stow_node(struct planner *p, const char *package, const char *root,
		      struct grove_node *src, const char *pkg_subpath, const char *target_subpath,
		      const struct entry *e);

static char *
join3(const char *a, const char *b, const char *c)
{
	cleanup_free char *ab = grove_path_join(a, b);

	return ab ? grove_path_join_names(ab, c) : NULL;
}

/* What stow_node already holds when it calls stow_contents, saving the lookups from the roots:
 * the package's node at pkg_subdir (view_pkg_node's answer), the target's node at target_subdir
 * (view_tnode's), the package's path from the target (pkg_root); each may be NULL. */
struct known {
	struct grove_node *pdir, *tdir;
	const char *root;
	/* Known to glue (false: not known, checked): grove_path_glues(pkg_subdir, NULL),
	 * grove_path_glues(target_subdir, NULL), and root relative with
	 * grove_path_glues(root, pkg_subdir) (NULL for "."). A folder's entry with a plain name
	 * glues when its folder does (or is the top): its path is the folder's, "/", the name.
	 * glue_m (unstow's): grove_path_glues(root, pkg_subdir) (NULL for "."), root relative or
	 * not. */
	bool glue_p, glue_t, glue_f, glue_m;
};

/* The package's folder pkg_subdir (its node dir, or NULL: looked up), read whole, for
 * stow_contents; NULL when it has to wait for the scan (a need recorded) or the plan failed. */
static struct grove_node *
stow_dir(struct planner *p, const char *package, const char *pkg_subdir, struct grove_node *dir)
{
	struct grove_world_pkg *pkg;

	if (!dir)
		dir = view_pkg_node(p, package, pkg_subdir);
	if (p->src_stow) {
		/* A package of a second stow dir, read from the target tree. */
		if (!dir && p->incomplete)
			return NULL;
		if (dir && dir->orig_type == GROVE_FT_DIR && !dir->listed) {
			cleanup_free char *pp = grove_path_join(p->src_stow, package);
			cleanup_free char *full = pp ? grove_path_join(pp, pkg_subdir) : NULL;

			if (!full)
				oom(p);
			else
				view_tneed(p, full);
			return NULL;
		}
	} else if ((pkg = pkg_record(p, package)),
		   !dir || !dir->listed || !pkg || !pkg->ignore_loaded) {
		struct grove_node *root = grove_node_child(p->w->stow, package);
		cleanup_free char *rel = grove_path_join(package, pkg_subdir);

		if (!rel) {
			oom(p);
			return NULL;
		}
		if (!root || !root->listed || !pkg || !pkg->ignore_loaded ||
		    view_pkg_pruned(p, package, pkg_subdir)) {
			view_need(p, rel); /* a package the scan read only in part */
			return NULL;
		}
	}
	if (!dir || view_follow_type(dir) != GROVE_FT_DIR || !dir->listed) {
		fail(p, -GROVE_E_PRECONDITION,
		     "folder '%s' of package '%s' is missing, or changed while it was read",
		     pkg_subdir, package);
		return NULL;
	}
	return dir;
}

/* stow_contents' checks before its folder's entries: whether pkg_subdir is planned now, and if
 * so the package's node there (*ret_dir) and the target's at target_subdir (*ret_tdir). */
static bool
stow_folder(struct planner *p, const char *package, const char *pkg_subdir,
	    const char *target_subdir, const struct known *kn, struct grove_node **ret_dir,
	    struct grove_node **ret_tdir)
{
	/* The .stow/.nonstow check looks at the target's node at pkg_subdir. */
	const struct grove_node *at =
		kn->tdir && strcmp(pkg_subdir, target_subdir) == 0 ? kn->tdir : NULL;

	if (p->rc || (p->walk && walk_defer(p, false, package, pkg_subdir, target_subdir)) ||
	    view_should_skip_target_at(p, pkg_subdir, at))
		return false;
	*ret_dir = stow_dir(p, package, pkg_subdir, kn->pdir);
	if (!*ret_dir)
		return false;
	*ret_tdir = kn->tdir ? kn->tdir : view_tnode(p, target_subdir);
	if (!*ret_tdir || (*ret_tdir)->type == GROVE_FT_NONE) {
		fail(p, -GROVE_E_INTERNAL, "planning: '%s' is not a folder in the target%s",
		     target_subdir, NULL);
		return false;
	}
	return true;
}

/* Writes the link text of a folder's entries but "/name" at d: level "../"s, root (rlen bytes),
 * then "/" and sub (slen bytes) unless sub is NULL (the package's top). Not terminated. */
static void
put_link_folder(char *d, int level, const char *root, size_t rlen, const char *sub, size_t slen)
{
	d = grove_path_put_ups(d, level);
	memcpy(d, root, rlen);
	if (sub) {
		d[rlen] = '/';
		memcpy(d + rlen + 1, sub, slen);
	}
}

/*
 * A folder's buffers in the recursive walks: the frame of its depth, kept for the run (each
 * folder of a 1,400-folder stow allocated and freed its own twice). A frame serves one folder
 * at a time: the folders inside it, walked meanwhile, are one deeper.
 */
struct planner_frame {
	char *bytes;
	size_t n_bytes;
	struct grove_node **kids;
	size_t n_kids;
};

void
planner_release(struct planner *p)
{
	if (!p->frames)
		return;
	for (size_t i = 0; i < PLANNER_FRAMES; i++) {
		free(p->frames[i].bytes);
		free(p->frames[i].kids);
	}
	free(p->frames);
	p->frames = NULL;
}

/* The frame of the folder being walked, or NULL (too deep, or out of memory). */
static struct planner_frame *
frame(struct planner *p)
{
	if (!p->depth || p->depth > PLANNER_FRAMES)
		return NULL;
	if (!p->frames && !(p->frames = calloc(PLANNER_FRAMES, sizeof(*p->frames))))
		return NULL;
	return &p->frames[p->depth - 1];
}

/* n bytes for the folder being walked: its frame's, else malloc'd into *own; NULL when out of
 * memory. */
static char *
frame_bytes(struct planner *p, size_t n, char **own)
{
	struct planner_frame *f = frame(p);

	if (!n)
		n = 1; /* callers ask for paths' room, never 0: for malloc's sake */
	if (f && f->n_bytes < n) {
		size_t want = n < 2 * f->n_bytes ? 2 * f->n_bytes : n;

		free(f->bytes);
		f->bytes = malloc(want);
		f->n_bytes = f->bytes ? want : 0;
	}
	if (f && f->bytes && f->n_bytes >= n)
		return f->bytes;
	return *own = malloc(n);
}

/* dir's kids sorted by name, NULL-terminated: in the frame of the folder being walked, else in
 * *own (malloc'd); NULL when out of memory. */
static struct grove_node **
frame_kids(struct planner *p, const struct grove_node *dir, struct grove_node ***own)
{
	struct planner_frame *f = frame(p);
	size_t cap = 0;

	if (f) {
		struct grove_node **k = grove_node_sorted_kids_in(dir, &f->kids, &f->n_kids);

		if (k)
			return k;
	}
	return grove_node_sorted_kids_in(dir, own, &cap);
}

/* stow_contents_known's folder, in the frame of its depth. */
static void
stow_folder_contents(struct planner *p, const char *package, const char *pkg_subdir,
		     const char *target_subdir, const struct known *kn)
{
	struct grove_node *dir, *tdir;
	cleanup_free struct grove_node **kids_own = NULL;
	struct grove_node **kids;
	cleanup_free char *root_heap = NULL;
	const char *pkg_root;
	cleanup_free char *scratch_own = NULL;
	char *scratch, *glued;
	/* An entry's joins that do not fit scratch, and its --dotfiles name: one of each at a time
	 * (each join frees the last), freed once for the folder. */
	cleanup_free char *heap_pkg_path = NULL;
	cleanup_free char *heap_tpath = NULL;
	cleanup_free char *adj = NULL;
	size_t pcap, tcap, fcap, dcap, plen, tlen, rlen, slen;
	bool top, top_p, top_t, glue_p, glue_t, glue_f;
	int level;

	if (!stow_folder(p, package, pkg_subdir, target_subdir, kn, &dir, &tdir))
		return;
	kids = frame_kids(p, dir, &kids_own);
	/* The package's path from the target, joined once for all of the package's folders. */
	if (!kn->root)
		root_heap = grove_path_join(p->src_stow ? p->src_stow : p->w->stow_path, package);
	pkg_root = kn->root ? kn->root : root_heap;
	if (!kids || !pkg_root) {
		oom(p);
		return;
	}
	/* One buffer for the folder's entry paths (a name is at most NAME_MAX bytes): the joins
	 * of the usual names fit, the others allocate. */
	pcap = strlen(pkg_subdir) + NAME_MAX + 8;
	tcap = strlen(target_subdir) + NAME_MAX + 8;
	fcap = strlen(pkg_root) + pcap;
	dcap = 3 * ((size_t)grove_path_slashes(pkg_subdir) + 2) + fcap;
	scratch = frame_bytes(p, pcap + tcap + fcap + 2 * dcap, &scratch_own);
	if (!scratch) {
		oom(p);
		return;
	}
	glued = scratch + pcap + tcap + fcap + dcap;
	/* Each entry's paths are the folder's glued with its name when the folder's are plain:
	 * the package path from the target is pkg_root/pkg_subdir/name (pkg_root/name at the
	 * top), its link text that with a "../" for each folder above the entry. */
	top = strcmp(pkg_subdir, ".") == 0;
	plen = strlen(pkg_subdir);
	tlen = strlen(target_subdir);
	rlen = strlen(pkg_root);
	glue_p = kn->glue_p || grove_path_glues(pkg_subdir, NULL);
	glue_t = kn->glue_t || grove_path_glues(target_subdir, NULL);
	glue_f = kn->glue_f ||
		 (pkg_root[0] != '/' && grove_path_glues(pkg_root, top ? NULL : pkg_subdir));
	/* An entry's path is its name when its folder is the top ("" or "."). */
	top_p = top || !pkg_subdir[0];
	top_t = !target_subdir[0] || strcmp(target_subdir, ".") == 0;
	level = top ? 0 : grove_path_slashes(pkg_subdir) + 1;
	slen = 3 * (size_t)level + rlen + (top ? 0 : plen + 1); /* the link text but "/name" */
	if (glue_f)
		put_link_folder(glued, level, pkg_root, rlen, top ? NULL : pkg_subdir, plen);
	for (struct grove_node **k = kids; *k && !p->rc; k++) {
		const char *name = (*k)->name;
		size_t len = strlen(name);
		const char *pkg_path, *tpath;
		bool plain;
		struct entry e = { .tdir = tdir,
				   .tname = name,
				   .full = scratch + pcap + tcap,
				   .full_cap = fcap,
				   .dest = scratch + pcap + tcap + fcap,
				   .dest_cap = dcap };

		if (p->src_stow && (*k)->orig_type == GROVE_FT_NONE)
			continue; /* the target tree: an entry only this plan makes */
		pkg_path = grove_path_glue(pkg_subdir, plen, glue_p, name, len, scratch, pcap,
					   &heap_pkg_path);
		tpath = grove_path_glue(target_subdir, tlen, glue_t, name, len, scratch + pcap,
					tcap, &heap_tpath);
		if (!pkg_path || !tpath) {
			oom(p);
			return;
		}
		if (view_ignored(p, package, tpath))
			continue;
		if (p->o->dotfiles) {
			free(adj);
			adj = grove_dotfile_adjust(name);
			if (!adj) {
				oom(p);
				return;
			}
			if (strcmp(adj, name) != 0) {
				e.tname = adj;
				tpath = grove_path_glue(target_subdir, tlen, glue_t, adj,
							strlen(adj), scratch + pcap, tcap,
							&heap_tpath);
				if (!tpath) {
					oom(p);
					return;
				}
			}
		}
		plain = grove_path_plain_name(name, len);
		e.glue_p = plain && (top_p || glue_p);
		e.glue_f = plain && glue_f;
		e.glue_t =
			(top_t || glue_t) &&
			(e.tname == name ? plain : grove_path_plain_name(e.tname, strlen(e.tname)));
		if (glue_f && plain && slen + 1 + len < dcap) {
			glued[slen] = '/';
			memcpy(glued + slen + 1, name, len + 1);
			e.link_dest = glued;
			e.pkg_path = glued + 3 * (size_t)level;
		}
		/* The entry is the package's node at pkg_path (a second stow dir's: looked up). */
		stow_node(p, package, pkg_root, p->src_stow ? NULL : *k, pkg_path, tpath, &e);
	}
}

static void
stow_contents_known(struct planner *p, const char *package, const char *pkg_subdir,
		    const char *target_subdir, const struct known *kn)
{
	p->depth++;
	stow_folder_contents(p, package, pkg_subdir, target_subdir, kn);
	p->depth--;
}

static void
stow_contents(struct planner *p, const char *package, const char *pkg_subdir,
	      const char *target_subdir)
{
	const struct known none = { 0 };

	stow_contents_known(p, package, pkg_subdir, target_subdir, &none);
}

static void
stow_existing_link(struct planner *p, const char *package, const char *pkg_subpath,
		   const char *target_subpath, const char *pkg_path, const char *link_dest)
{
	struct grove_node *t = view_tnode(p, target_subpath);
	cleanup_free char *existing = strdup(t->link);
	cleanup_free char *owner = NULL;
	cleanup_free char *owner_stow = NULL;
	cleanup_free char *existing_path = NULL;

	if (!existing) {
		oom(p);
		return;
	}
	existing_path = view_find_owner(p, target_subpath, existing, &owner, &owner_stow);
	if (!existing_path) {
		view_conflictf(p, package, target_subpath,
			       "existing target is not owned by stow: %s", target_subpath);
		return;
	}
	if (!view_stow_exists(p, existing_path)) {
		/* A dangling link of ours: replace it. */
		view_do_unlink(p, target_subpath);
		view_do_link(p, link_dest, target_subpath);
		return;
	}
	if (strcmp(existing, link_dest) == 0)
		return;
	if (view_deferred(p, target_subpath))
		return;
	if (view_overridden(p, target_subpath)) {
		view_do_unlink(p, target_subpath);
		view_do_link(p, link_dest, target_subpath);
		return;
	}
	if (view_stow_isdir(p, existing_path) && view_stow_isdir(p, pkg_path)) {
		/* Unfold: the folder becomes real, holding both packages' links. */
		const char *src = p->src_stow;

		view_do_unlink(p, target_subpath);
		view_do_mkdir(p, target_subpath);
		p->src_stow = owner_stow; /* the owner may live in a second stow dir */
		stow_contents(p, owner, pkg_subpath, target_subpath);
		p->src_stow = src;
		stow_contents(p, package, pkg_subpath, target_subpath);
		return;
	}
	view_conflictf(p, package, target_subpath,
		       "existing target is stowed to a different package: %s => %s", target_subpath,
		       existing);
}

/* What stow_node knows of e's folder for stow_contents: pdir and tdir, the package's and the
 * target's nodes there, root, the package's path from the target. */
static struct known
entry_known(const struct entry *e, struct grove_node *pdir, struct grove_node *tdir,
	    const char *root)
{
	return (struct known){ .pdir = pdir,
			       .tdir = tdir,
			       .root = root,
			       .glue_p = e->glue_p,
			       .glue_t = e->glue_t,
			       .glue_f = e->glue_f };
}

/* root: the package's path from the target (its stow dir's path joined with package); src: the
 * package's node at pkg_subpath, or NULL to look it up. */
static void
stow_node(struct planner *p, const char *package, const char *root, struct grove_node *src,
	  const char *pkg_subpath, const char *target_subpath, const struct entry *e)
{
	cleanup_free char *heap_pkg_path = NULL;
	cleanup_free char *heap_link_dest = NULL;
	const char *pkg_path, *link_dest;
	struct grove_node *t;
	int level;

	if (e->pkg_path) {
		pkg_path = e->pkg_path;
	} else if (grove_path_join_names_into(root, pkg_subpath, e->full, e->full_cap) >= 0) {
		pkg_path = e->full;
	} else {
		heap_pkg_path = grove_path_join_names(root, pkg_subpath);
		pkg_path = heap_pkg_path;
	}
	if (!pkg_path) {
		oom(p);
		return;
	}
	if (!src)
		src = view_pkg_node(p, package, pkg_subpath);
	p->package = package;
	if (!src) {
		fail(p, -GROVE_E_INTERNAL, "planning: '%s' was not scanned%s", pkg_path, NULL);
		return;
	}
	if (src->type == GROVE_FT_LINK) {
		if (src->link[0] == '/') {
			view_conflictf(p, package, target_subpath,
				       "source is an absolute symlink %s => %s", pkg_path,
				       src->link);
			return;
		}
		if (src->escapes) {
			view_conflictf(
				p, package, target_subpath,
				"source is a symlink that leaves the stow directory or loops %s => %s",
				pkg_path, src->link);
			return;
		}
	}
	if (src->type == GROVE_FT_OTHER) {
		view_conflictf(p, package, target_subpath,
			       "source is not a regular file, folder or symlink: %s", pkg_path);
		return;
	}

	level = e->link_dest ? 0 : grove_path_slashes(pkg_subpath);
	if (e->link_dest) {
		link_dest = e->link_dest;
	} else if (grove_path_join_ups_into(level, pkg_path, e->dest, e->dest_cap) >= 0) {
		link_dest = e->dest;
	} else {
		heap_link_dest = grove_path_join_ups(level, pkg_path);
		link_dest = heap_link_dest;
	}
	if (!link_dest) {
		oom(p);
		return;
	}

	/* The folder's entry tname is the node at target_subpath. */
	t = grove_node_child(e->tdir, e->tname);
	if (t && t->type == GROVE_FT_LINK) {
		stow_existing_link(p, package, pkg_subpath, target_subpath, pkg_path, link_dest);
	} else if (t && t->type != GROVE_FT_NONE) {
		bool src_dir = view_follow_type(src) == GROVE_FT_DIR;

		if (t->type == GROVE_FT_DIR) {
			if (!src_dir) {
				view_conflictf(
					p, package, target_subpath,
					"cannot stow non-directory %s over existing directory target %s",
					pkg_path, target_subpath);
			} else {
				const struct known kn = entry_known(e, src, t, root);

				stow_contents_known(p, package, pkg_subpath, target_subpath, &kn);
			}
		} else if (p->o->adopt) {
			if (src_dir) {
				view_conflictf(
					p, package, target_subpath,
					"cannot stow directory %s over existing non-directory target %s",
					pkg_path, target_subpath);
			} else if (t->orig_type != GROVE_FT_REG) {
				view_conflictf(
					p, package, target_subpath,
					"cannot adopt %s into %s: only regular files are adopted",
					target_subpath, pkg_path);
			} else {
				const char *rest =
					grove_path_strip_prefix(pkg_path, p->w->stow_path);
				free(t->adopt_to);
				t->adopt_to = rest ? strdup(rest) : NULL;
				if (!t->adopt_to) {
					oom(p);
					return;
				}
				view_do_link(p, link_dest, target_subpath);
			}
		} else {
			view_conflictf(
				p, package, target_subpath,
				"cannot stow %s over existing target %s since neither a link nor a directory and --adopt not specified",
				pkg_path, target_subpath);
		}
	} else if (p->o->no_folding && src->type == GROVE_FT_DIR) {
		const struct known kn = entry_known(e, src, NULL, root);

		view_do_mkdir(p, target_subpath);
		stow_contents_known(p, package, pkg_subpath, target_subpath, &kn);
	} else {
		view_do_link_in(p, link_dest, target_subpath, e->tdir, e->tname);
	}
}

/*
 * Entries grove refuses wherever they are in a package being stowed, even
 * inside a folder that folds into one link and so is never visited: a link
 * that leaves the stow dir or loops, and fifos, sockets and devices. grove
 * would refuse them as soon as the folder is unfolded, so it refuses the
 * package now rather than accept it and fail later. (Absolute links are
 * refused where Stow refuses them: when visited.)
 */
/* Whether validate_tree looks at n: files and links that stay inside the stow dir are fine,
 * ignored or not. */
static bool
validated(const struct grove_node *n)
{
	return (n->type == GROVE_FT_LINK && n->escapes && n->link[0] != '/') ||
	       n->type == GROVE_FT_OTHER || (n->type == GROVE_FT_DIR && n->listed);
}

static void
validate_tree(struct planner *p, const char *package, struct grove_node *dir,
	      const char *pkg_subdir, const char *target_subdir)
{
	cleanup_free struct grove_node **kids = NULL;
	cleanup_free char *scratch = NULL;
	size_t i = 0, plen, tlen, pcap, tcap;
	bool glue_p, glue_t;

	/* A folder of files only (most): nothing to sort or join. */
	while (i < dir->n_kids && !validated(dir->kids[i]))
		i++;
	if (i == dir->n_kids)
		return;
	kids = grove_node_sorted_kids(dir);
	/* The entries' paths in one buffer for the folder, as stow_contents builds them. */
	plen = strlen(pkg_subdir);
	tlen = strlen(target_subdir);
	pcap = plen + NAME_MAX + 8;
	tcap = tlen + NAME_MAX + 8;
	scratch = malloc(pcap + tcap);
	if (!kids || !scratch) {
		oom(p);
		return;
	}
	glue_p = grove_path_glues(pkg_subdir, NULL);
	glue_t = grove_path_glues(target_subdir, NULL);
	for (struct grove_node **k = kids; *k && !p->rc; k++) {
		struct grove_node *n = *k;
		cleanup_free char *heap_pkg_path = NULL;
		cleanup_free char *heap_tpath = NULL;
		cleanup_free char *full = NULL;
		const char *pkg_path, *tpath;
		size_t len;

		/* Skip the others before the joins and the ignore match. */
		if (!validated(n))
			continue;
		len = strlen(n->name);
		pkg_path = grove_path_glue(pkg_subdir, plen, glue_p, n->name, len, scratch, pcap,
					   &heap_pkg_path);
		tpath = grove_path_glue(target_subdir, tlen, glue_t, n->name, len, scratch + pcap,
					tcap, &heap_tpath);
		if (!pkg_path || !tpath) {
			oom(p);
			return;
		}
		if (view_ignored(p, package, tpath))
			continue;
		/* The package entry's path from the target, for the conflicts' words. */
		full = n->type != GROVE_FT_DIR ? join3(p->w->stow_path, package, pkg_path) : NULL;
		if (n->type != GROVE_FT_DIR && !full) {
			oom(p);
			return;
		}
		if (n->type == GROVE_FT_LINK && n->escapes && n->link[0] != '/') {
			view_conflictf(
				p, package, tpath,
				"source is a symlink that leaves the stow directory or loops %s => %s",
				full, n->link);
		} else if (n->type == GROVE_FT_OTHER) {
			view_conflictf(p, package, tpath,
				       "source is not a regular file, folder or symlink: %s", full);
		} else if (n->type == GROVE_FT_DIR && n->listed) {
			if (p->o->dotfiles) {
				cleanup_free char *adj = grove_dotfile_adjust(n->name);

				tpath = adj ? grove_path_glue(target_subdir, tlen, glue_t, adj,
							      strlen(adj), scratch + pcap, tcap,
							      &heap_tpath)
					    : NULL;
				if (!tpath) {
					oom(p);
					return;
				}
			}
			validate_tree(p, package, n, pkg_path, tpath);
		}
	}
}

/* ---- unstow ---- */

static void unstow_contents(struct planner *p, const char *package, const char *pkg_subdir,
			    const char *target_subdir, const struct known *kn);

/* What unstow_folder_contents knows of an entry it hands to unstow_node: the package's node at
 * the entry (NULL: looked up; in compat, not needed), and the part after the stow dir of the
 * entry's package path from the target (join3(stow_path, package, pkg_subpath) stripped of
 * stow_path + "/", NULL when it does not start so) when mine_known; else unstow_link_node joins
 * it. */
struct unstow_entry {
	struct grove_node *src;
	const char *mine_rest;
	bool mine_known;
};

/* t: the target's node at target_subpath, a link in folder target_subdir; pkg_root: the
 * package's path from the target (the stow dir's path joined with package). Not inlined: its
 * buffers are not to sit in the frames of the recursive walk. */
static __attribute__((noinline)) void
unstow_link_node(struct planner *p, const char *package, const char *pkg_root,
		 const char *pkg_subpath, const char *target_subdir, const char *target_subpath,
		 struct grove_node *t, const struct unstow_entry *e)
{
	cleanup_free char *existing_path = NULL;
	cleanup_free char *pkg_path = NULL;
	char buf[PATH_MAX], mine[PATH_MAX];
	const char *rest, *mine_rest;
	bool same;

	if (t->link[0] == '/') {
		view_warningf(p, "Ignoring an absolute symlink: %s => %s", target_subpath, t->link);
		return;
	}
	switch (t->link == t->orig_link
			? view_scanned_owner(p, target_subdir, t, buf, sizeof(buf), &rest)
			: view_owner_in(p, target_subdir, t->link, buf, sizeof(buf), &rest)) {
	case VIEW_OWNER_NONE:
		return;
	case VIEW_OWNER_STOW:
		/* mine: join3(stow_path, package, pkg_subpath), as below. */
		if (e->mine_known)
			mine_rest = e->mine_rest;
		else if (grove_path_join_names_into(pkg_root, pkg_subpath, mine, sizeof(mine)) < 0)
			break;
		else
			mine_rest = grove_path_strip_prefix(mine, p->w->stow_path);
		/* Removed either way when it is the package's: Stow's -e of it, below, finds the
		 * entry the package's listing holds (no part of the stow dir to ask for) except
		 * in compat, whose listing is the target's. The link's path is the stow dir's,
		 * '/', then rest (buf may not hold it: a kept answer). */
		same = mine_rest && strcmp(mine_rest, rest) == 0;
		if ((same && !p->o->compat) || !view_stow_rest_exists(p, rest) || same)
			view_unlink_node(t);
		return;
	case VIEW_OWNER_SLOW:
		break;
	}
	/* The long way: a second stow dir, or a path longer than the buffers. */
	existing_path = view_find_stowed_path(p, target_subpath, t->link, NULL);
	if (!existing_path)
		return;
	pkg_path = join3(p->w->stow_path, package, pkg_subpath);
	if (!pkg_path) {
		oom(p);
		return;
	}
	if (!view_stow_exists(p, existing_path) || strcmp(existing_path, pkg_path) == 0)
		view_do_unlink(p, target_subpath);
}

/* A link in folder dir_path whose destination is missing. Links that do not
 * point into the stow dir cannot be followed beneath the roots: they count as
 * dangling (they keep a folder from folding either way). */
static __attribute__((noinline)) bool
dangling(struct planner *p, const char *dir_path, const struct grove_node *kid)
{
	cleanup_free char *path = NULL;
	cleanup_free char *dest = NULL;
	/* A link as scanned (the plan keeps the text the scan's node holds): its state is kept. */
	enum link_state s = kid->link == kid->orig_link
				    ? view_link_state(p, dir_path, kid)
				    : view_link_state_of(p, dir_path, kid->link);

	if (s != LINK_SLOW)
		return s != LINK_OURS;
	path = grove_path_join_names(dir_path, kid->name);
	dest = path ? view_find_stowed_path(p, path, kid->link, NULL) : NULL;
	return !dest || !view_stow_exists(p, dest);
}

/* How many of dir's first entries are gone from the plan (GROVE_FT_NONE), from where its cursor
 * left off when that still holds, and the cursor moved there. */
static size_t
gone_prefix(struct planner *p, const struct grove_node *dir)
{
	unsigned long gen = grove_tree_generation();
	struct fold_cursor *c = NULL;
	size_t i = 0;

	for (unsigned k = 0; k < sizeof(p->folds) / sizeof(p->folds[0]); k++)
		if (p->folds[k].dir == dir)
			c = &p->folds[k];
	if (!c) {
		c = &p->folds[p->n_folds++ % (sizeof(p->folds) / sizeof(p->folds[0]))];
		c->dir = dir;
	} else if (c->made == p->made && c->gen == gen && c->skip <= dir->n_kids) {
		i = c->skip;
	}
	while (i < dir->n_kids && dir->kids[i]->type == GROVE_FT_NONE)
		i++;
	c->skip = i;
	c->made = p->made;
	c->gen = gen;
	return i;
}

/* Stow's foldable: the folder holds only links, all into one folder of one package. */
/* dir: the target's node at target_subdir. */
static char *
foldable(struct planner *p, const char *target_subdir, struct grove_node *dir)
{
	cleanup_free char *parent_in_pkg = NULL;
	cleanup_free char *owner = NULL;
	const char *first =
		NULL; /* the first link's text: its parent is its first first_len bytes */
	size_t first_len = 0;
	char *result;
	const char *stripped;

	if (p->o->no_folding || !dir)
		return NULL;
	if (dir->orig_type == GROVE_FT_DIR && !dir->listed) {
		view_tneed(p, target_subdir); /* only looked up: folding needs every entry */
		return NULL;
	}
	for (size_t i = gone_prefix(p, dir); i < dir->n_kids; i++) {
		struct grove_node *kid = dir->kids[i];
		size_t len;

		if (kid->type == GROVE_FT_NONE)
			continue;
		if (kid->type != GROVE_FT_LINK)
			return NULL;
		/*
		 * Stow skips entries that -e says are missing (dangling links),
		 * folds, and then dies in rmdir because the folder is not empty.
		 * A dangling link is an entry: it keeps the folder from folding.
		 */
		if (dangling(p, target_subdir, kid))
			return NULL;
		len = grove_path_parent_len(kid->link);
		if (!first) {
			first = kid->link;
			first_len = len;
		} else if (len != first_len || memcmp(first, kid->link, len) != 0) {
			return NULL;
		}
	}
	if (!first || !first_len)
		return NULL;
	parent_in_pkg = strndup(first, first_len);
	if (!parent_in_pkg) {
		oom(p);
		return NULL;
	}
	stripped = parent_in_pkg;
	if (strncmp(stripped, "../", 3) == 0)
		stripped += 3;
	{
		cleanup_free char *path = view_find_stowed_path(p, target_subdir, stripped, &owner);
		if (!path || !owner || !owner[0])
			return NULL;
	}
	result = strdup(stripped);
	if (!result)
		oom(p);
	return result;
}

/* dir: the target's node at target_subdir. */
static void
fold_tree(struct planner *p, const char *target_subdir, struct grove_node *dir,
	  const char *pkg_subpath)
{
	grove_node_foreach_child (dir, kid) {
		if (kid->type == GROVE_FT_NONE)
			continue;
		kid->type = GROVE_FT_NONE;
		grove_node_set_link(kid, NULL);
	}
	view_do_rmdir(p, target_subdir);
	view_do_link(p, pkg_subpath, target_subdir);
}

/* t: the target's node at target_subpath (NULL: nothing there), in folder target_subdir; kn: the
 * glues known of the entry's folder (struct known's, for the folder inside). */
static void
unstow_node(struct planner *p, const char *package, const char *pkg_root, const char *pkg_subpath,
	    const char *target_subdir, const char *target_subpath, struct grove_node *t,
	    const struct unstow_entry *e, bool glue_p, bool glue_t, bool glue_m)
{
	struct grove_node *src = NULL;
	struct known kn;
	cleanup_free char *fold = NULL;

	if (!t)
		return;
	if (t->type == GROVE_FT_LINK) {
		unstow_link_node(p, package, pkg_root, pkg_subpath, target_subdir, target_subpath,
				 t, e);
		return;
	}
	if (t->type != GROVE_FT_DIR)
		return;
	/* compat's listing is the target's: the package's node is not asked for. */
	if (!p->o->compat)
		src = e->src ? e->src : view_pkg_node(p, package, pkg_subpath);
	if (!p->o->compat && (!src || view_follow_type(src) != GROVE_FT_DIR)) {
		/*
		 * A folder where the package has a file: Stow dies here
		 * ("unstow_contents() called with non-directory path"). Nothing
		 * of this package can be inside; leave it.
		 */
		return;
	}
	/* In compat the folder's listing is the target's (t), else the package's (src). */
	kn = (struct known){ .pdir = p->o->compat ? NULL : src,
			     .tdir = t,
			     .root = pkg_root,
			     .glue_p = glue_p,
			     .glue_t = glue_t,
			     .glue_m = glue_m };
	unstow_contents(p, package, pkg_subpath, target_subpath, &kn);
	fold = foldable(p, target_subpath, t);
	if (fold)
		fold_tree(p, target_subpath, t, fold);
}

/* dir: the target's node at dir_path, or NULL: looked up. */
static __attribute__((noinline)) void
cleanup_invalid_links(struct planner *p, const char *dir_path, struct grove_node *dir)
{
	cleanup_free struct grove_node **kids = NULL;

	/*
	 * Stow runs this once per package for every shared folder it unstows. A
	 * second run finds nothing the first did not: the links it removed (and
	 * those the unstows removed) now have a pending change and are skipped,
	 * and whether the others dangle does not change within a plan. Once per
	 * folder keeps restowing N packages linear instead of quadratic.
	 */
	if (!dir)
		dir = view_tnode(p, dir_path);
	if (!dir || dir->orig_type != GROVE_FT_DIR || dir->cleaned)
		return;
	if (!dir->listed) {
		view_tneed(p, dir_path); /* only looked up: Stow lists the folder here */
		return;
	}
	dir->cleaned = true;
	kids = grove_node_sorted_kids(dir);
	if (!kids) {
		oom(p);
		return;
	}
	for (struct grove_node **k = kids; *k && !p->rc; k++) {
		struct grove_node *n = *k;
		cleanup_free char *path = NULL;
		cleanup_free char *dest = NULL;
		bool slow;

		if (n->orig_type != GROVE_FT_LINK)
			continue;
		/* A link with a pending change is left to that change. */
		if (n->type != n->orig_type ||
		    (n->link != n->orig_link && strcmp(n->link ? n->link : "", n->orig_link) != 0))
			continue;
		switch (view_link_state(p, dir_path, n)) {
		case LINK_FOREIGN: /* not ours: whatever it points at, leave it */
		case LINK_OURS:
			continue;
		case LINK_OURS_MISSING:
			slow = false;
			break;
		default:
			slow = true;
			break;
		}
		path = grove_path_join_names(dir_path, n->name);
		if (!path) {
			oom(p);
			return;
		}
		if (slow) {
			dest = view_find_stowed_path(p, path, n->orig_link, NULL);
			if (!dest || view_stow_exists(p, dest))
				continue;
		}
		view_do_unlink(p, path);
	}
}

/* The path of dir's entry name (len bytes): name itself when top (dir is "" or ".", name plain);
 * in buf (cap bytes) dir's dlen bytes, '/', then name when glue (grove_path_glues(dir, NULL) and
 * name is plain), dir and '/' written only when *intact is false (buf then holds them: *intact
 * set); else grove_path_entry's (*intact cleared). */
static const char *
entry_path(const char *dir, size_t dlen, bool top, bool glue, const char *name, size_t len,
	   char *buf, size_t cap, char **heap, bool *intact)
{
	if (top)
		return name;
	if (!glue || dlen + 1 + len >= cap) {
		*intact = false;
		return grove_path_entry(dir, name, buf, cap, heap);
	}
	if (!*intact) {
		memcpy(buf, dir, dlen);
		buf[dlen] = '/';
		*intact = true;
	}
	memcpy(buf + dlen + 1, name, len + 1);
	return buf;
}

/* The listing unstow_contents walks for pkg_subdir (the package's folder, or in compat the
 * target's at target_subdir), or NULL: nothing to walk (a need or a failure recorded). */
static struct grove_node *
unstow_listing(struct planner *p, const char *package, const char *pkg_subdir,
	       const char *target_subdir, const struct known *kn)
{
	struct grove_node *listing;

	if (p->o->compat) {
		listing = kn->tdir ? kn->tdir : view_tnode(p, target_subdir);
		return listing && listing->orig_type == GROVE_FT_DIR ? listing : NULL;
	}
	listing = kn->pdir ? kn->pdir : view_pkg_node(p, package, pkg_subdir);
	if ((!listing || !listing->listed) && view_pkg_pruned(p, package, pkg_subdir)) {
		cleanup_free char *rel = grove_path_join(package, pkg_subdir);

		if (!rel)
			oom(p);
		else
			view_need(p, rel);
		return NULL;
	}
	if (!listing || view_follow_type(listing) != GROVE_FT_DIR || !listing->listed) {
		fail(p, -GROVE_E_PRECONDITION,
		     "folder '%s' of package '%s' is missing, or changed while it was read",
		     pkg_subdir, package);
		return NULL;
	}
	return listing;
}

/*
 * Writes a folder's package path from the target at d: root (rlen bytes), then '/' and sub
 * (slen bytes) unless sub is NULL (the package's top), then '/': its entries' are that and a
 * name. Returns its length but the '/'; *ret_off: where, in an entry's, the part after
 * stow_path + "/" starts, 0 when it does not start so (a name holds no '/': no other prefix of
 * the entry's is stow_path + "/").
 */
static size_t
put_mine(char *d, const char *root, size_t rlen, const char *sub, size_t slen,
	 const char *stow_path, size_t *ret_off)
{
	size_t len = rlen, sl = strlen(stow_path);

	memcpy(d, root, rlen);
	if (sub) {
		d[len++] = '/';
		memcpy(d + len, sub, slen);
		len += slen;
	}
	d[len] = '/';
	*ret_off = sl <= len && memcmp(d, stow_path, sl) == 0 && d[sl] == '/' ? sl + 1 : 0;
	return len;
}

/* When glue, makes e's mine the folder's mine (mlen bytes at mine, put_mine's, room for mcap)
 * glued with name (len bytes) if it fits within PATH_MAX, as unstow_link_node's join needs it. */
static void
entry_mine(struct unstow_entry *e, bool glue, char *mine, size_t mlen, size_t mcap, size_t moff,
	   const char *name, size_t len)
{
	if (!glue || mlen + 1 + len >= PATH_MAX || mlen + 1 + len >= mcap)
		return;
	memcpy(mine + mlen + 1, name, len + 1);
	e->mine_rest = moff ? mine + moff : NULL;
	e->mine_known = true;
}

/* kn: what the caller holds (pdir: the folder's listing, the package's node or in compat the
 * target's; tdir: the target's node at target_subdir; root: the package's path from the target;
 * the glues known). */
static void
unstow_folder_contents(struct planner *p, const char *package, const char *pkg_subdir,
		       const char *target_subdir, const struct known *kn)
{
	struct grove_node *listing, *tdir;
	cleanup_free struct grove_node **kids_own = NULL;
	struct grove_node **kids;
	cleanup_free char *root_heap = NULL;
	const char *pkg_root;
	cleanup_free char *scratch_own = NULL;
	char *scratch, *mine;
	size_t tcap, pcap, mcap, tlen, plen, rlen, mlen = 0, moff = 0;
	bool top = !pkg_subdir[0] || strcmp(pkg_subdir, ".") == 0;
	bool top_t = !target_subdir[0] || strcmp(target_subdir, ".") == 0;
	bool glue_p, glue_t, glue_m, t_intact = false, p_intact = false;
	/* An entry's joins that do not fit scratch and its --dotfiles names: one of each at a time
	 * (each join frees the last), freed once for the folder. */
	cleanup_free char *owned_name = NULL;
	cleanup_free char *adj = NULL;
	cleanup_free char *heap_tpath = NULL;
	cleanup_free char *heap_pkg_path = NULL;

	if (p->rc || (p->walk && walk_defer(p, true, package, pkg_subdir, target_subdir)) ||
	    view_should_skip_target_at(p, target_subdir, kn->tdir))
		return;
	if (!(listing = unstow_listing(p, package, pkg_subdir, target_subdir, kn)))
		return;
	kids = frame_kids(p, listing, &kids_own);
	/* The package's path from the target, joined once for all of the package's folders (a
	 * package is a name: grove_path_join_names' one copy, grove_path_join's answer). */
	if (!kn->root)
		root_heap = grove_path_join_names(p->w->stow_path, package);
	pkg_root = kn->root ? kn->root : root_heap;
	if (!kids || !pkg_root) {
		oom(p);
		return;
	}
	/* Each entry's two paths in one buffer for the folder (an entry name is at most NAME_MAX
	 * bytes, unadjusted "dot-" 3 more): the joins of the usual names fit, others allocate.
	 * Then the entry's package path from the target (unstow_link_node's mine): the folder's
	 * glued with the name when the folder's is plain. */
	tlen = strlen(target_subdir);
	plen = strlen(pkg_subdir);
	rlen = strlen(pkg_root);
	tcap = tlen + NAME_MAX + 8;
	pcap = plen + NAME_MAX + 8;
	mcap = rlen + plen + NAME_MAX + 8;
	scratch = frame_bytes(p, tcap + pcap + mcap, &scratch_own);
	if (!scratch) {
		oom(p);
		return;
	}
	glue_p = kn->glue_p || grove_path_glues(pkg_subdir, NULL);
	glue_t = kn->glue_t || grove_path_glues(target_subdir, NULL);
	/* join3(stow_path, package, pkg_subdir/name) is pkg_root/pkg_subdir/name (pkg_root/name at
	 * the top) for a plain name when this holds; its part after stow_path + "/" starts at moff
	 * (0: it does not start so). */
	glue_m = kn->glue_m || grove_path_glues(pkg_root, top ? NULL : pkg_subdir);
	mine = scratch + tcap + pcap;
	if (glue_m)
		mlen = put_mine(mine, pkg_root, rlen, top ? NULL : pkg_subdir, plen,
				p->w->stow_path, &moff);
	tdir = kn->tdir ? kn->tdir : view_tnode(p, target_subdir);
	for (struct grove_node **k = kids; *k && !p->rc; k++) {
		const char *name = (*k)->name, *pkg_name = name, *tname = name;
		const char *tpath, *pkg_path;
		size_t len = strlen(name), pkg_len = len;
		struct unstow_entry e = { .src = p->o->compat ? NULL : *k };
		bool plain = grove_path_plain_name(name, len), plain_p = plain, plain_t = plain;

		/* compat walks the disk listing: entries made by this plan are not on it. */
		if (p->o->compat && (*k)->orig_type == GROVE_FT_NONE)
			continue;
		/* The ignore lists see the entry's own name, before --dotfiles renames it. */
		tpath = entry_path(target_subdir, tlen, top_t && plain, glue_t && plain, name, len,
				   scratch, tcap, &heap_tpath, &t_intact);
		if (!tpath) {
			oom(p);
			return;
		}
		if (view_ignored(p, package, tpath))
			continue;
		if (p->o->dotfiles && p->o->compat) {
			free(owned_name);
			owned_name = grove_dotfile_unadjust(name);
			pkg_name = owned_name;
			pkg_len = pkg_name ? strlen(pkg_name) : 0;
			plain_p = pkg_name && grove_path_plain_name(pkg_name, pkg_len);
		} else if (p->o->dotfiles) {
			free(adj);
			adj = grove_dotfile_adjust(name);
			if (adj && strcmp(adj, name) != 0) {
				size_t tname_len = strlen(adj);

				tname = adj;
				plain_t = grove_path_plain_name(tname, tname_len);
				tpath = entry_path(target_subdir, tlen, top_t && plain_t,
						   glue_t && plain_t, tname, tname_len, scratch,
						   tcap, &heap_tpath, &t_intact);
			}
		}
		pkg_path = pkg_name ? entry_path(pkg_subdir, plen, top && plain_p,
						 glue_p && plain_p, pkg_name, pkg_len,
						 scratch + tcap, pcap, &heap_pkg_path, &p_intact)
				    : NULL;
		if (!pkg_path || !tpath || (p->o->dotfiles && !p->o->compat && !adj)) {
			oom(p);
			return;
		}
		entry_mine(&e, glue_m && plain_p, mine, mlen, mcap, moff, pkg_name, pkg_len);
		/* The entry's target node: tdir's entry tname is the node at tpath. An entry with a
		 * plain name glues when its folder does (or is the top). */
		unstow_node(p, package, pkg_root, pkg_path, target_subdir, tpath,
			    tdir ? grove_node_child(tdir, tname) : view_tnode(p, tpath), &e,
			    plain_p && (top || glue_p), plain_t && (glue_t || top_t),
			    plain_p && glue_m);
	}
	if (!p->o->compat)
		cleanup_invalid_links(p, target_subdir, tdir);
}

static void
unstow_contents(struct planner *p, const char *package, const char *pkg_subdir,
		const char *target_subdir, const struct known *kn)
{
	p->depth++;
	unstow_folder_contents(p, package, pkg_subdir, target_subdir, kn);
	p->depth--;
}

/* ---- entry point ---- */

static bool
check_package(struct planner *p, const char *package)
{
	struct grove_node *n = grove_node_child(p->w->stow, package);
	const char *why = "";

	if (n && view_follow_type(n) == GROVE_FT_DIR && n->listed)
		return true;
	if (p->o->stow_words) {
		fail(p, -GROVE_E_NOPACKAGE, "The stow directory %s does not contain package %s",
		     p->w->stow_path, package);
		return false;
	}
	if (n && n->type == GROVE_FT_LINK && n->escapes)
		why = n->link[0] == '/' ? " (it is an absolute link out of the stow directory)"
					: " (it is a link that leaves the stow directory or loops)";
	else if (n && n->type == GROVE_FT_LINK)
		why = " (it is a link to something that is not a folder)";
	else if (n && n->type != GROVE_FT_NONE)
		why = " (it is a file, not a folder)";
	if (!p->rc)
		p->rc = grove_error_set(p->err, -GROVE_E_NOPACKAGE,
					"the stow directory '%s' does not contain package '%s'%s",
					p->w->stow_path, package, why);
	return false;
}

int
grove_planner_run(struct grove_world *w, const struct grove_plan_opts *opts, char *const *unstow,
		  size_t n_unstow, char *const *stow, size_t n_stow, struct grove_plan *plan,
		  struct grove_error *err)
{
	struct link_memo links = { 0 };
	struct planner p = { .w = w, .o = opts, .plan = plan, .err = err, .links = &links };
	int r;

	p.action = "unstow";
	for (size_t i = 0; i < n_unstow && !p.rc; i++)
		if (check_package(&p, unstow[i]))
			unstow_contents(&p, unstow[i], ".", ".", &(struct known){ 0 });
	p.action = "stow";
	for (size_t i = 0; i < n_stow && !p.rc; i++) {
		if (!check_package(&p, stow[i]))
			continue;
		validate_tree(&p, stow[i], grove_node_child(w->stow, stow[i]), ".", ".");
		stow_contents(&p, stow[i], ".", ".");
	}
	if (p.incomplete && (!p.rc || p.rc != -ENOMEM)) {
		r = GROVE_PLAN_NEEDS_SCAN;
	} else if (p.rc) {
		r = p.rc;
	} else if (plan->n_conflicts) {
		grove_plan_sort_conflicts(plan);
		r = 0;
	} else {
		if (opts->release_stow)
			w->stow = grove_node_free(w->stow); /* emitting reads the target only */
		/* The memo stays while small: emitting asks the unstowed links' packages again.
		 * A big one goes before the plan's ops are made (its room serves them). */
		if (links.cap > LINK_MEMO_KEPT)
			view_link_memo_release(&links);
		planner_emit_all(&p);
		r = p.rc;
	}
	view_link_memo_release(&links);
	planner_release(&p);
	return r;
}

int
grove_planner_run_pass(struct grove_world *w, const struct grove_plan_opts *opts,
		       char *const *unstow, size_t n_unstow, char *const *stow, size_t n_stow,
		       struct grove_plan *plan, struct grove_error *err)
{
	struct grove_plan scratch;
	int r;

	if (opts->release_stow)
		return grove_error_set(err, -GROVE_E_INTERNAL,
				       "planning: a pass may not release the stow dir's model");
	grove_plan_init(&scratch);
	r = grove_planner_run(w, opts, unstow, n_unstow, stow, n_stow, &scratch, err);
	for (size_t i = 0; r == 0 && i < scratch.n_conflicts; i++) {
		const struct grove_conflict *c = &scratch.conflicts[i];

		if (grove_plan_add_conflict(plan, c->action, c->package, c->path, c->message) < 0)
			r = grove_error_set(err, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; r == 0 && i < scratch.n_warnings; i++)
		if (grove_plan_add_warning(plan, scratch.warnings[i]) < 0)
			r = grove_error_set(err, -ENOMEM, "out of memory");
	grove_plan_release(&scratch);
	return r;
}

int
grove_planner_diff(struct grove_world *w, struct grove_plan *plan, struct grove_error *err)
{
	struct grove_plan_opts none = { 0 };
	struct planner p = { .w = w, .o = &none, .plan = plan, .err = err, .action = "plan" };

	planner_emit_all(&p);
	return p.rc;
}

struct packages {
	const struct grove_plan_opts *opts;
	char *const *unstow, *const *stow;
	size_t n_unstow, n_stow;
};

static int
plan_packages(struct grove_world *w, void *ctx, struct grove_plan *plan, struct grove_error *err)
{
	const struct packages *p = ctx;

	return grove_planner_run(w, p->opts, p->unstow, p->n_unstow, p->stow, p->n_stow, plan, err);
}

int
grove_planner_run_scanning(struct grove_world *w, const struct grove_root *stow,
			   const struct grove_root *target, const struct grove_plan_opts *opts,
			   char *const *unstow, size_t n_unstow, char *const *pkgs, size_t n_pkgs,
			   struct grove_plan *plan, struct grove_error *err)
{
	struct packages p = {
		.opts = opts, .unstow = unstow, .n_unstow = n_unstow, .stow = pkgs, .n_stow = n_pkgs
	};

	return grove_world_plan(w, stow, target, plan_packages, &p, plan, err);
}

/* ---- for the bounded walk (planner_walk.c) ---- */

void
planner_stow_contents(struct planner *p, const char *package, const char *dir)
{
	stow_contents(p, package, dir, dir);
}

void
planner_unstow_contents(struct planner *p, const char *package, const char *dir)
{
	unstow_contents(p, package, dir, dir, &(struct known){ 0 });
}

bool
planner_check_package(struct planner *p, const char *package)
{
	return check_package(p, package);
}
