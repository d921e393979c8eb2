#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark, run by hand (never in CI): issue 18 goal 4 and issue 41, the 1M-file scale. Times
# grove's stow and unstow of one big package against `cp -rs` of the same package, at 10k, 100k and
# 1M files, folded and unfolded; the folded ones against GNU Stow 2.4.1 too; grove verify and
# status of the unfolded farm against `find -type l -printf`; and grove import of that farm (as
# GNU Stow lays it out) against grove's own stow of it. Prints medians, ratios, peak RSS and the
# cost per file at each size.
set -euo pipefail

usage() {
	cat <<'USAGE'
Usage: bench/scale.sh [OPTIONS]

  --build DIR     grove's build dir, with grove and bench/timeit (default: ./build-rel, else ./build)
  --grove BIN     the grove to time (default: BUILD/grove)
  --old BIN       a second grove, timed interleaved with the first as the tool "grove-old"
                  (before/after numbers from the same minutes)
  --sizes LIST    comma-separated from 10k,100k,1m, or any N/Nk/Nm (default: 10k,100k,1m; add 10
                  for the folded stow's floor: a 1M-file package that folds against a 10-file one)
  --shapes LIST   unfolded (--no-folding, the nofoldN shapes: as many links as cp -rs makes),
                  folded (the pkgN shapes: a stow into an empty target makes 3 links), or both
                  (default: unfolded,folded); and, each on its own (no --sizes):
                  rollback-KxN   K packages of N files each (bench/gen.py rollKxN) stowed
                                 with --no-folding one per transaction, then the timed
                                 `grove rollback --to 0` of all K (issue 41 item 3:
                                 rollback-10x100k)
                  recover-killed-N  a --no-folding stow of one N-file package (nofoldN) killed
                                 (SIGKILL) once half its links are made, then the timed
                                 `grove recover` (issue 41 item 3: recover-killed-1m)
  --runs N        timed runs (default 5; the medians need >= 5)
  --dir DIR       where the trees are made (default: /dev/shm/grove-scale, tmpfs). A tree made
                  by an earlier run with --keep is reused
  --no-rm         leave out the `rm -r` reference (the unstow side of cp -rs)
  --no-stow       leave out GNU Stow 2.4.1 (the tool "stow241", folded shape only)
  --no-verify     leave out grove verify and status of the unfolded farm (and their reference,
                  the tool "find": find T -type l -printf '%p %l\n')
  --no-import     leave out grove import of the unfolded farm (issue 41 item 4: against the same
                  run's grove stow of it)
  --stow-deb FILE Debian's stow 2.4.1 package (default: $GROVE_ORACLE_DIR, else
                  ../shared/oracles, /stow_2.4.1-2_all.deb), unpacked into DIR/stow241
  --timeout S     kill a single op after S seconds (default 1800)
  --keep          keep the generated packages for the next run
  --out DIR       results (default: DIR/results.<date>)

Per run, size and shape, the tools take turns (the order rotates run by run):
  cp:    cp -rs PKG/. T (into an empty T), then rm -r T (the blind removal of that copy)
  stow241: (folded only) stow -S PKG into an empty T, then stow -D PKG
  grove: grove stow [--no-folding] PKG into an empty T, then grove unstow of it,
         each with a fresh state dir (its file and schema made untimed by a stow of a
         one-file package into another target) so that the log holds this run's only.
         Unfolded, between the two: grove verify, grove status and the tool "find" over
         the farm, their order rotating run by run; then grove import of the farm into a
         fresh log of its own (made untimed as above; the unstow reads the stow's), as of a
         farm GNU Stow made: the unfolded stow lays out what `stow --no-folding` does. In
         the first run at sizes up to 100k (with GNU Stow), stow241 --no-folding makes a
         twin, untimed, checked to be the same tree
         with the same import (log, status).
Only one target exists at a time: a 1M-file package and one copy of it take ~2.1M inodes.
USAGE
}

repo=$(cd "$(dirname "$0")/.." && pwd)
build=
grove=
old=
sizes=10k,100k,1m
shapes=unfolded,folded
runs=5
base=/dev/shm/grove-scale
rm_ref=1
stow_ref=1
verify_ref=1
import_ref=1
stow_deb=
timeout=1800
keep=0
out=

while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--grove) grove=$2; shift ;;
	--old) old=$2; shift ;;
	--sizes) sizes=$2; shift ;;
	--shapes) shapes=$2; shift ;;
	--runs) runs=$2; shift ;;
	--dir) base=$2; shift ;;
	--no-rm) rm_ref=0 ;;
	--no-stow) stow_ref=0 ;;
	--no-verify) verify_ref=0 ;;
	--no-import) import_ref=0 ;;
	--stow-deb) stow_deb=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--keep) keep=1 ;;
	--out) out=$2; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "scale.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

if [ -z "$build" ]; then
	build=$repo/build-rel
	[ -x "$build/grove" ] || build=$repo/build
fi
build=$(cd "$build" && pwd)
[ -n "$grove" ] || grove=$build/grove
TIMEIT=$build/bench/timeit
for b in "$grove" "$TIMEIT" ${old:+"$old"}; do
	[ -x "$b" ] || { echo "scale.sh: '$b' missing (meson setup build-rel --buildtype=release && ninja -C build-rel)" >&2; exit 2; }
done
grove=$(realpath "$grove")
[ -z "$old" ] || old=$(realpath "$old")
mkdir -p "$base"
base=$(cd "$base" && pwd)
[ -n "$out" ] || out=$base/results.$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
out=$(cd "$out" && pwd)
RESULTS=$out/results.txt # size shape op tool run wall cpu user sys rss status
: >"$RESULTS"

export HOME=$base/home
mkdir -p "$HOME"
unset XDG_CONFIG_HOME STOW_DIR
export LC_ALL=C
{
	echo "# $(date -u +%FT%TZ) $(uname -srm); $(nproc) cores; trees in $base ($(df -T "$base" | awk 'NR==2{print $2}'))"
	echo "# grove $grove ($(git -C "$repo" describe --always --dirty 2>/dev/null || echo '?'))${old:+; old $old}; runs $runs"
	echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/machine.txt" >&2

mkdir -p "$base/init-stow/one"
: >"$base/init-stow/one/file"
tools=(cp grove)
[ -z "$old" ] || tools+=(grove-old)
if [ $stow_ref = 1 ]; then
	[ -n "$stow_deb" ] || stow_deb=${GROVE_ORACLE_DIR:-$repo/../shared/oracles}/stow_2.4.1-2_all.deb
	if [ ! -x "$base/stow241/usr/bin/stow" ]; then
		mkdir -p "$base/stow241" && dpkg-deb -x "$stow_deb" "$base/stow241"
	fi
	STOW241=$base/stow241/usr/bin/stow
	tools+=(stow241)
fi

# files N: the number of files of size N (10 -> 10, 10k -> 10000, 1m -> 1000000).
files() {
	case $1 in
	*k) echo $((${1%k} * 1000)) ;;
	*m) echo $((${1%m} * 1000000)) ;;
	*[!0-9]* | '') ;;
	*) echo "$1" ;;
	esac
}

# timed LABEL CMD...: one timed op; a failure stops the benchmark (the numbers would lie).
timed() {
	local label=$1
	shift
	if ! "$TIMEIT" "$RESULTS" "$label" "$timeout" "$@" >>"$out/ops.log" 2>&1; then
		echo "scale.sh: '$label' failed: $* (see $out/ops.log)" >&2
		exit 1
	fi
}

# fresh_target: removes the target (untimed) and makes it empty.
fresh_target() {
	rm -rf "$T"
	mkdir "$T"
}

# fresh_log BIN: an empty state dir in GROVE_STATE_DIR, its file and schema made untimed by a stow
# of a one-file package into another target.
fresh_log() {
	rm -rf "$GROVE_STATE_DIR" "$base/init-target"
	mkdir "$base/init-target"
	"$1" stow -d "$base/init-stow" -t "$base/init-target" one >/dev/null
}

# import_twin BIN: (first run, sizes up to 100k, with GNU Stow) the unfolded farm in T made again
# by stow241 --no-folding in a twin target: the same tree, and the same import of it (the log's
# ops and status, the target's name taken out). Untimed.
import_twin() {
	local T2=$base/twin sd=$base/state-twin t
	rm -rf "$T2" "$sd"
	mkdir "$T2"
	PERL5LIB=$base/stow241/usr/share/perl5 perl "$STOW241" -d "$S" -t "$T2" --no-folding big
	if ! cmp -s <(cd "$T" && find . -printf '%y %p %l\n' | sort) <(cd "$T2" && find . -printf '%y %p %l\n' | sort); then
		echo "scale.sh: stow241 --no-folding and grove's unfolded stow made different trees" >&2
		exit 1
	fi
	for t in "$T" "$T2"; do
		rm -rf "$sd"
		"$1" --state "$sd" import -d "$S" -t "$t" >/dev/null
		{ "$1" --state "$sd" log -t "$t" -v | sed 1d; "$1" --state "$sd" status -t "$t" -d "$S" | sed 1d; } >"$sd.$(basename "$t")"
	done
	if ! cmp -s "$sd.$(basename "$T")" "$sd.twin"; then
		echo "scale.sh: the imports of stow241's farm and grove's differ: $sd.*" >&2
		exit 1
	fi
	echo "$size import of stow241's farm: the same as of grove's ($(wc -l <"$sd.twin") lines of log and status)" | tee -a "$out/checks.txt" >&2
	rm -rf "$T2" "$sd" "$sd".*
}

# check TOOL: after the first run's stow, counts the target's links and folders (same
# number of links for cp -rs and an unfolded stow).
check() {
	local links dirs
	links=$(find "$T" -type l | wc -l)
	dirs=$(find "$T" -mindepth 1 -type d | wc -l)
	echo "$size $shape $1 links $links folders $dirs" | tee -a "$out/checks.txt" >&2
}

IFS=, read -r -a size_list <<<"$sizes"
IFS=, read -r -a all_shapes <<<"$shapes"
shape_list=()
extra_shapes=()
for shape in "${all_shapes[@]}"; do
	case $shape in
	unfolded | folded) shape_list+=("$shape") ;;
	rollback-[1-9]*x[1-9]* | recover-killed-[1-9]*) extra_shapes+=("$shape") ;;
	*) echo "scale.sh: bad shape '$shape'" >&2; exit 2 ;;
	esac
done
((${#shape_list[@]})) || size_list=()

# fresh_state BIN: a fresh state dir for BIN's tool.
fresh_state() {
	export GROVE_STATE_DIR=$base/state-$1
	rm -rf "$GROVE_STATE_DIR"
}

# no_links TOOL WHAT: the target holds no link after WHAT.
no_links() {
	if [ -n "$(find "$T" -type l -print -quit)" ]; then
		echo "scale.sh: $1 $2 left links in the target" >&2
		exit 1
	fi
}

# rollback_shape KxN: K packages of N files stowed one per transaction, rolled back to 0.
rollback_shape() {
	local spec=${1,,} W r i tool bin p
	W=$base/roll$spec
	if [ ! -e "$W/shape.env" ]; then
		echo "== roll$spec: generating in $W" >&2
		rm -rf "$W"
		python3 "$repo/bench/gen.py" "roll$spec" "$W" >/dev/null
	fi
	T=$base/target
	local k=$((${#tools[@]}))
	for ((r = 1; r <= runs; r++)); do
		for ((i = 0; i < k; i++)); do
			tool=${tools[$(((i + r - 1) % k))]}
			case $tool in grove) bin=$grove ;; grove-old) bin=$old ;; *) continue ;; esac
			echo "   rollback-$spec run $r: $tool ($(cut -d' ' -f1 /proc/loadavg))" >&2
			fresh_target
			fresh_state "$tool"
			for p in "$W"/stow/*; do
				"$bin" stow --no-folding -d "$W/stow" -t "$T" "${p##*/}" >/dev/null
			done
			timed "$spec rollback rollback $tool $r" "$bin" rollback -t "$T" --to 0
			no_links "$tool" rollback
		done
	done
	rm -rf "$T" "$GROVE_STATE_DIR"
	[ $keep = 1 ] || rm -rf "$W"
}

# recover_shape SIZE: a --no-folding stow of nofoldSIZE killed once half its links are made (the
# folder of its middle file exists: the links are made in order), then recovered.
recover_shape() {
	local size=${1,,} n W r i tool bin pid rc mid
	n=$(files "$size")
	if [ -z "$n" ] || ((n <= 1000)); then
		echo "scale.sh: bad size '$size' (more than 1000)" >&2
		exit 2
	fi
	W=$base/nofold$size
	if [ ! -e "$W/shape.env" ]; then
		echo "== nofold$size: generating $n files in $W" >&2
		rm -rf "$W"
		python3 "$repo/bench/gen.py" "nofold$size" "$W" >/dev/null
	fi
	mid=$(printf 'share/big/d%04d' $(((n - 20) / 2 / 100)))
	T=$base/target
	local k=$((${#tools[@]}))
	for ((r = 1; r <= runs; r++)); do
		for ((i = 0; i < k; i++)); do
			tool=${tools[$(((i + r - 1) % k))]}
			case $tool in grove) bin=$grove ;; grove-old) bin=$old ;; *) continue ;; esac
			echo "   recover-killed-$size run $r: $tool ($(cut -d' ' -f1 /proc/loadavg))" >&2
			fresh_target
			fresh_state "$tool"
			"$bin" stow --no-folding -d "$W/stow" -t "$T" big >/dev/null 2>&1 &
			pid=$!
			# (Polling, not synchronisation: a benchmark, and a late kill only makes more.)
			while [ ! -e "$T/$mid" ] && kill -0 "$pid" 2>/dev/null; do sleep 0.02; done
			kill -KILL "$pid" 2>/dev/null || true
			rc=0
			wait "$pid" || rc=$?
			if ((rc != 137)); then
				echo "scale.sh: the stow of nofold$size ended (exit $rc) before it was killed" >&2
				exit 1
			fi
			echo "$size killed $tool $r: $(find "$T" -type l | wc -l) links when killed" >>"$out/checks.txt"
			timed "$size killed recover $tool $r" "$bin" recover -t "$T"
			no_links "$tool" recover
		done
	done
	rm -rf "$T" "$GROVE_STATE_DIR"
	[ $keep = 1 ] || rm -rf "$W"
}

for size in "${size_list[@]}"; do
	n=$(files "$size")
	[ -n "$n" ] || { echo "scale.sh: bad size '$size'" >&2; exit 2; }
	W=$base/pkg$size
	if [ ! -e "$W/shape.env" ]; then
		echo "== pkg$size: generating $n files in $W" >&2
		rm -rf "$W"
		python3 "$repo/bench/gen.py" "pkg$size" "$W" >/dev/null
	fi
	S=$W/stow
	T=$base/target
	for ((r = 1; r <= runs; r++)); do
		for shape in "${shape_list[@]}"; do
			case $shape in
			unfolded) flags=(--no-folding) ;;
			folded) flags=() ;;
			esac
			k=${#tools[@]}
			for ((i = 0; i < k; i++)); do
				tool=${tools[$(((i + r - 1) % k))]}
				echo "   $size $shape run $r: $tool ($(cut -d' ' -f1 /proc/loadavg))" >&2
				fresh_target
				case $tool in
				stow241)
					# Stow is timed where issue 41 compares it: the package that folds.
					[ "$shape" = folded ] || continue
					export PERL5LIB=$base/stow241/usr/share/perl5
					timed "$size $shape stow stow241 $r" perl "$STOW241" -d "$S" -t "$T" -S big
					[ "$r" != 1 ] || check stow241
					timed "$size $shape unstow stow241 $r" perl "$STOW241" -d "$S" -t "$T" -D big
					unset PERL5LIB
					if [ -n "$(find "$T" -type l -print -quit)" ]; then
						echo "scale.sh: stow241 unstow left links in the target" >&2
						exit 1
					fi
					;;
				cp)
					# cp -rs makes no folders folded: it has one shape; time it once
					# per run, under the unfolded shape.
					[ "$shape" = unfolded ] || continue
					timed "$size $shape stow cp $r" cp -rs "$S/big/." "$T/"
					[ "$r" != 1 ] || check cp
					if [ $rm_ref = 1 ]; then
						timed "$size $shape unstow rm $r" rm -r "$T"
						mkdir "$T"
					fi
					;;
				grove|grove-old)
					bin=$grove
					[ "$tool" = grove ] || bin=$old
					export GROVE_STATE_DIR=$base/state-$tool
					# The log's file and schema, made untimed.
					fresh_log "$bin"
					timed "$size $shape stow $tool $r" "$bin" stow -d "$S" -t "$T" "${flags[@]}" big
					[ "$r" != 1 ] || check "$tool"
					if [ $verify_ref = 1 ] && [ "$shape" = unfolded ]; then
						# Reading the farm: grove's verify and status, and find
						# (the floor of reading every link), in rotating order.
						rd=(verify status find)
						for ((x = 0; x < 3; x++)); do
							case ${rd[$(((x + r) % 3))]} in
							verify)
								timed "$size $shape verify $tool $r" "$bin" verify -t "$T" ;;
							status)
								timed "$size $shape status $tool $r" "$bin" status -t "$T" ;;
							find)
								[ "$tool" = grove ] || continue
								timed "$size $shape verify find $r" sh -c \
									'exec find "$1" -type l -printf "%p %l\n" >/dev/null' _ "$T" ;;
							esac
						done
					fi
					if [ $import_ref = 1 ] && [ "$shape" = unfolded ]; then
						# The farm as GNU Stow lays it out, taken over by a fresh log
						# (issue 41 item 4: against the stow above).
						if [ "$r" = 1 ] && [ $stow_ref = 1 ] && [ "$n" -le 100000 ] && [ "$tool" = grove ]; then
							import_twin "$bin"
						fi
						# Its own log: the unstow below reads the stow's (its
						# --no-folding recorded: an import cannot tell it).
						GROVE_STATE_DIR=$base/import-$tool
						fresh_log "$bin"
						timed "$size $shape import $tool $r" "$bin" import -d "$S" -t "$T"
						rm -rf "$GROVE_STATE_DIR"
						GROVE_STATE_DIR=$base/state-$tool
					fi
					timed "$size $shape unstow $tool $r" "$bin" unstow -d "$S" -t "$T" "${flags[@]}" big
					# (Stow's unstow with --no-folding leaves the emptied folders.)
					if [ -n "$(find "$T" -type l -print -quit)" ]; then
						echo "scale.sh: $tool unstow left links in the target" >&2
						exit 1
					fi
					rm -rf "$GROVE_STATE_DIR"
					;;
				esac
			done
		done
	done
	rm -rf "$T"
	[ $keep = 1 ] || rm -rf "$W"
done
for shape in "${extra_shapes[@]}"; do
	case $shape in
	rollback-*) rollback_shape "${shape#rollback-}" ;;
	recover-killed-*) recover_shape "${shape#recover-killed-}" ;;
	esac
done
rm -rf "$HOME" "$base/init-stow" "$base/init-target"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/machine.txt" >&2

python3 - "$RESULTS" "$(IFS=,; echo "${size_list[*]}")" <<'PY' | tee "$out/report.md"
import collections, statistics as st, sys

res = collections.defaultdict(lambda: ([], []))
rss = collections.defaultdict(int)
for line in open(sys.argv[1]):
    f = line.split()
    size, shape, op, tool, run, wall, cpu = f[:7]
    w, c = res[(size, shape, op, tool)]
    w.append(float(wall))
    c.append(float(cpu))
    if len(f) > 9:
        rss[(size, shape, op, tool)] = max(rss[(size, shape, op, tool)], int(f[9]))


def files(size):
    if size[-1] in "km":
        return int(size[:-1]) * (1000 if size[-1] == "k" else 1000000)
    return int(size)


def med(key):
    w, c = res[key]
    return (st.median(w), st.median(c), len(w)) if w else None


sizes = [s for s in sys.argv[2].split(",") if s]

# Issue 41 item 3: a rollback over several transactions and the recovery of a killed stow.
extra = sorted({k for k in res if k[1] in ("rollback", "killed")})
if extra:
    print()
    print("Rollback over several transactions and recovery of a killed stow (issue 41 item 3: "
          "peak <= 16 MiB).")
    print()
    print("| shape | op | tool | n | wall ms | CPU ms | peak KiB |")
    print("| --- | --- | --- | --: | --: | --: | --: |")
    for key in extra:
        m = med(key)
        name = (f"rollback-{key[0]}" if key[1] == "rollback" else f"recover-killed-{key[0]}")
        print(f"| {name} | {key[2]} | {key[3]} | {m[2]} | {m[0] * 1e3:.1f} | {m[1] * 1e3:.1f} | "
              f"{rss[key]} |")
if not sizes:
    sys.exit(0)
order = ("cp", "rm", "grove", "grove-old", "stow241", "find")
tools = sorted({k[3] for k in res}, key=order.index)
print("| size | shape | op | tool | n | wall ms | CPU ms | × cp -rs (wall) | × cp -rs (CPU) "
      "| × rm -r (wall / CPU) | wall µs/file | CPU µs/file |")
print("| --- | --- | --- | --- | --: | --: | --: | --: | --: | --: | --: | --: |")
for size in sizes:
    n = files(size)
    ref = med((size, "unfolded", "stow", "cp"))
    rmref = med((size, "unfolded", "unstow", "rm"))
    for shape in ("unfolded", "folded"):
        for op in ("stow", "unstow"):
            for tool in tools:
                m = med((size, shape, op, tool))
                if not m or tool == "find":
                    continue
                rw = f"{m[0] / ref[0]:.2f}" if ref and tool != "cp" else ""
                rc = f"{m[1] / ref[1]:.2f}" if ref and tool != "cp" else ""
                rr = (f"{m[0] / rmref[0]:.2f} / {m[1] / rmref[1]:.2f}"
                      if rmref and op == "unstow" and tool.startswith("grove") else "")
                name = "cp -rs" if tool == "cp" else "rm -r" if tool == "rm" else tool
                print(f"| {size} | {shape} | {op} | {name} | {m[2]} | {m[0] * 1e3:.1f} | "
                      f"{m[1] * 1e3:.1f} | {rw} | {rc} | {rr} | {m[0] / n * 1e6:.2f} | "
                      f"{m[1] / n * 1e6:.2f} |")
print()
print("Linearity: CPU µs per file (wall in brackets) at each size; flat = linear.")
print()
print("| shape | op | tool | " + " | ".join(sizes) + " |")
print("| --- | --- | --- | " + " | ".join("--:" for _ in sizes) + " |")
for shape in ("unfolded", "folded"):
    for op in ("stow", "unstow"):
        for tool in tools:
            cells = []
            for size in sizes:
                m = med((size, shape, op, tool))
                cells.append(f"{m[1] / files(size) * 1e6:.2f} ({m[0] / files(size) * 1e6:.2f})"
                             if m else "")
            if any(cells):
                name = "cp -rs" if tool == "cp" else "rm -r" if tool == "rm" else tool
                print(f"| {shape} | {op} | {name} | " + " | ".join(cells) + " |")

# Issue 41: the folded package against GNU Stow, and the folded stow against the smallest size.
if any(k[3] == "stow241" for k in res):
    print()
    print("Folded, grove against GNU Stow 2.4.1 (issue 41 item 1: <= 1 on CPU and wall).")
    print()
    print("| size | op | grove wall ms | grove CPU ms | Stow wall ms | Stow CPU ms | × Stow (wall) "
          "| × Stow (CPU) | grove peak KiB |")
    print("| --- | --- | --: | --: | --: | --: | --: | --: | --: |")
    for size in sizes:
        for op in ("stow", "unstow"):
            g = med((size, "folded", op, "grove"))
            s = med((size, "folded", op, "stow241"))
            if g and s:
                print(f"| {size} | {op} | {g[0] * 1e3:.1f} | {g[1] * 1e3:.1f} | {s[0] * 1e3:.1f} | "
                      f"{s[1] * 1e3:.1f} | {g[0] / s[0]:.2f} | {g[1] / s[1]:.2f} | "
                      f"{rss[(size, 'folded', op, 'grove')]} |")
small = min(sizes, key=files) if sizes else None
base = med((small, "folded", "stow", "grove")) if sizes else None
if base and len(sizes) > 1:
    print()
    print(f"Folded stow against the {small}-file package's (issue 41: 1M <= 2×):")
    print()
    for size in sizes:
        m = med((size, "folded", "stow", "grove"))
        if m and size != small:
            print(f"- {size}: wall {m[0] / base[0]:.2f}×, CPU {m[1] / base[1]:.2f}×")

# Issue 41 item 2: reading the farm, against find.
if any(k[2] in ("verify", "status") for k in res):
    print()
    print("Unfolded farm read: grove verify and status against find -type l -printf '%p %l\\n' "
          "(issue 41 item 2: verify <= 1.5× find, peak <= 16 MiB at 1M links).")
    print()
    print("| size | op | tool | n | wall ms | CPU ms | × find (wall) | × find (CPU) | peak KiB |")
    print("| --- | --- | --- | --: | --: | --: | --: | --: | --: |")
    for size in sizes:
        ref = med((size, "unfolded", "verify", "find"))
        for op, tool in (("verify", "find"), ("verify", "grove"), ("status", "grove"),
                         ("verify", "grove-old"), ("status", "grove-old")):
            m = med((size, "unfolded", op, tool))
            if not m:
                continue
            rw = f"{m[0] / ref[0]:.2f}" if ref and tool != "find" else ""
            rc = f"{m[1] / ref[1]:.2f}" if ref and tool != "find" else ""
            print(f"| {size} | {op} | {tool} | {m[2]} | {m[0] * 1e3:.1f} | {m[1] * 1e3:.1f} | "
                  f"{rw} | {rc} | {rss[(size, 'unfolded', op, tool)]} |")

# Issue 41 item 4: the import of the unfolded farm, against grove's own stow of it (same run).
if any(k[2] == "import" for k in res):
    print()
    print("Import of the unfolded farm (laid out as GNU Stow's) against grove's stow of it "
          "(issue 41 item 4: <= 1.5×, peak <= 16 MiB at 1M links).")
    print()
    print("| size | tool | n | import wall ms | import CPU ms | stow wall ms | stow CPU ms "
          "| × stow (wall) | × stow (CPU) | import peak KiB |")
    print("| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: |")
    for size in sizes:
        for tool in ("grove", "grove-old"):
            m = med((size, "unfolded", "import", tool))
            s = med((size, "unfolded", "stow", tool))
            if not m or not s:
                continue
            print(f"| {size} | {tool} | {m[2]} | {m[0] * 1e3:.1f} | {m[1] * 1e3:.1f} | "
                  f"{s[0] * 1e3:.1f} | {s[1] * 1e3:.1f} | {m[0] / s[0]:.2f} | {m[1] / s[1]:.2f} | "
                  f"{rss[(size, 'unfolded', 'import', tool)]} |")
PY
echo "results in $out" >&2
