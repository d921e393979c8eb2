/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The planner's memos (planner_int.h, struct planner_memo): the recursive walks' per-folder
 * buffers and foldable's cursors, kept for the run. The view's own memos (the links as scanned,
 * the owner prefix, the markers) live with the answers they keep, in planner_view.c. */
#include <stdlib.h>

#include "plan/tree.h"
#include "planner_int.h"

#include "banned.h" /* last */

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
grove_planner_release(struct planner *p)
{
	if (!p->memo.frames)
		return;
	for (size_t i = 0; i < PLANNER_FRAMES; i++) {
		free(p->memo.frames[i].bytes);
		free(p->memo.frames[i].kids);
	}
	free(p->memo.frames);
	p->memo.frames = NULL;
}

/* The frame of the folder being walked, or NULL (too deep, or out of memory). */
static struct planner_frame *
frame(struct planner *p)
{
	if (!p->memo.depth || p->memo.depth > PLANNER_FRAMES)
		return NULL;
	if (!p->memo.frames && !(p->memo.frames = calloc(PLANNER_FRAMES, sizeof(*p->memo.frames))))
		return NULL;
	return &p->memo.frames[p->memo.depth - 1];
}

/* n bytes for the folder being walked: its frame's, else malloc'd into *own; NULL when out of
 * memory. */
char *
grove_planner_frame_bytes(struct planner *p, size_t n, char **own)
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
struct grove_node **
grove_planner_frame_kids(struct planner *p, const struct grove_node *dir, struct grove_node ***own)
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

void
grove_memo_enter(struct planner *p)
{
	p->memo.depth++;
}

void
grove_memo_leave(struct planner *p)
{
	p->memo.depth--;
}

/* foldable's cursor for dir moved past the entries gone from the plan. */
size_t
grove_memo_gone_prefix(struct planner *p, const struct grove_node *dir)
{
	unsigned long gen = grove_tree_generation();
	struct fold_cursor *c = NULL;
	size_t i = 0;

	for (unsigned k = 0; k < sizeof(p->memo.folds) / sizeof(p->memo.folds[0]); k++)
		if (p->memo.folds[k].dir == dir)
			c = &p->memo.folds[k];
	if (!c) {
		c = &p->memo.folds[p->memo.n_folds++ %
				   (sizeof(p->memo.folds) / sizeof(p->memo.folds[0]))];
		c->dir = dir;
	} else if (c->made == p->memo.made && c->gen == gen && c->skip <= dir->n_kids) {
		i = c->skip;
	}
	while (i < dir->n_kids && dir->kids[i]->type == GROVE_FT_NONE)
		i++;
	c->skip = i;
	c->made = p->memo.made;
	c->gen = gen;
	return i;
}
