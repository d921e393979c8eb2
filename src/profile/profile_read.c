/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Profiles: reading the generations a profile has from the disk, and selecting some of them. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grove/profile.h"
#include "profile_private.h"
#include "base/util.h"

#include "banned.h" /* last */

/* "NAME-<n>-link" -> n. */
static bool
parse_gen_link(const struct grove_profile *p, const char *name, long *ret)
{
	return grove_profile_record_link_of(p->name, name, ret);
}

/* The generation the profile link points at, or 0 when there is no link. */
int
grove_profile_read_current(struct grove_profile *p, long *ret, char **ret_text,
			   struct grove_error *err)
{
	struct grove_stat st;
	cleanup_free char *text = NULL;
	int r;

	*ret = 0;
	if (ret_text)
		*ret_text = NULL;
	if (p->dir.fd < 0)
		return 0;
	r = grove_fs_stat_at(p->dir.fd, p->name, &st, err);
	if (r < 0)
		return r;
	if (st.type == GROVE_FT_NONE)
		return 0;
	if (st.type != GROVE_FT_LINK)
		return grove_error_set(err, -GROVE_E_PRECONDITION,
				       "profile '%s' is not a link; leaving it alone",
				       p->link_path);
	r = grove_fs_readlink_at(p->dir.fd, p->name, &text, err);
	if (r < 0)
		return r;
	if (!parse_gen_link(p, text, ret))
		return grove_error_set(err, -GROVE_E_PRECONDITION,
				       "profile '%s' points to '%s', which is not one of its "
				       "generations",
				       p->link_path, text);
	if (ret_text)
		*ret_text = steal_ptr(text);
	return 0;
}

static int
cmp_gen(const void *a, const void *b)
{
	const struct grove_generation *x = a, *y = b;

	return (x->number > y->number) - (x->number < y->number);
}

static void
read_record(struct grove_profile *p, struct grove_generation *g, const char *text)
{
	cleanup_free char *want = grove_profile_record_link_text(p, g->number);
	cleanup_free char *buf = NULL;
	cleanup_fd int fd = -1;
	struct grove_error ignore = { 0 };
	char num[32];
	size_t len = 0;

	if (!want || strcmp(want, text) != 0 || p->gens.fd < 0)
		return;
	snprintf(num, sizeof(num), "%ld", g->number);
	fd = grove_fs_open_dir_at(p->gens.fd, num, &ignore);
	if (fd < 0 ||
	    grove_fs_read_file_at(fd, GROVE_PROFILE_RECORD, RECORD_MAX, &buf, &len, &ignore) < 0)
		return;
	/* A record someone else could have written is no record: its generation
	 * counts as incomplete (install and remove then refuse to start from it). */
	{
		struct grove_stat st;

		if (grove_fs_stat_at(fd, GROVE_PROFILE_RECORD, &st, &ignore) < 0 ||
		    (st.uid != geteuid() && st.uid != 0) || (st.mode & (S_IWGRP | S_IWOTH)))
			return;
	}
	g->complete = grove_profile_record_parse(buf, g) == 0;
	if (!g->complete) {
		struct grove_generation keep = { .number = g->number, .current = g->current };

		grove_generation_release(g);
		*g = keep;
	}
}

int
grove_profile_generations(struct grove_profile *p, struct grove_generation **ret, size_t *ret_n,
			  long *ret_current, struct grove_error *err)
{
	struct grove_dirent *ents = NULL;
	struct grove_generation *gens = NULL;
	size_t n_ents = 0, n = 0;
	long cur = 0;
	int r;

	*ret = NULL;
	*ret_n = 0;
	*ret_current = 0;
	if (p->dir.fd < 0)
		return 0;
	r = grove_profile_read_current(p, &cur, NULL, err);
	if (r < 0)
		return r;
	r = grove_fs_list(p->dir.fd, &ents, &n_ents, err);
	if (r < 0)
		return grove_error_prefix(err, "profile '%s'", p->link_path);
	gens = calloc(n_ents ? n_ents : 1, sizeof(*gens));
	if (!gens) {
		grove_dirents_free(ents, n_ents);
		return oom(err);
	}
	for (size_t i = 0; i < n_ents && r >= 0; i++) {
		struct grove_generation *g = &gens[n];
		cleanup_free char *text = NULL;
		long num;

		if (ents[i].type != GROVE_FT_LINK || !parse_gen_link(p, ents[i].name, &num))
			continue;
		r = grove_fs_readlink_at(p->dir.fd, ents[i].name, &text, err);
		if (r == -ENOENT) {
			r = 0;
			continue;
		}
		if (r < 0)
			break;
		g->number = num;
		g->current = num == cur;
		read_record(p, g, text);
		n++;
	}
	grove_dirents_free(ents, n_ents);
	if (r < 0) {
		grove_generations_free(gens, n);
		return r;
	}
	qsort(gens, n, sizeof(*gens), cmp_gen);
	*ret = gens;
	*ret_n = n;
	*ret_current = cur;
	return 0;
}

/* The highest number any generation link or generation folder has. */
int
grove_profile_read_highest(struct grove_profile *p, const struct grove_generation *gens, size_t n,
			   long *ret, struct grove_error *err)
{
	struct grove_dirent *ents = NULL;
	size_t n_ents = 0;
	long hi = 0, num;
	int r;

	for (size_t i = 0; i < n; i++)
		if (gens[i].number > hi)
			hi = gens[i].number;
	*ret = hi;
	if (p->gens.fd < 0) /* a dry run of a new profile */
		return 0;
	r = grove_fs_list(p->gens.fd, &ents, &n_ents, err);
	if (r < 0)
		return grove_error_prefix(err, "profile '%s'", p->link_path);
	for (size_t i = 0; i < n_ents; i++)
		if (grove_profile_record_number(ents[i].name, strlen(ents[i].name), &num) &&
		    num > hi)
			hi = num;
	grove_dirents_free(ents, n_ents);
	*ret = hi;
	return 0;
}

const struct grove_generation *
grove_profile_read_find(const struct grove_generation *gens, size_t n, long num)
{
	for (size_t i = 0; i < n; i++)
		if (gens[i].number == num)
			return &gens[i];
	return NULL;
}

bool
grove_profile_read_has(const struct grove_generation *gens, size_t n, long num)
{
	return grove_profile_read_find(gens, n, num) != NULL;
}

static int
push_number(long **v, size_t *n, long num)
{
	long *nv;

	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == num)
			return 0;
	nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	nv[(*n)++] = num;
	*v = nv;
	return 0;
}

int
grove_profile_select(const struct grove_generation *gens, size_t n, const char *spec, double now,
		     long **numbers, size_t *n_numbers, struct grove_error *err)
{
	size_t l = strlen(spec);
	long num = 0;
	int r = 0;

	if (!strcmp(spec, "+0")) {
		return grove_error_set(
			err, -GROVE_E_USAGE,
			"delete '+0': must keep at least one generation (the current "
			"one)");
	} else if (!strcmp(spec, "old")) {
		for (size_t i = 0; i < n && r >= 0; i++)
			if (!gens[i].current)
				r = push_number(numbers, n_numbers, gens[i].number);
	} else if (spec[0] == '+' && grove_profile_record_number(spec + 1, l - 1, &num)) {
		/* As nix-env: every generation newer than the current one stays, and the
		 * current one with the num - 1 below it; the rest go. */
		size_t c = n;

		for (size_t i = 0; i < n; i++)
			if (gens[i].current)
				c = i;
		for (size_t i = 0; c < n && i + (size_t)num <= c && r >= 0; i++)
			r = push_number(numbers, n_numbers, gens[i].number);
	} else if (l > 1 && spec[l - 1] == 'd' && grove_profile_record_number(spec, l - 1, &num)) {
		/* As nix-env: the newest generation built before the cutoff stays (it was
		 * the profile N days ago, so rolling back to it stays possible); the ones
		 * older than it go. */
		double cutoff = now - (double)num * 86400.0;
		size_t k = n;

		for (size_t i = n; i-- > 0 && k == n;)
			if (gens[i].time < cutoff)
				k = i;
		for (size_t i = 0; i < k && k < n && r >= 0; i++)
			if (!gens[i].current)
				r = push_number(numbers, n_numbers, gens[i].number);
	} else if (grove_profile_record_number(spec, l, &num)) {
		/* As nix-env: a number that names no generation is ignored. */
		if (grove_profile_read_has(gens, n, num))
			r = push_number(numbers, n_numbers, num);
	} else {
		return grove_error_set(err, -GROVE_E_USAGE,
				       "delete '%s': not a generation number, 'old', '+N' or 'Nd'",
				       spec);
	}
	return r < 0 ? oom(err) : 0;
}
