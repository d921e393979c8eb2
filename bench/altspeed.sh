#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark, run by hand (issue 38 item 7): one `--set` at GROUPS groups, update-alternatives
# against grove alt. Each tool gets its own twin admindir, altdir and link folder, both made by the
# real update-alternatives (grove's twin taken in by its first command); then ROUNDS rounds, each
# one `update-alternatives --set` and one `grove alt --set` of the same group to the same choice,
# run alternately so the machine's load falls on both alike. Prints the median and range of each
# tool's wall and CPU (user + sys) per command and of the per-round ratios grove/u-a, then the
# `strace -c -f` counts (syscalls, opens, syncs) of one more --set of each.
# With OLD_GROVE set, an older grove runs too, on a third twin, in the same rounds (old/u-a
# beside grove/u-a: a before and after under the same load).
# Usage: [OLD_GROVE=OLD] bench/altspeed.sh [GROVE] [ROUNDS] [GROUPS] [DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
GROVE=${1:-$here/../build/grove} ROUNDS=${2:-30} GROUPS_N=${3:-300}
W=${4:-${TMPDIR:-/tmp}/grove-altspeed}
TIMEIT=${TIMEIT:-$here/../build/bench/timeit}
UA=${UA:-update-alternatives}
[ -x "$TIMEIT" ] || { echo "altspeed.sh: no $TIMEIT (build grove first, or set TIMEIT)" >&2; exit 1; }
rm -rf "$W"
mkdir -p "$W/files"
for i in $(seq "$GROUPS_N"); do
	for c in a b; do
		printf '#!/bin/sh\n' >"$W/files/cmd$i-$c"
		chmod 755 "$W/files/cmd$i-$c"
	done
done
TWINS="ua grove"
[ -n "${OLD_GROVE:-}" ] && TWINS="ua grove old"
for tool in $TWINS; do
	d=$W/$tool
	mkdir -p "$d/adm" "$d/alt" "$d/bin" "$d/state"
	for i in $(seq "$GROUPS_N"); do
		for c in a b; do
			prio=10
			[ $c = b ] && prio=20
			"$UA" --quiet --altdir "$d/alt" --admindir "$d/adm" --log "$d/log" \
				--install "$d/bin/cmd$i" "cmd$i" "$W/files/cmd$i-$c" $prio
		done
	done
done
ua() { "$UA" --altdir "$W/ua/alt" --admindir "$W/ua/adm" --log "$W/ua/log" "$@"; }
gr() {
	"$GROVE" --state "$W/grove/state" alt --altdir "$W/grove/alt" --admindir "$W/grove/adm" \
		--log "$W/grove/log" "$@"
}
# grove's first command takes in the groups update-alternatives wrote (not measured).
gr --set cmd1 "$W/files/cmd1-b" >/dev/null
if [ -n "${OLD_GROVE:-}" ]; then
	"$OLD_GROVE" --state "$W/old/state" alt --altdir "$W/old/alt" --admindir "$W/old/adm" \
		--log "$W/old/log" --set cmd1 "$W/files/cmd1-b" >/dev/null
fi
set_args() { # round -> the group and the choice it is set to (each --set changes something)
	local i=$(($1 % GROUPS_N + 1)) c=a
	[ $((($1 / GROUPS_N) % 2)) = 1 ] && c=b
	echo "cmd$i $W/files/cmd$i-$c"
}
for r in $(seq 0 $((ROUNDS - 1))); do
	# shellcheck disable=SC2046
	"$TIMEIT" "$W/results" "ua:$r" 60 "$UA" --altdir "$W/ua/alt" --admindir "$W/ua/adm" \
		--log "$W/ua/log" --set $(set_args "$r") >/dev/null
	# shellcheck disable=SC2046
	"$TIMEIT" "$W/results" "grove:$r" 60 "$GROVE" --state "$W/grove/state" alt \
		--altdir "$W/grove/alt" --admindir "$W/grove/adm" --log "$W/grove/log" \
		--set $(set_args "$r") >/dev/null
	if [ -n "${OLD_GROVE:-}" ]; then
		# shellcheck disable=SC2046
		"$TIMEIT" "$W/results" "old:$r" 60 "$OLD_GROVE" --state "$W/old/state" alt \
			--altdir "$W/old/alt" --admindir "$W/old/adm" --log "$W/old/log" \
			--set $(set_args "$r") >/dev/null
	fi
done
# Both twins must end alike (the same groups, the same choices).
diff <(ua --get-selections) <(gr --get-selections) >/dev/null ||
	{ echo "altspeed.sh: the twins differ after the rounds" >&2; exit 1; }
python3 - "$W/results" <<'PY'
import collections, statistics as st, sys
m = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    label, w, c = line.split()[:3]
    if line.split()[6] != "0":
        sys.exit(f"altspeed.sh: {label} failed")
    tool, r = label.split(":")
    m[int(r)][tool] = (float(w) * 1000, float(c) * 1000)
rounds = sorted(r for r in m if "ua" in m[r] and "grove" in m[r])
old = all("old" in m[r] for r in rounds) and any("old" in m[r] for r in rounds)
def show(name, v, unit):
    q = sorted(v)
    print(f"{name:22} median {st.median(v):7.3f}{unit}  range {q[0]:7.3f} .. {q[-1]:7.3f}")
for k, what in ((0, "wall"), (1, "cpu")):
    show(f"u-a {what} (ms)", [m[r]["ua"][k] for r in rounds], "")
    show(f"grove {what} (ms)", [m[r]["grove"][k] for r in rounds], "")
    show(f"grove/u-a {what}", [m[r]["grove"][k] / m[r]["ua"][k] for r in rounds], "x")
    if old:
        show(f"old {what} (ms)", [m[r]["old"][k] for r in rounds], "")
        show(f"old/u-a {what}", [m[r]["old"][k] / m[r]["ua"][k] for r in rounds], "x")
print(f"(rounds: {len(rounds)})")
PY
if command -v strace >/dev/null; then
	for tool in ua grove; do
		f=$W/strace-$tool
		if [ $tool = ua ]; then
			# shellcheck disable=SC2046
			strace -c -f -o "$f" "$UA" --altdir "$W/ua/alt" --admindir "$W/ua/adm" \
				--log "$W/ua/log" --set $(set_args "$ROUNDS") >/dev/null
		else
			# shellcheck disable=SC2046
			strace -c -f -o "$f" "$GROVE" --state "$W/grove/state" alt \
				--altdir "$W/grove/alt" --admindir "$W/grove/adm" --log "$W/grove/log" \
				--set $(set_args "$ROUNDS") >/dev/null
		fi
		awk -v t=$tool '$NF == "total" { tot = $4 }
			$NF ~ /^(open|openat|openat2)$/ { op += $4 }
			$NF ~ /^(fsync|fdatasync|syncfs|sync_file_range)$/ { sy += $4 }
			END { printf "%-6s strace: %d syscalls, %d opens, %d syncs\n", t, tot, op, sy }' "$f"
	done
fi
