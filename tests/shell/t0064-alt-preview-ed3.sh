#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove alt --dry-run is the real run in a read-only mode (issue 39 item 1): it takes in the admin
# files update-alternatives wrote, as the real run does, so it predicts what the real run then does.
# The issue's case: ed1 (10) and ed2 (20) installed by grove, ed3 (30) then added by the real
# update-alternatives in the same root; a dry --set ed /usr/bin/ed3 exited 2 "not registered"
# (the old copy of the command read only grove's journal) while the real --set exits 0. Each
# prediction is checked against what the real grove run then does to the links and against the
# admin file the real update-alternatives writes for the same command on a copy of the root; and
# the dry run writes nothing at all (the whole tree, state dir included, and its system calls).
source "$(dirname "$0")/lib.sh"
need_ua
command -v strace >/dev/null || fail "strace is needed (apt-get install strace)"

W=$ROOT/w M=$ROOT/m
R=$W/r U=$W/u S=$W/state
mkdir -p "$M" "$R/usr/bin" "$R/etc/alternatives" "$R/var/lib/dpkg/alternatives"
for k in 1 2 3; do mk_file "$R/usr/bin/ed$k" "ed$k"; done
galt() { "$GROVE" --state "$S" alt --root "$R" "$@"; }
expect_exit 0 galt --install /usr/bin/ed ed /usr/bin/ed1 10
expect_exit 0 galt --install /usr/bin/ed ed /usr/bin/ed2 20
"$UA" --root "$R" --install /usr/bin/ed ed /usr/bin/ed3 30 >/dev/null 2>&1 ||
	fail "update-alternatives --install of ed3 failed"
[[ $(readlink "$R/etc/alternatives/ed") == /usr/bin/ed3 ]] ||
	fail "update-alternatives did not switch to ed3 (setup)"

# Waits until the coarse clock, which stamps files, has passed the admin files' change times
# (src/alt/alt_admin.c's stamp_settled; t0861 waits so too).
settled()
{
	"$GROVE_TEST_PY" - "$R/var/lib/dpkg/alternatives" <<'PY' || fail "the coarse clock did not pass the admin files' change times"
import os, sys, time
d = sys.argv[1]
newest = max(os.lstat(os.path.join(d, f)).st_ctime_ns for f in os.listdir(d))
deadline = time.monotonic() + 10
while time.clock_gettime_ns(5) <= newest:  # 5: CLOCK_REALTIME_COARSE (Linux)
    if time.monotonic() > deadline:
        sys.exit(1)
    time.sleep(0.001)
PY
}

# links DIR: every symlink beneath DIR (not followed), as JSON {path: text}.
links()
{
	"$GROVE_TEST_PY" - "$1" <<'PY'
import json, os, sys
top, out = sys.argv[1], {}
for d, dirs, files in os.walk(top):
    for n in dirs + files:
        p = os.path.join(d, n)
        if os.path.islink(p):
            out["/" + os.path.relpath(p, top)] = os.readlink(p)
print(json.dumps(out, sort_keys=True))
PY
}

# predict ARGS…: the dry run (JSON) exits 0 and changes nothing under $W (state dir included,
# mtimes and inodes too); then the real grove run in R and the real update-alternatives in a copy
# U of R: the predicted ops are exactly the links that changed in R, the predicted group text is
# update-alternatives' admin file after the same command, and `changed` says whether either moved.
predict()
{
	snapshot "$W"
	expect_exit 0 "$GROVE" --state "$S" --json alt --root "$R" --dry-run "$@"
	expect_unchanged "$W"
	cp "$OUT" "$M/pred-$TEST_NAME.json"
	links "$R" >"$M/before-$TEST_NAME.json"
	rm -rf "$U"
	cp -a "$R" "$U"
	expect_exit 0 galt "$@"
	"$UA" --root "$U" "$@" >/dev/null 2>&1 || fail "update-alternatives $* failed"
	links "$R" >"$M/after-$TEST_NAME.json"
	"$GROVE_TEST_PY" - "$M" "$TEST_NAME" "$U" "$*" <<'PY' || fail "--dry-run $*: the prediction was wrong"
import json, os, sys
d, t, u, what = sys.argv[1:]
pred = json.load(open(os.path.join(d, "pred-%s.json" % t)))
before = json.load(open(os.path.join(d, "before-%s.json" % t)))
after = json.load(open(os.path.join(d, "after-%s.json" % t)))
assert pred["dry_run"] is True, pred
want = dict(before)
for op in pred["ops"]:
    p = "/" + op["path"]
    if op["op"] in ("link", "relink"):
        want[p] = op["text"]
    elif op["op"] == "unlink":
        want.pop(p, None)
assert want == after, (what, "predicted links", want, "real links", after)
f = os.path.join(u, "var/lib/dpkg/alternatives/ed")
ua_text = open(f).read() if os.path.exists(f) else None
g = pred["group"]
if g is not None:
    assert g["after"] == ua_text, (what, g["after"], ua_text)
assert pred["changed"] == (bool(pred["ops"]) or g is not None), pred
assert pred["changed"] == (before != after or g is not None), pred
PY
	# (the real grove run leaves the admin file update-alternatives writes)
	cmp -s "$R/var/lib/dpkg/alternatives/ed" "$U/var/lib/dpkg/alternatives/ed" ||
		fail "$*: grove's admin file differs from update-alternatives'"
}

predict --set ed /usr/bin/ed3
"$GROVE_TEST_PY" - "$M/pred-$TEST_NAME.json" <<'PY' || fail "the ed3 case: the --set predicted no manual mode"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["changed"] and p["group"]["after"].startswith("manual\n"), p
PY
check "ed3 added by update-alternatives: a dry --set ed /usr/bin/ed3 exits 0 and predicts the real --set"

# ed3 back to auto by update-alternatives, then grove's dry runs of changes that move links.
"$UA" --root "$R" --auto ed >/dev/null 2>&1 || fail "update-alternatives --auto failed"
predict --set ed /usr/bin/ed1
"$UA" --root "$R" --install /usr/bin/ed ed /usr/bin/ed3 5 >/dev/null 2>&1 ||
	fail "update-alternatives --install failed"
predict --auto ed
predict --remove ed /usr/bin/ed2
check "after more update-alternatives changes: dry --set, --auto and --remove predict the real runs"

# The text form says what would be done, as a plan: no 'using … in manual mode' as if done, the
# ops with their whole paths (inside the root), the group's change rather than its admin file.
[[ $(readlink "$R/etc/alternatives/ed") == /usr/bin/ed1 ]] || fail "ed1 is not current (setup)"
expect_exit 0 "$GROVE" --state "$S" -n alt --root "$R" --set ed /usr/bin/ed3
expect_out_has "grove alt: would use /usr/bin/ed3 to provide /usr/bin/ed (ed) in manual mode"
expect_out_has "relink /etc/alternatives/ed -> /usr/bin/ed3 (was -> /usr/bin/ed1)"
expect_out_has "  mode: manual (was auto)"
grep -Eq "^(manual|auto|/usr/bin/ed)$" "$OUT" && fail "the text dry run dumps the admin file"
check "the text dry run is a plan: 'would use', whole paths, the mode's change"

# No write at all, traced: no file opened for writing or made, nothing renamed, removed or
# linked, no lock taken (a lock file would be made in the admindir); the real run does all that.
trace()
{
	# (LeakSanitizer does not run under ptrace)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -o "$M/trace-$TEST_NAME" -e trace=%file,%desc "$@" >/dev/null 2>&1
	grep -E '(open|openat|openat2|creat)\(.*(O_WRONLY|O_RDWR|O_CREAT)|(^|[^a-z])(mkdir|mkdirat|unlink|unlinkat|rename|renameat|renameat2|symlink|symlinkat|link|linkat|truncate|ftruncate|fchmod|fchmodat|fchown|fchownat|utimensat|flock)\(|(^|[^a-z])(write|pwrite64|writev)\(([3-9]|[1-9][0-9])' \
		"$M/trace-$TEST_NAME" || true
}
# (once the admin files' change times have settled, a reading run would write the state dir's
# cache of their stamps: the dry run reads it and writes none)
settled
snapshot "$W"
writes=$(trace "$GROVE" --state "$S" -n alt --root "$R" --set ed /usr/bin/ed3)
[[ -z $writes ]] || fail "the dry run wrote: $writes"
expect_unchanged "$W"
writes=$(trace "$GROVE" --state "$S" -n alt --root "$R" import)
[[ -z $writes ]] || fail "the dry import wrote: $writes"
expect_unchanged "$W"
writes=$(trace "$GROVE" --state "$S" alt --root "$R" --set ed /usr/bin/ed3)
[[ $(readlink "$R/etc/alternatives/ed") == /usr/bin/ed3 ]] || fail "the traced real --set did not switch"
[[ -n $writes ]] || fail "the trace saw no write of the real run (the check would see nothing)"
check "traced: a dry --set and a dry import write, make and lock nothing (the real --set does)"

# Nothing made where the real run would make it: no admindir, no state dir, no journal.
N=$W/new
mkdir -p "$N/usr/bin"
mk_file "$N/usr/bin/vi1" vi1
snapshot "$W"
expect_exit 0 "$GROVE" --state "$W/state2" -n alt --root "$N" --install /usr/bin/vi vi /usr/bin/vi1 1
expect_out_has "link   /etc/alternatives/vi -> /usr/bin/vi1"
expect_unchanged "$W"
check "a dry first install makes no admindir, altdir, state dir or journal"

# A --log the real run refuses (a symlink, a folder): it fails before changing anything, exit 2;
# so does the dry run, in the same words, having opened nothing for writing.
mkdir -p "$R/var/log/alt.d"
ln -s /etc/passwd "$R/var/log/alt.lnk"
for lg in /var/log/alt.lnk /var/log/alt.d; do
	expect_exit 2 galt --log "$lg" --dry-run --set ed /usr/bin/ed1
	cp "$ERR" "$M/dry.err"
	expect_exit 2 galt --log "$lg" --set ed /usr/bin/ed1
	cmp -s "$ERR" "$M/dry.err" || fail "--log $lg: the dry run's error differs from the real run's"
done
check "a --log the real run refuses: the dry run fails as it does"

# An interrupted transaction (its record put back to 'intent', as a kill -9 leaves it): the real
# run rolls it back first, which a dry run cannot; it says so and writes nothing.
command -v sqlite3 >/dev/null || fail "sqlite3 is needed (apt-get install sqlite3)"
expect_exit 0 galt --set ed /usr/bin/ed1
sqlite3 "$S/grove.db" "UPDATE txns SET state = 'intent', finished = NULL WHERE id = (SELECT max(id) FROM txns)" ||
	fail "cannot edit the log"
txn=$(sqlite3 "$S/grove.db" "SELECT max(id) FROM txns")
snapshot "$W"
expect_exit 0 galt --dry-run --set ed /usr/bin/ed3
expect_err_has "transaction $txn was interrupted: the real run would roll it back first"
expect_unchanged "$W"
check "an interrupted transaction: the dry run warns that the real run recovers it first, writes nothing"
