/* SPDX-License-Identifier: GPL-3.0-or-later */
/* In-memory trees with a per-folder hash index, so planning a 100k-entry folder stays linear. */
#include <errno.h>
#include <malloc.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "grove/grove.h"
#include "plan/tree.h"
#include "base/util.h" /* last: it includes banned.h */

#include "banned.h" /* last */

/* Below this many kids a linear scan is faster than hashing. */
#define INDEX_MIN 16

/*
 * The planner looks paths up from the root, one entry after the other in
 * depth-first order, so consecutive lookups share most of their components.
 * The nodes of the last path looked up are remembered by component, and the
 * next lookup starts from the deepest one it shares: an entry at depth d then
 * costs a byte compare of its path instead of d name lookups. Nodes are never
 * renamed or moved, and their kids' names are unique, so a remembered prefix
 * resolves to the same node until some node is freed: every free forgets it.
 */
#define MEMO_DEPTH 512
#define MEMO_ROOTS 4 /* the target and the packages being planned */

struct memo {
	const struct grove_node *root;
	unsigned long generation;
	char path[PATH_MAX];
	size_t n;               /* remembered components */
	size_t end[MEMO_DEPTH]; /* path[0..end[i]) holds components 0..i */
	const struct grove_node *node[MEMO_DEPTH];
};

static _Thread_local struct memo memos[MEMO_ROOTS];
static _Thread_local unsigned memo_next;
static _Thread_local unsigned long tree_generation = 1;

/* Fills the fresh node n (room for the name's nlen + 1 bytes and llen of link text). */
static struct grove_node *
node_init(struct grove_node *n, const char *name, size_t nlen, enum grove_ftype type,
	  const char *link, size_t llen)
{
	memset(n, 0, sizeof(*n));
	memcpy(n->name, name ? name : "", nlen + 1);
	n->orig_type = n->type = type;
	n->dest_type = GROVE_FT_UNKNOWN;
	if (link) {
		char *text = n->name + nlen + 1;
		memcpy(text, link, llen);
		n->orig_link = n->link = text;
	}
	return n;
}

struct grove_node *
grove_node_new(const char *name, enum grove_ftype type, const char *link)
{
	size_t nlen = name ? strlen(name) : 0;
	size_t llen = link ? strlen(link) + 1 : 0;
	struct grove_node *n;

	if (nlen > UINT32_MAX || llen > UINT32_MAX)
		return NULL;
	n = malloc(sizeof(*n) + nlen + 1 + llen);
	if (!n)
		return NULL;
	return node_init(n, name, nlen, type, link, llen);
}

struct grove_node *
grove_node_new_link(const char *name, const char *text)
{
	struct grove_node *n = grove_node_new(name, GROVE_FT_NONE, text);

	if (n) {
		n->orig_link = NULL; /* link stays in the node: drop_link knows it there */
		n->type = GROVE_FT_LINK;
	}
	return n;
}

/*
 * A maker's block: this header, then nodes one after the other, each at an 8-byte boundary.
 * live counts the nodes in it not yet freed, plus one while a maker carves from it; the block
 * is freed when it falls to 0. A block stays small (BLOCK_MAX) so that a node kept alive does
 * not hold much, and below malloc's mmap threshold.
 */
struct node_block {
	uint32_t live;
	uint32_t used; /* bytes from the block's start, header included */
	uint32_t cap;
	uint32_t pad;
};

#define BLOCK_MAX  ((size_t)64 << 10)
#define BLOCK_UNIT 8 /* block_off's unit: a node's alignment */

_Static_assert(BLOCK_MAX / BLOCK_UNIT < (1u << 16), "block_off holds any offset in a block");
_Static_assert(sizeof(struct node_block) % BLOCK_UNIT == 0, "nodes stay aligned");

/* grove_node_size for a link text of llen bytes with its NUL (0: none). */
static inline size_t
node_bytes(size_t name_len, size_t llen)
{
	size_t sz = sizeof(struct grove_node) + name_len + 1 + llen;

	return (sz + BLOCK_UNIT - 1) & ~(size_t)(BLOCK_UNIT - 1);
}

size_t
grove_node_size(size_t name_len, const char *link)
{
	return node_bytes(name_len, link ? strlen(link) + 1 : 0);
}

static void
block_release(struct node_block *b)
{
	if (b && --b->live == 0)
		free(b);
}

void
grove_node_maker_init(struct grove_node_maker *m, size_t bytes)
{
	m->block = NULL;
	m->want = bytes;
}

void
grove_node_maker_done(struct grove_node_maker *m)
{
	block_release(m->block);
	m->block = NULL;
	m->want = 0;
}

struct grove_node *
grove_node_make(struct grove_node_maker *m, const char *name, enum grove_ftype type,
		const char *link)
{
	size_t nlen = strlen(name), llen = link ? strlen(link) + 1 : 0;
	size_t share = node_bytes(nlen, 0); /* what init counted for it */
	size_t need = llen ? node_bytes(nlen, llen) : share;
	struct node_block *b = m->block;
	struct grove_node *n;

	if (m->want < share)
		return grove_node_new(name, type, link); /* not announced: on its own */
	m->want -= share;
	if (!b || b->cap - b->used < need) {
		/* A new block for this node and the ones still announced: a link's text, not
		 * counted ahead, takes room from the block's later nodes, and at most the room
		 * left when a node no longer fits goes unused. */
		size_t size = sizeof(*b) + need + m->want;

		if (sizeof(*b) + need > BLOCK_MAX)
			return grove_node_new(name, type, link);
		if (size > BLOCK_MAX)
			size = BLOCK_MAX;
		block_release(b);
		m->block = b = malloc(size);
		if (!b)
			return grove_node_new(name, type, link);
		b->live = 1;
		b->used = sizeof(*b);
		b->cap = (uint32_t)size;
	}
	n = (struct grove_node *)((char *)b + b->used);
	node_init(n, name, nlen, type, link, llen);
	n->block_off = b->used / BLOCK_UNIT;
	b->used += (uint32_t)need;
	b->live++;
	return n;
}

/* Frees the current link text when it is the node's own copy: neither the scanned text nor one
 * stored in the node after its name (grove_node_new_link). */
static void
drop_link(struct grove_node *node)
{
	if (node->link && node->link != node->orig_link &&
	    node->link != node->name + strlen(node->name) + 1)
		free((char *)node->link);
	node->link = NULL;
}

static void node_free(struct grove_node *node);

/* Frees node's kids and their subtrees, and its arrays (left dangling). */
static void
kids_free(struct grove_node *node)
{
	for (size_t i = 0; i < node->n_kids; i++)
		node_free(node->kids[i]);
	if (node->kids)
		free(node->kids);
	if (node->index)
		free(node->index);
}

/* grove_node_free without forgetting what grove_node_walk remembers (the caller does, once). */
static void
node_free(struct grove_node *node)
{
	if (node->n_kids || node->kids)
		kids_free(node);
	if (node->link)
		drop_link(node);
	if (node->adopt_to)
		free(node->adopt_to);
	if (node->block_off)
		block_release(
			(struct node_block *)((char *)node - (size_t)node->block_off * BLOCK_UNIT));
	else
		free(node);
}

void
grove_node_drop_kids(struct grove_node *node)
{
	tree_generation++; /* what grove_node_walk remembers may be gone */
	kids_free(node);
	node->kids = node->index = NULL;
	node->n_kids = node->cap_kids = node->index_cap = 0;
	node->listed = false;
}

unsigned long
grove_tree_generation(void)
{
	return tree_generation;
}

struct grove_node *
grove_node_free(struct grove_node *node)
{
	if (!node)
		return NULL;
	tree_generation++; /* what grove_node_walk remembers may be gone */
	node_free(node);
	return NULL;
}

static void
index_put(struct grove_node **index, size_t cap, struct grove_node *kid)
{
	size_t i = grove_hash_str(kid->name) & (cap - 1);

	while (index[i])
		i = (i + 1) & (cap - 1);
	index[i] = kid;
}

static int
index_rebuild(struct grove_node *node, size_t cap)
{
	struct grove_node **idx = calloc(cap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < node->n_kids; i++)
		index_put(idx, cap, node->kids[i]);
	free(node->index);
	node->index = idx;
	node->index_cap = cap;
	return 0;
}

/* Whether kid is called the n bytes at s (which hold no NUL). */
static bool
named(const struct grove_node *kid, const char *s, size_t n)
{
	const char *a = kid->name;

	/* Byte by byte, not memcmp: a shorter name ends at its NUL (no byte of s is one), memcmp
	 * may read past it. Names are short, and most that differ do in their first bytes: no
	 * call. */
	for (size_t i = 0; i < n; i++)
		if (a[i] != s[i])
			return false;
	return a[n] == '\0';
}

/* Whether kid is called name. */
static inline bool
named_str(const struct grove_node *kid, const char *name)
{
	return kid->name[0] == name[0] && strcmp(kid->name, name) == 0;
}

/* grove_node_child for a name given as n bytes, not NUL-terminated (a path's component). */
static struct grove_node *
child_n(const struct grove_node *node, const char *s, size_t n)
{
	if (node->index) {
		size_t i = grove_hash_bytes(s, n) & (node->index_cap - 1);
		while (node->index[i]) {
			if (named(node->index[i], s, n))
				return node->index[i];
			i = (i + 1) & (node->index_cap - 1);
		}
		return NULL;
	}
	for (size_t i = 0; i < node->n_kids; i++)
		if (named(node->kids[i], s, n))
			return node->kids[i];
	return NULL;
}

struct grove_node *
grove_node_child_n(const struct grove_node *node, const char *name, size_t len)
{
	return len < 256 ? child_n(node, name, len) : NULL;
}

struct grove_node *
grove_node_child(const struct grove_node *node, const char *name)
{
	if (name[0] == '.' && !name[1])
		return (struct grove_node *)node; /* the folder itself (`stow .`'s package) */
	if (node->index) {
		size_t i = grove_hash_str(name) & (node->index_cap - 1);
		while (node->index[i]) {
			if (named_str(node->index[i], name))
				return node->index[i];
			i = (i + 1) & (node->index_cap - 1);
		}
		return NULL;
	}
	for (size_t i = 0; i < node->n_kids; i++)
		if (named_str(node->kids[i], name))
			return node->kids[i];
	return NULL;
}

int
grove_node_reserve_kids(struct grove_node *node, size_t n)
{
	struct grove_node **k;

	if (n <= node->cap_kids)
		return 0;
	if (n > UINT32_MAX / 4)
		return -ENOMEM;
	k = node->kids ? realloc(node->kids, n * sizeof(*k)) : malloc(n * sizeof(*k));
	if (!k)
		return -ENOMEM;
	node->kids = k;
	node->cap_kids = (uint32_t)n;
	return 0;
}

int
grove_node_add(struct grove_node *node, struct grove_node *child)
{
	if (node->n_kids == node->cap_kids &&
	    grove_node_reserve_kids(node, node->cap_kids ? (size_t)node->cap_kids * 2 : 4) < 0)
		return -ENOMEM;
	node->kids[node->n_kids++] = child;
	child->parent = node;
	if (node->n_kids >= INDEX_MIN) {
		/* Keep the load factor at or below one half. */
		if (node->n_kids * 2 > node->index_cap) {
			size_t cap = 64;
			while (cap < (size_t)node->n_kids * 4)
				cap *= 2;
			return index_rebuild(node, cap);
		}
		index_put(node->index, node->index_cap, child);
	}
	return 0;
}

/* The memo of root, or a recycled one. */
static struct memo *
memo_of(const struct grove_node *root)
{
	struct memo *m;

	for (unsigned i = 0; i < MEMO_ROOTS; i++)
		if (memos[i].root == root)
			return &memos[i];
	m = &memos[memo_next++ % MEMO_ROOTS];
	m->root = root;
	m->n = 0;
	return m;
}

/* How many leading bytes a and b share, of the first n. */
static size_t
shared_prefix(const char *a, const char *b, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			break;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* The deepest remembered component of relpath: its node, and where in relpath
 * the lookup goes on. */
static const struct grove_node *
memo_start(const struct memo *m, const char *relpath, size_t len, size_t *ret_off, size_t *ret_i)
{
	size_t common = 0, lo = 0, hi = m->n;

	*ret_off = 0;
	*ret_i = 0;
	if (m->generation != tree_generation || !m->n)
		return m->root;
	common = shared_prefix(relpath, m->path, len < m->end[m->n - 1] ? len : m->end[m->n - 1]);
	/* The last remembered component that ends inside the shared bytes, at a
	 * component boundary of relpath too. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->end[mid] <= common)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > 0) {
		size_t e = m->end[lo - 1];
		if (e == len || relpath[e] == '/')
			break;
		lo--;
	}
	if (!lo)
		return m->root;
	*ret_off = m->end[lo - 1];
	*ret_i = lo;
	return m->node[lo - 1];
}

struct grove_node *
grove_node_walk(const struct grove_node *root, const char *relpath, size_t *ret_rest)
{
	size_t len = strlen(relpath), off = 0, i = 0;
	struct memo *m = len < PATH_MAX ? memo_of(root) : NULL;
	const struct grove_node *node = m ? memo_start(m, relpath, len, &off, &i) : root;
	const char *p = relpath + off;
	size_t from = off; /* m->path already holds relpath's first `from` bytes */

	for (;;) {
		const struct grove_node *kid;
		const char *s;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		s = p;
		p = strchrnul(p, '/');
		n = (size_t)(p - s);
		if (n == 1 && s[0] == '.')
			continue;
		/* A name of 256 bytes or more is never found (no entry is named so). */
		kid = n < 256 ? child_n(node, s, n) : NULL;
		if (!kid) {
			p = s;
			break;
		}
		node = kid;
		if (m && i < MEMO_DEPTH) {
			m->end[i] = (size_t)(p - relpath);
			m->node[i] = node;
			i++;
		}
	}
	if (m) {
		m->generation = tree_generation;
		m->n = i;
		if (i && m->end[i - 1] > from)
			memcpy(m->path + from, relpath + from, m->end[i - 1] - from);
	}
	*ret_rest = (size_t)(p - relpath);
	return (struct grove_node *)node;
}

struct grove_node *
grove_node_lookup(const struct grove_node *root, const char *relpath)
{
	size_t rest;
	struct grove_node *n = grove_node_walk(root, relpath, &rest);

	return relpath[rest] ? NULL : n;
}

struct grove_node **
grove_node_sorted_kids(const struct grove_node *node)
{
	struct grove_node **arr = NULL;
	size_t cap = 0;

	return grove_node_sorted_kids_in(node, &arr, &cap);
}

struct grove_node **
grove_node_sorted_kids_in(const struct grove_node *node, struct grove_node ***buf, size_t *cap)
{
	struct grove_node **arr = *buf;
	const char **names; /* sorted by name in place, then made nodes */

	if (*cap < (size_t)node->n_kids + 1) {
		arr = realloc(*buf, ((size_t)node->n_kids + 1) * sizeof(*arr));
		if (!arr)
			return NULL;
		*buf = arr;
		*cap = (size_t)node->n_kids + 1;
	}
	/* Kids are mostly added in listing order, which is sorted: then copied as they are. */
	{
		size_t i = 1;

		while (i < node->n_kids && strcmp(node->kids[i - 1]->name, node->kids[i]->name) < 0)
			i++;
		if (i >= node->n_kids) {
			if (node->n_kids)
				memcpy(arr, node->kids, node->n_kids * sizeof(*arr));
			arr[node->n_kids] = NULL;
			return arr;
		}
	}
	names = (const char **)arr;
	for (size_t i = 0; i < node->n_kids; i++)
		names[i] = node->kids[i]->name;
	if (grove_sort_names(names, node->n_kids) < 0)
		return NULL;
	for (size_t i = 0; i < node->n_kids; i++)
		arr[i] = (struct grove_node *)(names[i] - offsetof(struct grove_node, name));
	arr[node->n_kids] = NULL;
	return arr;
}

int
grove_node_set_link(struct grove_node *node, const char *text)
{
	const char *c = NULL;

	if (text && node->orig_link && strcmp(text, node->orig_link) == 0)
		c = node->orig_link;
	else if (text && !(c = strdup(text)))
		return -ENOMEM;
	drop_link(node);
	node->link = c;
	return 0;
}

char *
grove_node_path(const struct grove_node *node)
{
	size_t len = 0;
	char *out;

	for (const struct grove_node *n = node; n && n->parent; n = n->parent)
		len += strlen(n->name) + 1;
	out = malloc(len + 1);
	if (!out)
		return NULL;
	out[len] = '\0';
	if (len)
		len--; /* no trailing '/' */
	out[len] = '\0';
	for (const struct grove_node *n = node; n && n->parent; n = n->parent) {
		size_t l = strlen(n->name);
		memcpy(out + len - l, n->name, l);
		if (len > l)
			out[len - l - 1] = '/';
		len = len > l ? len - l - 1 : 0;
	}
	return out;
}

/* Below malloc's mmap threshold (128 KiB unless the program changed it), so that each chunk comes
 * from the heap's top and goes back to it. */
#define RESERVE_CHUNK ((size_t)64 << 10)
#define RESERVE_MAX   64 /* chunks: 4 MiB */

/* Populates [a, z) (page-aligned); false when the kernel has no MADV_POPULATE_WRITE (EINVAL).
 * Any other failure (ENOMEM, EFAULT) leaves the pages to fault in when used, as without it. */
static bool
populate(uintptr_t a, uintptr_t z)
{
	return z <= a || madvise((void *)a, z - a, MADV_POPULATE_WRITE) == 0 || errno != EINVAL;
}

void
grove_tree_heap_reserve(size_t bytes)
{
	static _Thread_local bool unsupported;
	void *chunk[RESERVE_MAX];
	size_t n = 0;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = 0, z = 0;

	if (unsupported || (long)page <= 0)
		return;
	for (; n < RESERVE_MAX && n * RESERVE_CHUNK < bytes; n++)
		if (!(chunk[n] = malloc(RESERVE_CHUNK)))
			break;
	/* Chunks taken from the heap's top lie one after the other (a chunk header apart): one
	 * call for each run of them. */
	for (size_t i = 0; i < n && !unsupported; i++) {
		uintptr_t ca = ((uintptr_t)chunk[i] + page - 1) & ~(page - 1);
		uintptr_t cz = ((uintptr_t)chunk[i] + RESERVE_CHUNK) & ~(page - 1);

		if (z && ca >= a && ca <= z + page) {
			z = cz > z ? cz : z;
			continue;
		}
		unsupported = !populate(a, z);
		a = ca;
		z = cz;
	}
	if (!unsupported)
		unsupported = !populate(a, z);
	while (n > 0)
		free(chunk[--n]);
}

void
grove_process_start(void)
{
	mallopt(M_TRIM_THRESHOLD, 32 << 20);
	grove_tree_heap_reserve((size_t)256 << 10);
}
