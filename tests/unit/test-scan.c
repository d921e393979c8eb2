/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests: the scan reads what a plan needs, no more, and marks package links that escape or
 * loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "grove/fs.h"
#include "plan/world.h"

struct fixture {
	char *root;
	struct grove_root stow, target;
	struct grove_world w;
};

static void
open_world_opts(struct fixture *f, const char *spec, char *const *pkgs, size_t n,
		const struct grove_scan_opts *o)
{
	struct grove_error err = { 0 };
	struct grove_scan_opts so = *o;
	char *sp, *tp;

	f->root = tu_mkdtemp();
	tu_build(f->root, spec);
	sp = tu_path(f->root, "stow");
	tp = strdup(f->root);
	assert_int_equal(grove_root_open(&f->stow, sp, &err), 0);
	assert_int_equal(grove_root_open(&f->target, tp, &err), 0);
	grove_world_init(&f->w);
	f->w.stow_path = strdup("stow");
	if (grove_scan(&f->w, &f->stow, &f->target, pkgs, n, &so, &err) < 0)
		fail_msg("scan: %s", err.msg);
	free(sp);
	free(tp);
}

static void
open_world(struct fixture *f, const char *spec, char *const *pkgs, size_t n, bool full)
{
	struct grove_scan_opts so = { .dotfiles = false, .full_target = full };

	open_world_opts(f, spec, pkgs, n, &so);
}

static void
close_world(struct fixture *f)
{
	grove_world_release(&f->w);
	grove_root_release(&f->stow);
	grove_root_release(&f->target);
	tu_rmtree(f->root);
	free(f->root);
}

static void
test_scan_lists_only_needed_target_folders(void **state)
{
	struct fixture f;
	char *pkgs[] = { "a" };
	struct grove_node *n;

	(void)state;
	open_world(&f,
		   "f stow/a/bin/x\n"
		   "f bin/mine\n"
		   "f photos/2024/img1\n"
		   "f photos/2024/img2\n",
		   pkgs, 1, false);
	n = grove_node_lookup(f.w.target, "bin");
	assert_non_null(n);
	assert_true(n->listed);
	assert_non_null(grove_node_child(n, "mine"));
	n = grove_node_lookup(f.w.target, "photos");
	assert_non_null(n);
	/* Nothing of package a lands under photos/: it is never read. */
	assert_false(n->listed);
	assert_int_equal(n->n_kids, 0);
	close_world(&f);
}

static void
test_scan_full_target_reads_everything_but_the_stow_dir(void **state)
{
	struct fixture f;
	char *pkgs[] = { "a" };
	struct grove_node *n;

	(void)state;
	open_world(&f, "f stow/a/x\nf photos/2024/img1\n", pkgs, 1, true);
	n = grove_node_lookup(f.w.target, "photos/2024");
	assert_non_null(n);
	assert_true(n->listed);
	n = grove_node_lookup(f.w.target, "stow");
	assert_non_null(n);
	assert_int_equal(n->n_kids, 0);
	close_world(&f);
}

static void
test_scan_marks_escaping_and_looping_package_links(void **state)
{
	struct fixture f;
	char *pkgs[] = { "a" };
	struct grove_node *n;

	(void)state;
	open_world(&f,
		   "d outside\n"
		   "l stow/a/out -> ../../outside\n"
		   "l stow/a/loop1 -> loop2\n"
		   "l stow/a/loop2 -> loop1\n"
		   "l stow/a/up -> ..\n"
		   "f stow/a/real/f\n"
		   "l stow/a/alias -> real\n"
		   "l stow/a/dangling -> nothing\n",
		   pkgs, 1, false);
	n = grove_node_lookup(f.w.stow, "a/out");
	assert_true(n->escapes);
	n = grove_node_lookup(f.w.stow, "a/loop1");
	assert_true(n->escapes);
	n = grove_node_lookup(f.w.stow, "a/up");
	assert_true(n->escapes); /* a link back to an ancestor never ends */
	n = grove_node_lookup(f.w.stow, "a/alias");
	assert_false(n->escapes);
	assert_int_equal(n->dest_type, GROVE_FT_DIR);
	assert_non_null(grove_node_lookup(f.w.stow, "a/alias/f"));
	n = grove_node_lookup(f.w.stow, "a/dangling");
	assert_false(n->escapes);
	assert_int_equal(n->dest_type, GROVE_FT_NONE);
	close_world(&f);
}

/* A package root is opened with no stat: its inode is asked of its fd only when a link beneath it
 * is followed, and a link that comes back to the root by another package (which no lexical check
 * sees) is still caught at once, not followed FOLLOW_DEPTH_MAX deep. What is not a folder is
 * still told apart. */
static void
test_scan_catches_a_link_back_to_the_package_root(void **state)
{
	struct fixture f;
	char *pkgs[] = { "a", "file", "link", "missing" };
	struct grove_node *n;

	(void)state;
	open_world(&f,
		   "f stow/a/x\n"
		   "l stow/a/back -> ../b\n"
		   "l stow/b -> a\n"
		   "f stow/file\n"
		   "l stow/link -> a\n",
		   pkgs, 4, false);
	n = grove_node_lookup(f.w.stow, "a");
	assert_int_equal(n->type, GROVE_FT_DIR);
	assert_true(n->listed);
	n = grove_node_lookup(f.w.stow, "a/back");
	assert_non_null(n);
	assert_true(n->escapes);
	assert_false(n->listed);
	assert_int_equal(grove_node_lookup(f.w.stow, "file")->type, GROVE_FT_REG);
	n = grove_node_lookup(f.w.stow, "link");
	assert_int_equal(n->type, GROVE_FT_LINK);
	assert_string_equal(n->link, "a");
	assert_int_equal(n->dest_type, GROVE_FT_DIR);
	assert_int_equal(grove_node_lookup(f.w.stow, "missing")->type, GROVE_FT_NONE);
	close_world(&f);
}

static void
test_scan_resolves_owned_links_and_loads_unfoldable_subtrees(void **state)
{
	struct fixture f;
	char *pkgs[] = { "b" };
	struct grove_node *n;

	(void)state;
	open_world(&f,
		   "f stow/a/bin/x\n"
		   "f stow/a/bin/sub/y\n"
		   "f stow/a/lib/big\n"
		   "f stow/b/bin/z\n"
		   "l bin -> stow/a/bin\n"
		   "l old -> stow/gone/old\n",
		   pkgs, 1, false);
	n = grove_node_lookup(f.w.target, "bin");
	assert_int_equal(n->dest_type, GROVE_FT_DIR);
	n = grove_node_lookup(f.w.target, "old");
	assert_int_equal(n->dest_type, GROVE_FT_NONE);
	/* b may unfold bin: a/bin is loaded whole; a/lib is never read. */
	n = grove_node_lookup(f.w.stow, "a/bin");
	assert_true(n->listed);
	assert_non_null(grove_node_lookup(f.w.stow, "a/bin/sub/y"));
	assert_null(grove_node_lookup(f.w.stow, "a/lib"));
	close_world(&f);
}

/*
 * A target folder shared by 8 packages or more is matched through a sorted index of their entries.
 * Here package i holds d(8-i), so the index's keys arrive in descending order and the sort has
 * everything to do; with --dotfiles each holds dot-c(8-i) too, found under the target name
 * .c(8-i). Every target folder a package matches is entered, down to the file in it.
 */
/* A target link's folder joined with its text on the stack when short, and the long way when
 * the folder's path (over 256 bytes) or the joined path (over 512) is longer: the same answers. */
static void
test_scan_resolves_owned_links_in_long_paths(void **state)
{
	struct fixture f;
	char *pkgs[] = { "b" };
	char d1[201], d2[201], d3[201], spec[4096], path[1024];
	struct grove_node *n;

	(void)state;
	memset(d1, 'a', 200), d1[200] = '\0';
	memset(d2, 'b', 200), d2[200] = '\0';
	memset(d3, 'c', 200), d3[200] = '\0';
	snprintf(spec, sizeof(spec),
		 "f stow/a/%s/%s/%s/x\n" /* the fold of a deep folder (parent 401 bytes) */
		 "f stow/b/%s/%s/%s/y\n"
		 "f stow/a/%s/%s/x\n" /* parent 200 bytes, joined path 610 */
		 "f stow/b/%s/%s/y\n"
		 "l %s/%s/%s -> ../../stow/a/%s/%s/%s\n"
		 "l %s/%s -> ../stow/a/%s/%s\n",
		 d1, d2, d3, d1, d2, d3, d1, d3, d1, d3, d1, d2, d3, d1, d2, d3, d1, d3, d1, d3);
	open_world(&f, spec, pkgs, 1, false);
	snprintf(path, sizeof(path), "%s/%s/%s", d1, d2, d3);
	n = grove_node_lookup(f.w.target, path);
	assert_non_null(n);
	assert_int_equal(n->dest_type, GROVE_FT_DIR);
	snprintf(path, sizeof(path), "a/%s/%s/%s", d1, d2, d3);
	assert_true(grove_node_lookup(f.w.stow, path)->listed); /* b may unfold it */
	snprintf(path, sizeof(path), "%s/%s", d1, d3);
	n = grove_node_lookup(f.w.target, path);
	assert_non_null(n);
	snprintf(path, sizeof(path), "a/%s/%s", d1, d3);
	assert_true(grove_node_lookup(f.w.stow, path)->listed);
	close_world(&f);
}

static void
test_scan_matches_many_packages_through_the_index(void **state)
{
	char *pkgs[] = { "p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8" };
	char spec[4096], path[64];
	size_t len = 0;

	(void)state;
	for (int dot = 0; dot < 2; dot++) {
		struct grove_scan_opts so = { .dotfiles = dot != 0 };
		struct fixture f;

		len = 0;
		for (int i = 0; i < 9; i++)
			len += (size_t)snprintf(spec + len, sizeof(spec) - len,
						"f stow/p%d/d%d/f\nf stow/p%d/dot-c%d/f\n"
						"f d%d/f\nf .c%d/f\n",
						i, 8 - i, i, 8 - i, 8 - i, 8 - i);
		assert_true(len < sizeof(spec));
		open_world_opts(&f, spec, pkgs, 9, &so);
		for (int i = 0; i < 9; i++) {
			snprintf(path, sizeof(path), "d%d/f", i);
			assert_non_null(grove_node_lookup(f.w.target, path));
			snprintf(path, sizeof(path), ".c%d/f", i);
			if (dot)
				assert_non_null(grove_node_lookup(f.w.target, path));
			else
				assert_null(grove_node_lookup(f.w.target, path));
		}
		close_world(&f);
	}
}

/* A request that only stows looks the packages' names up in the target instead of listing it: with
 * many packages (the index), a name several packages hold is looked up and made once, and a target
 * entry no package holds is not read. */
static void
test_scan_looks_many_packages_up_once_each(void **state)
{
	char *pkgs[] = { "p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8" };
	struct grove_scan_opts so = { .lookup = true };
	char spec[4096], path[64];
	struct grove_node *n;
	struct fixture f;
	size_t len = 0;

	(void)state;
	for (int i = 0; i < 9; i++)
		len += (size_t)snprintf(spec + len, sizeof(spec) - len,
					"f stow/p%d/d%d/f\nf stow/p%d/share/s%d\nf d%d/f\n", i,
					8 - i, i, i, 8 - i);
	len += (size_t)snprintf(spec + len, sizeof(spec) - len, "f share/s3\nf unrelated\n");
	assert_true(len < sizeof(spec));
	open_world_opts(&f, spec, pkgs, 9, &so);
	/* d0..d8 and share: each once, though share is in every package. */
	assert_int_equal(f.w.target->n_kids, 10);
	for (int i = 0; i < 9; i++) {
		snprintf(path, sizeof(path), "d%d/f", i);
		assert_non_null(grove_node_lookup(f.w.target, path));
	}
	n = grove_node_lookup(f.w.target, "share");
	assert_non_null(n);
	assert_int_equal(n->n_kids, 1);
	assert_non_null(grove_node_lookup(f.w.target, "share/s3"));
	assert_null(grove_node_lookup(f.w.target, "unrelated"));
	close_world(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_lists_only_needed_target_folders),
		cmocka_unit_test(test_scan_full_target_reads_everything_but_the_stow_dir),
		cmocka_unit_test(test_scan_marks_escaping_and_looping_package_links),
		cmocka_unit_test(test_scan_catches_a_link_back_to_the_package_root),
		cmocka_unit_test(test_scan_resolves_owned_links_and_loads_unfoldable_subtrees),
		cmocka_unit_test(test_scan_matches_many_packages_through_the_index),
		cmocka_unit_test(test_scan_looks_many_packages_up_once_each),
		cmocka_unit_test(test_scan_resolves_owned_links_in_long_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
