/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove_apply_steps_*: what a manifest selects on a host, and the overlaps refused, without the
 * command line; and a whole run (grove_apply_load, _plan, _run): which manifest it reads, and
 * what it applies. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
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

/* ---- a whole run (apply_run.c) ---- */

/* Writes root/rel holding the text fmt makes. */
static void __attribute__((format(printf, 3, 4)))
tu_writef(const char *root, const char *rel, const char *fmt, ...)
{
	char *path = tu_path(root, rel);
	FILE *f = fopen(path, "w");
	va_list ap;

	assert_non_null(f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	assert_int_equal(fclose(f), 0);
	free(path);
}

#define tu_write(root, rel, text) tu_writef(root, rel, "%s", text)

/* Which manifest a run reads: -f > $GROVE_MANIFEST > config.yaml's manifest > ./grove.yaml >
 * $XDG_CONFIG_HOME/grove/grove.yaml; none is -GROVE_E_CONFIG naming where it looked. */
static void
test_apply_which_manifest(void **state)
{
	static const char yaml[] = "targets: []\n";
	char *root = tu_mkdtemp(), *xdg = tu_path(root, "xdg"), *cwd = tu_path(root, "cwd");
	char *old = getcwd(NULL, 0);
	struct {
		const char *file, *env, *config, *want;
		bool here; /* ./grove.yaml exists */
	} cases[] = {
		{ "cwd/f.yaml", "cwd/e.yaml", "cwd/c.yaml", "cwd/f.yaml", true },
		{ NULL, "cwd/e.yaml", "cwd/c.yaml", "cwd/e.yaml", true },
		{ NULL, NULL, "cwd/c.yaml", "cwd/c.yaml", true },
		{ NULL, NULL, NULL, "grove.yaml", true },
		{ NULL, NULL, NULL, "xdg/grove/grove.yaml", false },
	};

	(void)state;
	tu_build(root, "d xdg/grove\nd cwd\n");
	tu_write(root, "cwd/f.yaml", yaml);
	tu_write(root, "cwd/e.yaml", yaml);
	tu_write(root, "cwd/c.yaml", yaml);
	tu_write(root, "xdg/grove/grove.yaml", yaml);
	assert_int_equal(chdir(cwd), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct grove_apply ap;
		struct grove_error err = { 0 };
		char *file = cases[i].file ? tu_path(root, cases[i].file) : NULL;
		char *env = cases[i].env ? tu_path(root, cases[i].env) : NULL;
		char *want = cases[i].want[0] == 'g' ? strdup(cases[i].want)
						     : tu_path(root, cases[i].want);
		char *cfg = NULL;
		struct grove_apply_request rq = {
			.file = file, .env_manifest = env, .xdg_config_home = xdg, .cwd = cwd
		};

		if (cases[i].config) {
			cfg = tu_path(root, cases[i].config);
			tu_writef(root, "xdg/grove/config.yaml", "manifest: %s\n", cfg);
		} else {
			unlink("../xdg/grove/config.yaml");
		}
		if (cases[i].here)
			tu_write(root, "cwd/grove.yaml", yaml);
		else
			unlink("grove.yaml");
		grove_apply_init(&ap);
		assert_int_equal(grove_apply_load(&ap, &rq, &err), 0);
		assert_string_equal(ap.manifest_path, want);
		if (!cases[i].here && !cases[i].file)
			assert_null(ap.manifest_abs); /* absolute already */
		grove_apply_release(&ap);
		free(file);
		free(env);
		free(want);
		free(cfg);
	}
	{
		struct grove_apply ap;
		struct grove_error err = { 0 };
		struct grove_apply_request rq = { .xdg_config_home = xdg, .cwd = cwd };

		unlink("../xdg/grove/grove.yaml");
		grove_apply_init(&ap);
		assert_int_equal(grove_apply_load(&ap, &rq, &err), -GROVE_E_CONFIG);
		assert_non_null(strstr(err.msg, "no manifest: looked for ./grove.yaml and "));
		assert_non_null(strstr(err.msg, "xdg/grove/grove.yaml"));
		grove_apply_release(&ap);
	}
	assert_int_equal(chdir(old), 0);
	free(old);
	tu_rmtree(root);
	free(root);
	free(xdg);
	free(cwd);
}

static int n_warnings;

static void
count_warning(void *ctx, const char *text)
{
	(void)ctx;
	(void)text;
	n_warnings++;
}

/* A manifest of two targets: planned, run (one transaction each, in order), then planned again
 * with check: nothing left to change. */
static void
test_apply_whole_run(void **state)
{
	char *root = tu_mkdtemp(), *state_dir = tu_path(root, "state");
	char *manifest = tu_path(root, "grove.yaml");
	struct grove_apply_events ev = { .warning = count_warning };
	struct grove_apply_request rq = { .file = manifest,
					  .state_opt = state_dir,
					  .command = "test-apply" };

	(void)state;
	tu_build(root, "f dots/vim/vimrc\nf dots/git/gitconfig\nd t1\nd t2\nd state\nd xdg\n");
	tu_write(root, "grove.yaml",
		 "defaults:\n  dir: dots\ntargets:\n  - path: t1\n    packages: [vim]\n"
		 "  - path: t2\n    packages: [git]\n");
	for (int round = 0; round < 2; round++) {
		struct grove_apply ap;
		struct grove_error err = { 0 };
		char *xdg = tu_path(root, "xdg");

		rq.xdg_config_home = xdg;
		rq.check = round == 1;
		grove_apply_init(&ap);
		assert_int_equal(grove_apply_load(&ap, &rq, &err), 0);
		assert_int_equal(ap.st.n_targets, 2);
		assert_int_equal(grove_apply_plan(&ap, &ev, &err), 0);
		assert_false(ap.conflicts);
		if (round == 0) {
			assert_true(grove_apply_steps_changed(&ap.st));
			assert_int_equal(grove_apply_run(&ap, &ev, &err), 0);
			assert_int_equal(ap.failed_target, 2);
			assert_true(ap.st.targets[0].run.txn > 0);
			assert_true(ap.st.targets[1].run.txn > ap.st.targets[0].run.txn);
		} else {
			assert_false(grove_apply_steps_changed(&ap.st));
			/* A check never runs. */
			assert_int_equal(grove_apply_run(&ap, &ev, &err), -GROVE_E_INTERNAL);
		}
		grove_apply_release(&ap);
		free(xdg);
	}
	assert_int_equal(n_warnings, 0);
	{
		char *have = tu_dump(root);

		assert_non_null(strstr(have, "l t1/vimrc ../dots/vim/vimrc\n"));
		assert_non_null(strstr(have, "l t2/gitconfig ../dots/git/gitconfig\n"));
		free(have);
	}
	tu_rmtree(root);
	free(root);
	free(state_dir);
	free(manifest);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apply_steps_select),
		cmocka_unit_test(test_apply_steps_overlap),
		cmocka_unit_test(test_apply_steps_no_dir),
		cmocka_unit_test(test_apply_which_manifest),
		cmocka_unit_test(test_apply_whole_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
