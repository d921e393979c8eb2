/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove_apply_steps_*: what a manifest selects on a host, and the overlaps refused, without the
 * command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "grove/apply.h"

struct fx {
	char *root, *manifest_path;
	struct grove_manifest m;
	struct grove_apply_context ctx;
	struct grove_apply_steps st;
};

/* Parses yaml as root/grove.yaml, with host and the tag "work" active, and selects its steps. */
static int
select_steps(struct fx *f, const char *yaml, const char *host, struct grove_error *err)
{
	struct grove_strlist tags = { 0 };
	struct grove_apply_layers l = { .flag_host = host, .flag_tags = &tags };
	struct grove_apply_steps_opts o = { 0 };
	int r;

	f->root = tu_mkdtemp();
	tu_build(f->root, "d dots/vim\nd dots/git\nd dots/vpn\nd home/sub\n");
	f->manifest_path = tu_path(f->root, "grove.yaml");
	r = grove_manifest_parse(yaml, strlen(yaml), f->manifest_path, &f->m, err);
	if (r < 0)
		print_error("%s\n", err->msg);
	assert_int_equal(r, 0);
	assert_int_equal(grove_strlist_add(&tags, "work", NULL), 0);
	grove_apply_context_init(&f->ctx);
	assert_int_equal(grove_apply_context_build(&f->ctx, &l), 0);
	grove_strlist_release(&tags);
	o.manifest = &f->m;
	o.ctx = &f->ctx;
	o.manifest_path = f->manifest_path;
	o.command = "test-apply";
	r = grove_apply_steps_select(&f->st, &o, err);
	return r;
}

static void
fx_release(struct fx *f)
{
	grove_apply_steps_release(&f->st);
	grove_apply_steps_release(&f->st); /* released steps release again */
	grove_apply_context_release(&f->ctx);
	grove_manifest_release(&f->m);
	tu_rmtree(f->root);
	free(f->root);
	free(f->manifest_path);
}

static void
test_apply_steps_select(void **state)
{
	struct fx f = { 0 };
	struct grove_error err = { 0 };
	char *want;

	assert_int_equal(select_steps(&f,
				      "defaults: {dir: dots}\n"
				      "targets:\n"
				      "  - path: home\n"
				      "    packages:\n"
				      "      - vim\n"
				      "      - name: vpn\n"
				      "        tags: [work]\n"
				      "      - name: tools\n"
				      "        hosts: [desk]\n"
				      "      - name: git\n"
				      "        hosts: [laptop]\n"
				      "        folding: false\n"
				      "  - path: home/sub\n"
				      "    hosts: [desk]\n"
				      "    packages: [vim]\n",
				      "laptop", &err),
			 0);
	assert_int_equal(f.st.n_targets, 1);
	want = tu_path(f.root, "home");
	assert_string_equal(f.st.targets[0].target, want);
	free(want);
	want = tu_path(f.root, "dots");
	assert_string_equal(f.st.targets[0].dir, want);
	free(want);
	assert_int_equal(f.st.targets[0].n_pkgs, 3);
	assert_string_equal(f.st.targets[0].pkgs[0].name, "vim");
	assert_string_equal(f.st.targets[0].pkgs[1].name, "vpn");
	assert_string_equal(f.st.targets[0].pkgs[2].name, "git");
	assert_false(f.st.targets[0].pkgs[0].no_folding);
	assert_true(f.st.targets[0].pkgs[2].no_folding);
	/* Nothing is planned yet: no step changes anything. */
	assert_false(grove_apply_steps_changed(&f.st));
	fx_release(&f);
}

static void
test_apply_steps_overlap(void **state)
{
	struct fx f = { 0 };
	struct grove_error err = { 0 };

	assert_int_equal(select_steps(&f,
				      "defaults: {dir: dots}\n"
				      "targets:\n"
				      "  - path: home\n"
				      "    packages: [vim]\n"
				      "  - path: home/sub\n"
				      "    packages: [vim]\n",
				      "laptop", &err),
			 -GROVE_E_CONFIG);
	assert_non_null(strstr(err.msg, "grove.yaml:5:5: package 'vim' is in two targets that "
					"overlap: 'home/sub' and 'home' (line 3)"));
	fx_release(&f);
}

static void
test_apply_steps_no_dir(void **state)
{
	struct fx f = { 0 };
	struct grove_error err = { 0 };

	assert_int_equal(
		select_steps(&f, "targets:\n  - path: home\n    packages: [vim]\n", "laptop", &err),
		-GROVE_E_CONFIG);
	assert_non_null(strstr(err.msg, "grove.yaml:2:5: target 'home' has no stow directory"));
	fx_release(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apply_steps_select),
		cmocka_unit_test(test_apply_steps_overlap),
		cmocka_unit_test(test_apply_steps_no_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
