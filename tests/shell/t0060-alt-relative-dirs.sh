#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Relative --altdir and --admindir, as update-alternatives 1.21 takes them: against the current
# folder, and the generic link's text is "ALTDIR/NAME" exactly as given. Three twin sandboxes (u:
# the real update-alternatives, g: grove alt, h: grove run as update-alternatives), each command
# run from the sandbox's work folder: the same exit status, output (sandbox paths and the program's
# name aside), links (their texts) and admin files after every step.
source "$(dirname "$0")/lib.sh"
need_ua

mkdir -p "$ROOT/bin"
ln -s "$GROVE" "$ROOT/bin/update-alternatives"
GUA=$ROOT/bin/update-alternatives

U=$ROOT/u G=$ROOT/g H=$ROOT/h
for s in "$U" "$G" "$H"; do
	mkdir -p "$s/i/bin" "$s/i/man" "$s/w/alt" "$s/w/adm" "$s/w/sub"
	for c in a b; do
		mk_file "$s/i/opt/$c/x" "x-$c"
		mk_file "$s/i/opt/$c/x.1" "man-$c"
	done
done

# The state of sandbox s: every link and its text, every admin file (grove's lock file aside).
state()
{
	local s=$1 f
	(
		cd "$s" || exit 1
		find . -type l | LC_ALL=C sort | while read -r f; do
			printf 'link %s -> %s\n' "$f" "$(readlink "$f")"
		done
		for f in $(find w -path '*adm*' -type f ! -name '*.dpkg-tmp' | LC_ALL=C sort); do
			printf 'admin %s:\n' "$f"
			cat "$f"
		done
	) | sed "s|$s/|@/|g"
}

steps=0
# Runs one command in each sandbox from DIR (below w), with ALTDIR and ADMINDIR as given;
# "@/" in the arguments stands for the sandbox.
same()
{
	local dir=$1 altdir=$2 admindir=$3 input=${STDIN:-} s prog urc rc
	shift 3
	for s in "$U" "$G" "$H"; do
		case $s in
		"$U") prog=("$UA") ;;
		"$G") prog=("$GROVE" alt) ;;
		"$H") prog=("$GUA") ;;
		esac
		rc=0
		(cd "$s/w/$dir" && "${prog[@]}" --altdir "$altdir" --admindir "$admindir" \
			--log "$s/log" "${@//@\//$s/}" <<<"$input") >"$OUT" 2>"$ERR" || rc=$?
		sed -e "s|$s/|@/|g" -e 's/grove alt: /update-alternatives: /g' "$OUT" >"$s.out"
		sed -e "s|$s/|@/|g" -e 's/grove alt: /update-alternatives: /g' "$ERR" >"$s.err"
		echo "$rc" >"$s.rc"
		state "$s" >"$s.state"
	done
	urc=$(cat "$U.rc")
	for s in "$G" "$H"; do
		[[ $(cat "$s.rc") == "$urc" ]] ||
			fail "${s##*/}: $*: exit $(cat "$s.rc"), update-alternatives $urc: $(cat "$s.err")"
		diff "$U.out" "$s.out" >&2 || fail "${s##*/}: $*: stdout differs (- ua, + grove)"
		diff "$U.err" "$s.err" >&2 || fail "${s##*/}: $*: stderr differs (- ua, + grove)"
		diff "$U.state" "$s.state" >&2 ||
			fail "${s##*/}: $*: links or admin files differ (- ua, + grove)"
	done
	steps=$((steps + 1))
}

same . alt adm --install @/i/bin/x x @/i/opt/a/x 10 --slave @/i/man/x.1 x.1 @/i/opt/a/x.1
[[ $(readlink "$G/i/bin/x") == alt/x && $(readlink "$H/i/bin/x") == alt/x ]] ||
	fail "the generic link's text is not 'alt/x' as given"
same . alt ./adm --install @/i/bin/x x @/i/opt/b/x 20 --slave @/i/man/x.1 x.1 @/i/opt/b/x.1
same . alt adm --display x
same . alt adm --query x
same . alt adm --list x
same . alt adm --get-selections
same . alt adm --set x @/i/opt/a/x
same sub ../alt ../adm --display x
same sub ../alt ../adm --auto x
STDIN=1 same . alt adm --config x
same . alt adm --remove x @/i/opt/a/x
# A missing altdir one level down is made, and ".." is taken from the current folder.
same sub ../alt2 ../adm --install @/i/bin/y y @/i/opt/a/x 5
[[ $(readlink "$G/i/bin/y") == ../alt2/y ]] || fail "the generic link's text is not '../alt2/y'"
same sub ../alt2 ../adm --remove-all y
same . alt adm --remove-all x
[[ ! -L $G/i/bin/x && ! -L $H/i/bin/x && ! -L $G/w/alt/x ]] || fail "grove left the group's links"
check "$steps commands with relative --altdir/--admindir as update-alternatives runs them"
