#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# clang-tidy with the repository's .clang-tidy over every C file of src/, against the compile
# commands of a configured build dir (default: build-ci, then build). Fails on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-}
if [ -z "$build" ]; then
    for b in build-ci build; do
        [ -f "$b/compile_commands.json" ] && build=$b && break
    done
fi
[ -f "$build/compile_commands.json" ] || { echo "check-tidy: no compile_commands.json (configure a build dir first)"; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# -Wno-unknown-warning-option: the build's gcc-only flags (-Wno-format-truncation) mean nothing to clang.
git ls-files 'src/*.c' 'src/**/*.c' |
    xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option \
    >"$log" 2>/dev/null || true
if grep -qE '(warning|error): ' "$log"; then
    grep -E '(warning|error): ' "$log" | sort -u
    echo "clang-tidy: $(grep -E '(warning|error): ' "$log" | sort -u | wc -l) findings"
    exit 1
fi
echo "clang-tidy: ok"
