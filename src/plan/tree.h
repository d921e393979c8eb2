/* SPDX-License-Identifier: GPL-3.0-or-later */
/* In-memory trees: what the scan found (package trees, the target) and, for the target, what the
 * plan leaves. */
#ifndef GROVE_TREE_H
#define GROVE_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grove/fs.h"

/*
 * One entry. A target node carries two states: orig_* is what the scan found
 * on disk, type/link is what the plan leaves there; the planner only ever
 * changes the latter, and the plan is the difference. Package (stow dir)
 * nodes have orig == current.
 *
 * For a link, dest_type says what following it finds (GROVE_FT_NONE when
 * dangling, GROVE_FT_UNKNOWN when the scan did not look). A folder - or a link
 * to a folder inside a package - is "listed" when kids holds every entry.
 */
struct grove_node {
	struct grove_node *parent;
	const char *orig_link; /* stored in the node, after name; NULL when not a link */
	const char *link; /* == orig_link until the plan changes it (then its own copy, or after
			   * name in a node the plan made: grove_node_new_link) */
	char *adopt_to;   /* target node: the plan moves the file here (stow-relative) */
	struct grove_node **kids;
	struct grove_node **index; /* open-addressing hash of kids by name, or NULL */
	uint32_t n_kids, cap_kids;
	uint32_t index_cap;
	enum grove_ftype orig_type : 4;
	enum grove_ftype type : 4;
	enum grove_ftype dest_type : 4;
	bool listed : 1;
	bool escapes : 1; /* a package link that leaves the stow dir or loops */
	bool cleaned : 1; /* target folder: the planner already removed its dangling links */
	bool pruned : 1;  /* package folder the plan folds: left unread (unlisted) by the scan */
	/* 0: the node is its own allocation; else it lies in a block of nodes made together
	 * (grove_node_maker), block_off 8-byte units after the block's start. */
	unsigned block_off : 16;
	char name[]; /* one allocation per node: name, then the link text */
};

/*
 * How deep a package may nest folders (DESIGN.md invariant 8: every loop over
 * input a user controls is bounded). Planning, emitting and freeing walk the
 * trees recursively; the scan refuses a package deeper than this with a clear
 * error before any of them runs, so their stacks stay bounded.
 */
#define GROVE_TREE_MAX_DEPTH 1024

/* A new node with orig == current state; link is copied (may be NULL). */
struct grove_node *grove_node_new(const char *name, enum grove_ftype type, const char *link);

/* A new target node for a link the plan makes: nothing there as scanned (orig_type
 * GROVE_FT_NONE), a link to text after the plan, the text stored in the node. */
struct grove_node *grove_node_new_link(const char *name, const char *text);

/*
 * Makes the nodes of one listing together: a few blocks of up to 64 KiB instead of one
 * allocation per node. A node made so is freed as any other (grove_node_free); its block goes
 * when its last node does. init takes what the nodes will need without their link texts (the
 * sum of grove_node_size(name_len, NULL); 0 makes every node on its own); make falls back to
 * grove_node_new past that or when out of memory; done drops the maker's hold on its block.
 */
struct grove_node_maker {
	void *block; /* the block nodes are carved from, or NULL */
	size_t want; /* bytes still expected beyond the block */
};

/* The bytes a node with a name of name_len bytes and that link text (or NULL) takes in a
 * maker's block. */
size_t grove_node_size(size_t name_len, const char *link);

void grove_node_maker_init(struct grove_node_maker *m, size_t bytes);
struct grove_node *grove_node_make(struct grove_node_maker *m, const char *name,
				   enum grove_ftype type, const char *link);
void grove_node_maker_done(struct grove_node_maker *m);

/* A count that changes whenever a node is freed (this thread's): what was learnt of a tree's
 * entries holds while it stays the same and the tree is otherwise changed only by adding. */
unsigned long grove_tree_generation(void);

/* Frees node and its subtree; accepts NULL; returns NULL. */
struct grove_node *grove_node_free(struct grove_node *node);

/* Frees node's entries and their subtrees, keeping node itself: no kids, and not listed. */
void grove_node_drop_kids(struct grove_node *node);

/* The child called name, or NULL. */
struct grove_node *grove_node_child(const struct grove_node *node, const char *name);
/* The same for a name of len bytes, not NUL-terminated (a path's component); a name of 256
 * bytes or more is never found. */
struct grove_node *grove_node_child_n(const struct grove_node *node, const char *name, size_t len);

/* Makes room for n kids in all (a listing's count), so that adding them reallocates nothing.
 * Returns 0 or -ENOMEM. */
int grove_node_reserve_kids(struct grove_node *node, size_t n);

/* Adds child (which must not have a sibling of the same name). Returns 0 or -ENOMEM. */
int grove_node_add(struct grove_node *node, struct grove_node *child);

/* Follows a relative path ("a/b", "" or "." for node itself) through kids, or NULL. */
struct grove_node *grove_node_lookup(const struct grove_node *root, const char *relpath);

/* Follows relpath through kids as far as it goes: returns the deepest node
 * reached and sets *ret_rest to the offset in relpath of the first component
 * not found (strlen(relpath) when every one was). Empty and "." components
 * are skipped; a name of 256 bytes or more is never found. */
struct grove_node *grove_node_walk(const struct grove_node *root, const char *relpath,
				   size_t *ret_rest);

/* The kids sorted bytewise by name, in a new array (caller frees the array only). */
struct grove_node **grove_node_sorted_kids(const struct grove_node *node);

/* The same in *buf, an array of *cap entries (or NULL and 0) that the caller keeps and frees:
 * grown (*buf and *cap updated) when too small. NULL when out of memory (*buf is still the
 * caller's). */
struct grove_node **grove_node_sorted_kids_in(const struct grove_node *node,
					      struct grove_node ***buf, size_t *cap);

/* Sets the current link text (copied, or shared with orig_link when equal; NULL for none).
 * Returns 0 or -ENOMEM. */
int grove_node_set_link(struct grove_node *node, const char *text);

/* The node's path relative to the tree's root, malloc'd ("" for the root). */
char *grove_node_path(const struct grove_node *node);

/*
 * Makes about `bytes` of heap ready for the trees about to be built: fresh pages taken from the
 * top of the heap and populated with one madvise(MADV_POPULATE_WRITE) per 64 KiB, where filling
 * them would take a page fault per 4 KiB page (dear on a virtual machine with shadow page tables),
 * then freed for malloc to hand out again. Worth it only when the program keeps freed heap
 * (M_TRIM_THRESHOLD raised, as grove's main does), else free gives the pages back at once. At
 * most 4 MiB per call; nothing where the kernel lacks MADV_POPULATE_WRITE (Linux < 5.14) or
 * malloc fails: it is only a hint.
 */
void grove_tree_heap_reserve(size_t bytes);

/* NOLINTBEGIN(bugprone-macro-parentheses): kid is the name of the variable it declares. */
#define grove_node_foreach_child(node, kid)                                                   \
	for (struct grove_node **kid##_it = (node)->kids, *kid = kid##_it ? *kid##_it : NULL; \
	     kid##_it && kid##_it < (node)->kids + (node)->n_kids;                            \
	     kid = (++kid##_it < (node)->kids + (node)->n_kids) ? *kid##_it : NULL)
/* NOLINTEND(bugprone-macro-parentheses) */

#endif
