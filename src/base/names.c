/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Arrays of owned strings (package names, paths) as the library hands them out. */
#include <stdlib.h>

#include "grove/names.h"

#include "banned.h" /* last */

void
grove_names_free(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
