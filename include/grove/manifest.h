/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The manifest (grove.yaml) and the user's config.yaml: YAML read with libyaml into checked
 * requests; the layering of settings (flags, environment, manifest, config, defaults). */
#ifndef GROVE_MANIFEST_H
#define GROVE_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>

#include "grove/error.h"
#include "grove/stow_settings.h"

/*
 * The schema is documented in docs/manifest.md. Parsing is pure (no I/O): the
 * caller reads the file (grove_manifest_read does, through the fs layer) and
 * hands over its bytes. Every failure is GROVE_E_CONFIG (exit 78) with a
 * message "FILE:LINE:COLUMN: reason": syntax errors, unknown keys, wrong
 * types, duplicate keys, and the limits against hostile input below.
 */

/* Limits against hostile input. A bigger file is refused before it is read. */
#define GROVE_MANIFEST_MAX_BYTES 1048576 /* 1 MiB */
#define GROVE_MANIFEST_MAX_DEPTH 32
#define GROVE_MANIFEST_MAX_NODES 100000

/* When an entry applies: every list that is non-empty must match (hosts: the
 * host is in it; tags: at least one of its tags is active). */
struct grove_manifest_when {
	struct grove_strlist hosts, tags;
};

struct grove_manifest_pkg {
	char *name;
	struct grove_manifest_loc loc;
	struct grove_manifest_when when;
	struct grove_stow_settings opts;
};

struct grove_manifest_target {
	char *path; /* as written (may start with ~, relative to the manifest's folder) */
	struct grove_manifest_loc loc;
	struct grove_manifest_when when;
	struct grove_stow_settings opts;
	struct grove_manifest_pkg *pkgs;
	size_t n_pkgs;
};

struct grove_manifest_alt_follower {
	char *name;
	char *path; /* the group's follower link, or a choice's follower file */
	struct grove_manifest_loc loc;
};

struct grove_manifest_alt_choice {
	char *path;
	int priority;
	struct grove_manifest_loc loc;
	struct grove_manifest_alt_follower *followers;
	size_t n_followers;
};

struct grove_manifest_alt_group {
	char *name;
	char *link;
	struct grove_manifest_loc loc;
	struct grove_manifest_when when;
	struct grove_manifest_alt_follower *followers;
	size_t n_followers;
	struct grove_manifest_alt_choice *choices;
	size_t n_choices;
	bool manual;  /* mode: manual (then choice is set), else auto */
	char *choice; /* the chosen path in manual mode */
	struct grove_manifest_loc choice_loc;
};

struct grove_manifest_profile {
	char *name;
	struct grove_manifest_loc loc;
	struct grove_manifest_when when;
	char *dir; /* stow dir the packages come from, or NULL (the defaults' dir) */
	struct grove_strlist pkgs;
	int folding, dotfiles; /* -1 unset (the defaults' setting), 0, 1 */
};

struct grove_manifest {
	char *file;                /* the name messages use */
	struct grove_strlist tags; /* tags: turned on by the manifest itself */
	struct grove_stow_settings defaults;
	struct grove_manifest_target *targets;
	size_t n_targets;
	/* alternatives: */
	char *altdir, *admindir, *alt_root;
	struct grove_manifest_alt_group *groups;
	size_t n_groups;
	struct grove_manifest_profile *profiles;
	size_t n_profiles;
};

/* Parses a manifest from buf (len bytes; need not be NUL-terminated); file
 * names it in messages. On success *ret is filled (release with
 * grove_manifest_release). Checks the schema and its cross-references:
 * a target listed twice, a package twice in one target, a manual group whose
 * choice is not one of its choices, a choice follower the group does not
 * declare. */
int grove_manifest_parse(const char *buf, size_t len, const char *file, struct grove_manifest *ret,
			 struct grove_error *err);
void grove_manifest_release(struct grove_manifest *m);

/* Reads path (a regular file of at most GROVE_MANIFEST_MAX_BYTES, symlinks
 * followed, as for any user file) and parses it. A missing file is -ENOENT. */
int grove_manifest_read(const char *path, struct grove_manifest *ret, struct grove_error *err);

/* The user's $XDG_CONFIG_HOME/grove/config.yaml (keys: manifest, host, tags,
 * defaults; see docs/manifest.md). */
struct grove_user_config {
	char *file;
	char *manifest; /* default for apply -f, or NULL */
	char *host;     /* or NULL */
	struct grove_strlist tags;
	struct grove_stow_settings defaults;
};

int grove_user_config_parse(const char *buf, size_t len, const char *file,
			    struct grove_user_config *ret, struct grove_error *err);
void grove_user_config_release(struct grove_user_config *c);

/* The config file's path: $XDG_CONFIG_HOME/grove/config.yaml, else
 * $HOME/.config/grove/config.yaml (malloc'd), or NULL when neither is set. */
char *grove_user_config_path(const char *xdg_config_home, const char *home);

/* Reads and parses it; a missing file gives an empty config (returns 0). */
int grove_user_config_read(const char *path, struct grove_user_config *ret,
			   struct grove_error *err);

/* ---- selection and layering ---- */

/* The context an apply runs in, layered flags > environment > manifest >
 * config > defaults: the host (single value) and the active tags (a list:
 * every level adds). */
struct grove_apply_context {
	char *host;
	struct grove_strlist tags;
	/* The stow options from the levels above the manifest (environment,
	 * flags) and below it (config, built-in defaults). */
	struct grove_stow_settings above, below;
};

void grove_apply_context_init(struct grove_apply_context *c);
void grove_apply_context_release(struct grove_apply_context *c);

/*
 * The levels an apply's context is built from, highest first. Single values
 * (host) come from the highest level that sets one; lists (tags) and the stow
 * option lists add up from every level; stow single values from the highest
 * level that sets them (flags above the manifest, the config below it).
 */
struct grove_apply_layers {
	const char *flag_host;                   /* --host, or NULL */
	const struct grove_strlist *flag_tags;   /* --tag..., or NULL */
	const struct grove_stow_settings *flags; /* -d, --no-folding, ..., or NULL */
	const char *env_host;                    /* $GROVE_HOST, or NULL */
	const char *env_tags;                    /* $GROVE_TAGS, comma or space separated */
	const struct grove_manifest *manifest;   /* its tags; may be NULL */
	const struct grove_user_config *config;  /* may be NULL */
	const char *default_host;                /* gethostname() */
};

/* Fills ctx (initialised by the caller) from the layers. 0 or -ENOMEM. */
int grove_apply_context_build(struct grove_apply_context *ctx, const struct grove_apply_layers *l);

/* Does when apply in ctx? */
bool grove_manifest_when_matches(const struct grove_manifest_when *when,
				 const struct grove_apply_context *ctx);

/* A package's effective options: below, then the manifest's defaults, the
 * target's, the package's, then above. ret is initialised here. */
int grove_manifest_effective(const struct grove_apply_context *ctx, const struct grove_manifest *m,
			     const struct grove_manifest_target *t,
			     const struct grove_manifest_pkg *p, struct grove_stow_settings *ret);

#endif
