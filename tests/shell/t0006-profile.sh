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
expect_exit 2 "$GROVE" profile -p "$P" delete yesterday
expect_exit 2 "$GROVE" profile -p "$P" delete +0
expect_err_line "must keep at least one generation"
expect_unchanged "$D" del
check "delete naming the current generation is refused whole, nothing changed"

# As nix-env: a number no generation has is ignored, the others are deleted.
pr delete 1 77
[[ $(numbers) == "2 3 4 5 6" && $(links_on_disk) == "2 3 4 5 6" ]] || fail "after delete 1 77: $(numbers)"
[[ -d $D/main.generations/1 ]] || fail "delete removed the folder (gc's job)"
# Nd as nix-env: generations 2 and 3 were built 10 and 9 days ago (their records say so); 3 was
# the profile 5 days ago, so it stays and only 2 goes.
sed -i "s/^time .*/time $(($(date +%s) - 10 * 86400))/" "$D/main.generations/2/.grove-generation"
sed -i "s/^time .*/time $(($(date +%s) - 9 * 86400))/" "$D/main.generations/3/.grove-generation"
pr delete 5d
[[ $(numbers) == "3 4 5 6" ]] || fail "after delete 5d: $(numbers)"
# +N as nix-env: generations newer than the current one stay; the current one is the first of N.
pr switch 4
pr delete +2
[[ $(numbers) == "3 4 5 6" ]] || fail "after delete +2 on 4: $(numbers)"
pr switch 6
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

# ---- an incomplete generation is never switched to; --dry-run is refused
W=$GROVE_STATE_DIR/profiles
expect_exit 0 "$GROVE" profile -p work build a
rm "$W/work.generations/1/.grove-generation"
expect_exit 0 "$GROVE" profile -p work list
grep -q '^ *1 .*(incomplete)$' "$OUT" || fail "list does not mark generation 1 incomplete: $(cat "$OUT")"
snapshot "$W" incomplete
expect_exit 1 "$GROVE" profile -p work switch 1
expect_err_line "generation 1 of profile '.*/work' is incomplete"
expect_exit 1 "$GROVE" profile -p work rollback
expect_exit 1 "$GROVE" -n profile -p work switch 1
expect_err_line "generation 1 of profile '.*/work' is incomplete"
expect_unchanged "$W" incomplete
check "an incomplete generation is refused by switch and rollback (a dry run too)"

mv "$W/work.generations/2/.grove-generation" "$ROOT/record"
snapshot "$W" norecord
expect_exit 1 "$GROVE" profile -p work install b
expect_err_line "the current generation 2 has no readable record"
expect_unchanged "$W" norecord
check "install on a current generation without its record is refused (it would drop packages)"

for bad in x.generations main-1-link .grove-9.0.x; do
	expect_exit 1 "$GROVE" profile -p "$bad" -d "$S" build a
	expect_err_line "profile name '$bad'"
	[[ ! -e $W/$bad ]] || fail "a refused profile name '$bad' was made"
done
check "profile names that collide with generation names or temporary names are refused"

# ---- a profile's log target is the profile's: generic commands on it are refused
D2=$ROOT/prof2
G2=$D2/x.generations
mkdir -p "$D2"
expect_exit 0 "$GROVE" profile -p "$D2/x" build -d "$S" a
expect_exit 0 "$GROVE" profile -p "$D2/x" install b
snapshot "$D2" logtarget
snapshot "$GROVE_STATE_DIR" logstate
for cmd in recover undo "rollback --to 1" status verify "stow -d $S b" "unstow -d $S a" \
	"restow -d $S a"; do
	read -ra argv <<<"$cmd"
	expect_exit 2 "$GROVE" "${argv[@]}" -t "$G2"
	expect_err_line "target '$G2' is the log of profile '$D2/x'; use 'grove profile -p $D2/x recover'"
done
expect_exit 2 "$GROVE" -S b -d "$S" -t "$G2"
expect_exit 0 "$GROVE" log -t "$G2"
expect_out_has "grove profile -p $D2/x install b"
# Known by the disk alone (another state dir's log has never seen it) ...
expect_exit 2 "$GROVE" --state "$ROOT/state-other" recover -t "$G2"
expect_err_line "is the log of profile '$D2/x'"
expect_unchanged "$D2" logtarget
expect_unchanged "$GROVE_STATE_DIR" logstate
# ... and by the log alone (the profile's links and records moved away).
mkdir "$ROOT/aside"
mv "$D2/x" "$D2/x-1-link" "$D2/x-2-link" "$ROOT/aside/"
mv "$G2/1/.grove-generation" "$ROOT/aside/rec1"
mv "$G2/2/.grove-generation" "$ROOT/aside/rec2"
expect_exit 2 "$GROVE" recover -t "$G2"
expect_err_line "is the log of profile '$D2/x'"
mv "$ROOT/aside/x" "$ROOT/aside/x-1-link" "$ROOT/aside/x-2-link" "$D2/"
mv "$ROOT/aside/rec1" "$G2/1/.grove-generation"
mv "$ROOT/aside/rec2" "$G2/2/.grove-generation"
expect_exit 0 "$GROVE" profile -p "$D2/x" rollback
# A stow target that merely ends in .generations is an ordinary target.
mkdir -p "$ROOT/plain.generations"
expect_exit 0 "$GROVE" stow -d "$S" -t "$ROOT/plain.generations" a
[[ -L $ROOT/plain.generations/bin ]] || fail "stow into plain.generations made no link"
check "generic commands refuse a profile's log target (known by its disk or by the log)"

# ---- a refused first build leaves nothing behind
for args in "-d $S nope" "-d $S a clash" "-d $ROOT/no-such-stow a" "-d $S ../a"; do
	read -ra argv <<<"$args"
	expect_exit_in "1 2" "$GROVE" profile -p "$ROOT/fresh/deeper/p" build "${argv[@]}"
	[[ ! -e $ROOT/fresh ]] || fail "a refused first build ($args) left '$(find "$ROOT/fresh" | tr '\n' ' ')'"
	expect_exit_in "1 2" "$GROVE" profile -p never build "${argv[@]}"
	[[ ! -e $W/never.generations && ! -e $W/never ]] || fail "a refused first build ($args) left '$W/never.generations'"
done
mkdir "$ROOT/exists"
expect_exit 1 "$GROVE" profile -p "$ROOT/exists/p" rollback
expect_exit 1 "$GROVE" profile -p "$ROOT/exists/p" switch 1
expect_exit 0 "$GROVE" profile -p "$ROOT/exists/p" recover
[[ -z $(ls -A "$ROOT/exists") ]] || fail "refused commands on a new profile left '$(ls -A "$ROOT/exists")'"
check "a refused first build (or rollback, switch, recover of no profile) leaves no profile folders"

# ---- -n/--dry-run: the plan, and nothing changed (profile dir and log)
DP=$ROOT/dry/p
expect_exit 0 "$GROVE" -n profile -p "$DP" build -d "$S" a b
expect_out_has "profile '$DP': would build generation 1 (a b) and make it current"
expect_out_has "link   p-1-link -> p.generations/1"
expect_out_has "link   p -> p-1-link"
[[ ! -e $ROOT/dry ]] || fail "a dry-run build of a new profile made '$ROOT/dry'"
expect_exit 0 "$GROVE" -n -v profile -p "$DP" build -d "$S" a
expect_out_has "link   bin -> ../../../stow/a/bin"
for args in "build -d $S a" "install b" "install c" "rollback" "delete 3"; do
	read -ra argv <<<"$args"
	pr_dp=("$GROVE" profile -p "$DP")
	expect_exit 0 "${pr_dp[@]}" "${argv[@]}"
done
snapshot "$ROOT/dry" dry
snapshot "$GROVE_STATE_DIR" drystate
expect_exit 0 "$GROVE" -n profile -p "$DP" install d
expect_out_has "profile '$DP': would build generation 4 (a b d) and make it current"
expect_out_has "mkdir  p.generations/4"
expect_out_has "relink p -> p-4-link (was -> p-2-link)"
expect_exit 0 "$GROVE" --dry-run profile -p "$DP" remove a
expect_out_has "would build generation 4 (b)"
expect_exit 0 "$GROVE" -n profile -p "$DP" build a b
expect_out_has "nothing to do"
expect_exit 0 "$GROVE" -n profile -p "$DP" switch 1
expect_out_has "profile '$DP': would make generation 1 current"
expect_out_has "relink p -> p-1-link (was -> p-2-link)"
expect_exit 0 "$GROVE" -n profile -p "$DP" rollback
expect_out_has "would make generation 1 current"
expect_exit 0 "$GROVE" -n profile -p "$DP" delete old
expect_out_has "profile '$DP': would delete generation 1"
expect_out_has "unlink p-1-link (was -> p.generations/1)"
expect_exit 1 "$GROVE" -n profile -p "$DP" delete 2
expect_err_line "generation 2 is the current one"
expect_exit 0 "$GROVE" -n profile -p "$DP" gc
expect_out_has "profile '$DP': would remove 1 generation folder"
expect_out_has "rmdir  p.generations/3"
expect_exit 1 "$GROVE" -n profile -p "$DP" install clash
expect_exit 2 "$GROVE" -n profile -p "$DP" recover
expect_unchanged "$ROOT/dry" dry
expect_unchanged "$GROVE_STATE_DIR" drystate
check "-n/--dry-run prints what build, install, remove, switch, rollback, delete and gc would do, and changes nothing"

# ---- --json: one document in docs/json.md's envelope per reporting command
# jq_ok EXPR: a Python expression over the document d (stdout) must be true.
jq_ok()
{
	"$GROVE_TEST_PY" - "$OUT" "$1" <<-'PY' || fail "expected $1 in: $(cat "$OUT")"
		import json, re, sys
		d = json.load(open(sys.argv[1]))
		GEN = {"number", "time", "current", "complete", "stow_dir", "folding", "dotfiles", "packages"}
		OP = {"op", "path", "text", "old_text", "package"}
		def gen_ok(g):
		    return set(g) == GEN and (g["time"] is None or re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", g["time"]))
		def ops(d):
		    assert all(set(o) == OP for o in d["ops"])
		    return [(o["op"], o["path"], o["text"], o["old_text"]) for o in d["ops"]]
		sys.exit(0 if d["grove"] == 2 and eval(sys.argv[2]) else 1)
	PY
}
# valid COMMAND: stdout validates against docs/grove.schema.json as a COMMAND document.
valid()
{
	"$GROVE_TEST_PY" "$GROVE_SOURCE_ROOT/tests/json/validate.py" "$GROVE_SOURCE_ROOT/docs/grove.schema.json" \
		"$OUT" "$1" || fail "$1 --json does not validate: $(cat "$OUT")"
}
expect_exit 0 "$GROVE" --json profile -p "$DP" list
valid "profile list"
jq_ok 'set(d) == {"grove", "command", "profile", "current", "generations"} and d["command"] == "profile list"'
jq_ok 'd["profile"] == "'"$DP"'" and d["current"] == 2 and all(gen_ok(g) for g in d["generations"])'
jq_ok '[(g["number"], g["current"], g["packages"]) for g in d["generations"]] == [(1, False, ["a"]), (2, True, ["a", "b"])]'
expect_exit 0 "$GROVE" profile -p "$DP" list --json
valid "profile list"
jq_ok 'd["command"] == "profile list" and d["generations"][0]["stow_dir"] == "'"$S"'"'
expect_exit 0 "$GROVE" --json -n profile -p "$DP" install d
valid "profile install"
# With -n, "changed" says what would be done (as for plan and undo); dry_run says it was not.
jq_ok 'd["command"] == "profile install" and d["dry_run"] and d["changed"]'
jq_ok 'd["previous"] == 2 and d["generation"] == 4 and d["packages"] == ["a", "b", "d"] and d["conflicts"] == []'
jq_ok 'ops(d) == [("mkdir", "p.generations/4", None, None), ("link", "p-4-link", "p.generations/4", None), ("relink", "p", "p-4-link", "p-2-link")]'
# A package named twice, or already installed, is listed once (the set the generation records).
expect_exit 0 "$GROVE" --json -n profile -p "$DP" install d b d/
jq_ok 'd["packages"] == ["a", "b", "d"] and d["changed"]'
expect_exit 0 "$GROVE" --json -n profile -p "$DP" install b a
jq_ok 'd["packages"] == ["a", "b"] and not d["changed"] and d["ops"] == [] and d["generation"] == 2'
expect_exit 0 "$GROVE" --json -n profile -p "$DP" rollback
jq_ok 'd["dry_run"] and d["changed"] and (d["previous"], d["generation"]) == (2, 1)'
expect_exit 0 "$GROVE" --json -n profile -p "$DP" delete 1
jq_ok 'd["dry_run"] and d["changed"] and d["deleted"] == [1]'
expect_unchanged "$ROOT/dry" dry
expect_exit 0 "$GROVE" --json profile -p "$DP" install d
valid "profile install"
jq_ok 'd["changed"] and not d["dry_run"] and d["generation"] == 4 and d["forest_ops"] == 6'
expect_exit 1 "$GROVE" --json profile -p "$DP" install clash
valid "profile install"
jq_ok 'not d["changed"] and d["ops"] == [] and d["conflicts"][0]["package"] == "clash"'
jq_ok 'set(d["conflicts"][0]) == {"action", "package", "path", "message", "hint"}'
expect_exit 0 "$GROVE" --json profile -p "$DP" switch 1
valid "profile switch"
jq_ok 'd["command"] == "profile switch" and d["changed"] and (d["previous"], d["generation"]) == (4, 1)'
jq_ok 'ops(d) == [("relink", "p", "p-1-link", "p-4-link")]'
expect_exit 0 "$GROVE" --json profile -p "$DP" switch 1
valid "profile switch"
jq_ok 'not d["changed"] and d["ops"] == []'
expect_exit 0 "$GROVE" --json profile -p "$DP" switch 4
valid "profile switch"
expect_exit 0 "$GROVE" --json profile -p "$DP" rollback
valid "profile rollback"
jq_ok 'd["command"] == "profile rollback" and (d["previous"], d["generation"]) == (4, 2)'
expect_exit 0 "$GROVE" --json profile -p "$DP" diff 1 4
valid "profile diff"
jq_ok 'd["command"] == "profile diff" and gen_ok(d["from"]) and d["to"]["number"] == 4'
jq_ok 'd["added"] == ["b", "d"] and d["removed"] == []'
expect_exit 0 "$GROVE" --json profile -p "$DP" delete 1 4
valid "profile delete"
jq_ok 'd["command"] == "profile delete" and d["changed"] and d["deleted"] == [1, 4]'
jq_ok 'ops(d) == [("unlink", "p-1-link", None, "p.generations/1"), ("unlink", "p-4-link", None, "p.generations/4")]'
expect_exit 0 "$GROVE" --json profile -p "$DP" gc
valid "profile gc"
jq_ok 'd["command"] == "profile gc" and d["removed"] == 3 and sorted(p for _, p, _, _ in ops(d)) == ["p.generations/1", "p.generations/3", "p.generations/4"]'
expect_exit 0 "$GROVE" --json profile -p "$DP" recover
valid "profile recover"
jq_ok 'set(d) == {"grove", "command", "profile", "recovered"} and d["recovered"] == 0'
check "--json documents of profile list, build/install, switch, rollback, diff, delete, gc, recover"
