#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark, run by hand (never in CI): times grove against GNU Stow 2.4.1, Debian's stow 2.3.1,
# xstow, cp -rs and the syscall floor on reproducible shapes; see docs/performance.md.
set -euo pipefail

usage() {
	cat <<'USAGE'
Usage: bench/run.sh [OPTIONS]

  --build DIR       grove's build dir, with grove, bench/floor and bench/timeit (default: ./build)
  --shapes LIST     comma-separated: dotfiles,dothome,pkg1k,pkg10k,pkg100k,nofold100k,multi200,multi800,deep128
                    (default: the quick set dotfiles,pkg1k,pkg10k,multi200,deep128); for growth
                    curves also multiN and deepN (e.g. multi100,multi400,deep32,deep64)
  --full            every shape
  --tools LIST      comma-separated: grove,stow241,stow231,xstow,cp,floor,floor-read,
                    floor-read-all (default: all), and grove-static with --static-build; floor-read
                    is the floor plus the reads any tool with Stow's semantics must make
                    (bench/treeops.py "reads"), floor-read-all the floor plus grove's reads by
                    design (every package folder, the folded ones too: treeops.py "reads-all")
  --static-build DIR a second grove build to time as the tool grove-static, e.g. one made with
                    meson setup DIR --buildtype=release -Dprefer_static=true (SQLite and PCRE2
                    linked in: no dynamic loading of them at start-up)
  --runs N          timed runs per tool (default 5; medians need >= 5)
  --dir DIR         where the trees are made (default: $TMPDIR or /tmp; try /dev/shm for tmpfs)
  --out DIR         results (default: DIR/grove-bench-results.<date>)
  --cap SECONDS     stop timing a tool on a shape once one of its runs (all five ops) took longer
                    than this (default 180); its medians then come from fewer runs (n column)
  --timeout SECONDS kill a single op after this long; the tool is dropped for the shape (default 900)
  --no-strace       skip the syscall-count pass (strace -c -f)
  --check-all       compare trees after every run, not only the first
  --cache DIR       where Stow 2.3.1 and xstow are unpacked (default: ~/.cache/grove-bench)
  --stow-deb FILE   Debian's stow 2.4.1 package (default: ../shared/oracles/stow_2.4.1-2_all.deb)
  --keep            keep the generated trees

Per tool and run, in the order the tools rotate through: stow into an empty target; no-op restow;
restow after adding one file to one package; unstow; stow into a target holding unrelated files.
All ops name every package of the shape, as `stow */` would.
USAGE
}

repo=$(cd "$(dirname "$0")/.." && pwd)
build=$repo/build
static_build=
shapes=dotfiles,pkg1k,pkg10k,multi200,deep128
tools=grove,stow241,stow231,xstow,cp,floor,floor-read,floor-read-all
runs=5
base=${TMPDIR:-/tmp}
out=
cap=180
timeout=900
strace_pass=1
check_all=0
cache=${XDG_CACHE_HOME:-$HOME/.cache}/grove-bench
stow_deb=$repo/../shared/oracles/stow_2.4.1-2_all.deb
keep=0

while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--static-build) static_build=$2; shift ;;
	--shapes) shapes=$2; shift ;;
	--full) shapes=dotfiles,dothome,pkg1k,pkg10k,pkg100k,nofold100k,multi200,multi800,deep128 ;;
	--tools) tools=$2; shift ;;
	--runs) runs=$2; shift ;;
	--dir) base=$2; shift ;;
	--out) out=$2; shift ;;
	--cap) cap=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--no-strace) strace_pass=0 ;;
	--check-all) check_all=1 ;;
	--cache) cache=$2; shift ;;
	--stow-deb) stow_deb=$2; shift ;;
	--keep) keep=1 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

build=$(cd "$build" && pwd)
GROVE=$build/grove
GROVE_STATIC=
if [ -n "$static_build" ]; then
	GROVE_STATIC=$(cd "$static_build" && pwd)/grove
	[ -x "$GROVE_STATIC" ] || { echo "run.sh: '$GROVE_STATIC' missing" >&2; exit 2; }
elif [[ ,$tools, == *,grove-static,* ]]; then
	echo "run.sh: the tool grove-static needs --static-build DIR" >&2
	exit 2
fi
FLOOR=$build/bench/floor
TIMEIT=$build/bench/timeit
for b in "$GROVE" "$FLOOR" "$TIMEIT"; do
	[ -x "$b" ] || { echo "run.sh: '$b' missing: meson setup BUILD --buildtype=release && ninja -C BUILD" >&2; exit 2; }
done
base=$(cd "$base" && pwd)
if [ -n "$(find "$repo/src" "$repo/include" -newer "$GROVE" -name '*.[ch]' 2>/dev/null | head -1)" ]; then
	echo "run.sh: warning: sources are newer than '$GROVE'; run ninja first or the numbers are of an old grove" >&2
fi
[ -n "$out" ] || out=$base/grove-bench-results.$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
out=$(cd "$out" && pwd)

# --- the other tools: unpacked into the cache, never installed system-wide ---------------------
mkdir -p "$cache"
if [ ! -x "$cache/stow241/usr/bin/stow" ]; then
	mkdir -p "$cache/stow241" && dpkg-deb -x "$stow_deb" "$cache/stow241"
fi
if [ ! -x "$cache/stow231/usr/bin/stow" ]; then
	(cd "$cache" && apt-get download stow=2.3.1-1) && dpkg-deb -x "$cache"/stow_2.3.1-1_all.deb "$cache/stow231"
fi
if [ ! -x "$cache/xstow/usr/bin/xstow" ]; then
	if (cd "$cache" && apt-get download xstow); then
		dpkg-deb -x "$cache"/xstow_*.deb "$cache/xstow"
	else
		echo "run.sh: xstow is not available from apt here; leaving it out" >&2
		tools=$(echo ",$tools," | sed 's/,xstow,/,/; s/^,//; s/,$//')
	fi
fi
STOW241=$cache/stow241/usr/bin/stow
STOW231=$cache/stow231/usr/bin/stow
XSTOW=$cache/xstow/usr/bin/xstow
command -v strace >/dev/null || strace_pass=0

# No rc file or config of the user's may change what the tools do.
export HOME=$base/grove-bench-home.$$
mkdir -p "$HOME"
unset XDG_CONFIG_HOME STOW_DIR PERL5LIB
export LC_ALL=C

IFS=, read -r -a tool_list <<<"$tools"
ops_all=(stow noop add1 unstow unrel)

RESULTS=$out/results.txt    # shape op tool run wall cpu user sys rss status
CHECKS=$out/checks.txt      # shape op tool result
SYSCALLS=$out/syscalls.txt  # shape op tool calls
{
	echo "# $(date -u +%FT%TZ) $(uname -srm); $(nproc) cores; trees in $base ($(df -T "$base" | awk 'NR==2{print $2}'))"
	echo "# grove $(git -C "$repo" describe --always --dirty 2>/dev/null || echo '?'); runs $runs; cap $cap s"
} >>"$out/machine.txt"

# cmd_for TOOL OP: fills CMD (the command) or returns 1 when the tool has no such op.
cmd_for() {
	local tool=$1 op=$2 flag
	case $op in
	stow|unrel) flag=-S ;;
	noop|add1) flag=-R ;;
	unstow) flag=-D ;;
	esac
	# shellcheck disable=SC2206
	local pk=($PKGS) fl=($FLAGS)
	case $tool in
	grove|grove-static)
		local word=stow bin=$GROVE
		case $flag in -R) word=restow ;; -D) word=unstow ;; esac
		[ "$tool" = grove ] || bin=$GROVE_STATIC
		CMD=("$bin" "$word" -d "$S" -t "$T" "${fl[@]}" "${pk[@]}") ;;
	stow241) CMD=(perl "$STOW241" -d "$S" -t "$T" "${fl[@]}" "$flag" "${pk[@]}") ;;
	stow231) CMD=(perl "$STOW231" -d "$S" -t "$T" "${fl[@]}" "$flag" "${pk[@]}") ;;
	xstow)
		[ -z "$FLAGS" ] || return 1 # xstow cannot refuse to fold
		case $flag in
		-S) CMD=("$XSTOW" -d "$S" -t "$T" "${pk[@]}") ;;
		*) CMD=("$XSTOW" -d "$S" -t "$T" "$flag" "${pk[@]}") ;;
		esac ;;
	cp)
		case $op in stow|unrel) ;; *) return 1 ;; esac
		local srcs=() p
		for p in "${pk[@]}"; do srcs+=("$S/$p/."); done
		CMD=(cp -rs "${srcs[@]}" "$T/") ;;
	floor) CMD=("$FLOOR" "$T" "$W/ops/$op.ops") ;;
	floor-read) CMD=("$FLOOR" -s "$S" "$T" "$W/ops/$op.rops") ;;
	floor-read-all) CMD=("$FLOOR" -s "$S" "$T" "$W/ops/$op.arops") ;;
	esac
	case $tool in
	stow241) export PERL5LIB=$cache/stow241/usr/share/perl5 ;;
	stow231) export PERL5LIB=$cache/stow231/usr/share/perl5 ;;
	*) unset PERL5LIB ;;
	esac
	return 0
}

reset_target() {
	rm -rf "$T"
	mkdir "$T"
	if [ "$1" = unrel ]; then cp -a "$W/unrelated/." "$T/"; fi
}

# step MODE TOOL OP RUN: MODE is time, strace or ref. Returns 1 if the op failed or timed out.
step() {
	local mode=$1 tool=$2 op=$3 run=$4 rc=0
	cmd_for "$tool" "$op" || return 0
	case $mode in
	time)
		"$TIMEIT" "$RESULTS" "$shape $op $tool $run" "$timeout" "${CMD[@]}" \
			>>"$W/log/$tool.out" 2>>"$W/log/$tool.err" || rc=$?
		;;
	strace)
		timeout "$timeout" strace -c -f -o "$W/strace/$tool.$op" -- "${CMD[@]}" \
			>>"$W/log/$tool.out" 2>>"$W/log/$tool.err" || rc=$?
		local calls
		calls=$(awk '$NF=="total"{print $4}' "$W/strace/$tool.$op" 2>/dev/null || true)
		echo "$shape $op $tool ${calls:-?}" >>"$SYSCALLS"
		;;
	ref)
		"${CMD[@]}" >>"$W/log/$tool.out" 2>>"$W/log/$tool.err" || rc=$?
		;;
	esac
	if [ $rc -ne 0 ]; then
		echo "run.sh: $shape: $tool $op ($mode, run $run) exited $rc; see $W/log/$tool.err" >&2
		return 1
	fi
	if [ "$mode" = ref ]; then
		python3 "$repo/bench/treeops.py" list "$T" >"$W/ref/$op.list"
		python3 "$repo/bench/treeops.py" resolved "$T" >"$W/ref/$op.resolved"
	elif [ "$mode" = time ] && { [ "$run" = 1 ] || [ $check_all = 1 ]; }; then
		local l=$W/lists/$tool.$op.$run res
		if [ -d "$T" ]; then python3 "$repo/bench/treeops.py" list "$T" >"$l"; else : >"$l"; fi
		res=$(python3 "$repo/bench/treeops.py" check "$W/ref/$op.list" "$W/ref/$op.resolved" "$l" "$T")
		[ -d "$T" ] || res="DIFF: the target folder itself is gone"
		echo "$shape $op $tool $run $res" >>"$CHECKS"
	fi
	return 0
}

# sequence MODE TOOL RUN: the five ops, in order, each on the state the previous left.
sequence() {
	local mode=$1 tool=$2 run=$3
	reset_target empty
	step "$mode" "$tool" stow "$run" || return 1
	step "$mode" "$tool" noop "$run" || return 1
	touch "$S/$ADD"
	step "$mode" "$tool" add1 "$run" || { rm -f "$S/$ADD"; return 1; }
	step "$mode" "$tool" unstow "$run" || { rm -f "$S/$ADD"; return 1; }
	rm -f "$S/$ADD"
	reset_target unrel
	step "$mode" "$tool" unrel "$run" || return 1
}

IFS=, read -r -a shape_list <<<"$shapes"
work=$(mktemp -d "$base/grove-bench.XXXXXX")
for shape in "${shape_list[@]}"; do
	W=$work/$shape
	S=$W/stow
	T=$W/target
	echo "== $shape: generating in $W" >&2
	mkdir -p "$W"
	python3 "$repo/bench/gen.py" "$shape" "$W"
	# shellcheck disable=SC1091
	. "$W/shape.env"
	mkdir -p "$W/log" "$W/ref" "$W/ops" "$W/lists" "$W/strace"
	export GROVE_STATE_DIR=$W/state # fresh per shape; its cost is in grove's numbers
	cd "$W"

	# Reference: grove's own result after each op, and from it the floor's op lists.
	if ! sequence ref grove 0; then
		echo "run.sh: $shape: grove failed; skipping the shape" >&2
		cd "$base"
		[ $keep = 1 ] || rm -rf "$W"
		continue
	fi
	: >"$W/ref/empty.list"
	reset_target unrel
	python3 "$repo/bench/treeops.py" list "$T" >"$W/ref/unrel-before.list"
	tro="python3 $repo/bench/treeops.py ops"
	$tro "$W/ref/empty.list" "$W/ref/stow.list" >"$W/ops/stow.ops"
	$tro "$W/ref/stow.list" "$W/ref/noop.list" >"$W/ops/noop.ops"
	$tro "$W/ref/noop.list" "$W/ref/add1.list" >"$W/ops/add1.ops"
	$tro "$W/ref/add1.list" "$W/ref/unstow.list" >"$W/ops/unstow.ops"
	$tro "$W/ref/unrel-before.list" "$W/ref/unrel.list" >"$W/ops/unrel.ops"
	# The floor-read's lists: the reads, then the same changes.
	trr() {
		local pk
		read -r -a pk <<<"$PKGS"
		python3 "$repo/bench/treeops.py" "$4" "$1" "$W/ref/$2.list" "$W/ref/$3.list" "$S" "$T" "$FLAGS" "${pk[@]}"
	}
	for kind in reads:reads reads-all:areads; do
		trr stow empty stow "${kind%:*}" >"$W/ops/stow.${kind#*:}"
		trr noop stow noop "${kind%:*}" >"$W/ops/noop.${kind#*:}"
		trr add1 noop add1 "${kind%:*}" >"$W/ops/add1.${kind#*:}"
		trr unstow add1 unstow "${kind%:*}" >"$W/ops/unstow.${kind#*:}"
		trr unrel unrel-before unrel "${kind%:*}" >"$W/ops/unrel.${kind#*:}"
	done
	for op in "${ops_all[@]}"; do
		cat "$W/ops/$op.reads" "$W/ops/$op.ops" >"$W/ops/$op.rops"
		cat "$W/ops/$op.areads" "$W/ops/$op.ops" >"$W/ops/$op.arops"
		echo "$shape $op floor-ops $(wc -l <"$W/ops/$op.ops")" >>"$out/floor-ops.txt"
		echo "$shape $op floor-reads $(wc -l <"$W/ops/$op.reads")" >>"$out/floor-ops.txt"
		echo "$shape $op floor-reads-all $(wc -l <"$W/ops/$op.areads")" >>"$out/floor-ops.txt"
	done

	declare -A dead=()
	for ((r = 1; r <= runs; r++)); do
		n=${#tool_list[@]}
		for ((i = 0; i < n; i++)); do
			tool=${tool_list[$(((i + r - 1) % n))]}
			[ -z "${dead[$tool]:-}" ] || continue
			echo "   $shape run $r: $tool" >&2
			t0=$(date +%s)
			sequence time "$tool" "$r" || dead[$tool]=failed
			if [ $(($(date +%s) - t0)) -gt "$cap" ] && [ -z "${dead[$tool]:-}" ]; then
				echo "run.sh: $shape: one run of $tool took over $cap s; no more runs of it" >&2
				dead[$tool]=capped
				echo "$shape $tool capped after run $r ($(($(date +%s) - t0)) s)" >>"$out/capped.txt"
			fi
		done
	done
	if [ $strace_pass = 1 ]; then
		for tool in "${tool_list[@]}"; do
			[ -z "${dead[$tool]:-}" ] || continue # a failed or capped tool gets no strace pass
			echo "   $shape strace: $tool" >&2
			sequence strace "$tool" 0 || true
		done
	fi
	unset dead
	cd "$base"
	[ $keep = 1 ] || rm -rf "$W"
done
[ $keep = 1 ] || rmdir "$work" 2>/dev/null || true
rm -rf "$HOME"

python3 "$repo/bench/report.py" "$out" | tee "$out/report.md"
