/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The scan of the target: the folders a plan may visit, matched against the packages' folders,
 * beneath the held target root. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "grove/path.h"
#include "scan_int.h"
#include "base/util.h"

#include "banned.h" /* last */

static int
add_pending(struct scan *s, struct grove_node *tnode, const char *dest, const char *unfold)
{
	struct pending *p;

	if (s->n_pend == s->cap_pend) {
		size_t cap = s->cap_pend ? s->cap_pend * 2 : 64;
		struct pending *np = realloc(s->pend, cap * sizeof(*np));
		if (!np)
			return grove_scan_oom(s);
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
		return grove_scan_oom(s);
	}
	s->n_pend++;
	return 0;
}

bool
grove_scan_pkg_is_dir(const struct grove_node *n)
{
	return n &&
	       (n->type == GROVE_FT_DIR ||
		(n->type == GROVE_FT_LINK && n->dest_type == GROVE_FT_DIR)) &&
	       n->listed;
}

/*
 * Where a target folder's entries come from when many packages share it: every
 * package entry of the folder under the target name it lands on (its own name,
 * and with --dotfiles ".X" for "dot-X"), the entries of one name chained in
 * (package, form) order, the chains in a hash by name. Built once per folder, so
 * matching a folder of E entries against P packages costs O(E + package entries)
 * instead of E * P lookups, and no sort.
 */
struct match_key {
	const char *key; /* the target name */
	char *own;       /* key, when it had to be made (".X" for "dot-X") */
	size_t pkg;      /* index into the folder's pkgs */
	int form;        /* 0: same name, 1: dot-X for .X (matching_kids' order) */
	struct grove_node *kid;
	size_t next; /* the next key of the same name + 1, 0: the last */
	size_t tail; /* a chain's first key only: its last key */
};

struct match_index {
	struct match_key *k;
	size_t n;
	size_t *slot; /* open addressing, mask + 1 slots: a chain's first key + 1, 0: empty */
	size_t mask;
	size_t *heads; /* the chains' first keys, in the order their names were first met */
	size_t n_heads;
};

/* Below this many packages a folder is matched by a lookup in each. */
#define MATCH_INDEX_MIN 8

static void
match_index_release(struct match_index *mi)
{
	for (size_t i = 0; mi->k && i < mi->n; i++)
		free(mi->k[i].own);
	free(mi->k);
	free(mi->slot);
	free(mi->heads);
	*mi = (struct match_index){ 0 };
}

/* The slot of name's chain: where its first key is, or the empty slot where it goes. */
static size_t
match_index_slot(const struct match_index *mi, const char *name)
{
	size_t i = (size_t)grove_hash_str(name) & mi->mask;

	while (mi->slot[i] && strcmp(mi->k[mi->slot[i] - 1].key, name) != 0)
		i = (i + 1) & mi->mask;
	return i;
}

/* Chains key x (the newest) to the keys of its name. The keys come package by package, so a
 * chain stays in package order; within a package a form-0 key goes before a form-1 one. */
static void
match_index_put(struct match_index *mi, size_t x)
{
	struct match_key *k = mi->k;
	size_t i = match_index_slot(mi, k[x].key), h, t, p;

	if (!mi->slot[i]) {
		mi->slot[i] = x + 1;
		k[x].tail = x;
		mi->heads[mi->n_heads++] = x;
		return;
	}
	h = mi->slot[i] - 1;
	t = k[h].tail;
	if (k[t].pkg != k[x].pkg || k[t].form <= k[x].form) {
		k[t].next = x + 1;
		k[h].tail = x;
		return;
	}
	/* x goes before t (same package, form 0 after form 1): find t's predecessor. */
	if (t == h) {
		k[x].next = h + 1;
		k[x].tail = t;
		mi->slot[i] = x + 1;
		for (size_t j = 0; j < mi->n_heads; j++)
			if (mi->heads[j] == h)
				mi->heads[j] = x;
		return;
	}
	for (p = h; k[p].next - 1 != t; p = k[p].next - 1)
		;
	k[p].next = x + 1;
	k[x].next = t + 1;
}

static int
match_index_build(const struct scan *s, const struct pkg_at *pkgs, size_t n_pkgs,
		  struct match_index *mi)
{
	size_t total = 0, k = 0, slots = 16;

	for (size_t i = 0; i < n_pkgs; i++)
		total += pkgs[i].node->n_kids;
	/* Up to two keys per entry (the dotted form); at least twice as many slots. */
	while (slots < 4 * total)
		slots *= 2;
	mi->k = calloc(total ? 2 * total : 1, sizeof(*mi->k));
	mi->heads = calloc(total ? 2 * total : 1, sizeof(*mi->heads));
	mi->slot = calloc(slots, sizeof(*mi->slot));
	mi->mask = slots - 1;
	if (!mi->k || !mi->heads || !mi->slot) {
		match_index_release(mi);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_pkgs; i++) {
		const struct grove_node *pn = pkgs[i].node;

		for (size_t j = 0; j < pn->n_kids; j++) {
			struct grove_node *kid = pn->kids[j];
			const char *rest = kid->name + 4;

			mi->k[k] = (struct match_key){ .key = kid->name, .pkg = i, .kid = kid };
			mi->n = ++k;
			match_index_put(mi, k - 1);
			/* The target name ".X" looks for "dot-X" when X is not empty and does
			 * not start with '.' (matching_kids' dotted form, read backwards). */
			if (s->o->dotfiles && strncmp(kid->name, "dot-", 4) == 0 && rest[0] &&
			    rest[0] != '.') {
				char *own = grove_strdupf(".%s", rest);

				if (!own) {
					match_index_release(mi);
					return -ENOMEM;
				}
				mi->k[k] = (struct match_key){
					.key = own, .own = own, .pkg = i, .form = 1, .kid = kid
				};
				mi->n = ++k;
				match_index_put(mi, k - 1);
			}
		}
	}
	return 0;
}

/* The first key of name's chain + 1, or 0 when no package entry lands on name. */
static size_t
match_index_find(const struct match_index *mi, const char *name)
{
	return mi->slot[match_index_slot(mi, name)];
}

/* Appends package entry kid of the folder at pa to out[*k], its subpath not made yet
 * (match_subpath). */
static int
put_match(struct pkg_at *out, size_t *k, const struct pkg_at *pa, struct grove_node *kid)
{
	out[*k] = (struct pkg_at){ .package = pa->package, .node = kid, .parent = pa->subpath };
	(*k)++;
	return 0;
}

/* Makes m's subpath (its folder's joined with its name) if not made yet: it, or NULL when out of
 * memory. */
static const char *
match_subpath(struct pkg_at *m)
{
	if (!m->subpath)
		m->subpath = grove_path_join_names(m->parent, m->node->name);
	return m->subpath;
}

/*
 * The package entries that land on target name `name` in this folder: the
 * entry of that name and, with --dotfiles, "dot-X" for ".X", in package order.
 * A hash lookup per package, or with mi (many packages) a search of the
 * folder's index (first: match_index_find's answer for name). out must hold
 * 2 * n_pkgs entries, or with mi every match; each out[k].subpath is NULL, made
 * (malloc'd: the package-relative path) by match_subpath when needed.
 */
static int
matching_kids(const struct scan *s, const struct pkg_at *pkgs, size_t n_pkgs,
	      const struct match_index *mi, size_t first, const char *name, struct pkg_at *out,
	      size_t *ret_n)
{
	cleanup_free char *dotted = NULL;
	size_t k = 0;

	if (mi) {
		for (size_t x = first; x; x = mi->k[x - 1].next) {
			if (put_match(out, &k, &pkgs[mi->k[x - 1].pkg], mi->k[x - 1].kid) < 0)
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

/* A target link's parent folder joined with its text, the way Stow reads it: in buf when it fits
 * (the usual case, no allocation), else in *ret_heap (malloc'd); NULL when out of memory. Kept
 * out of scan_target_entry, which recurses: its buffers are on the stack for this call only. */
static const char *
link_joined(const char *kpath, const char *text, char *buf, size_t size, char **ret_heap)
{
	size_t pl = grove_path_parent_len(kpath);
	char parent[256];
	int n;

	*ret_heap = NULL;
	if (pl < sizeof(parent)) {
		memcpy(parent, kpath, pl);
		parent[pl] = '\0';
		n = grove_path_join_into(parent, text, buf, size);
		if (n >= 0)
			return buf;
		return *ret_heap = grove_path_join(parent, text);
	}
	{
		cleanup_free char *p = grove_path_parent(kpath);

		return p ? (*ret_heap = grove_path_join(p, text)) : NULL;
	}
}

/* A target link (kid at kpath) whose text leads into the stow dir: what it points at, and what
 * the m[0..nm) package entries landing on it may unfold. */
static __attribute__((noinline)) int
scan_target_link(struct scan *s, struct grove_node *kid, const char *kpath, struct pkg_at *m,
		 size_t nm)
{
	char jbuf[512];
	cleanup_free char *jheap = NULL;
	const char *joined = link_joined(kpath, kid->orig_link, jbuf, sizeof(jbuf), &jheap);
	const char *rest;
	int r = 0;

	if (!joined)
		return grove_scan_oom(s);
	rest = kid->orig_link[0] == '/' ? NULL : grove_path_strip_prefix(joined, s->w->stow_path);
	if (rest && rest[0]) {
		enum grove_ftype t;

		/* Ours: the plan may ask what it points at, and unfold it. What the
		 * model already knows (a package read whole) is final: answered now,
		 * not kept as a pending entry (100,000 of them for a restow of
		 * nofold100k). */
		if (s->w->stow && grove_scan_model_answer(s, rest, &t))
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
			owner = slash ? strndup(rest, (size_t)(slash - rest)) : strdup(rest);
			unfold = owner && match_subpath(&m[i])
					 ? grove_strdupf("%s/%s", owner, m[i].subpath)
					 : NULL;
			if (!unfold) {
				r = grove_scan_oom(s);
				break;
			}
			r = add_pending(s, kid, rest, unfold);
		}
	}
	return r;
}

static int
scan_target_entry(struct scan *s, struct grove_node *kid, int dfd, bool on_mount, const char *tpath,
		  const char *kpath, const struct pkg_at *pkgs, size_t n_pkgs,
		  const struct match_index *mi)
{
	struct pkg_at mbuf[4]; /* the matches, when so few (nearly always one) */
	struct pkg_at *m = NULL;
	size_t nm = 0;
	int r = 0;

	/* Only links (ours to follow or unfold) and folders (to enter) need the
	 * packages' matching entries: a file is a node and nothing more (the
	 * caller makes no path for it). */
	if (!kpath || (kid->orig_type != GROVE_FT_LINK && kid->orig_type != GROVE_FT_DIR))
		return 0;
	if (n_pkgs) {
		/* With an index the matches are counted first: a folder shared by
		 * many packages must not cost 2 * n_pkgs per entry. */
		size_t cap = 2 * n_pkgs, first = 0;

		if (mi) {
			cap = 1;
			for (size_t x = first = match_index_find(mi, kid->name); x;
			     x = mi->k[x - 1].next)
				cap++;
		}
		m = cap <= sizeof(mbuf) / sizeof(mbuf[0]) ? mbuf : calloc(cap, sizeof(*m));
		if (!m || matching_kids(s, pkgs, n_pkgs, mi, first, kid->name, m, &nm) < 0) {
			if (m != mbuf)
				free(m);
			return grove_scan_oom(s);
		}
	}

	if (kid->orig_type == GROVE_FT_LINK) {
		r = scan_target_link(s, kid, kpath, m, nm);
	} else if (kid->orig_type == GROVE_FT_DIR && (s->o->full_target || nm > 0)) {
		struct pkg_at *sub = NULL;
		size_t ns = 0;

		if (strcmp(kpath, s->w->stow_path) == 0)
			goto out; /* the stow dir itself: never planned into */
		sub = calloc(nm ? nm : 1, sizeof(*sub));
		if (!sub) {
			r = grove_scan_oom(s);
			goto out;
		}
		for (size_t i = 0; i < nm && r >= 0; i++) {
			if (!grove_scan_pkg_is_dir(m[i].node))
				continue;
			if (!match_subpath(&m[i]))
				r = grove_scan_oom(s);
			sub[ns++] = m[i];
		}
		if (r < 0) {
			free(sub);
			goto out;
		}
		if (ns || s->o->full_target) {
			bool kid_on_mount;
			cleanup_fd int kfd =
				grove_fs_open_dir_at_mount(dfd, kid->name, &kid_on_mount, s->err);

			if (kfd < 0)
				r = grove_error_prefix(s->err, "read target folder '%s/%s'",
						       s->target->path, kpath);
			else
				r = grove_scan_target_dir(s, kid, kfd, on_mount && kid_on_mount,
							  kpath, sub, ns);
		}
		free(sub);
	}
out:
	for (size_t i = 0; i < nm; i++)
		free(m[i].subpath);
	if (m != mbuf)
		free(m);
	(void)tpath;
	return r;
}

/*
 * The entries of the target folder dfd that the planner can ask about when the
 * request only stows (without --dotfiles): the names of the packages' entries
 * that reach it, and Stow's markers .stow and .nonstow (should_skip_target).
 * One lstat each, where listing a lived-in folder (a home's .config) would
 * read hundreds of names no package has. Missing names are left out, as a
 * listing would leave them out.
 */
static int
lookup_entries(struct scan *s, int dfd, const struct pkg_at *pkgs, size_t n_pkgs,
	       const struct match_index *mi, struct grove_dirent **ret_ents, size_t *ret_n)
{
	size_t total = 2, n_names = 0, n = 0, bytes = sizeof(".nonstow") + sizeof(".stow");
	cleanup_free const char **names = NULL;
	struct grove_dirent *ents = NULL;
	char *out;
	int r = 0;

	for (size_t i = 0; i < n_pkgs; i++) {
		total += pkgs[i].node->n_kids;
		for (size_t j = 0; j < pkgs[i].node->n_kids; j++)
			bytes += strlen(pkgs[i].node->kids[j]->name) + 1;
	}
	/* As grove_fs_list gives them: one allocation, the entries and then their names. */
	names = calloc(total, sizeof(*names));
	ents = malloc(total * sizeof(*ents) + bytes);
	if (!names || !ents) {
		free(ents);
		return -ENOMEM;
	}
	out = (char *)(ents + total);
	names[n_names++] = ".nonstow";
	names[n_names++] = ".stow";
	if (mi) {
		/* Each name once already: the index's chains. */
		for (size_t i = 0; i < mi->n_heads; i++) {
			const char *key = mi->k[mi->heads[i]].key;

			if (strcmp(key, ".nonstow") != 0 && strcmp(key, ".stow") != 0)
				names[n_names++] = key;
		}
	} else {
		for (size_t i = 0; i < n_pkgs; i++)
			for (size_t j = 0; j < pkgs[i].node->n_kids; j++)
				names[n_names++] = pkgs[i].node->kids[j]->name;
		if (grove_sort_names(names, n_names) < 0) {
			free(ents);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < n_names && r >= 0; i++) {
		struct grove_stat st;
		size_t nl;

		if (!mi && i > 0 && strcmp(names[i], names[i - 1]) == 0)
			continue;
		r = grove_fs_stat_at(dfd, names[i], &st, s->err);
		if (r < 0 || st.type == GROVE_FT_NONE)
			continue;
		nl = strlen(names[i]) + 1;
		ents[n].name = memcpy(out, names[i], nl);
		out += nl;
		ents[n].type = st.type;
		ents[n++].ino = st.ino;
	}
	if (r < 0) {
		grove_dirents_free(ents, n);
		return r;
	}
	*ret_ents = ents;
	*ret_n = n;
	return 0;
}

int
grove_scan_target_dir(struct scan *s, struct grove_node *dir, int dfd, bool on_mount,
		      const char *tpath, const struct pkg_at *pkgs, size_t n_pkgs)
{
	struct match_index mi = { 0 };
	struct grove_dirent *ents = NULL;
	size_t n = 0, tlen = strlen(tpath);
	char kbuf[256]; /* each entry's path, when it fits: no allocation per entry */
	cleanup_free char *kheap = NULL;
	/* A folder looked up before and listed now (the planner asked): its entries
	 * so far stay, the listing adds the others. */
	bool merge = dir->n_kids > 0;
	bool lookup = s->lookup && pkgs;
	struct grove_node_maker maker;
	int r;

	if (n_pkgs >= MATCH_INDEX_MIN && match_index_build(s, pkgs, n_pkgs, &mi) < 0)
		return grove_scan_oom(s);
	r = lookup ? lookup_entries(s, dfd, pkgs, n_pkgs, mi.k ? &mi : NULL, &ents, &n)
		   : grove_fs_list_flags(dfd, grove_scan_target_list_flags(s, on_mount), &ents, &n,
					 s->err);
	if (r < 0) {
		match_index_release(&mi);
		if (r == -ENOMEM && lookup)
			return grove_scan_oom(s);
		return grove_error_prefix(s->err, "read target folder '%s%s%s'", s->target->path,
					  tpath[0] ? "/" : "", tpath);
	}
	dir->listed = !lookup;
	if (grove_scan_maker_init(dir, ents, n, &maker) < 0)
		r = grove_scan_oom(s);
	for (size_t i = 0; i < n && r >= 0; i++) {
		cleanup_free char *text = NULL;
		const char *kpath = NULL;
		struct grove_node *kid;

		if (merge && grove_node_child(dir, ents[i].name))
			continue;
		if (ents[i].type == GROVE_FT_LINK || ents[i].type == GROVE_FT_DIR) {
			kpath = grove_child_path_buf(tpath, tlen, ents[i].name, kbuf, sizeof(kbuf),
						     &kheap);
			if (!kpath) {
				r = grove_scan_oom(s);
				break;
			}
		}
		if (ents[i].type == GROVE_FT_LINK) {
			r = grove_fs_readlink_at(dfd, ents[i].name, &text, s->err);
			if (r < 0) {
				grove_error_prefix(s->err, "read target '%s/%s'", s->target->path,
						   kpath);
				break;
			}
		}
		kid = grove_node_make(&maker, ents[i].name, ents[i].type, text);
		if (!kid || grove_node_add(dir, kid) < 0) {
			grove_node_free(kid);
			r = grove_scan_oom(s);
			break;
		}
		grove_scan_note_made(s);
		r = scan_target_entry(s, kid, dfd, on_mount, tpath, kpath, pkgs, n_pkgs,
				      n_pkgs >= MATCH_INDEX_MIN ? &mi : NULL);
	}
	grove_node_maker_done(&maker);
	match_index_release(&mi);
	grove_dirents_free(ents, n);
	return r;
}

/* Lists the target folder at node (path tpath) into the view, once. */
static int
list_target_node(struct scan *s, struct grove_node *node, const char *tpath)
{
	cleanup_fd int fd = -1;
	bool on_mount;

	if (node->listed || node->orig_type != GROVE_FT_DIR)
		return 0;
	fd = grove_fs_open_dir_beneath_mount(s->target->fd, tpath[0] ? tpath : ".", &on_mount,
					     s->err);
	if (fd < 0)
		return grove_error_prefix(s->err, "read target folder '%s/%s'", s->target->path,
					  tpath);
	return grove_scan_target_dir(s, node, fd, on_mount, tpath, NULL, 0);
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
			return grove_scan_oom(&s);
	}
	if (!w->stow_path && !(w->stow_path = strdup("\x01")))
		return grove_scan_oom(&s); /* owns nothing: no link is taken for a stow dir's */
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct grove_node *node = w->target;
		const char *p = paths[i];
		char *prefix = calloc(1, strlen(paths[i]) + 1);

		if (!prefix) {
			grove_fd_batch_flush(&s.done_fds);
			return grove_scan_oom(&s);
		}
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
			/* The path so far: paths are clean, so it is paths[i] up to here. */
			memcpy(prefix, paths[i], (size_t)(p - paths[i]) + len);
			prefix[(size_t)(p - paths[i]) + len] = '\0';
			if (!e) {
				/* The path itself, when a folder: its entries matter too. */
				r = list_target_node(&s, node, prefix);
				break;
			}
			p = e + 1;
		}
		free(prefix);
	}
	grove_scan_end(&s);
	return r < 0 ? r : 0;
}

/*
 * Reads the .stow-local-ignore of the second stow dir's package whose folder is the
 * target-relative pkgpath into the package record named pkgpath, as grove_scan_package_ignore does
 * for the stow dir's packages: beneath the held target (a link in it is followed there, never out
 * of it), and none there, or a link leaving the target or looping, means the global list.
 */
static int
target_package_ignore(const struct grove_root *target, struct grove_world *w, const char *pkgpath,
		      struct grove_error *err)
{
	struct grove_world_pkg *pkg = grove_world_pkg_add(w, pkgpath);
	cleanup_free char *rel = NULL;
	cleanup_free char *text = NULL;
	cleanup_free char *source = NULL;
	cleanup_fd int fd = -1;
	struct grove_error e = { 0 };
	size_t len;
	int r;

	if (!pkg)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (pkg->ignore_loaded)
		return 0;
	pkg->ignore_loaded = true;
	rel = grove_path_join(pkgpath, ".stow-local-ignore");
	source = rel ? grove_strdupf("'%s/%s'", target->path, rel) : NULL;
	if (!source)
		return grove_error_set(err, -ENOMEM, "out of memory");
	/* Not blocking on a fifo: read_fd refuses anything but a regular file. */
	fd = grove_fs_open_beneath(target->fd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, true, &e);
	if (fd == -ENOENT || fd == -EXDEV || fd == -ELOOP)
		return 0;
	if (fd < 0) {
		*err = e;
		return grove_error_prefix(err, "read %s", source);
	}
	r = grove_fs_read_fd(fd, IGNORE_FILE_MAX, &text, &len, err);
	if (r < 0)
		return grove_error_prefix(err, "read %s", source);
	r = grove_ignore_list_parse(text, source, &pkg->local_ignore, err);
	return r < 0 ? r : 0;
}

int
grove_scan_target_needs(struct grove_world *w, const struct grove_root *target,
			struct grove_error *err)
{
	int r = 0;

	if (w->n_tneeds)
		r = grove_scan_target_paths(w, target, w->tneeds, w->n_tneeds, err);
	for (size_t i = 0; i < w->n_tignores && r >= 0; i++)
		r = target_package_ignore(target, w, w->tignores[i], err);
	for (size_t i = 0; i < w->n_tneeds; i++)
		free(w->tneeds[i]);
	for (size_t i = 0; i < w->n_tignores; i++)
		free(w->tignores[i]);
	w->n_tneeds = w->n_tignores = 0;
	return r;
}
