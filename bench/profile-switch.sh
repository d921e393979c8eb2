#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark, run by hand (never in CI): the time of `grove profile switch` and of building a
# generation on a 10,000-file profile (docs/profiles.md, "Performance").
#
# Usage: bench/profile-switch.sh [--build DIR] [--files N] [--runs N] [--dir DIR]
# Two packages of N files each (100 per folder, --no-folding so the forest holds one link per
# file); generation 1 holds the first, generation 2 both (2N links). Times the build of each,
# then RUNS switches back and forth (median, min, max, in milliseconds, wall clock of the whole
# grove process: exec, log open, lock, recovery check, the rename, fsyncs, commit).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=$repo/build
files=10000
runs=21
base=${TMPDIR:-/tmp}
while (($#)); do
	case $1 in
	--build) build=$2; shift 2 ;;
	--files) files=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--dir) base=$2; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--files N] [--runs N] [--dir DIR]" >&2; exit 2 ;;
	esac
done
grove=$build/grove
[[ -x $grove ]] || { echo "no grove in '$build' (meson setup build && ninja -C build)" >&2; exit 2; }

work=$(mktemp -d "$base/grove-profile-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GROVE_STATE_DIR=$work/state
S=$work/stow P=$work/prof/bench

mkpkg()
{
	local pkg=$1 d f
	for ((d = 0; d < files / 100; d++)); do
		mkdir -p "$S/$pkg/share/$pkg/d$d"
		for ((f = 0; f < 100; f++)); do : >"$S/$pkg/share/$pkg/d$d/f$f"; done
	done
}
mkpkg one
mkpkg two

ms()
{
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

b1=$(ms "$grove" profile -p "$P" build -d "$S" --no-folding one)
b2=$(ms "$grove" profile -p "$P" build -d "$S" --no-folding one two)
links=$(find "$work/prof/bench.generations/2" -type l | wc -l)
times=()
for ((i = 0; i < runs; i++)); do
	times+=("$(ms "$grove" profile -p "$P" switch $((i % 2 + 1)))")
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(sed -n "$(((runs + 1) / 2))p" <<<"$sorted")
echo "build generation 1 ($files links): ${b1} ms"
echo "build generation 2 ($links links): ${b2} ms"
echo "switch between them, $runs runs: median ${median} ms, min $(head -n1 <<<"$sorted") ms, max $(tail -n1 <<<"$sorted") ms"
