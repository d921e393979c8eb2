/* SPDX-License-Identifier: GPL-3.0-or-later */
/* libFuzzer target for the manifest and config.yaml parsers (meson -Dfuzz=true, clang). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "grove/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct grove_manifest m;
	struct grove_user_config cfg;
	struct grove_error err = { 0 };

	if (grove_manifest_parse((const char *)data, size, "fuzz.yaml", &m, &err) == 0) {
		struct grove_apply_context ctx;

		/* Walk what a parse hands out, as apply would. */
		grove_apply_context_init(&ctx);
		for (size_t t = 0; t < m.n_targets; t++) {
			for (size_t p = 0; p < m.targets[t].n_pkgs; p++) {
				struct grove_stow_settings s;

				if (!grove_manifest_when_matches(&m.targets[t].pkgs[p].when, &ctx))
					continue;
				if (grove_manifest_effective(&ctx, &m, &m.targets[t],
							     &m.targets[t].pkgs[p], &s) == 0)
					grove_stow_settings_release(&s);
			}
		}
		grove_apply_context_release(&ctx);
		grove_manifest_release(&m);
	} else if (err.msg[0] == '\0' || strlen(err.msg) >= sizeof(err.msg)) {
		__builtin_trap(); /* every refusal must say why */
	}
	if (grove_user_config_parse((const char *)data, size, "config.yaml", &cfg, &err) == 0)
		grove_user_config_release(&cfg);
	return 0;
}
