#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Fails on path-string filesystem calls in src/ (DESIGN.md invariant 1); the fs layer's root
# opening marks its few lines with "grove: root-open".
set -euo pipefail
cd "$(dirname "$0")/.."
re='(^|[^_a-z0-9.>])(open|open64|stat|lstat|stat64|lstat64|symlink|link|unlink|rename|mkdir|rmdir|realpath|opendir|chdir|readlink|access|chmod|chown|lchown|truncate|creat|fopen|remove)[[:space:]]*\('
hits=$(grep -nE "$re" $(git ls-files 'src/*.c' 'src/**/*.c') |
       grep -vE '^\S+:[0-9]+:\s*(//|/\*|\*)' | grep -v 'grove: root-open' || true)
# symlinkat/linkat/renameat/unlinkat/mkdirat are fine in the fs layer only.
outside=$(grep -nE '(^|[^_a-z0-9.>])(openat|openat2|symlinkat|unlinkat|renameat|renameat2|mkdirat|fstatat|readlinkat|SYS_openat2|SYS_renameat2|SYS_getdents64)[[:space:]]*\(' \
          $(git ls-files 'src/*.c' 'src/**/*.c' | grep -vE '^src/fs/') || true)
status=0
if [ -n "$hits" ]; then
    echo "path-string filesystem calls in src/ outside the root opening:"
    echo "$hits"
    status=1
fi
if [ -n "$outside" ]; then
    echo "filesystem syscalls outside the fs layer (src/fs/):"
    echo "$outside"
    status=1
fi
[ "$status" -eq 0 ] && echo "syscall check: ok"
exit "$status"
