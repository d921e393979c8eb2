/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The host, tags and layered stow options that select and shape what a manifest applies. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/manifest.h"
#include "base/util.h"

#include "banned.h" /* last */

void
grove_apply_context_init(struct grove_apply_context *c)
{
	memset(c, 0, sizeof(*c));
	grove_stow_settings_init(&c->above);
	grove_stow_settings_init(&c->below);
}

void
grove_apply_context_release(struct grove_apply_context *c)
{
	if (!c)
		return;
	free(c->host);
	grove_strlist_release(&c->tags);
	grove_stow_settings_release(&c->above);
	grove_stow_settings_release(&c->below);
	grove_apply_context_init(c);
}

static int
tags_add(struct grove_strlist *to, const struct grove_strlist *from)
{
	for (size_t i = 0; from && i < from->n; i++)
		if (!grove_strlist_has(to, from->v[i]) &&
		    grove_strlist_add(to, from->v[i], &from->loc[i]) < 0)
			return -ENOMEM;
	return 0;
}

int
grove_apply_context_build(struct grove_apply_context *ctx, const struct grove_apply_layers *l)
{
	const char *host = l->default_host;

	if (l->config && l->config->host)
		host = l->config->host;
	if (l->env_host && *l->env_host)
		host = l->env_host;
	if (l->flag_host)
		host = l->flag_host;
	free(ctx->host);
	ctx->host = host ? strdup(host) : NULL;
	if (host && !ctx->host)
		return -ENOMEM;
	if (tags_add(&ctx->tags, l->flag_tags) < 0)
		return -ENOMEM;
	if (l->env_tags && *l->env_tags) {
		cleanup_free char *copy = strdup(l->env_tags);
		char *save = NULL;

		if (!copy)
			return -ENOMEM;
		for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
			if (!grove_strlist_has(&ctx->tags, t) &&
			    grove_strlist_add(&ctx->tags, t, NULL) < 0)
				return -ENOMEM;
	}
	if (tags_add(&ctx->tags, l->manifest ? &l->manifest->tags : NULL) < 0 ||
	    tags_add(&ctx->tags, l->config ? &l->config->tags : NULL) < 0)
		return -ENOMEM;
	if ((l->config && grove_stow_settings_merge(&ctx->below, &l->config->defaults) < 0) ||
	    (l->flags && grove_stow_settings_merge(&ctx->above, l->flags) < 0))
		return -ENOMEM;
	return 0;
}
