/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Questions about a stow dir that the command line asks before (or instead of) a request: is
 * this word a package, which names are near a mistyped one, what do the user's rc files say. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/fs.h"
#include "grove/names.h"
#include "grove/stow.h"

#include "banned.h" /* last */

int
grove_stow_dir_entry(const char *dir, const char *name, enum grove_stow_entry *ret,
		     struct grove_error *err)
{
	struct grove_root root = { .fd = -1 };
	struct grove_stat st;
	int r;

	*ret = GROVE_STOW_ENTRY_NONE;
	r = grove_root_open(&root, dir, err);
	if (r >= 0)
		r = grove_fs_stat_beneath_follow(root.fd, name, &st, err);
	if (r >= 0 && st.type != GROVE_FT_NONE)
		*ret = st.type == GROVE_FT_DIR ? GROVE_STOW_ENTRY_FOLDER : GROVE_STOW_ENTRY_OTHER;
	grove_root_release(&root);
	return r < 0 ? r : 0;
}

int
grove_stow_dir_names(const char *dir, char ***ret, size_t *ret_n, struct grove_error *err)
{
	struct grove_root root = { .fd = -1 };
	struct grove_dirent *ents = NULL;
	size_t n_ents = 0, n = 0;
	char **v = NULL;
	int r;

	*ret = NULL;
	*ret_n = 0;
	r = grove_root_open(&root, dir, err);
	if (r >= 0)
		r = grove_fs_list(root.fd, &ents, &n_ents, err);
	if (r >= 0 && !(v = calloc(n_ents + 1, sizeof(*v))))
		r = grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; r >= 0 && i < n_ents; i++) {
		if ((ents[i].type != GROVE_FT_DIR && ents[i].type != GROVE_FT_LINK) ||
		    ents[i].name[0] == '.')
			continue;
		if (!(v[n++] = strdup(ents[i].name)))
			r = grove_error_set(err, -ENOMEM, "out of memory");
	}
	grove_dirents_free(ents, n_ents);
	grove_root_release(&root);
	if (r < 0) {
		grove_names_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int
grove_stow_read_user_file(const char *path, size_t max, char **ret_buf, size_t *ret_len,
			  struct grove_error *err)
{
	return grove_fs_read_config_file(path, max, ret_buf, ret_len, err);
}
