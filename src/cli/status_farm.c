/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `grove status`'s second part: every package of the stow dir as the disk shows it (stowed, partly
 * stowed, not stowed), and whether grove's log knows it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "front.h"
#include "grove/text.h"

#include "../banned.h" /* last */

static const char *
farm_state(const struct grove_stow_farm_pkg *p)
{
	if (p->files && p->reached == p->files)
		return "stowed";
	return p->reached ? "partly stowed" : "not stowed";
}

static bool
logged(const struct grove_owned *own, size_t n_own, const char *pkg)
{
	for (size_t i = 0; i < n_own; i++)
		if (own[i].text && own[i].package && !strcmp(own[i].package, pkg))
			return true;
	return false;
}

int
grove_status_farm_load(const struct grove_status_farm *f, const struct grove_root *target,
		       struct grove_stow_farm_pkg **ret, size_t *ret_n, struct grove_error *err)
{
	*ret = NULL;
	*ret_n = 0;
	if (!f->stow)
		return 0;
	return grove_stow_farm(f->stow, target, f->global_ignore, f->global_ignore_source, ret,
			       ret_n, err);
}

void
grove_status_farm_json(struct json_t *doc, const struct grove_status_farm *f,
		       const struct grove_stow_farm_pkg *pkgs, size_t n,
		       const struct grove_owned *own, size_t n_own)
{
	struct json_t *list = grove_json_list();

	grove_json_put_str(doc, "stow_dir", f->stow ? f->stow->real : NULL);
	for (size_t i = 0; i < n; i++) {
		struct json_t *o = grove_json_obj();

		grove_json_put_str(o, "package", pkgs[i].name);
		grove_json_put_str(o, "state", farm_state(&pkgs[i]));
		grove_json_put_int(o, "files", (long long)pkgs[i].files);
		grove_json_put_int(o, "reached", (long long)pkgs[i].reached);
		grove_json_put_bool(o, "logged", logged(own, n_own, pkgs[i].name));
		grove_json_append(list, o);
	}
	grove_json_put(doc, "stow_packages", list);
}

void
grove_status_farm_print(const struct grove_status_farm *f, const struct grove_stow_farm_pkg *pkgs,
			size_t n, const struct grove_owned *own, size_t n_own)
{
	if (!f->stow)
		return;
	fputs("packages in ", stdout);
	grove_fput_shown(f->stow->real, stdout);
	puts(" (on disk)");
	/* Columns as wide as their widest entry (a name longer than 24, counts of any size). */
	int name_w = 24, count_w = 0;

	for (size_t i = 0; i < n; i++) {
		char *shown = grove_text_shown(pkgs[i].name);
		char counts[64];
		int w = snprintf(counts, sizeof(counts), "%zu/%zu file%s", pkgs[i].reached,
				 pkgs[i].files, pkgs[i].files == 1 ? "" : "s");

		if (shown && (int)strlen(shown) > name_w)
			name_w = (int)strlen(shown);
		free(shown);
		count_w = w > count_w ? w : count_w;
	}
	for (size_t i = 0; i < n; i++) {
		char *shown = grove_text_shown(pkgs[i].name);
		char counts[64];

		snprintf(counts, sizeof(counts), "%zu/%zu file%s", pkgs[i].reached, pkgs[i].files,
			 pkgs[i].files == 1 ? "" : "s");
		fputs("  ", stdout);
		grove_paint(stdout, GROVE_SGR_BOLD, "%-*s", name_w, shown ? shown : "");
		free(shown);
		if (logged(own, n_own, pkgs[i].name))
			printf(" %-14s %-*s  in grove's log\n", farm_state(&pkgs[i]), count_w,
			       counts);
		else
			printf(" %-14s %s\n", farm_state(&pkgs[i]), counts);
	}
	if (!n)
		puts("  (no packages)");
}
