#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove alt and the log: a group switch is one transaction that `grove undo` reverts, links and
# saved group together; a group-only change is logged and undone too; undo refuses when the group
# changed since.
source "$(dirname "$0")/lib.sh"

I=$ROOT/i
ADM=$ROOT/adm
ALT=(alt --altdir "$I/alt" --admindir "$ADM" --instdir "$I")
mkdir -p "$I/bin" "$I/alt"
for c in a b c; do
	mk_file "$I/opt/$c/ed" "ed-$c"
	mk_file "$I/opt/$c/ed.1" "man-$c"
done
inst()
{
	expect_exit 0 "$GROVE" "${ALT[@]}" --install "$I/bin/ed" ed "$I/opt/$1/ed" "$2" \
		--slave "$I/bin/ed.1" ed.1 "$I/opt/$1/ed.1"
}
q()
{
	"$GROVE" "${ALT[@]}" --query ed
}

inst a 10
inst b 5
q >"$ROOT/q.before"
expect_exit 0 "$GROVE" "${ALT[@]}" --set ed "$I/opt/b/ed"
expect_tree "$I" <<SPEC
l alt/ed -> $I/opt/b/ed
l alt/ed.1 -> $I/opt/b/ed.1
d bin
l bin/ed -> $I/alt/ed
l bin/ed.1 -> $I/alt/ed.1
d opt
d opt/a
f opt/a/ed ed-a
f opt/a/ed.1 man-a
d opt/b
f opt/b/ed ed-b
f opt/b/ed.1 man-b
d opt/c
f opt/c/ed ed-c
f opt/c/ed.1 man-c
d alt
SPEC
expect_exit 0 "$GROVE" "${ALT[@]}" --query ed
expect_out_has "Status: manual"
check "--set switches the group's links and saves manual mode"

expect_exit 0 "$GROVE" undo -t "$I"
[[ $(readlink "$I/alt/ed") == "$I/opt/a/ed" && $(readlink "$I/alt/ed.1") == "$I/opt/a/ed.1" ]] ||
	fail "undo did not put the links of the old choice back"
diff "$ROOT/q.before" <(q) || fail "undo did not put the saved group back (above: - before, + now)"
check "undo of a switch restores the links and the group (auto mode, same choices)"

# Installing a lower priority choice changes no link, only the group: still one transaction.
expect_exit 0 "$GROVE" log -t "$I"
n0=$(grep -c committed "$OUT")
inst c 1
expect_exit 0 "$GROVE" log -t "$I"
[[ $(grep -c committed "$OUT") == $((n0 + 1)) ]] || fail "a group-only change made no transaction"
expect_out_has "0 ops"
expect_exit 0 "$GROVE" "${ALT[@]}" --list ed
expect_out_has "$I/opt/c/ed"
expect_exit 0 "$GROVE" undo -t "$I"
expect_exit 0 "$GROVE" "${ALT[@]}" --list ed
[[ $(cat "$OUT") == "$I/opt/a/ed"$'\n'"$I/opt/b/ed" ]] || fail "undo left choice c: $(cat "$OUT")"
check "a group-only change (a new lower choice) is logged and undone"

# rollback over several transactions puts the group back as it was before the first.
expect_exit 0 "$GROVE" log -t "$I"
x=$(awk 'NR == 1 { print $1 }' "$OUT")
expect_exit 0 "$GROVE" "${ALT[@]}" --set ed "$I/opt/b/ed"
inst c 1
expect_exit 0 "$GROVE" rollback -t "$I" --to "$x"
diff "$ROOT/q.before" <(q) || fail "rollback did not put the saved group back (- before, + now)"
[[ $(readlink "$I/alt/ed") == "$I/opt/a/ed" ]] || fail "rollback did not put alt/ed back"
check "rollback of a switch and an install restores the links and the group"

# The group changed since, through another target sharing the admindir and altdir (the parent
# of the installation root): undo refuses, and changes nothing.
expect_exit 0 "$GROVE" "${ALT[@]}" --set ed "$I/opt/b/ed"
expect_exit 0 "$GROVE" alt --altdir "$I/alt" --admindir "$ADM" --instdir "$ROOT" \
	--install "$I/bin/ed" ed "$I/opt/c/ed" 1 --slave "$I/bin/ed.1" ed.1 "$I/opt/c/ed.1"
q >"$ROOT/q.changed"
snapshot "$I"
expect_exit 1 "$GROVE" undo -t "$I"
expect_err_has "alternatives group ed was changed since"
expect_unchanged "$I"
diff "$ROOT/q.changed" <(q) || fail "a refused undo changed the group"
check "undo refuses when the group was changed since, and changes nothing"

# One writer per admindir: with --wait 0 a second writer fails at once with update-alternatives'
# exit status 2 (another state dir does not matter: the lock is a file in the admindir, which only
# its owner can open); by default it waits (t0022-alt-lock).
# The shell holds the lock on fd 9 (flock(1) on that file, made private as grove makes it); readers
# do not need it.
snapshot "$I"
(umask 077 && : >>"$ADM/.grove lock.dpkg-tmp")
exec 9<"$ADM/.grove lock.dpkg-tmp"
flock -n 9 || fail "could not lock the admindir for the test"
expect_exit 2 "$GROVE" "${ALT[@]}" --wait 0 --auto ed 9<&-
expect_err_has "grove alt: error: administrative directory '$ADM' is locked by another grove run"
# At once: no "(waited N s)", and not the notice a wait of over a second prints (a 'grove alt
# --wait 0' taken for "not given" waited the default 60 s).
! grep -Eq "waited|waiting for" "$ERR" || fail "--wait 0 waited: $(cat "$ERR")"
expect_exit 2 env GROVE_STATE_DIR="$ROOT/other-state" "$GROVE" "${ALT[@]}" --wait 0 --auto ed 9<&-
expect_err_has "is locked by another grove run"
expect_unchanged "$I"
expect_exit 0 "$GROVE" "${ALT[@]}" --query ed 9<&-
check "a second writer on a locked admindir fails fast (exit 2) and changes nothing; --query reads"
"$GROVE" --wait 60 "${ALT[@]}" --auto ed 9<&- >"$ROOT/wait.out" 2>&1 &
waiter=$!
flock -u 9
rc=0
wait "$waiter" || rc=$?
((rc == 0)) || fail "--wait: exit $rc: $(cat "$ROOT/wait.out")"
exec 9<&-
expect_exit 0 "$GROVE" "${ALT[@]}" --query ed
expect_out_has "Status: auto"
check "with --wait the writer proceeds once the lock is released"

# --root DIR: every path is taken inside DIR, as the real update-alternatives does it (twin roots
# of the same name length; its admin files, which grove keeps in its journal, aside).
need_ua
for r in ru rg; do
	mk_file "$ROOT/$r/opt/a" a
	mk_file "$ROOT/$r/opt/b" b
	mk_file "$ROOT/$r/opt/a.1" a1
	mkdir -p "$ROOT/$r/usr/bin" "$ROOT/$r/usr/man"
done
while read -r args; do
	urc=0 grc=0
	# shellcheck disable=SC2086
	"$UA" --root "$ROOT/ru" --log /var/log/alt.log $args >"$ROOT/u.out" 2>&1 || urc=$?
	# shellcheck disable=SC2086
	"$GROVE" alt --root "$ROOT/rg" --log /var/log/alt.log $args >"$ROOT/g.out" 2>&1 || grc=$?
	((urc == grc)) || fail "--root $args: exit $urc (update-alternatives) vs $grc (grove)"
	sed -e "s|$ROOT/ru|$ROOT/rg|g" -e 's/update-alternatives/grove alt/g' "$ROOT/u.out" |
		diff - "$ROOT/g.out" || fail "--root $args: output differs (- update-alternatives, + grove)"
done <<'ARGS'
--install /usr/bin/ed ed /opt/a 10 --slave /usr/man/ed.1 ed.1 /opt/a.1
--install /usr/bin/ed ed /opt/b 20
--install /usr/bin/ed ed /opt/missing 30
--set ed /opt/a
--query ed
--display ed
--get-selections
--remove ed /opt/a
--query ed
ARGS
tree_of()
{
	(cd "$1" && find . -path ./var/lib/dpkg -prune -o -printf '%y %p %l\n' | LC_ALL=C sort)
}
diff <(tree_of "$ROOT/ru") <(tree_of "$ROOT/rg") || fail "--root: the trees differ (- update-alternatives, + grove)"
diff <(sed 's/^[a-z -]*[0-9-]* [0-9:]*: //' "$ROOT/ru/var/log/alt.log" | sed "s|$ROOT/ru|$ROOT/rg|g") \
	<(sed 's/^[a-z -]*[0-9-]* [0-9:]*: //' "$ROOT/rg/var/log/alt.log") || fail "--root: the logs differ"
check "--root takes paths inside the root as update-alternatives does: outputs, links, log"
