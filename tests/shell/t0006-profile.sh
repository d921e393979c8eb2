#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove profile: generations built, rolled back, switched, deleted in each form and collected;
# numbering as Nix (highest + 1); an identical build makes nothing; conflicts change nothing.
source "$(dirname "$0")/lib.sh"

S=$ROOT/stow
D=$ROOT/prof
P=$D/main
mk_file "$S/a/bin/a" "a"
mk_file "$S/a/share/doc/a.txt" "a doc"
mk_file "$S/b/bin/b" "b"
mk_file "$S/c/etc/c.conf" "c"
mk_file "$S/clash/bin/a" "another a"
mk_file "$S/d/bin/d" "d"

pr()
{
	expect_exit 0 "$GROVE" profile -p "$P" "$@"
}

# current: the number the profile link points at, from the disk.
current()
{
	readlink "$P" | sed -n 's/^main-\([0-9]*\)-link$/\1/p'
}

# numbers: the generations `list --json` reports, space-separated.
numbers()
{
	"$GROVE" profile -p "$P" list --json | "$GROVE_TEST_PY" -c '
import json, sys
print(" ".join(str(g["number"]) for g in json.load(sys.stdin)["generations"]))'
}

# links_on_disk: the generation numbers that have a main-N-link, sorted.
links_on_disk()
{
	find "$D" -maxdepth 1 -type l -name 'main-*-link' -printf '%f\n' |
		sed 's/^main-\([0-9]*\)-link$/\1/' | sort -n | tr '\n' ' ' | sed 's/ $//'
}

# expect_profile_tree: expect_tree on D, with each record's content (it holds the time) shown as @.
expect_profile_tree()
{
	local want got
	want=$(sed -e 's/^[[:space:]]*//' -e '/^$/d' | LC_ALL=C sort)
	got=$(listing "$D" | sed 's|^\(f [^ ]*/\.grove-generation\) .*|\1 @|' | LC_ALL=C sort)
	if [[ $want != "$got" ]]; then
		diff -u <(printf '%s\n' "$want") <(printf '%s\n' "$got") | tail -n +3 | sed 's/^/    /' >&2
		fail "profile dir '$D' differs from the expected one (- expected, + actual)"
	fi
}

# ---- three generations
pr build -d "$S" a
pr install b
pr install -d "$S" c
expect_profile_tree <<'SPEC'
l main -> main-3-link
l main-1-link -> main.generations/1
l main-2-link -> main.generations/2
l main-3-link -> main.generations/3
d main.generations
d main.generations/1
f main.generations/1/.grove-generation @
l main.generations/1/bin -> ../../../stow/a/bin
l main.generations/1/share -> ../../../stow/a/share
d main.generations/2
f main.generations/2/.grove-generation @
d main.generations/2/bin
l main.generations/2/bin/a -> ../../../../stow/a/bin/a
l main.generations/2/bin/b -> ../../../../stow/b/bin/b
l main.generations/2/share -> ../../../stow/a/share
d main.generations/3
f main.generations/3/.grove-generation @
d main.generations/3/bin
l main.generations/3/bin/a -> ../../../../stow/a/bin/a
l main.generations/3/bin/b -> ../../../../stow/b/bin/b
l main.generations/3/etc -> ../../../stow/c/etc
l main.generations/3/share -> ../../../stow/a/share
SPEC
[[ $(cat "$P/etc/c.conf") == c && $(cat "$P/bin/a") == a ]] || fail "files do not resolve through the profile"
[[ $(numbers) == "1 2 3" ]] || fail "list says '$(numbers)', want '1 2 3'"
expect_exit 0 "$GROVE" profile -p "$P" list
grep -q '^ *3 .*a b c   (current)$' "$OUT" || fail "list does not mark 3 current with a b c: $(cat "$OUT")"
grep -q '^ *1 .*   a$' "$OUT" || fail "list does not show generation 1 with a: $(cat "$OUT")"
grep -qx 'package b' "$D/main.generations/2/.grove-generation" || fail "record of 2 lacks b"
grep -qx "stow $S" "$D/main.generations/2/.grove-generation" || fail "record of 2 lacks the stow dir"
check "build, install, install make generations 1, 2, 3; the profile points at 3"

# ---- roll back twice, build again: highest + 1
pr rollback
[[ $(current) == 2 ]] || fail "after one rollback the profile is on '$(current)'"
[[ ! -e $P/etc ]] || fail "generation 2 shows c's etc"
pr rollback
[[ $(current) == 1 ]] || fail "after two rollbacks the profile is on '$(current)'"
expect_exit 1 "$GROVE" profile -p "$P" rollback
expect_err_line "generation 1 is the oldest"
[[ $(current) == 1 ]] || fail "a refused rollback moved the profile"
check "rollback twice reaches 1; rollback at the oldest is refused (exit 1)"

pr install d
[[ $(current) == 4 ]] || fail "a build after rollbacks made '$(current)', want 4 (highest + 1)"
[[ $(cat "$P/bin/d") == d && ! -e $P/bin/b ]] || fail "generation 4 is not 1 plus d"
grep -qx 'package a' "$D/main.generations/4/.grove-generation" || fail "record of 4 lacks a"
pr switch 3
[[ $(current) == 3 && $(cat "$P/etc/c.conf") == c ]] || fail "switch 3 did not switch forward"
expect_exit 1 "$GROVE" profile -p "$P" switch 9
expect_err_line "has no generation 9"
check "a build after rollbacks is number 4; switch forward to 3; switch to a missing one refused"

# ---- identical build: nothing to do
expect_exit 0 "$GROVE" log -t "$D/main.generations"
txns=$(grep -c committed "$OUT")
snapshot "$D" same
pr install b
expect_out_has "nothing to do"
pr build c b a
expect_unchanged "$D" same
expect_exit 0 "$GROVE" log -t "$D/main.generations"
[[ $(grep -c committed "$OUT") == "$txns" ]] || fail "an identical build logged a transaction"
check "an identical build (install of a present package, or the same set) makes no generation"

# A package that grew is not identical: its forest differs.
mk_file "$S/a/lib/liba" "lib"
pr build a b c
[[ $(current) == 5 && -e $P/lib/liba ]] || fail "a grown package made no new generation"
check "the same packages with new content make a new generation"

# ---- conflicts: refused, nothing changed
snapshot "$D" conflict
expect_exit 1 "$GROVE" profile -p "$P" install clash
expect_err_has "clash"
expect_err_has "bin/a"
expect_unchanged "$D" conflict
check "a package conflicting with another in the same generation is refused, nothing changed"

# ---- remove
pr remove c
[[ $(current) == 6 && ! -e $P/etc && -e $P/bin/b ]] || fail "remove c did not make a b generation"
expect_exit 1 "$GROVE" profile -p "$P" remove zzz
expect_err_line "package 'zzz' is not in the current generation"
check "remove makes a generation without the package; removing an absent one is refused"

# ---- diff
expect_exit 0 "$GROVE" profile -p "$P" diff 1 3
[[ $(cat "$OUT") == $'+ b\n+ c' ]] || fail "diff 1 3 says: $(cat "$OUT")"
check "diff names the packages added and removed"

# ---- delete: each form; never the current one
[[ $(numbers) == "1 2 3 4 5 6" && $(links_on_disk) == "1 2 3 4 5 6" ]] || fail "before delete: $(numbers)"
snapshot "$D" del
expect_exit 1 "$GROVE" profile -p "$P" delete 6
expect_err_line "generation 6 is the current one"
expect_exit 1 "$GROVE" profile -p "$P" delete 1 6
expect_exit 1 "$GROVE" profile -p "$P" delete 1 77
expect_err_line "has no generation 77"
expect_exit 2 "$GROVE" profile -p "$P" delete yesterday
expect_unchanged "$D" del
check "delete naming the current (or a missing) generation is refused whole, nothing changed"

pr delete 1
[[ $(numbers) == "2 3 4 5 6" && $(links_on_disk) == "2 3 4 5 6" ]] || fail "after delete 1: $(numbers)"
[[ -d $D/main.generations/1 ]] || fail "delete removed the folder (gc's job)"
# Nd: generation 2 was built 10 days ago (its record says so).
sed -i "s/^time .*/time $(($(date +%s) - 10 * 86400))/" "$D/main.generations/2/.grove-generation"
pr delete 5d
[[ $(numbers) == "3 4 5 6" ]] || fail "after delete 5d: $(numbers)"
pr delete +2
[[ $(numbers) == "5 6" ]] || fail "after delete +2: $(numbers)"
pr switch 5
pr delete old
[[ $(numbers) == "5" && $(links_on_disk) == "5" && $(current) == 5 ]] || fail "after delete old: $(numbers)"
pr delete old
expect_out_has "nothing to do"
check "delete N, Nd, +N and old remove generation links, never the current one"

# ---- gc
mk_file "$D/main.generations/3/bin/users-file" "mine"
expect_exit 1 "$GROVE" profile -p "$P" gc
expect_err_has "users-file"
[[ -d $D/main.generations/1 && -d $D/main.generations/3 ]] || fail "a refused gc removed folders"
rm "$D/main.generations/3/bin/users-file"
pr gc
expect_out_has "removed 5 generation folders"
expect_profile_tree <<'SPEC'
l main -> main-5-link
l main-5-link -> main.generations/5
d main.generations
d main.generations/5
f main.generations/5/.grove-generation @
d main.generations/5/bin
l main.generations/5/bin/a -> ../../../../stow/a/bin/a
l main.generations/5/bin/b -> ../../../../stow/b/bin/b
l main.generations/5/etc -> ../../../stow/c/etc
l main.generations/5/lib -> ../../../stow/a/lib
l main.generations/5/share -> ../../../stow/a/share
SPEC
pr build a
[[ $(current) == 6 ]] || fail "after gc the next build is '$(current)', want 6"
check "gc removes unreferenced generation folders (refusing one holding a user's file)"

# ---- the lock: a second writer gets 75
lockf=$GROVE_STATE_DIR/locks/$(stat -c '%d-%i' "$D/main.generations").lock
[[ -f $lockf ]] || fail "no lock file '$lockf'"
flock "$lockf" "$GROVE" profile -p "$P" rollback >"$OUT" 2>"$ERR" && fail "locked rollback succeeded"
flock "$lockf" bash -c '"$0" profile -p "$1" rollback; echo $? >"$2"' "$GROVE" "$P" "$ROOT/rc" 2>"$ERR" || true
[[ $(cat "$ROOT/rc") == 75 ]] || fail "a locked profile gave exit $(cat "$ROOT/rc"), want 75"
expect_err_line "is locked by another grove run"
check "a profile locked by another run gives exit 75"

# ---- named profiles in the state dir; the default one gets ~/.grove-profile
expect_exit 0 "$GROVE" profile -d "$S" build a b
[[ $(readlink "$HOME/.grove-profile") == "$GROVE_STATE_DIR/profiles/default" ]] ||
	fail "~/.grove-profile is '$(readlink "$HOME/.grove-profile")'"
[[ $(cat "$HOME/.grove-profile/bin/b") == b ]] || fail "~/.grove-profile does not resolve"
expect_exit 0 "$GROVE" profile -p work -d "$S" build c --link "$ROOT/work-link"
[[ $(cat "$ROOT/work-link/etc/c.conf") == c ]] || fail "--link does not resolve"
expect_exit 0 "$GROVE" profile -p work list
grep -q '^ *1 .*c   (current)$' "$OUT" || fail "profile work: $(cat "$OUT")"
check "the default profile gets ~/.grove-profile; -p NAME lives in the state dir; --link PATH"
