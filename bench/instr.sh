#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark, run by hand (never in CI): user-space instructions (callgrind's Ir, whole process with
# the dynamic loader) of each op of bench/run.sh's sequence, for one grove or an old and a new one.
# Instruction counts do not depend on the machine's load or its clock, so they compare builds made
# on different days. Usage:
#
#   bench/instr.sh [--shapes LIST] [--dir DIR] GROVE [OLD_GROVE]
#
# For each shape (bench/gen.py; default dotfiles,dothome,multi200) and each grove, in a state dir
# of its own: the sequence once untimed (so the log has history, as in a bench run), then again
# under callgrind: stow into an empty target, no-op restow, restow after adding one file, unstow,
# stow into the target holding the shape's unrelated files. Prints one line per op: the Ir of
# GROVE, and with OLD_GROVE also the old Ir and new/old.
#
# valgrind 3.19 does not know openat2, which grove's executor uses for every change; the script
# builds bench/vg-openat2.c (an LD_PRELOAD shim answering openat2 with openat) and preloads it, so
# that every op runs whole. Needs valgrind and cc.
set -euo pipefail
shapes=dotfiles,dothome,multi200
base=${TMPDIR:-/tmp}
while [ $# -gt 0 ]; do
	case $1 in
	--shapes) shapes=$2; shift 2 ;;
	--dir) base=$2; shift 2 ;;
	-h|--help) sed -n '3,18p' "$0" | cut -c3-; exit 0 ;;
	--*) echo "instr.sh: unknown option '$1'" >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: bench/instr.sh [--shapes LIST] [--dir DIR] GROVE [OLD_GROVE]" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
new=$(realpath "$1")
old=${2:+$(realpath "$2")}
command -v valgrind >/dev/null || { echo "instr.sh: needs valgrind" >&2; exit 1; }
work=$(mktemp -d "$base/grove-instr.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -O2 -shared -fPIC -o "$work/vg-openat2.so" "$here/vg-openat2.c" -ldl

# ir BIN LABEL ARGS...: runs grove under callgrind, prints "LABEL Ir".
ir() {
	local bin=$1 label=$2 out
	shift 2
	out=$(LD_PRELOAD=$work/vg-openat2.so valgrind --tool=callgrind \
		--callgrind-out-file=/dev/null "$bin" "$@" 2>&1 >/dev/null) || {
		echo "instr.sh: $label failed:" >&2
		echo "$out" | grep -v '^==' >&2
		return 1
	}
	echo "$label $(echo "$out" | awk '/I *refs:/ {gsub(",", "", $NF); print $NF}')"
}

# sequence BIN MODE: the five ops in order (MODE: run or measure).
sequence() {
	local bin=$1 mode=$2 t=$W/t op word
	# shellcheck disable=SC2206
	local pk=($PKGS) fl=($FLAGS)
	for op in stow noop add1 unstow unrel; do
		case $op in
		stow) rm -rf "$t"; mkdir "$t"; word=stow ;;
		noop) word=restow ;;
		add1) touch "$S/$ADD"; word=restow ;;
		unstow) word=unstow ;;
		unrel) rm -f "$S/$ADD"; rm -rf "$t"; mkdir "$t"; cp -a "$W/unrelated/." "$t/"; word=stow ;;
		esac
		if [ "$mode" = measure ]; then
			ir "$bin" "$shape $op" "$word" -d "$S" -t "$t" "${fl[@]}" "${pk[@]}"
		else
			"$bin" "$word" -d "$S" -t "$t" "${fl[@]}" "${pk[@]}" >/dev/null
		fi
	done
	rm -f "$S/$ADD"
}

for shape in ${shapes//,/ }; do
	W=$work/$shape
	python3 "$here/gen.py" "$shape" "$W" >/dev/null
	# shellcheck disable=SC1091
	. "$W/shape.env"
	S=$W/stow
	for tool in new ${old:+old}; do
		bin=$new
		[ "$tool" = old ] && bin=$old
		export GROVE_STATE_DIR=$W/state-$tool
		sequence "$bin" run
		sequence "$bin" measure >"$W/$tool.ir"
	done
	if [ -n "$old" ]; then
		awk 'NR == FNR { o[$1 " " $2] = $3; next }
			{ printf "%-10s %-7s old %12d new %12d new/old %.3f\n", $1, $2, o[$1 " " $2], $3, $3 / o[$1 " " $2] }' \
			"$W/old.ir" "$W/new.ir"
	else
		awk '{printf "%-10s %-7s %12d\n", $1, $2, $3}' "$W/new.ir"
	fi
done
