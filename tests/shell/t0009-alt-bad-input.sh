#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove alt's bad-input tier against the real update-alternatives: every case runs in two
# sandboxes prepared alike (u for update-alternatives, g for grove, same path lengths); both must
# exit 2 with the same output (prefix and sandbox names aside), grove both as grove alt and as
# update-alternatives (argv[0]), and grove's sandbox, its journal and its log must be exactly as
# before.
source "$(dirname "$0")/lib.sh"

need_ua

U=$ROOT/u
G=$ROOT/g
for s in "$U" "$G"; do
	mkdir -p "$s/i/bin" "$s/i/man" "$s/i/alt" "$s/adm"
	for f in ed ed.1 vi vi.1 ex other; do mk_file "$s/i/opt/$f" "$f"; done
done
ua()
{
	"$UA" --altdir "$U/i/alt" --admindir "$U/adm" --log "$U/log" "$@"
}
gr()
{
	"$GROVE" alt --altdir "$G/i/alt" --admindir "$G/adm" --instdir "$G/i" "$@"
}
# grove run as update-alternatives (argv[0]), in the same sandbox.
mkdir -p "$ROOT/bin"
ln -s "$GROVE" "$ROOT/bin/update-alternatives"
gua()
{
	"$ROOT/bin/update-alternatives" --altdir "$G/i/alt" --admindir "$G/adm" --instdir "$G/i" "$@"
}
# The same arguments in both sandboxes: "@/" stands for the sandbox.
both_ok()
{
	ua "${@//@\//$U/}" >/dev/null 2>&1 || fail "preparing: update-alternatives $* failed"
	expect_exit 0 gr "${@//@\//$G/}"
}
both_ok --install @/i/bin/ed ed @/i/opt/ed 10 --slave @/i/man/ed.1 ed.1 @/i/opt/ed.1
both_ok --install @/i/bin/vi vi @/i/opt/vi 20 --slave @/i/man/vi.1 vi.1 @/i/opt/vi.1 \
	--slave @/i/bin/ex ex @/i/opt/ex

journal()
{
	md5sum "$GROVE_STATE_DIR/grove.db"
	"$GROVE" log -t "$G/i"
	for n in ed vi; do gr --query "$n"; done
}

n_cases=0
bad()
{
	local desc=$1 urc=0 grc=0 hrc
	shift
	n_cases=$((n_cases + 1))
	snapshot "$G"
	journal >"$ROOT/j.before" 2>&1
	ua "${@//@\//$U/}" >"$ROOT/u.out" 2>&1 || urc=$?
	gr "${@//@\//$G/}" >"$ROOT/g.out" 2>&1 || grc=$?
	((urc == 2)) || fail "$desc: update-alternatives exited $urc, not 2 (the case is wrong): $(cat "$ROOT/u.out")"
	((grc == 2)) || fail "$desc: grove alt exited $grc, not 2: $(cat "$ROOT/g.out")"
	sed -e "s|$U/|$G/|g" -e 's/update-alternatives/grove alt/g' "$ROOT/u.out" >"$ROOT/u.norm"
	diff "$ROOT/u.norm" "$ROOT/g.out" >"$ROOT/out.diff" ||
		fail "$desc: output differs (- update-alternatives, + grove alt):"$'\n'"$(cat "$ROOT/out.diff")"
	hrc=0
	gua "${@//@\//$G/}" >"$ROOT/h.out" 2>&1 || hrc=$?
	((hrc == 2)) || fail "$desc: grove as update-alternatives exited $hrc, not 2: $(cat "$ROOT/h.out")"
	sed -e "s|$U/|$G/|g" "$ROOT/u.out" >"$ROOT/u.norm"
	diff "$ROOT/u.norm" "$ROOT/h.out" >"$ROOT/out.diff" ||
		fail "$desc: output differs (- update-alternatives, + grove as update-alternatives):"$'\n'"$(cat "$ROOT/out.diff")"
	expect_unchanged "$G"
	journal >"$ROOT/j.after" 2>&1
	diff "$ROOT/j.before" "$ROOT/j.after" >/dev/null ||
		fail "$desc: the journal changed:"$'\n'"$(diff "$ROOT/j.before" "$ROOT/j.after")"
	check "$desc"
}

bad "name with a slash" --install @/i/bin/x a/b @/i/opt/other 1
bad "name with a space" --install @/i/bin/x "a b" @/i/opt/other 1
bad "slave name with a slash" --install @/i/bin/x x @/i/opt/other 1 --slave @/i/bin/y y/z @/i/opt/ex
bad "relative link" --install bin/x x @/i/opt/other 1
bad "relative path" --install @/i/bin/x x i/opt/other 1
bad "relative slave link" --install @/i/bin/x x @/i/opt/other 1 --slave bin/y y @/i/opt/ex
bad "relative slave path" --install @/i/bin/x x @/i/opt/other 1 --slave @/i/bin/y y opt/ex
bad "priority not an integer" --install @/i/bin/x x @/i/opt/other abc
bad "priority with a fraction" --install @/i/bin/x x @/i/opt/other 1.5
bad "priority in hex" --install @/i/bin/x x @/i/opt/other 0x10
bad "empty priority" --install @/i/bin/x x @/i/opt/other ""
bad "priority above int" --install @/i/bin/x x @/i/opt/other 2147483648
bad "priority below int" --install @/i/bin/x x @/i/opt/other -2147483649
bad "priority far out of range" --install @/i/bin/x x @/i/opt/other 99999999999999999999
bad "slave name equal to its master's" --install @/i/bin/x x @/i/opt/other 1 --slave @/i/bin/y x @/i/opt/ex
bad "slave link equal to its master's" --install @/i/bin/x x @/i/opt/other 1 --slave @/i/bin/x y @/i/opt/ex
bad "duplicate slave names" --install @/i/bin/x x @/i/opt/other 1 --slave @/i/bin/y y @/i/opt/ex \
	--slave @/i/bin/z y @/i/opt/ed
bad "duplicate slave links" --install @/i/bin/x x @/i/opt/other 1 --slave @/i/bin/y y @/i/opt/ex \
	--slave @/i/bin/y z @/i/opt/ed
bad "link equal to path" --install @/i/opt/other x @/i/opt/other 1
bad "slave link equal to its path" --install @/i/bin/x x @/i/opt/other 1 --slave @/i/opt/ex y @/i/opt/ex
bad "link already the master link of another group" --install @/i/bin/ed x @/i/opt/other 1
bad "link already a slave link of another group" --install @/i/bin/ex x @/i/opt/other 1
bad "slave link already the master link of another group" --install @/i/bin/x x @/i/opt/other 1 \
	--slave @/i/bin/vi y @/i/opt/ex
bad "slave link already a slave of another group" --install @/i/bin/x x @/i/opt/other 1 \
	--slave @/i/man/vi.1 y @/i/opt/ex
bad "master name already a slave of another group" --install @/i/bin/x ex @/i/opt/other 1
bad "slave name already a master" --install @/i/bin/x x @/i/opt/other 1 --slave @/i/bin/y vi @/i/opt/ex
bad "slave name already a slave of another group" --install @/i/bin/x x @/i/opt/other 1 \
	--slave @/i/bin/y ex @/i/opt/ex
bad "existing slave name given another group's link" --install @/i/bin/ed ed @/i/opt/other 1 \
	--slave @/i/man/vi.1 ed.1 @/i/opt/ex
bad "path that does not exist" --install @/i/bin/x x @/i/opt/missing 1
bad "--slave without --install" --set ed @/i/opt/ed --slave @/i/bin/y y @/i/opt/ex
bad "--install with too few arguments" --install @/i/bin/x x @/i/opt/other
bad "--slave with too few arguments" --install @/i/bin/x x @/i/opt/other 1 --slave @/i/bin/y y
bad "two commands" --auto ed --auto vi
bad "no command" --verbose
bad "unknown option" --frobnicate ed
bad "--set of a path that is not a choice" --set ed @/i/opt/other
bad "--set of an unknown group" --set nosuch @/i/opt/ed
bad "--auto of an unknown group" --auto nosuch
bad "--remove-all of an unknown group" --remove-all nosuch
bad "--query of an unknown group" --query nosuch
bad "--display of an unknown group" --display nosuch
bad "--list of an unknown group" --list nosuch
bad "--set with a name with a slash" --set a/b @/i/opt/ed
bad "--set with a relative path" --set ed opt/ed
# grove's global -n is alt's --dry-run (t0023 checks the predictions): it must never change anything.
snapshot "$G"
journal >"$ROOT/j.before" 2>&1
expect_exit 0 "$GROVE" -n alt --altdir "$G/i/alt" --admindir "$G/adm" --instdir "$G/i" --install "$G/i/bin/ed" ed "$G/i/opt/other" 50
grep -q "opt/other" "$OUT" || fail "-n alt did not say what it would do: $(cat "$OUT")"
expect_unchanged "$G"
journal >"$ROOT/j.after" 2>&1
diff "$ROOT/j.before" "$ROOT/j.after" >/dev/null || fail "-n alt changed the journal"
check "-n alt: a dry run (the prediction printed), nothing changed"
echo "# $TEST_NAME: $n_cases bad inputs, each exit 2 with update-alternatives' output, nothing changed"
