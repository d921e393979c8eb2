#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark, run by hand: an old and a new grove, interleaved run by run, each with its own state
# dir (bench/run.sh shares one, and an older grove refuses a newer journal schema). For "no
# slowdown" checks of a refactor: prints the median wall and CPU time per shape and op, and new/old.
# Usage: bench/ab.sh OLD_GROVE NEW_GROVE [RUNS] [SHAPES] [DIR]
set -euo pipefail
OLD=$1 NEW=$2 RUNS=${3:-11} SHAPES=${4:-dotfiles,multi200} W=${5:-${TMPDIR:-/tmp}/grove-ab}
here=$(cd "$(dirname "$0")" && pwd)
# bench/timeit (built with grove: BUILD/bench/timeit) gives wall and CPU time (user + sys) per op;
# CPU time moves much less than wall time when the machine is busy.
TIMEIT=${TIMEIT:-$here/../build/bench/timeit}
[ -x "$TIMEIT" ] || { echo "ab.sh: no $TIMEIT (build grove first, or set TIMEIT)" >&2; exit 1; }
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
				# shellcheck disable=SC2086
				"$TIMEIT" "$W/results" "$shape:$op:$tool" 600 \
					"$bin" $op -d "$W/$shape/stow" -t "$W/$shape/t-$tool" $FLAGS $PKGS
			done
		done
	done
done
python3 - "$W/results" "$SHAPES" <<'PY'
import collections, statistics as st, sys
wall, cpu = collections.defaultdict(list), collections.defaultdict(list)
for line in open(sys.argv[1]):
    label, w, c = line.split()[:3]
    s, o, t = label.split(":")
    wall[(s, o, t)].append(float(w) * 1000)
    cpu[(s, o, t)].append(float(c) * 1000)
for s in sys.argv[2].split(","):
    for o in ("stow", "restow", "unstow"):
        wa, wb = st.median(wall[(s, o, "old")]), st.median(wall[(s, o, "new")])
        ca, cb = st.median(cpu[(s, o, "old")]), st.median(cpu[(s, o, "new")])
        print(f"{s:10} {o:7} wall old {wa:8.2f} ms new {wb:8.2f} ms new/old {wb / wa:5.3f}   "
              f"cpu old {ca:7.2f} ms new {cb:7.2f} ms new/old {cb / ca:5.3f}  (n={len(wall[(s, o, 'new')])})")
PY
