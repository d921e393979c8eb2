/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests: the manifest and config.yaml parsers (schema, errors with FILE:LINE:COLUMN, limits)
 * and the layering of settings (flags > environment > manifest > config > defaults). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

#include "grove/manifest.h"

static int
parse(const char *text, struct grove_manifest *m, struct grove_error *err)
{
	memset(err, 0, sizeof(*err));
	return grove_manifest_parse(text, strlen(text), "m.yaml", m, err);
}

/* The text must be refused with GROVE_E_CONFIG and exactly this message. */
static void
refused(const char *text, const char *msg)
{
	struct grove_manifest m;
	struct grove_error err;

	assert_int_equal(parse(text, &m, &err), -GROVE_E_CONFIG);
	assert_string_equal(err.msg, msg);
}

static void
test_manifest_full_schema(void **state)
{
	struct grove_manifest m;
	struct grove_error err;
	const char *text = "version: 1\n"
			   "tags: [desktop]\n"
			   "defaults:\n"
			   "  dir: ~/dotfiles\n"
			   "  ignore: ['\\.orig$']\n"
			   "targets:\n"
			   "  - path: ~\n"
			   "    dotfiles: true\n"
			   "    packages:\n"
			   "      - vim\n"
			   "      - name: zsh\n"
			   "        hosts: [laptop]\n"
			   "        no-folding: true\n"
			   "alternatives:\n"
			   "  groups:\n"
			   "    - name: editor\n"
			   "      link: /usr/bin/editor\n"
			   "      followers:\n"
			   "        - {name: editor.1.gz, link: /usr/share/man/man1/editor.1.gz}\n"
			   "      choices:\n"
			   "        - path: /usr/bin/vim\n"
			   "          priority: 50\n"
			   "          followers: {editor.1.gz: /usr/share/man/man1/vim.1.gz}\n"
			   "        - {path: /usr/bin/nano, priority: -3}\n"
			   "      choice: /usr/bin/nano\n"
			   "profiles:\n"
			   "  - {name: default, packages: [vim], dotfiles: true}\n";

	(void)state;
	assert_int_equal(parse(text, &m, &err), 0);
	assert_int_equal(m.n_targets, 1);
	assert_string_equal(m.defaults.dir, "~/dotfiles");
	assert_int_equal(m.defaults.ignore.n, 1);
	assert_string_equal(m.defaults.ignore.v[0], "\\.orig$");
	assert_string_equal(m.targets[0].path, "~");
	assert_int_equal(m.targets[0].opts.dotfiles, 1);
	assert_int_equal(m.targets[0].opts.folding, -1);
	assert_int_equal(m.targets[0].n_pkgs, 2);
	assert_string_equal(m.targets[0].pkgs[1].name, "zsh");
	assert_int_equal(m.targets[0].pkgs[1].loc.line, 11);
	assert_int_equal(m.targets[0].pkgs[1].opts.folding, 0);
	assert_string_equal(m.targets[0].pkgs[1].when.hosts.v[0], "laptop");
	assert_int_equal(m.n_groups, 1);
	assert_true(m.groups[0].manual); /* a choice alone means manual */
	assert_string_equal(m.groups[0].choice, "/usr/bin/nano");
	assert_int_equal(m.groups[0].choices[1].priority, -3);
	assert_int_equal(m.groups[0].choices[0].n_followers, 1);
	assert_int_equal(m.n_profiles, 1);
	assert_string_equal(m.profiles[0].pkgs.v[0], "vim");
	assert_int_equal(m.profiles[0].dotfiles, 1);
	assert_int_equal(m.profiles[0].folding, -1);
	grove_manifest_release(&m);
}

static void
test_manifest_errors_name_line_and_column(void **state)
{
	(void)state;
	refused("targets:\n  - path: t\n    frob: 1\n",
		"m.yaml:3:5: unknown key 'frob' in a target (known: path, dir, packages, hosts, "
		"tags, folding, no-folding, dotfiles, adopt, ignore, defer, override)");
	refused("targets:\n  - path: t\n    folding: maybe\n",
		"m.yaml:3:14: 'folding' must be true or false, not 'maybe'");
	refused("targets:\n  - path: t\n    folding: \"true\"\n",
		"m.yaml:3:14: 'folding' must be true or false, not 'true'");
	refused("targets: {path: t}\n", "m.yaml:1:10: 'targets' must be a list, not a mapping");
	refused("targets:\n  - path: [t]\n", "m.yaml:2:11: 'path' must be a string, not a list");
	refused("targets:\n  - path: t\n    path: u\n", "m.yaml:3:5: duplicate key 'path'");
	refused("targets:\n  - path: t\n   packages: [a\n",
		"m.yaml:3:4: syntax error: did not find expected '-' indicator while parsing a "
		"block collection");
	refused("targets:\n  - packages: [a]\n", "m.yaml:2:5: a target needs a 'path'");
	refused("targets:\n  - path: t\n    packages: [a, b, a]\n",
		"m.yaml:3:22: package 'a' is listed twice in target 't' (first at line 3)");
	refused("targets:\n  - path: t\n    packages: ['a/b']\n",
		"m.yaml:3:16: invalid package name 'a/b': contains '/'");
	refused("targets:\n  - path: t\n  - path: t/\n",
		"m.yaml:3:5: target 't/' is listed twice (first at line 2)");
	refused("version: 2\n", "m.yaml:1:10: unknown manifest version 2 (this grove knows 1)");
	refused("targets:\n  - path: t\n    ignore: ['(']\n",
		"m.yaml:3:14: 'ignore': option '--ignore': bad regex '(': missing closing "
		"parenthesis");
	refused("alternatives:\n  groups:\n    - name: ed\n      link: /bin/ed\n      choices:\n"
		"        - {path: /bin/ed1, priority: 1}\n      mode: manual\n",
		"m.yaml:7:13: group 'ed': mode manual needs a 'choice'");
	refused("alternatives:\n  groups:\n    - name: ed\n      link: /bin/ed\n      choices:\n"
		"        - {path: /bin/ed1, priority: 1}\n      choice: /bin/ed2\n",
		"m.yaml:7:15: group 'ed': choice '/bin/ed2' is not one of its choices");
	refused("alternatives:\n  groups:\n    - name: ed\n      link: /bin/ed\n      choices:\n"
		"        - {path: /bin/ed1, priority: 1, followers: {ed.1: /x}}\n",
		"m.yaml:6:53: group 'ed' has no follower 'ed.1' (declare it in the group's "
		"'followers')");
	refused("alternatives:\n  groups:\n    - name: ed\n      link: /bin/ed\n      choices:\n"
		"        - {path: /bin/ed1, priority: 1e3}\n",
		"m.yaml:6:38: 'priority' must be a whole number, not '1e3'");
}

static void
test_manifest_refuses_aliases_tags_and_depth(void **state)
{
	/* The billion laughs: refused at the first alias, nothing expanded. */
	const char *laughs = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
			     "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
			     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
			     "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n";
	char deep[20001];

	(void)state;
	refused(laughs, "m.yaml:2:8: aliases are not supported (*a): write the value out");
	refused("targets:\n  - path: !!str t\n", "m.yaml:2:11: tags are not supported "
						 "('tag:yaml.org,2002:str')");
	memset(deep, '[', 10000);
	memset(deep + 10000, ']', 10000);
	deep[20000] = '\0';
	refused(deep, "m.yaml:1:33: nested deeper than 32 levels");
	refused("a: 1\n---\nb: 2\n", "m.yaml:2:1: more than one YAML document in the file");
	refused("targets:\n  - path: \"a\\0b\"\n", "m.yaml:2:11: NUL byte in a string");
	refused("? [a]\n: 1\n", "m.yaml:1:3: a key must be a string, not a list");
}

static void
test_manifest_encoding_error_names_its_line(void **state)
{
	/* libyaml's reader errors carry a byte offset, not a mark: the position
	 * must still be the bad byte's, not 1:1. */
	size_t cap = 2100 * 16;
	char *text = malloc(cap);
	size_t n = 0;

	(void)state;
	assert_non_null(text);
	refused("targets:\n  - path: t\n    packages:\n      - a\xff\n",
		"m.yaml:4:10: syntax error: invalid leading UTF-8 octet");
	/* Multi-byte characters before it count as one column each. */
	refused("targets:\n  - path: t\n    packages:\n      - \xc3\xa9\xc3\xa9\xfe\n",
		"m.yaml:4:11: syntax error: invalid leading UTF-8 octet");
	n += (size_t)snprintf(text + n, cap - n, "targets:\n  - path: t\n    packages:\n");
	for (int i = 4; i < 2002; i++)
		n += (size_t)snprintf(text + n, cap - n, "      - p%d\n", i);
	n += (size_t)snprintf(text + n, cap - n, "      - bad\x80\n");
	refused(text, "m.yaml:2002:12: syntax error: invalid leading UTF-8 octet");
	free(text);
}

static void
test_manifest_size_cap_is_checked_before_parsing(void **state)
{
	size_t n = GROVE_MANIFEST_MAX_BYTES + 1;
	char *big = malloc(n);
	struct grove_manifest m;
	struct grove_error err = { 0 };
	clock_t t0 = clock();

	(void)state;
	assert_non_null(big);
	memset(big, '[', n); /* would nest a million deep if it were read */
	assert_int_equal(grove_manifest_parse(big, n, "m.yaml", &m, &err), -GROVE_E_CONFIG);
	assert_string_equal(err.msg, "m.yaml: larger than 1048576 bytes");
	assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 0.5);
	free(big);
}

static void
test_manifest_many_keys_is_fast(void **state)
{
	/* 40,000 distinct keys in one mapping: duplicate detection must not be quadratic. */
	size_t cap = 40000 * 16;
	char *text = malloc(cap);
	size_t len = 0;
	struct grove_ynode;
	struct grove_manifest m;
	struct grove_error err = { 0 };
	clock_t t0 = clock();

	(void)state;
	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len, "defaults:\n");
	for (int i = 0; i < 40000; i++)
		len += (size_t)snprintf(text + len, cap - len, "  k%d: 1\n", i);
	assert_int_equal(grove_manifest_parse(text, len, "m.yaml", &m, &err), -GROVE_E_CONFIG);
	assert_non_null(strstr(err.msg, "unknown key 'k0' in 'defaults'"));
	assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
	free(text);
}

static void
test_manifest_empty_is_an_empty_manifest(void **state)
{
	struct grove_manifest m;
	struct grove_error err;

	(void)state;
	assert_int_equal(parse("", &m, &err), 0);
	assert_int_equal(m.n_targets, 0);
	grove_manifest_release(&m);
	assert_int_equal(parse("# only a comment\n", &m, &err), 0);
	grove_manifest_release(&m);
	refused("- a\n", "m.yaml:1:1: the manifest must be a mapping, not a list");
}

static void
test_config_parse(void **state)
{
	struct grove_user_config c;
	struct grove_error err = { 0 };
	const char *text = "manifest: ~/dotfiles/grove.yaml\nhost: box\ntags: [work]\n"
			   "defaults: {dir: /srv/stow, dotfiles: true}\n";

	(void)state;
	assert_int_equal(grove_user_config_parse(text, strlen(text), "c.yaml", &c, &err), 0);
	assert_string_equal(c.manifest, "~/dotfiles/grove.yaml");
	assert_string_equal(c.host, "box");
	assert_string_equal(c.tags.v[0], "work");
	assert_string_equal(c.defaults.dir, "/srv/stow");
	assert_int_equal(c.defaults.dotfiles, 1);
	grove_user_config_release(&c);
	assert_int_equal(grove_user_config_parse("targets: []\n", 12, "c.yaml", &c, &err),
			 -GROVE_E_CONFIG);
	assert_string_equal(err.msg, "c.yaml:1:1: unknown key 'targets' in the configuration "
				     "(known: manifest, host, tags, defaults)");
}

/* ---- precedence ---- */

struct layers {
	struct grove_manifest m;
	struct grove_user_config cfg;
	struct grove_stow_settings flags;
	struct grove_strlist flag_tags;
};

static void
layers_load(struct layers *L)
{
	const char *mtext =
		"tags: [from-manifest]\n"
		"defaults: {dir: /m/stow, ignore: [m-default], folding: false}\n"
		"targets:\n"
		"  - path: /t\n"
		"    ignore: [m-target]\n"
		"    dotfiles: true\n"
		"    packages:\n"
		"      - {name: p, ignore: [m-pkg], dotfiles: false, tags: [from-env]}\n"
		"      - {name: q, hosts: [cfg-host]}\n";
	const char *ctext = "host: cfg-host\ntags: [from-config]\n"
			    "defaults: {dir: /c/stow, ignore: [c-default], adopt: true, "
			    "folding: true}\n";
	struct grove_error err = { 0 };

	memset(L, 0, sizeof(*L));
	assert_int_equal(grove_manifest_parse(mtext, strlen(mtext), "m.yaml", &L->m, &err), 0);
	assert_int_equal(grove_user_config_parse(ctext, strlen(ctext), "c.yaml", &L->cfg, &err), 0);
	grove_stow_settings_init(&L->flags);
}

static void
layers_release(struct layers *L)
{
	grove_manifest_release(&L->m);
	grove_user_config_release(&L->cfg);
	grove_stow_settings_release(&L->flags);
	grove_strlist_release(&L->flag_tags);
}

static void
test_precedence_host_single_value_replaces(void **state)
{
	struct layers L;
	struct grove_apply_context ctx;
	struct grove_apply_layers l = { .default_host = "gethostname" };

	(void)state;
	layers_load(&L);
	/* defaults only */
	grove_apply_context_init(&ctx);
	assert_int_equal(grove_apply_context_build(&ctx, &l), 0);
	assert_string_equal(ctx.host, "gethostname");
	grove_apply_context_release(&ctx);
	/* config over defaults */
	l.config = &L.cfg;
	assert_int_equal(grove_apply_context_build(&ctx, &l), 0);
	assert_string_equal(ctx.host, "cfg-host");
	assert_true(grove_manifest_when_matches(&L.m.targets[0].pkgs[1].when, &ctx));
	grove_apply_context_release(&ctx);
	/* environment over config */
	l.env_host = "env-host";
	assert_int_equal(grove_apply_context_build(&ctx, &l), 0);
	assert_string_equal(ctx.host, "env-host");
	assert_false(grove_manifest_when_matches(&L.m.targets[0].pkgs[1].when, &ctx));
	grove_apply_context_release(&ctx);
	/* flag over environment */
	l.flag_host = "flag-host";
	assert_int_equal(grove_apply_context_build(&ctx, &l), 0);
	assert_string_equal(ctx.host, "flag-host");
	grove_apply_context_release(&ctx);
	layers_release(&L);
}

static void
test_precedence_tags_add_up(void **state)
{
	struct layers L;
	struct grove_apply_context ctx;
	struct grove_apply_layers l = { .default_host = "h" };

	(void)state;
	layers_load(&L);
	grove_strlist_add(&L.flag_tags, "from-flag", NULL);
	l.flag_tags = &L.flag_tags;
	l.manifest = &L.m;
	l.config = &L.cfg;
	grove_apply_context_init(&ctx);
	assert_int_equal(grove_apply_context_build(&ctx, &l), 0);
	assert_int_equal(ctx.tags.n, 3);
	assert_string_equal(ctx.tags.v[0], "from-flag");
	assert_string_equal(ctx.tags.v[1], "from-manifest");
	assert_string_equal(ctx.tags.v[2], "from-config");
	/* p wants the tag "from-env", which only the environment gives */
	assert_false(grove_manifest_when_matches(&L.m.targets[0].pkgs[0].when, &ctx));
	grove_apply_context_release(&ctx);
	l.env_tags = "from-env, other";
	assert_int_equal(grove_apply_context_build(&ctx, &l), 0);
	assert_int_equal(ctx.tags.n, 5);
	assert_string_equal(ctx.tags.v[1], "from-env");
	assert_string_equal(ctx.tags.v[2], "other");
	assert_true(grove_manifest_when_matches(&L.m.targets[0].pkgs[0].when, &ctx));
	grove_apply_context_release(&ctx);
	layers_release(&L);
}

static void
test_precedence_stow_options(void **state)
{
	struct layers L;
	struct grove_apply_context ctx;
	struct grove_apply_layers l = { .default_host = "h" };
	struct grove_stow_settings s;
	const struct grove_manifest_target *t;

	(void)state;
	layers_load(&L);
	t = &L.m.targets[0];
	grove_apply_context_init(&ctx);

	/* Built-in defaults only: everything unset (folding on, the rest off). */
	assert_int_equal(grove_manifest_effective(&ctx, NULL, NULL, NULL, &s), 0);
	assert_null(s.dir);
	assert_int_equal(s.folding, -1);
	assert_int_equal(s.ignore.n, 0);
	grove_stow_settings_release(&s);

	/* Config, then the manifest's defaults, target and package. */
	l.config = &L.cfg;
	assert_int_equal(grove_apply_context_build(&ctx, &l), 0);
	assert_int_equal(grove_manifest_effective(&ctx, &L.m, t, &t->pkgs[0], &s), 0);
	assert_string_equal(s.dir, "/m/stow"); /* manifest replaces config */
	assert_int_equal(s.folding, 0);        /* manifest defaults replace config */
	assert_int_equal(s.adopt, 1);          /* only config sets it */
	assert_int_equal(s.dotfiles, 0);       /* package replaces target */
	assert_int_equal(s.ignore.n, 4);       /* lists add up, lowest level first */
	assert_string_equal(s.ignore.v[0], "c-default");
	assert_string_equal(s.ignore.v[1], "m-default");
	assert_string_equal(s.ignore.v[2], "m-target");
	assert_string_equal(s.ignore.v[3], "m-pkg");
	grove_stow_settings_release(&s);
	assert_int_equal(grove_manifest_effective(&ctx, &L.m, t, &t->pkgs[1], &s), 0);
	assert_int_equal(s.dotfiles, 1); /* q keeps the target's */
	assert_int_equal(s.ignore.n, 3);
	grove_stow_settings_release(&s);
	grove_apply_context_release(&ctx);

	/* Flags over everything. */
	L.flags.dir = strdup("/flag/stow");
	L.flags.folding = 1;
	L.flags.adopt = 0;
	grove_strlist_add(&L.flags.ignore, "flag", NULL);
	l.flags = &L.flags;
	grove_apply_context_init(&ctx);
	assert_int_equal(grove_apply_context_build(&ctx, &l), 0);
	assert_int_equal(grove_manifest_effective(&ctx, &L.m, t, &t->pkgs[0], &s), 0);
	assert_string_equal(s.dir, "/flag/stow");
	assert_int_equal(s.folding, 1);
	assert_int_equal(s.adopt, 0);
	assert_int_equal(s.ignore.n, 5);
	assert_string_equal(s.ignore.v[4], "flag");
	grove_stow_settings_release(&s);
	grove_apply_context_release(&ctx);
	layers_release(&L);
}

static void
test_settings_same_counts_unset_as_default(void **state)
{
	struct grove_stow_settings a, b;

	(void)state;
	grove_stow_settings_init(&a);
	grove_stow_settings_init(&b);
	b.folding = 1;
	b.dotfiles = 0;
	assert_true(grove_stow_settings_same(&a, &b));
	b.folding = 0;
	assert_false(grove_stow_settings_same(&a, &b));
	b.folding = 1;
	grove_strlist_add(&b.ignore, "x", NULL);
	assert_false(grove_stow_settings_same(&a, &b));
	grove_stow_settings_release(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest_full_schema),
		cmocka_unit_test(test_manifest_errors_name_line_and_column),
		cmocka_unit_test(test_manifest_refuses_aliases_tags_and_depth),
		cmocka_unit_test(test_manifest_encoding_error_names_its_line),
		cmocka_unit_test(test_manifest_size_cap_is_checked_before_parsing),
		cmocka_unit_test(test_manifest_many_keys_is_fast),
		cmocka_unit_test(test_manifest_empty_is_an_empty_manifest),
		cmocka_unit_test(test_config_parse),
		cmocka_unit_test(test_precedence_host_single_value_replaces),
		cmocka_unit_test(test_precedence_tags_add_up),
		cmocka_unit_test(test_precedence_stow_options),
		cmocka_unit_test(test_settings_same_counts_unset_as_default),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
