#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# An admin file in a form update-alternatives reads but does not write (choices out of order,
# a priority written "010", text after the last choice) through grove's history (issue 37 item
# 4): a change taken in and made, then undone, then the take-in undone, each exit 0 and the file
# meaning what it meant; grove alt import of such a file and a change after it; and
# update-alternatives and grove taking turns on it, with the admin file after each turn byte for
# byte what update-alternatives alone writes in a twin sandbox.
source "$(dirname "$0")/lib.sh"

need_ua

U=$ROOT/u
G=$ROOT/g
for s in "$U" "$G"; do
	mkdir -p "$s/i/bin" "$s/i/alt" "$s/adm"
	for f in a b c; do mk_file "$s/i/opt/$f" "$f"; done
done
ua()
{
	"$UA" --altdir "$U/i/alt" --admindir "$U/adm" --log "$U/log" "$@"
}
gr()
{
	"$GROVE" alt --altdir "$G/i/alt" --admindir "$G/adm" --instdir "$G/i" "$@"
}
ua_g()
{
	"$UA" --altdir "$G/i/alt" --admindir "$G/adm" --log "$G/log" "$@"
}
# The form: b before a, "010", text after the list.
form()
{
	printf 'auto\n%s/i/bin/x\n\n%s/i/opt/b\n010\n%s/i/opt/a\n5\n\njunk\n' "$1" "$1" "$1"
}
# What update-alternatives makes of the file: its --query (it reads what the file means).
means()
{
	"$UA" --altdir "$1/i/alt" --admindir "$1/adm" --query x 2>&1 | sed "s|$1/|@/|g"
}
form "$G" >"$G/adm/x"
means "$G" >"$ROOT/meant"
expect_exit 0 gr --set x "$G/i/opt/a"
[[ $(readlink "$G/i/alt/x") == "$G/i/opt/a" ]] || fail "--set did not switch to a"
expect_exit 0 "$GROVE" undo -t "$G/i"
[[ ! -e $G/i/alt/x && ! -L $G/i/alt/x ]] || fail "undo of --set left ALTDIR/x"
diff <(means "$G") "$ROOT/meant" >/dev/null || fail "undo of --set: the admin file does not mean what it meant: $(means "$G")"
expect_exit 0 "$GROVE" undo -t "$G/i"
check "a change of a file in another form, its undo and the undo of its take-in"

rm -f "$G/adm/x"
rm -rf "$G/i/alt"
mkdir -p "$G/i/alt"
form "$G" >"$G/adm/x"
cp "$G/adm/x" "$ROOT/x.form"
expect_exit 0 gr import
cmp -s "$G/adm/x" "$ROOT/x.form" || fail "import changed the admin file"
expect_exit 0 gr --query x
expect_out_has "Best: $G/i/opt/b"
expect_exit 0 gr --auto x
[[ $(readlink "$G/i/alt/x") == "$G/i/opt/b" ]] || fail "--auto after import did not pick b"
check "grove alt import of a file in another form, and a change after it"

# Taking turns: the same commands in the twin, by update-alternatives alone.
rm -rf "$G/adm" "$G/i/alt" "$G/i/bin"
mkdir -p "$G/adm" "$G/i/alt" "$G/i/bin"
form "$G" >"$G/adm/x"
form "$U" >"$U/adm/x"
same()
{
	if [[ ! -e $U/adm/x ]]; then
		[[ ! -e $G/adm/x ]] || fail "$1: grove left the admin file update-alternatives removed"
		return 0
	fi
	sed "s|$U/|$G/|g" "$U/adm/x" | cmp -s - "$G/adm/x" ||
		fail "$1: admin file differs:"$'\n'"$(sed "s|$U/|$G/|g" "$U/adm/x" | diff - "$G/adm/x")"
	[[ $(readlink "$U/i/alt/x" | sed "s|$U/|@/|") == "$(readlink "$G/i/alt/x" | sed "s|$G/|@/|")" ]] ||
		fail "$1: ALTDIR/x differs"
}
turn()
{
	local who=$1
	shift
	ua "${@//@\//$U/}" >/dev/null 2>&1 || fail "update-alternatives $* failed"
	if [[ $who == ua ]]; then
		ua_g "${@//@\//$G/}" >/dev/null 2>&1 || fail "update-alternatives $* on grove's sandbox failed"
	else
		expect_exit 0 gr "${@//@\//$G/}"
	fi
	same "$who $*"
}
turn gr --query x
turn ua --set x @/i/opt/a
turn gr --auto x
form "$U" >"$U/adm/x"
form "$G" >"$G/adm/x"
turn gr --install @/i/bin/x x @/i/opt/c 1
turn ua --remove x @/i/opt/c
form "$U" >"$U/adm/x"
form "$G" >"$G/adm/x"
turn ua --install @/i/bin/x x @/i/opt/b 10
turn gr --set x @/i/opt/b
turn gr --remove-all x
check "update-alternatives and grove taking turns on a file in another form: update-alternatives' files"
