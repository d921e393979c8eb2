#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Admin files in every form update-alternatives 1.21 reads (issue 37 item 4, issue 38 item 2):
# choices and followers in another order than it writes them, priorities written "010", "+5" or
# " 7", text (and a NUL byte) after the last choice, a group with no choice (as Ansible's tests
# write it), a missing choice with a priority that is no integer or written twice; and the forms
# it refuses (a NUL byte in a line, such a priority or path for a choice whose file exists).
# Each is put in two twin sandboxes, one run by the real update-alternatives and one by grove
# alt, then every command is run in both, followed by more: the same exit status, output, admin
# files (byte for byte) and links after each, and grove never says "changed outside grove".
source "$(dirname "$0")/lib.sh"

need_ua

U=$ROOT/u
G=$ROOT/g
ua()
{
	"$UA" --altdir "$U/i/alt" --admindir "$U/adm" --log "$U/log" "$@"
}
gr()
{
	"$GROVE" alt --altdir "$G/i/alt" --admindir "$G/adm" --instdir "$G/i" "$@"
}
# Fresh twin sandboxes holding the admin file NAME with TEXT ("@/" stands for the sandbox).
setup()
{
	local name=$1 text=$2 s
	rm -rf "$U" "$G"
	for s in "$U" "$G"; do
		mkdir -p "$s/i/bin" "$s/i/man" "$s/i/alt" "$s/adm"
		for f in a b c a.1 b.1 c.1 d; do mk_file "$s/i/opt/$f" "$f"; done
		# (a NUL byte, which a shell string cannot hold, is written @NUL@)
		printf '%s' "${text//@\//$s/}" | perl -pe 's/\@NUL\@/\0/g' >"$s/adm/$name"
	done
}
# Every entry of the sandbox's links and admin files, the sandbox's name taken out.
state()
{
	local s=$1 f
	for f in "$s"/i/bin/* "$s"/i/man/* "$s"/i/alt/*; do
		[[ -e $f || -L $f ]] || continue
		printf '%s -> %s\n' "${f#"$s"/}" "$(readlink "$f")"
	done | sed "s|$s/|@/|g"
	for f in "$s"/adm/*; do
		[[ -e $f ]] || continue
		printf '== %s\n' "${f#"$s"/}"
		sed "s|$s/|@/|g" "$f" | od -c
	done
}
n_steps=0
# Runs the command in both sandboxes (stdin from $IN, if set) and compares.
step()
{
	local urc=0 grc=0
	n_steps=$((n_steps + 1))
	ua "${@//@\//$U/}" <"${IN:-/dev/null}" >"$ROOT/u.out" 2>&1 || urc=$?
	gr "${@//@\//$G/}" <"${IN:-/dev/null}" >"$ROOT/g.out" 2>&1 || grc=$?
	((urc == grc)) || fail "$CASE: $*: update-alternatives exited $urc, grove $grc: $(cat "$ROOT/g.out")"
	sed -e "s|$U/|@/|g" -e 's/update-alternatives/PROG/g' "$ROOT/u.out" >"$ROOT/u.norm"
	sed -e "s|$G/|@/|g" -e 's/grove alt/PROG/g' "$ROOT/g.out" >"$ROOT/g.norm"
	diff "$ROOT/u.norm" "$ROOT/g.norm" >"$ROOT/out.diff" ||
		fail "$CASE: $*: output differs (- update-alternatives, + grove alt):"$'\n'"$(cat "$ROOT/out.diff")"
	diff <(state "$U") <(state "$G") >"$ROOT/state.diff" ||
		fail "$CASE: $*: links or admin files differ (- update-alternatives, + grove alt):"$'\n'"$(cat "$ROOT/state.diff")"
}
# CASE TEXT: the admin file of group x, then each command list in fresh sandboxes.
form()
{
	CASE=$1
	local text=$2 cmds
	shift 2
	for cmds in "$@"; do
		setup x "$text"
		local IFS=';'
		local -a list
		read -ra list <<<"$cmds"
		IFS=$' \t\n'
		local c
		for c in "${list[@]}"; do
			# shellcheck disable=SC2086
			step $c
		done
	done
}
H=$'auto\n@/i/bin/x\n'
# The commands every accepted form goes through, each list in fresh sandboxes: readers, then
# changes and more changes after them (nothing is wedged).
READERS="--query x;--display x;--list x;--get-selections"
CHANGES=(
	"$READERS;--auto x;--set x @/i/opt/b;--query x"
	"--install @/i/bin/x x @/i/opt/d 100;--install @/i/bin/x x @/i/opt/c 5;--get-selections"
	"--install @/i/bin/y y @/i/opt/d 1;--remove x @/i/opt/a;--remove x @/i/opt/zz;--query x;--remove-all x;--query x"
)
form "choices out of order" \
	$'auto\n@/i/bin/x\nx.1\n@/i/man/x.1\n\n@/i/opt/b\n5\n@/i/opt/b.1\n@/i/opt/a\n5\n@/i/opt/a.1\n\n' \
	"${CHANGES[@]}"
form "followers out of order" \
	"$H"$'y.1\n@/i/man/y.1\nx.1\n@/i/man/x.1\n\n@/i/opt/a\n5\n@/i/opt/a.1\n@/i/opt/a.1\n@/i/opt/b\n1\n\n@/i/opt/b.1\n\n' \
	"${CHANGES[@]}"
form "priorities 010, +5, ' 7', -0" \
	"$H"$'\n@/i/opt/a\n010\n@/i/opt/b\n+5\n@/i/opt/c\n 7\n@/i/opt/d\n-0\n\n' \
	"${CHANGES[@]}"
form "text and a NUL byte after the last choice" \
	"$H"$'\n@/i/opt/a\n10\n\njunk\n\n@/i/opt/c\n99\nx@NUL@y' "${CHANGES[@]}"
form "a group with no choice" $'auto\n@/i/bin/x\n\n\n' "${CHANGES[@]}" \
	"--config x;--query x" "--set x @/i/opt/a"
form "a manual group with no choice and a follower" $'manual\n@/i/bin/x\nx.1\n@/i/man/x.1\n\n\n' \
	"${CHANGES[@]}"
form "a missing choice with a priority that is no integer" \
	"$H"$'\n@/i/opt/zz\nten\n@/i/opt/b\n5\n\n' "${CHANGES[@]}"
form "a missing choice written twice, its follower file junk" \
	"$H"$'x.1\n@/i/man/x.1\n\n@/i/opt/zz\n1\njunk\n@/i/opt/zz\n2\n\n@/i/opt/a\n3\n@/i/opt/a.1\n\n' \
	"${CHANGES[@]}"
form "every choice missing" "$H"$'\n@/i/opt/zz\n1\n@/i/opt/zy\n2\n\n' "${CHANGES[@]}"
check "$n_steps steps over admin files in the forms update-alternatives reads: the same status, output, links and admin files"

# Forms update-alternatives refuses: its words, exit 2, the same files after.
n_steps=0
form "a NUL byte in a priority" "$H"$'\n@/i/opt/a\n1@NUL@0\n\n' "--query x" "--set x @/i/opt/a"
form "a priority that is no integer, its file there" "$H"$'\n@/i/opt/zz\n1\n@/i/opt/a\nten\n\n' \
	"--query x" "--auto x" "--install @/i/bin/x x @/i/opt/b 1" "--get-selections"
form "a missing choice, then the file cut short" "$H"$'\n@/i/opt/zz\n1\n@/i/opt/a\n5\n' \
	"--query x" "--auto x" "--get-selections"
form "a priority that is no integer, then the file cut short" "$H"$'\n@/i/opt/a\nten\n' \
	"--display x" "--remove x @/i/opt/a"
form "a priority out of range" "$H"$'\n@/i/opt/a\n2147483648\n\n' "--display x" "--get-selections"
form "a path written twice, its file there" "$H"$'\n@/i/opt/zz\n1\n@/i/opt/a\n1\n@/i/opt/a\n2\n\n' \
	"--list x" "--set x @/i/opt/a" "--get-selections"
check "$n_steps steps over admin files update-alternatives refuses: its words and exit status"
