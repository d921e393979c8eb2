/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests: tree lookups and walks, which remember the last path per root, against a plain
 * component-by-component walk; the name sort against qsort. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testutil.h"

#include "plan/tree.h"

#include "base/util.h"

/* The reference: no memory between calls. */
static struct grove_node *
ref_walk(struct grove_node *n, const char *path, size_t *ret_rest)
{
	const char *p = path;

	for (;;) {
		const char *s;
		char name[256];
		size_t len;
		struct grove_node *kid = NULL;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		s = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - s);
		if (len == 1 && s[0] == '.')
			continue;
		if (len < sizeof(name)) {
			memcpy(name, s, len);
			name[len] = '\0';
			kid = grove_node_child(n, name);
		}
		if (!kid) {
			p = s;
			break;
		}
		n = kid;
	}
	*ret_rest = (size_t)(p - path);
	return n;
}

static void
check(struct grove_node *root, const char *path)
{
	size_t got_rest, want_rest;
	struct grove_node *got = grove_node_walk(root, path, &got_rest);
	struct grove_node *want = ref_walk(root, path, &want_rest);
	struct grove_node *look = grove_node_lookup(root, path);

	if (got != want || got_rest != want_rest)
		fail_msg("walk('%s') stopped at '%s' +%zu, want '%s' +%zu", path, got->name,
			 got_rest, want->name, want_rest);
	if (look != (path[want_rest] ? NULL : want))
		fail_msg("lookup('%s') disagrees with the walk", path);
}

static struct grove_node *
add(struct grove_node *parent, const char *name)
{
	struct grove_node *n = grove_node_child(parent, name);

	if (n)
		return n;
	n = grove_node_new(name, GROVE_FT_DIR, NULL);
	assert_non_null(n);
	assert_int_equal(grove_node_add(parent, n), 0);
	return n;
}

/* Prefixes that share bytes but not components must not be taken for each other. */
static void
test_tree_walk_component_boundaries(void **state)
{
	struct grove_node *root = grove_node_new("", GROVE_FT_DIR, NULL);
	struct grove_node *a = add(root, "a");
	static const char *const paths[] = {
		"a/b/c", "a/bc",  "a/b",   "a/b/cd", "a/b/c/", "a//b/./c", "a/bc/x", "a/b/c/d/e",
		"ab",    "a/b/c", "a/x/y", ".",      "",       "a/b/c/.",  "a/b/zz", "a/b/c",
	};

	add(add(add(a, "b"), "c"), "d");
	add(a, "bc");
	add(root, "ab");
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
			check(root, paths[i]);
	/* A name too long for a folder is never found, remembered prefix or not. */
	{
		char longp[400];

		memset(longp, 'x', sizeof(longp));
		memcpy(longp, "a/b/", 4);
		longp[sizeof(longp) - 1] = '\0';
		check(root, "a/b/c");
		check(root, longp);
	}
	grove_node_free(root);
	(void)state;
}

/* Several roots in turn, nodes added between lookups, and frees. */
static void
test_tree_walk_random_against_reference(void **state)
{
	struct grove_node *roots[6];
	unsigned seed = 12345;

	for (int r = 0; r < 6; r++)
		roots[r] = grove_node_new("", GROVE_FT_DIR, NULL);
	for (int iter = 0; iter < 200000; iter++) {
		int r = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 6;
		int depth = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 12;
		int op = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 10;
		char path[256] = "";
		size_t o = 0;

		for (int d = 0; d < depth; d++) {
			int c = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 5;
			static const char *const names[] = { "a", "b", "ab", "l", "." };
			o += (size_t)snprintf(path + o, sizeof(path) - o, "%s%s", d ? "/" : "",
					      names[c]);
		}
		if (op < 2) {
			/* Make the whole path. */
			struct grove_node *n = roots[r];
			char *copy = strdup(path), *save = NULL;

			for (char *t = strtok_r(copy, "/", &save); t;
			     t = strtok_r(NULL, "/", &save))
				if (strcmp(t, ".") != 0)
					n = add(n, t);
			free(copy);
		} else if (op == 2 && iter % 50 == 0) {
			/* Drop a whole tree and start it again. */
			grove_node_free(roots[r]);
			roots[r] = grove_node_new("", GROVE_FT_DIR, NULL);
		}
		check(roots[r], path);
	}
	for (int r = 0; r < 6; r++)
		grove_node_free(roots[r]);
	(void)state;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* grove_sort_names against qsort: sorted, reversed, nearly sorted, random and duplicated input,
 * from 0 to 700 names (past the stack scratch of 256, so the merge's heap scratch runs too),
 * names sharing long prefixes. */
static void
test_tree_sort_names_against_qsort(void **state)
{
	enum { MAX = 700 };
	static char pool[MAX][32];
	const char *v[MAX], *ref[MAX];
	unsigned seed = 7;

	(void)state;
	for (size_t n = 0; n <= MAX; n += n < 40 ? 1 : 37) {
		for (int shape = 0; shape < 6; shape++) {
			for (size_t i = 0; i < n; i++) {
				unsigned k = shape == 4 ? (unsigned)(rand_r(&seed) % 13)
							: (unsigned)rand_r(&seed);

				snprintf(pool[i], sizeof(pool[i]), "libp%03u.so.%u", k % 1000,
					 k % 7);
				v[i] = pool[i];
			}
			if (shape < 4)
				qsort(v, n, sizeof(*v), cmp_str);
			if (shape == 1 || shape == 3) /* reversed */
				for (size_t a = 0, z = n ? n - 1 : 0; a < z; a++, z--) {
					const char *x = v[a];
					v[a] = v[z];
					v[z] = x;
				}
			if (shape >= 2 && shape < 4 && n > 3) { /* one pair out of place */
				const char *x = v[n / 3];
				v[n / 3] = v[n / 2];
				v[n / 2] = x;
			}
			memcpy(ref, v, n * sizeof(*v));
			qsort(ref, n, sizeof(*ref), cmp_str);
			assert_int_equal(grove_sort_names(v, n), 0);
			for (size_t i = 0; i < n; i++)
				assert_string_equal(v[i], ref[i]);
		}
	}
}

/* grove_node_sorted_kids: kids added out of order come back sorted, NULL-terminated. */
/* grove_bytes_reserve: the first capacity, then doubling until the bytes fit, the bytes held
 * kept; nothing asked of malloc while they fit. */
static void
test_tree_bytes_reserve(void **state)
{
	unsigned char *buf = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(grove_bytes_reserve(&buf, &cap, 0, 10, 16), 0);
	assert_int_equal(cap, 16);
	memset(buf, 'a', 16);
	assert_int_equal(grove_bytes_reserve(&buf, &cap, 16, 0, 16), 0);
	assert_int_equal(cap, 16); /* fits: unchanged */
	assert_int_equal(grove_bytes_reserve(&buf, &cap, 12, 4, 16), 0);
	assert_int_equal(cap, 16);
	assert_int_equal(grove_bytes_reserve(&buf, &cap, 16, 100, 16), 0);
	assert_int_equal(cap, 128); /* 16, 32, 64, 128: the first that holds 116 */
	for (int i = 0; i < 16; i++)
		assert_int_equal(buf[i], 'a');
	assert_int_equal(grove_bytes_reserve(&buf, &cap, 100, 29, 16), 0);
	assert_int_equal(cap, 256);
	free(buf);
}

static void
test_tree_sorted_kids(void **state)
{
	static const char *const names[] = { "m", "b", "zz", ".x", "B", "ab", "a", "z" };
	static const char *const want[] = { ".x", "B", "a", "ab", "b", "m", "z", "zz" };
	struct grove_node *root = grove_node_new("", GROVE_FT_DIR, NULL);
	struct grove_node **kids;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_int_equal(grove_node_add(root, grove_node_new(names[i], GROVE_FT_REG, NULL)),
				 0);
	kids = grove_node_sorted_kids(root);
	assert_non_null(kids);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_string_equal(kids[i]->name, want[i]);
		assert_ptr_equal(kids[i]->parent, root);
	}
	assert_null(kids[sizeof(want) / sizeof(want[0])]);
	free(kids);
	grove_node_free(root);
}

/* How many of the pages wholly inside [p, p + len) are resident. */
static size_t
resident_pages(const void *p, size_t len, size_t *ret_total)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 0;
	uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t z = ((uintptr_t)p + len) & ~(page - 1);
	unsigned char vec[64];

	*ret_total = 0;
	for (; a < z; a += page) {
		assert_int_equal(mincore((void *)a, page, vec), 0);
		n += vec[0] & 1;
		(*ret_total)++;
	}
	return n;
}

/*
 * grove_tree_heap_reserve populates fresh heap that malloc then hands out: with freed heap kept
 * (as grove's main sets it), 1 MiB allocated after reserving 2 MiB is resident before it is
 * written. Without the reservation these are fresh pages from the heap's top, not resident until
 * touched.
 */
static void
test_tree_heap_reserve_populates_what_malloc_hands_out(void **state)
{
	enum { N = 16, SIZE = 60000 };
	void *p[N];
	size_t resident = 0, total = 0;

	(void)state;
	grove_tree_heap_reserve(0);
#ifdef __SANITIZE_ADDRESS__
	/* ASan's allocator quarantines what is freed, so a reservation is not handed out again:
	 * here the call need only be harmless. */
	grove_tree_heap_reserve((size_t)2 << 20);
	p[0] = malloc(SIZE);
	assert_non_null(p[0]);
	free(p[0]);
	(void)resident;
	(void)total;
	return;
#endif
	assert_int_equal(mallopt(M_TRIM_THRESHOLD, 32 << 20), 1);
	grove_tree_heap_reserve((size_t)2 << 20);
	for (int i = 0; i < N; i++) {
		size_t t;

		p[i] = malloc(SIZE);
		assert_non_null(p[i]);
		resident += resident_pages(p[i], SIZE, &t);
		total += t;
	}
	assert_true(total >= (size_t)N * 13);
	assert_int_equal(resident, total);
	for (int i = 0; i < N; i++)
		free(p[i]);
}

/* grove_child_path_buf: "dir/name" (or "name") in the buffer while it fits, on the heap past it,
 * each heap path replacing the last. */
static void
test_tree_maker_makes_nodes_together(void **state)
{
	enum { N = 3000 };
	struct grove_node_maker m;
	struct grove_node *dir = grove_node_new("", GROVE_FT_DIR, NULL);
	struct grove_node *kids[N];
	size_t bytes = 0, together = 0;
	char name[32];

	(void)state;
	for (size_t i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "entry-%zu", i);
		bytes += grove_node_size(strlen(name), NULL);
	}
	grove_node_maker_init(&m, bytes);
	assert_int_equal(grove_node_reserve_kids(dir, N), 0);
	for (size_t i = 0; i < N; i++) {
		/* Every tenth a link: its text was not announced, it takes room of the later ones.
		 */
		snprintf(name, sizeof(name), "entry-%zu", i);
		kids[i] = grove_node_make(&m, name, i % 10 ? GROVE_FT_REG : GROVE_FT_LINK,
					  i % 10 ? NULL : "../some/where/further/than/announced");
		assert_non_null(kids[i]);
		assert_string_equal(kids[i]->name, name);
		assert_int_equal(kids[i]->type, i % 10 ? GROVE_FT_REG : GROVE_FT_LINK);
		if (i % 10 == 0)
			assert_string_equal(kids[i]->link, "../some/where/further/than/announced");
		assert_int_equal(kids[i]->dest_type, GROVE_FT_UNKNOWN);
		assert_int_equal(grove_node_add(dir, kids[i]), 0);
		/* Made together: the next node follows this one in the same block. */
		if (i && kids[i]->block_off && kids[i - 1]->block_off &&
		    (char *)kids[i] ==
			    (char *)kids[i - 1] + grove_node_size(strlen(kids[i - 1]->name),
								  kids[i - 1]->orig_link))
			together++;
	}
	/* A node past what was announced is made on its own. */
	{
		struct grove_node *extra = grove_node_make(&m, "extra", GROVE_FT_REG, NULL);

		assert_non_null(extra);
		assert_int_equal(extra->block_off, 0);
		assert_int_equal(grove_node_add(dir, extra), 0);
	}
	grove_node_maker_done(&m);
	assert_true(together > N * 9 / 10);
	assert_ptr_equal(grove_node_child(dir, "entry-2999"), kids[2999]);
	/* Freed one by one in any order, a block goes with its last node (ASan and valgrind see
	 * a leak or a double free otherwise); then the rest with the folder. */
	for (size_t i = 0; i < N; i += 7)
		grove_node_free(kids[i]), dir->kids[i] = grove_node_new("x", GROVE_FT_REG, NULL);
	grove_node_free(dir);
	/* Nothing announced: every node on its own. */
	grove_node_maker_init(&m, 0);
	kids[0] = grove_node_make(&m, "alone", GROVE_FT_DIR, NULL);
	assert_int_equal(kids[0]->block_off, 0);
	grove_node_maker_done(&m);
	grove_node_free(kids[0]);
}

static void
test_tree_child_path_buf(void **state)
{
	char buf[8], *heap = NULL;
	const char *p;

	(void)state;
	p = grove_child_path_buf("ab", 2, "cde", buf, sizeof(buf), &heap);
	assert_ptr_equal(p, buf);
	assert_string_equal(p, "ab/cde");
	assert_null(heap);
	p = grove_child_path_buf("", 0, "abcdefg", buf, sizeof(buf), &heap);
	assert_ptr_equal(p, buf);
	assert_string_equal(p, "abcdefg");
	p = grove_child_path_buf("ab", 2, "cdefg", buf, sizeof(buf), &heap); /* 9 bytes */
	assert_ptr_equal(p, heap);
	assert_string_equal(p, "ab/cdefg");
	p = grove_child_path_buf("a/b/c", 5, "long-name", buf, sizeof(buf), &heap);
	assert_ptr_equal(p, heap);
	assert_string_equal(p, "a/b/c/long-name");
	p = grove_child_path_buf("x", 1, "y", buf, sizeof(buf), &heap);
	assert_ptr_equal(p, buf);
	assert_string_equal(p, "x/y");
	free(heap);
}

/* A link the plan makes keeps its text in its node; changing or dropping the text later frees
 * only what was allocated for it (ASan and valgrind see a bad free or a leak). */
static void
test_tree_new_link_keeps_text_in_node(void **state)
{
	struct grove_node *dir = grove_node_new("", GROVE_FT_DIR, NULL);
	struct grove_node *a = grove_node_new_link("a", "../stow/p/a");
	struct grove_node *b = grove_node_new_link("b", "../stow/p/b");
	struct grove_node *c = grove_node_new_link("c", "../stow/p/c");

	(void)state;
	assert_non_null(a);
	assert_int_equal(a->orig_type, GROVE_FT_NONE);
	assert_null(a->orig_link);
	assert_int_equal(a->type, GROVE_FT_LINK);
	assert_string_equal(a->link, "../stow/p/a");
	assert_ptr_equal(a->link, a->name + 2);
	assert_int_equal(grove_node_add(dir, a), 0);
	assert_int_equal(grove_node_add(dir, b), 0);
	assert_int_equal(grove_node_add(dir, c), 0);
	/* Relinked: a copy of its own, freed with the node. */
	assert_int_equal(grove_node_set_link(a, "../stow/q/a"), 0);
	assert_string_equal(a->link, "../stow/q/a");
	/* Unlinked again. */
	assert_int_equal(grove_node_set_link(b, NULL), 0);
	assert_null(b->link);
	assert_ptr_equal(grove_node_lookup(dir, "c"), c);
	assert_null(grove_node_free(dir));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_walk_component_boundaries),
		cmocka_unit_test(test_tree_walk_random_against_reference),
		cmocka_unit_test(test_tree_sort_names_against_qsort),
		cmocka_unit_test(test_tree_bytes_reserve),
		cmocka_unit_test(test_tree_sorted_kids),
		cmocka_unit_test(test_tree_child_path_buf),
		cmocka_unit_test(test_tree_new_link_keeps_text_in_node),
		cmocka_unit_test(test_tree_maker_makes_nodes_together),
		cmocka_unit_test(test_tree_heap_reserve_populates_what_malloc_hands_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
