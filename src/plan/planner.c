/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The planner: GNU Stow 2.4's stow/unstow algorithm over in-memory trees, then the plan as a tree
 * difference (planner_view.c's emit walk). The stow half and the entry points; the unstow half is
 * planner_unstow.c's. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/path.h"
#include "plan/planner.h"
#include "planner_int.h"
#include "base/util.h"

#include "banned.h" /* last */

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

char *
grove_planner_join3(const char *a, const char *b, const char *c)
{
	cleanup_free char *ab = grove_path_join(a, b);

	return ab ? grove_path_join_names(ab, c) : NULL;
}

/* The package's folder pkg_subdir (its node dir, or NULL: looked up), read whole, for
 * stow_contents; NULL when it has to wait for the scan (a need recorded) or the plan failed. */
static struct grove_node *
stow_dir(struct planner *p, const char *package, const char *pkg_subdir, struct grove_node *dir)
{
	struct grove_world_pkg *pkg;

	if (!dir)
		dir = grove_view_pkg_node(p, package, pkg_subdir);
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
				grove_view_tneed(p, full);
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
		    grove_view_pkg_pruned(p, package, pkg_subdir)) {
			grove_view_need(p, rel); /* a package the scan read only in part */
			return NULL;
		}
	}
	if (!dir || grove_view_follow_type(dir) != GROVE_FT_DIR || !dir->listed) {
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

	if (p->rc || (p->walk && grove_walk_defer(p, false, package, pkg_subdir, target_subdir)) ||
	    grove_view_should_skip_target_at(p, pkg_subdir, at))
		return false;
	*ret_dir = stow_dir(p, package, pkg_subdir, kn->pdir);
	if (!*ret_dir)
		return false;
	*ret_tdir = kn->tdir ? kn->tdir : grove_view_tnode(p, target_subdir);
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
	kids = grove_planner_frame_kids(p, dir, &kids_own);
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
	scratch = grove_planner_frame_bytes(p, pcap + tcap + fcap + 2 * dcap, &scratch_own);
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
		if (grove_view_ignored(p, package, tpath))
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
	grove_memo_enter(p);
	stow_folder_contents(p, package, pkg_subdir, target_subdir, kn);
	grove_memo_leave(p);
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
	struct grove_node *t = grove_view_tnode(p, target_subpath);
	cleanup_free char *existing = strdup(t->link);
	cleanup_free char *owner = NULL;
	cleanup_free char *owner_stow = NULL;
	cleanup_free char *existing_path = NULL;

	if (!existing) {
		oom(p);
		return;
	}
	existing_path = grove_view_find_owner(p, target_subpath, existing, &owner, &owner_stow);
	if (!existing_path) {
		grove_view_conflictf(p, package, target_subpath,
				     "existing target is not owned by stow: %s", target_subpath);
		return;
	}
	if (!grove_view_stow_exists(p, existing_path)) {
		/* A dangling link of ours: replace it. */
		grove_view_do_unlink(p, target_subpath);
		grove_view_do_link(p, link_dest, target_subpath);
		return;
	}
	if (strcmp(existing, link_dest) == 0)
		return;
	if (grove_view_deferred(p, target_subpath))
		return;
	if (grove_view_overridden(p, target_subpath)) {
		grove_view_do_unlink(p, target_subpath);
		grove_view_do_link(p, link_dest, target_subpath);
		return;
	}
	if (grove_view_stow_isdir(p, existing_path) && grove_view_stow_isdir(p, pkg_path)) {
		/* Unfold: the folder becomes real, holding both packages' links. */
		const char *src = p->src_stow;

		grove_view_do_unlink(p, target_subpath);
		grove_view_do_mkdir(p, target_subpath);
		p->src_stow = owner_stow; /* the owner may live in a second stow dir */
		stow_contents(p, owner, pkg_subpath, target_subpath);
		p->src_stow = src;
		stow_contents(p, package, pkg_subpath, target_subpath);
		return;
	}
	grove_view_conflictf(p, package, target_subpath,
			     "existing target is stowed to a different package: %s => %s",
			     target_subpath, existing);
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
		src = grove_view_pkg_node(p, package, pkg_subpath);
	p->package = package;
	if (!src) {
		fail(p, -GROVE_E_INTERNAL, "planning: '%s' was not scanned%s", pkg_path, NULL);
		return;
	}
	if (src->type == GROVE_FT_LINK) {
		if (src->link[0] == '/') {
			grove_view_conflictf(p, package, target_subpath,
					     "source is an absolute symlink %s => %s", pkg_path,
					     src->link);
			return;
		}
		if (src->escapes) {
			grove_view_conflictf(
				p, package, target_subpath,
				"source is a symlink that leaves the stow directory or loops %s => %s",
				pkg_path, src->link);
			return;
		}
	}
	if (src->type == GROVE_FT_OTHER) {
		grove_view_conflictf(p, package, target_subpath,
				     "source is not a regular file, folder or symlink: %s",
				     pkg_path);
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
		bool src_dir = grove_view_follow_type(src) == GROVE_FT_DIR;

		if (t->type == GROVE_FT_DIR) {
			if (!src_dir) {
				grove_view_conflictf(
					p, package, target_subpath,
					"cannot stow non-directory %s over existing directory target %s",
					pkg_path, target_subpath);
			} else {
				const struct known kn = entry_known(e, src, t, root);

				stow_contents_known(p, package, pkg_subpath, target_subpath, &kn);
			}
		} else if (p->o->adopt) {
			if (src_dir) {
				grove_view_conflictf(
					p, package, target_subpath,
					"cannot stow directory %s over existing non-directory target %s",
					pkg_path, target_subpath);
			} else if (t->orig_type != GROVE_FT_REG) {
				grove_view_conflictf(
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
				grove_view_do_link(p, link_dest, target_subpath);
			}
		} else {
			grove_view_conflictf(
				p, package, target_subpath,
				"cannot stow %s over existing target %s since neither a link nor a directory and --adopt not specified",
				pkg_path, target_subpath);
		}
	} else if (p->o->no_folding && src->type == GROVE_FT_DIR) {
		const struct known kn = entry_known(e, src, NULL, root);

		grove_view_do_mkdir(p, target_subpath);
		stow_contents_known(p, package, pkg_subpath, target_subpath, &kn);
	} else {
		grove_view_do_link_in(p, link_dest, target_subpath, e->tdir, e->tname);
	}
}

/*
 * Entries grove refuses in the folders of a package being stowed that the scan
 * read: a link that leaves the stow dir or loops, and fifos, sockets and
 * devices, even in a folder that then folds. A folder the scan left unread
 * (pruned: the plan folds it, nothing beneath is linked by itself) is not
 * looked into; when a later plan unfolds it, it is read and checked then
 * (docs/stow.md, "What grove reads below a folded folder"). (Absolute links
 * are refused where Stow refuses them: when visited.)
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
		if (grove_view_ignored(p, package, tpath))
			continue;
		/* The package entry's path from the target, for the conflicts' words. */
		full = n->type != GROVE_FT_DIR
			       ? grove_planner_join3(p->w->stow_path, package, pkg_path)
			       : NULL;
		if (n->type != GROVE_FT_DIR && !full) {
			oom(p);
			return;
		}
		if (n->type == GROVE_FT_LINK && n->escapes && n->link[0] != '/') {
			grove_view_conflictf(
				p, package, tpath,
				"source is a symlink that leaves the stow directory or loops %s => %s",
				full, n->link);
		} else if (n->type == GROVE_FT_OTHER) {
			grove_view_conflictf(p, package, tpath,
					     "source is not a regular file, folder or symlink: %s",
					     full);
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

/* ---- entry point ---- */

/* The error's path: the package's folder in the stow dir (docs/json.md, "error.path"). */
static void
package_path(struct planner *p, const char *package)
{
	if (p->w->stow_real)
		grove_error_path_in(p->err, p->w->stow_real, package);
}

static bool
check_package(struct planner *p, const char *package)
{
	struct grove_node *n = grove_node_child(p->w->stow, package);
	const char *why = "";

	if (n && grove_view_follow_type(n) == GROVE_FT_DIR && n->listed)
		return true;
	if (p->o->stow_words) {
		if (!p->rc) {
			fail(p, -GROVE_E_NOPACKAGE,
			     "The stow directory %s does not contain package %s", p->w->stow_path,
			     package);
			package_path(p, package);
		}
		return false;
	}
	if (n && n->type == GROVE_FT_LINK && n->escapes)
		why = n->link[0] == '/' ? " (it is an absolute link out of the stow directory)"
					: " (it is a link that leaves the stow directory or loops)";
	else if (n && n->type == GROVE_FT_LINK)
		why = " (it is a link to something that is not a folder)";
	else if (n && n->type != GROVE_FT_NONE)
		why = " (it is a file, not a folder)";
	if (!p->rc) {
		p->rc = grove_error_set(p->err, -GROVE_E_NOPACKAGE,
					"the stow directory '%s' does not contain package '%s'%s",
					p->w->stow_path, package, why);
		package_path(p, package);
	}
	return false;
}

int
grove_planner_run(struct grove_world *w, const struct grove_plan_opts *opts, char *const *unstow,
		  size_t n_unstow, char *const *stow, size_t n_stow, struct grove_plan *plan,
		  struct grove_error *err)
{
	struct link_memo links = { 0 };
	struct planner p = { .w = w, .o = opts, .plan = plan, .err = err, .memo.links = &links };
	int r;

	p.action = "unstow";
	for (size_t i = 0; i < n_unstow && !p.rc; i++)
		if (check_package(&p, unstow[i]))
			grove_planner_unstow_contents(&p, unstow[i], ".");
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
			grove_view_link_memo_release(&links);
		grove_planner_emit_all(&p);
		r = p.rc;
	}
	grove_view_link_memo_release(&links);
	grove_planner_release(&p);
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

	grove_planner_emit_all(&p);
	return p.rc;
}

/* ---- for the bounded walk (planner_walk.c) ---- */

void
grove_planner_stow_contents(struct planner *p, const char *package, const char *dir)
{
	stow_contents(p, package, dir, dir);
}

bool
grove_planner_check_package(struct planner *p, const char *package)
{
	return check_package(p, package);
}
