/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading the manifest and config.yaml through the fs layer; host and tag selection; the layering
 * of stow options (flags > environment > manifest > config > defaults). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/fs.h"
#include "grove/manifest.h"
#include "base/util.h"

#include "banned.h" /* last */

static int
read_yaml_file(const char *path, bool missing_ok, char **ret_buf, size_t *ret_len,
	       struct grove_error *err)
{
	int r = grove_fs_read_config_file(path, GROVE_MANIFEST_MAX_BYTES, ret_buf, ret_len, err);

	if (r == -EFBIG)
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "%s: larger than %d bytes; refusing to read it", path,
				       GROVE_MANIFEST_MAX_BYTES);
	if (r < 0) {
		/* Unreadable is a bad configuration too (exit 78), with the reason. */
		err->code = -GROVE_E_CONFIG;
		return -GROVE_E_CONFIG;
	}
	if (!*ret_buf && !missing_ok)
		return grove_error_set(err, -GROVE_E_CONFIG, "%s: no such file", path);
	return 0;
}

int
grove_manifest_read(const char *path, struct grove_manifest *ret, struct grove_error *err)
{
	cleanup_free char *buf = NULL;
	size_t len = 0;
	int r = read_yaml_file(path, false, &buf, &len, err);

	if (r >= 0)
		r = grove_manifest_parse(buf, len, path, ret, err);
	/* A manifest that cannot be read or used is the error's path (docs/json.md). */
	if (r < 0 && !err->path[0])
		grove_error_path(err, path);
	return r;
}

char *
grove_user_config_path(const char *xdg_config_home, const char *home)
{
	if (xdg_config_home && xdg_config_home[0] == '/')
		return grove_strdupf("%s/grove/config.yaml", xdg_config_home);
	if (home && home[0])
		return grove_strdupf("%s/.config/grove/config.yaml", home);
	return NULL;
}

int
grove_user_config_read(const char *path, struct grove_user_config *ret, struct grove_error *err)
{
	cleanup_free char *buf = NULL;
	size_t len = 0;
	int r;

	if (path) {
		r = read_yaml_file(path, true, &buf, &len, err);
		if (r < 0)
			return grove_error_path(err, path);
	}
	r = grove_user_config_parse(buf ? buf : "", buf ? len : 0, path, ret, err);
	return r < 0 && path ? grove_error_path(err, path) : r;
}

bool
grove_manifest_when_matches(const struct grove_manifest_when *when,
			    const struct grove_apply_context *ctx)
{
	if (when->hosts.n && !(ctx->host && grove_strlist_has(&when->hosts, ctx->host)))
		return false;
	if (when->tags.n) {
		bool any = false;

		for (size_t i = 0; i < when->tags.n && !any; i++)
			any = grove_strlist_has(&ctx->tags, when->tags.v[i]);
		if (!any)
			return false;
	}
	return true;
}

int
grove_manifest_effective(const struct grove_apply_context *ctx, const struct grove_manifest *m,
			 const struct grove_manifest_target *t, const struct grove_manifest_pkg *p,
			 struct grove_stow_settings *ret)
{
	struct grove_stow_settings s;

	grove_stow_settings_init(&s);
	if (grove_stow_settings_merge(&s, &ctx->below) < 0 ||
	    (m && grove_stow_settings_merge(&s, &m->defaults) < 0) ||
	    (t && grove_stow_settings_merge(&s, &t->opts) < 0) ||
	    (p && grove_stow_settings_merge(&s, &p->opts) < 0) ||
	    grove_stow_settings_merge(&s, &ctx->above) < 0) {
		grove_stow_settings_release(&s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}
