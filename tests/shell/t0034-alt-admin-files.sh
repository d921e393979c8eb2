#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove alt beside the real update-alternatives on one admindir: grove writes ADMINDIR/NAME as
# update-alternatives writes it (byte for byte, removed with the group); a change
# update-alternatives makes is taken in before grove reads the group, as a logged transaction
# without ops that `grove undo` reverts; a corrupt admin file gets update-alternatives' message
# and exit 2, and nothing changes (links, admin files, journal).
source "$(dirname "$0")/lib.sh"

need_ua

U=$ROOT/u
G=$ROOT/g
for s in "$U" "$G"; do
	mkdir -p "$s/i/bin" "$s/i/man" "$s/i/alt" "$s/adm"
	for f in ed ed.1 red vi; do mk_file "$s/i/opt/$f" "$f"; done
done
ua()
{
	"$UA" --altdir "$U/i/alt" --admindir "$U/adm" --log "$U/log" "$@"
}
gr()
{
	"$GROVE" alt --altdir "$G/i/alt" --admindir "$G/adm" --instdir "$G/i" "$@"
}
# update-alternatives on grove's sandbox.
ua_g()
{
	"$UA" --altdir "$G/i/alt" --admindir "$G/adm" --log "$G/log" "$@"
}
# The same arguments in both sandboxes ("@/" stands for the sandbox), both must succeed.
both_ok()
{
	ua "${@//@\//$U/}" >/dev/null 2>&1 || fail "preparing: update-alternatives $* failed"
	expect_exit 0 gr "${@//@\//$G/}"
}
# The admin files of the two sandboxes, byte for byte (sandbox names aside).
same_admin()
{
	local f
	[[ $(ls "$U/adm") == "$(ls "$G/adm")" ]] ||
		fail "$1: admin files differ: update-alternatives has '$(ls "$U/adm")', grove '$(ls "$G/adm")'"
	for f in "$U/adm"/*; do
		[[ -e $f ]] || continue
		sed "s|$U/|$G/|g" "$f" | cmp -s - "$G/adm/${f##*/}" ||
			fail "$1: admin file ${f##*/} differs:"$'\n'"$(sed "s|$U/|$G/|g" "$f" | diff - "$G/adm/${f##*/}")"
	done
}

both_ok --install @/i/bin/ed ed @/i/opt/ed 10 --slave @/i/man/ed.1 ed.1 @/i/opt/ed.1
same_admin "--install"
both_ok --install @/i/bin/ed ed @/i/opt/red 20
both_ok --set ed @/i/opt/ed
same_admin "--install of a second choice, --set"
both_ok --install @/i/bin/vi vi @/i/opt/vi 5
both_ok --remove-all vi
[[ ! -e $G/adm/vi ]] || fail "--remove-all left grove's admin file vi"
same_admin "--remove-all"
check "grove writes the admin files update-alternatives writes, and removes them with the group"

# update-alternatives changes grove's group: grove reads the change, logs its taking in, and
# goes on from it; undo puts grove's record and the admin file back (links untouched).
ua_g --install "$G/i/bin/ed" ed "$G/i/opt/vi" 30 >/dev/null 2>&1 ||
	fail "update-alternatives --install on grove's admindir failed"
cp "$G/adm/ed" "$ROOT/ed.ua"
expect_exit 0 gr --query ed
expect_out_has "Alternative: $G/i/opt/vi"
n_txn=$("$GROVE" log -t "$G/i" | grep -c .)
expect_exit 0 gr --auto ed
[[ $("$GROVE" log -t "$G/i" | grep -c .) -eq $((n_txn + 2)) ]] ||
	fail "--auto after update-alternatives' change did not log a take-in and the switch"
[[ $(readlink "$G/i/alt/ed") == "$G/i/opt/vi" ]] || fail "--auto did not pick update-alternatives' new choice"
expect_exit 0 "$GROVE" undo -t "$G/i"
cmp -s "$G/adm/ed" "$ROOT/ed.ua" || fail "undo of --auto did not put the admin file back"
snapshot "$G/i"
expect_exit 0 "$GROVE" undo -t "$G/i"
expect_unchanged "$G/i"
expect_exit 0 gr --list ed
expect_out_has "$G/i/opt/red"
grep -q "$G/i/opt/vi" "$G/adm/ed" && fail "undo of the take-in left update-alternatives' choice in the admin file"
check "a change by update-alternatives is taken in as a transaction grove can undo"

# grove undo does not overwrite a change update-alternatives made since: it fails, nothing changed.
expect_exit 0 gr --auto ed # manual to auto: the admin file changes
ua_g --install "$G/i/bin/ed" ed "$G/i/opt/vi" 1 >/dev/null 2>&1 ||
	fail "update-alternatives --install on grove's admindir failed"
listing "$G/i" >"$ROOT/i.before"
cp "$G/adm/ed" "$ROOT/ed.ua2"
expect_exit 3 "$GROVE" undo -t "$G/i"
expect_err_has "'ed' was changed outside grove"
expect_tree "$G/i" <"$ROOT/i.before" # the links put back
cmp -s "$G/adm/ed" "$ROOT/ed.ua2" || fail "a failed undo changed update-alternatives' admin file"
check "undo refuses to overwrite an admin file update-alternatives changed since"

# A group an older grove saved has no admin file (the journal marks it unwritten when it
# migrates): it is not read as removed; the next mutating command writes its file.
expect_exit 0 gr --install "$G/i/bin/vi" vi "$G/i/opt/vi" 5
cp "$G/adm/vi" "$ROOT/vi.grove"
rm "$G/adm/vi"
"$GROVE_TEST_PY" - "$GROVE_STATE_DIR/grove.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE alt_states SET unwritten = 1 WHERE name = 'vi'")
db.commit()
PY
expect_exit 0 gr --query vi
expect_out_has "Value: $G/i/opt/vi"
[[ ! -e $G/adm/vi ]] || fail "--query wrote an admin file"
expect_exit 0 gr --set ed "$G/i/opt/ed"
cmp -s "$G/adm/vi" "$ROOT/vi.grove" || fail "a mutating command did not write the unwritten group's admin file"
rm "$G/adm/vi"
expect_exit 2 gr --query vi
expect_err_has "no alternatives for vi"
check "a group saved before grove wrote admin files is kept, and its file written"

# Corrupt admin files: the same command in both sandboxes, the same words and exit 2; grove's
# sandbox (links and admin files) and journal exactly as before.
journal()
{
	md5sum "$GROVE_STATE_DIR/grove.db"
	"$GROVE" log -t "$G/i"
}
n_cases=0
corrupt()
{
	local desc=$1 text=$2 urc=0 grc=0
	shift 2
	n_cases=$((n_cases + 1))
	printf '%s' "${text//@\//$U/}" >"$U/adm/ed"
	printf '%s' "${text//@\//$G/}" >"$G/adm/ed"
	snapshot "$G"
	journal >"$ROOT/j.before" 2>&1
	ua "${@//@\//$U/}" >"$ROOT/u.out" 2>&1 || urc=$?
	gr "${@//@\//$G/}" >"$ROOT/g.out" 2>&1 || grc=$?
	((urc == 2)) || fail "$desc: update-alternatives exited $urc, not 2 (the case is wrong): $(cat "$ROOT/u.out")"
	((grc == 2)) || fail "$desc: grove alt exited $grc, not 2: $(cat "$ROOT/g.out")"
	sed -e "s|$U/|$G/|g" -e 's/update-alternatives/grove alt/g' "$ROOT/u.out" >"$ROOT/u.norm"
	diff "$ROOT/u.norm" "$ROOT/g.out" >"$ROOT/out.diff" ||
		fail "$desc: output differs (- update-alternatives, + grove alt):"$'\n'"$(cat "$ROOT/out.diff")"
	expect_unchanged "$G"
	journal >"$ROOT/j.after" 2>&1
	diff "$ROOT/j.before" "$ROOT/j.after" >/dev/null || fail "$desc: the journal changed"
}
HEAD='auto\n@/i/bin/ed\n'
for cmd in "--query ed" "--display ed" "--set ed @/i/opt/ed" "--auto ed" \
	"--install @/i/bin/ed ed @/i/opt/vi 1" "--remove ed @/i/opt/ed"; do
	# shellcheck disable=SC2086
	corrupt "invalid status, $cmd" $'bogus\n@/i/bin/ed\n\n@/i/opt/ed\n10\n\n' $cmd
done
# shellcheck disable=SC2059
{
	corrupt "bad priority" "$(printf "$HEAD\n@/i/opt/ed\nten\n\n")"$'\n' --query ed
	corrupt "unterminated line" $'auto\n@/i/bin/ed' --query ed
	corrupt "end of file in the slaves" $'auto\n@/i/bin/ed\ned.1\n' --set ed @/i/opt/ed
	corrupt "duplicate slave name" "$(printf "${HEAD}x\n@/i/bin/x\nx\n@/i/bin/y\n\n")"$'\n' --query ed
	corrupt "slave link same as the link" "$(printf "${HEAD}x\n@/i/bin/ed\n\n")"$'\n' --auto ed
	corrupt "duplicate path" "$(printf "$HEAD\n@/i/opt/ed\n1\n@/i/opt/ed\n2\n\n")"$'\n' --query ed
}
check "$n_cases corrupt admin files: update-alternatives' message, exit 2, nothing changed"

# A corrupt admin file of another group is passed over, as update-alternatives' lax reading of
# the other groups does: the same output and exit status in both sandboxes.
for s in "$U" "$G"; do
	printf 'auto\n%s/i/bin/ed\n\n%s/i/opt/ed\n10\n\n' "$s" "$s" >"$s/adm/ed"
	printf 'bogus\n%s/i/bin/zz\n\n' "$s" >"$s/adm/zz"
done
for cmd in "--get-selections" "--query ed" "--all" "--set ed @/i/opt/ed" \
	"--install @/i/bin/ex ex @/i/opt/vi 5"; do
	urc=0 grc=0
	# shellcheck disable=SC2086
	set -- $cmd
	ua "${@//@\//$U/}" </dev/null >"$ROOT/u.out" 2>&1 || urc=$?
	gr "${@//@\//$G/}" </dev/null >"$ROOT/g.out" 2>&1 || grc=$?
	((urc == grc)) || fail "$cmd with another group's file corrupt: update-alternatives exited $urc, grove $grc"
	sed -e "s|$U/|$G/|g" -e 's/update-alternatives/grove alt/g' "$ROOT/u.out" |
		diff - "$ROOT/g.out" >"$ROOT/out.diff" ||
		fail "$cmd with another group's file corrupt: output differs:"$'\n'"$(cat "$ROOT/out.diff")"
done
same_admin "commands beside a corrupt admin file of another group"
check "a corrupt admin file of another group is passed over, as update-alternatives does"
