#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark, run by hand: an old and a new grove, interleaved run by run, each with its own state
# dir (bench/run.sh shares one, and an older grove refuses a newer journal schema). For "no
# slowdown" checks of a refactor: prints the median wall time per shape and op, and new/old.
# Usage: bench/ab.sh OLD_GROVE NEW_GROVE [RUNS] [SHAPES] [DIR]
set -euo pipefail
OLD=$1 NEW=$2 RUNS=${3:-11} SHAPES=${4:-dotfiles,multi200} W=${5:-${TMPDIR:-/tmp}/grove-ab}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$W"
mkdir -p "$W"
for shape in ${SHAPES//,/ }; do
	python3 "$here/gen.py" "$shape" "$W/$shape" >/dev/null
	# shellcheck disable=SC1090,SC1091
	. "$W/$shape/shape.env"
	for tool in old new; do mkdir -p "$W/$shape/t-$tool" "$W/$shape/st-$tool"; done
	for _ in $(seq "$RUNS"); do
		for tool in old new; do
			bin=$OLD
			[ $tool = new ] && bin=$NEW
			export GROVE_STATE_DIR=$W/$shape/st-$tool
			for op in stow restow unstow; do
				s=$(date +%s%N)
				# shellcheck disable=SC2086
				"$bin" $op -d "$W/$shape/stow" -t "$W/$shape/t-$tool" $FLAGS $PKGS
				e=$(date +%s%N)
				echo "$shape $op $tool $(((e - s) / 1000))" >>"$W/results"
			done
		done
	done
done
python3 - "$W/results" "$SHAPES" <<'PY'
import collections, statistics as st, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    s, o, t, us = line.split()
    d[(s, o, t)].append(int(us) / 1000)
for s in sys.argv[2].split(","):
    for o in ("stow", "restow", "unstow"):
        a, b = st.median(d[(s, o, "old")]), st.median(d[(s, o, "new")])
        print(f"{s:10} {o:7} old {a:9.2f} ms  new {b:9.2f} ms  new/old {b / a:5.3f}  (n={len(d[(s, o, 'new')])})")
PY
