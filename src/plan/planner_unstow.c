/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The planner's unstow half: GNU Stow 2.4's unstow_contents, foldable and cleanup_invalid_links
 * over the target tree (planner.c holds the stow half and the entry points). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "grove/path.h"
#include "plan/planner.h"
#include "planner_int.h"
#include "base/util.h"

#include "banned.h" /* last */

/* ---- unstow ---- */

static void unstow_contents(struct planner *p, const char *package, const char *pkg_subdir,
			    const char *target_subdir, const struct known *kn);

/* What unstow_folder_contents knows of an entry it hands to unstow_node: the package's node at
 * the entry (NULL: looked up; in compat, not needed), and the part after the stow dir of the
 * entry's package path from the target (grove_planner_join3(stow_path, package, pkg_subpath)
 * stripped of stow_path + "/", NULL when it does not start so) when mine_known; else
 * unstow_link_node joins it. */
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
		grove_view_warningf(p, "Ignoring an absolute symlink: %s => %s", target_subpath,
				    t->link);
		return;
	}
	switch (t->link == t->orig_link
			? grove_view_scanned_owner(p, target_subdir, t, buf, sizeof(buf), &rest)
			: grove_view_owner_in(p, target_subdir, t->link, buf, sizeof(buf), &rest)) {
	case VIEW_OWNER_NONE:
		return;
	case VIEW_OWNER_STOW:
		/* mine: grove_planner_join3(stow_path, package, pkg_subpath), as below. */
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
		if ((same && !p->o->compat) || !grove_view_stow_rest_exists(p, rest) || same)
			grove_view_unlink_node(t);
		return;
	case VIEW_OWNER_SLOW:
		break;
	}
	/* The long way: a second stow dir, or a path longer than the buffers. */
	existing_path = grove_view_find_stowed_path(p, target_subpath, t->link, NULL);
	if (!existing_path)
		return;
	pkg_path = grove_planner_join3(p->w->stow_path, package, pkg_subpath);
	if (!pkg_path) {
		oom(p);
		return;
	}
	if (!grove_view_stow_exists(p, existing_path) || strcmp(existing_path, pkg_path) == 0)
		grove_view_do_unlink(p, target_subpath);
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
				    ? grove_view_link_state(p, dir_path, kid)
				    : grove_view_link_state_of(p, dir_path, kid->link);

	if (s != LINK_SLOW)
		return s != LINK_OURS;
	path = grove_path_join_names(dir_path, kid->name);
	dest = path ? grove_view_find_stowed_path(p, path, kid->link, NULL) : NULL;
	return !dest || !grove_view_stow_exists(p, dest);
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
		grove_view_tneed(p, target_subdir); /* only looked up: folding needs every entry */
		return NULL;
	}
	for (size_t i = grove_memo_gone_prefix(p, dir); i < dir->n_kids; i++) {
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
		cleanup_free char *path =
			grove_view_find_stowed_path(p, target_subdir, stripped, &owner);
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
	grove_view_do_rmdir(p, target_subdir);
	grove_view_do_link(p, pkg_subpath, target_subdir);
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
		src = e->src ? e->src : grove_view_pkg_node(p, package, pkg_subpath);
	if (!p->o->compat && (!src || grove_view_follow_type(src) != GROVE_FT_DIR)) {
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
		dir = grove_view_tnode(p, dir_path);
	if (!dir || dir->orig_type != GROVE_FT_DIR || dir->cleaned)
		return;
	if (!dir->listed) {
		grove_view_tneed(p, dir_path); /* only looked up: Stow lists the folder here */
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
		switch (grove_view_link_state(p, dir_path, n)) {
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
			dest = grove_view_find_stowed_path(p, path, n->orig_link, NULL);
			if (!dest || grove_view_stow_exists(p, dest))
				continue;
		}
		grove_view_do_unlink(p, path);
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
		listing = kn->tdir ? kn->tdir : grove_view_tnode(p, target_subdir);
		return listing && listing->orig_type == GROVE_FT_DIR ? listing : NULL;
	}
	listing = kn->pdir ? kn->pdir : grove_view_pkg_node(p, package, pkg_subdir);
	if ((!listing || !listing->listed) && grove_view_pkg_pruned(p, package, pkg_subdir)) {
		cleanup_free char *rel = grove_path_join(package, pkg_subdir);

		if (!rel)
			oom(p);
		else
			grove_view_need(p, rel);
		return NULL;
	}
	if (!listing || grove_view_follow_type(listing) != GROVE_FT_DIR || !listing->listed) {
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

	if (p->rc || (p->walk && grove_walk_defer(p, true, package, pkg_subdir, target_subdir)) ||
	    grove_view_should_skip_target_at(p, target_subdir, kn->tdir))
		return;
	if (!(listing = unstow_listing(p, package, pkg_subdir, target_subdir, kn)))
		return;
	kids = grove_planner_frame_kids(p, listing, &kids_own);
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
	scratch = grove_planner_frame_bytes(p, tcap + pcap + mcap, &scratch_own);
	if (!scratch) {
		oom(p);
		return;
	}
	glue_p = kn->glue_p || grove_path_glues(pkg_subdir, NULL);
	glue_t = kn->glue_t || grove_path_glues(target_subdir, NULL);
	/* grove_planner_join3(stow_path, package, pkg_subdir/name) is pkg_root/pkg_subdir/name
	 * (pkg_root/name at the top) for a plain name when this holds; its part after stow_path +
	 * "/" starts at moff (0: it does not start so). */
	glue_m = kn->glue_m || grove_path_glues(pkg_root, top ? NULL : pkg_subdir);
	mine = scratch + tcap + pcap;
	if (glue_m)
		mlen = put_mine(mine, pkg_root, rlen, top ? NULL : pkg_subdir, plen,
				p->w->stow_path, &moff);
	tdir = kn->tdir ? kn->tdir : grove_view_tnode(p, target_subdir);
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
		if (grove_view_ignored(p, package, tpath))
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
			    tdir ? grove_node_child(tdir, tname) : grove_view_tnode(p, tpath), &e,
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
	grove_memo_enter(p);
	unstow_folder_contents(p, package, pkg_subdir, target_subdir, kn);
	grove_memo_leave(p);
}

/* ---- for the bounded walk (planner_walk.c) ---- */

void
grove_planner_unstow_contents(struct planner *p, const char *package, const char *dir)
{
	unstow_contents(p, package, dir, dir, &(struct known){ 0 });
}
