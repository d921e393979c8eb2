#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark, run by hand (never in CI): peak RSS and time of a streamed stow whose unfold block
# holds a whole big package, of its undo, and of the recovery of the same stow killed part-way
# (bench/HISTORY.md, "Issue 18: tenth pass").
#
#   bench/unfold-rss.sh GROVE [SHAPE] [KILL_SECONDS]
#
# SHAPE (default nofold100k) is made once with bench/gen.py under /dev/shm/grove-unfold; package
# "other" holds share/zz/f and is stowed first (so share is its folded link), then the shape's
# package is stowed with --no-folding: share unfolds and every op under it lies in its block.
# KILL_SECONDS (default 0.2) is when the second stow is killed for the recovery's run.
set -euo pipefail
grove=$(realpath "$1")
shape=${2:-nofold100k}
kill_after=${3:-0.2}
here=$(cd "$(dirname "$0")" && pwd)
base=/dev/shm/grove-unfold
[[ -d $base/$shape/stow ]] || python3 "$here/gen.py" "$shape" "$base/$shape" >/dev/null
pkg=$(. "$base/$shape/shape.env" && echo "$PKGS")

# The shape's own stow dir, with "other" added (a copy, even hard-linked, would cost tmpfs an
# inode per file: a 1M-file package, its copy and the target's links do not fit).
stow=$base/$shape/stow
trap 'rm -rf "$stow/other" "$base/run"' EXIT
setup()
{
	rm -rf "$base/run" "$stow/other"
	mkdir -p "$stow/other/share/zz" "$base/run/t"
	touch "$stow/other/share/zz/f"
	export GROVE_STATE_DIR=$base/run/state
	"$grove" -d "$stow" -t "$base/run/t" -S other
}

measure()
{
	local what=$1
	shift
	/usr/bin/time -f "$what: %e s, %M KiB" "$@" >/dev/null
}

setup
measure "stow --no-folding $pkg (share unfolds)" \
	"$grove" -d "$stow" -t "$base/run/t" --no-folding -S "$pkg"
measure "its undo" "$grove" undo -t "$base/run/t"
setup
timeout -s KILL "$kill_after" "$grove" -d "$stow" -t "$base/run/t" --no-folding -S "$pkg" ||
	true
echo "killed after $kill_after s: $(find "$base/run/t" | wc -l) entries left"
measure "recover" "$grove" recover -t "$base/run/t"
echo "after recovery: $(find "$base/run/t" | wc -l) entries"
