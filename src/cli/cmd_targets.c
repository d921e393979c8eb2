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
	grove_json_begin(stdout, "targets");
	fputs(", \"log\": ", stdout);
	grove_json_str(stdout, log);
	fputs(", \"targets\": [", stdout);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n  {\"target\": " : "\n  {\"target\": ", stdout);
		grove_json_str(stdout, v[i].path);
		printf(", \"transactions\": %zu, \"last_change\": ", v[i].n_txns);
		grove_json_time(stdout, v[i].last);
		fputs(", \"stow_dirs\": [", stdout);
		for (size_t k = 0; k < v[i].n_stow_dirs; k++) {
			fputs(k ? ", {\"dir\": " : "{\"dir\": ", stdout);
			grove_json_str(stdout, v[i].stow_dirs[k]);
			fputs(", \"last_used\": ", stdout);
			grove_json_time(stdout, v[i].stow_last[k]);
			fputc('}', stdout);
		}
		fputs("], \"packages\": [", stdout);
		for (size_t k = 0; k < v[i].n_pkgs; k++) {
			fputs(k ? ", {\"package\": " : "{\"package\": ", stdout);
			grove_json_str(stdout, v[i].pkgs[k].name);
			printf(", \"links\": %zu}", v[i].pkgs[k].links);
		}
		fputs("]}", stdout);
	}
	fputs(n ? "\n]}\n" : "]}\n", stdout);
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
