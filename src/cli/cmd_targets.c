/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove targets: every target the log knows, with its stow dirs, packages and last change. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "front.h"
#include "grove/history.h"

#include "../banned.h" /* last */

static void
when(double t, char *buf, size_t size)
{
	time_t secs = (time_t)t;
	struct tm tm;

	if (!localtime_r(&secs, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, size, "%.0f", t);
}

static void
print_json(const char *log, const struct grove_history_target *v, size_t n)
{
	struct json_t *doc = grove_json_doc("targets");
	struct json_t *targets = grove_json_list();

	grove_json_put_str(doc, "log", log);
	for (size_t i = 0; i < n; i++) {
		struct json_t *t = grove_json_obj();
		struct json_t *dirs = grove_json_list();
		struct json_t *pkgs = grove_json_list();

		grove_json_put_str(t, "target", v[i].path);
		grove_json_put_int(t, "transactions", (long long)v[i].n_txns);
		grove_json_put_time(t, "last_change", v[i].last);
		for (size_t k = 0; k < v[i].n_stow_dirs; k++) {
			struct json_t *d = grove_json_obj();

			grove_json_put_str(d, "dir", v[i].stow_dirs[k]);
			grove_json_put_time(d, "last_used", v[i].stow_last[k]);
			grove_json_append(dirs, d);
		}
		grove_json_put(t, "stow_dirs", dirs);
		for (size_t k = 0; k < v[i].n_pkgs; k++) {
			struct json_t *p = grove_json_obj();

			grove_json_put_str(p, "package", v[i].pkgs[k].name);
			grove_json_put_int(p, "links", (long long)v[i].pkgs[k].links);
			grove_json_append(pkgs, p);
		}
		grove_json_put(t, "packages", pkgs);
		grove_json_append(targets, t);
	}
	grove_json_put(doc, "targets", targets);
	grove_json_print(doc);
}

static void
print_text(const char *log, const struct grove_history_target *v, size_t n)
{
	char buf[32];

	if (!n) {
		printf("no target in the log '%s' yet: grove has changed nothing with it\n", log);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		when(v[i].last, buf, sizeof(buf));
		printf("%s%s\n    last change %s, %zu transaction%s\n", i ? "\n" : "", v[i].path,
		       buf, v[i].n_txns, v[i].n_txns == 1 ? "" : "s");
		for (size_t k = 0; k < v[i].n_stow_dirs; k++) {
			when(v[i].stow_last[k], buf, sizeof(buf));
			printf("    stow dir %s (last used %s)\n", v[i].stow_dirs[k], buf);
		}
		if (v[i].n_pkgs) {
			fputs("    stowed:", stdout);
			for (size_t k = 0; k < v[i].n_pkgs; k++)
				printf(" %s (%zu)", v[i].pkgs[k].name, v[i].pkgs[k].links);
			fputc('\n', stdout);
		}
	}
}

int
grove_cmd_targets(int argc, char **argv, const struct grove_global_opts *global)
{
	struct grove_history_target *v = NULL;
	struct grove_error err = { 0 };
	bool json = global->json;
	char *log = NULL;
	size_t n = 0;
	int r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else {
			fprintf(stderr,
				"grove: 'targets' takes no argument '%s' (try 'grove help "
				"targets')\n",
				argv[i]);
			return GROVE_EXIT_USAGE;
		}
	}
	r = grove_history_targets(global->state_dir, false, &log, &v, &n, &err);
	if (r < 0)
		return grove_report_error(&err, r);
	if (json)
		print_json(log, v, n);
	else
		print_text(log, v, n);
	grove_history_targets_free(v, n);
	free(log);
	return GROVE_EXIT_OK;
}
