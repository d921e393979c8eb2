/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Test helper: lists what a manifest refers to (stow dirs, targets, packages, alternatives files),
 * ignoring host and tag selection, so a test can build the folders an example needs. */
#include <stdio.h>

#include "grove/manifest.h"

int
main(int argc, char **argv)
{
	struct grove_manifest m;
	struct grove_apply_context ctx;
	struct grove_error err = { 0 };

	if (argc != 2) {
		fputs("usage: manifest-probe FILE\n", stderr);
		return 2;
	}
	if (grove_manifest_read(argv[1], &m, &err) < 0) {
		fprintf(stderr, "manifest-probe: %s\n", err.msg);
		return 1;
	}
	grove_apply_context_init(&ctx);
	for (size_t i = 0; i < m.n_targets; i++) {
		const struct grove_manifest_target *t = &m.targets[i];

		printf("target %s\n", t->path);
		for (size_t k = 0; k < t->n_pkgs; k++) {
			struct grove_stow_settings s;

			if (grove_manifest_effective(&ctx, &m, t, &t->pkgs[k], &s) < 0)
				return 1;
			printf("pkg %s %s %d\n", s.dir ? s.dir : "-", t->pkgs[k].name,
			       s.dotfiles > 0);
			grove_stow_settings_release(&s);
		}
	}
	for (size_t i = 0; i < m.n_profiles; i++)
		for (size_t k = 0; k < m.profiles[i].pkgs.n; k++)
			printf("pkg %s %s 0\n",
			       m.profiles[i].dir ? m.profiles[i].dir
						 : (m.defaults.dir ? m.defaults.dir : "-"),
			       m.profiles[i].pkgs.v[k]);
	for (size_t i = 0; i < m.n_groups; i++)
		for (size_t k = 0; k < m.groups[i].n_choices; k++) {
			printf("file %s\n", m.groups[i].choices[k].path);
			for (size_t f = 0; f < m.groups[i].choices[k].n_followers; f++)
				printf("file %s\n", m.groups[i].choices[k].followers[f].path);
		}
	grove_apply_context_release(&ctx);
	grove_manifest_release(&m);
	return 0;
}
