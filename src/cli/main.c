/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdio.h>
int main(void) { puts("grove: being written"); return 0; }
