#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# What a state dir may hold besides a whole log (docs/journal.md, "How the log is made"): grove
# makes the log under a temporary name `.grove.db.NEW-<pid>-<random>` and gives it the name
# grove.db only once it is whole, so a run killed on the way leaves at most such a temporary (and
# SQLite's rollback journal of it). The run that next makes the log removes those, and only
# those: a temporary another grove is still making (it holds a lock on its first byte), one that
# is not a regular file or not the user's own, stays. An empty grove.db grove did not make is
# still a damaged log (exit 78, left as it is), and so is a rollback journal without its log.
# Where the filesystem refuses RENAME_NOREPLACE (NFS), the log takes its name with linkat instead
# (strace makes renameat2 fail with EINVAL, as such a filesystem does).
source "$(dirname "$0")/lib.sh"

S=$ROOT/stow
T=$ROOT/target
mk_file "$S/a/bin/x" "x"
mkdir -p "$T"
# A whole log to plant copies of, made in a state dir of its own.
mkdir -p "$ROOT/made-target"
GROVE_STATE_DIR=$ROOT/made expect_exit 0 "$GROVE" stow -d "$S" -t "$ROOT/made-target" a

# fresh NAME: an empty private state dir $ROOT/NAME, exported as the state dir.
fresh()
{
	ST=$ROOT/$1
	mkdir -m 700 "$ST"
	export GROVE_STATE_DIR=$ST
}

# stow_works: the first stow into an empty target succeeds and is the log's one transaction.
stow_works()
{
	rm -rf "$T"
	mkdir -p "$T"
	expect_exit 0 "$GROVE" stow -d "$S" -t "$T" a
	expect_tree "$T" "l bin -> ../stow/a/bin"
	expect_exit 0 "$GROVE" --json log -t "$T"
	expect_out_has '"state": "committed"'
	[[ $(stat -c %a "$ST/grove.db") == 600 ]] || fail "grove.db is not 0600: $(stat -c %a "$ST/grove.db")"
}

# ---------------------------------------------------------------- an empty grove.db

fresh empty
: >"$ST/grove.db"
ino=$(stat -c %i "$ST/grove.db")
for cmd in "stow -d $S -t $T a" "status -t $T" "log -t $T" "recover -t $T"; do
	read -ra argv <<<"$cmd"
	expect_exit 78 "$GROVE" "${argv[@]}"
	expect_err_line "^grove: journal '$ST/grove\.db' is empty \(0 bytes\), so its history is lost: move it aside to start a new log$"
done
[[ $(stat -c '%i %s' "$ST/grove.db") == "$ino 0" && $(ls -A "$ST") == grove.db ]] ||
	fail "the empty grove.db was changed or something was made beside it: $(ls -lA "$ST")"
expect_tree "$T" ""
check "an empty grove.db grove did not make is refused (exit 78) by writers and readers, and left as it is"

mv "$ST/grove.db" "$ROOT/empty.aside"
stow_works
check "moved aside, the next run makes a new log"

# ---------------------------------------------------------------- temporaries left by killed runs

fresh left
# A run killed while SQLite filled its temporary (a part-made file and its rollback journal),
# one killed before SQLite wrote anything (an empty file), and one killed after the log was
# whole but before it took its name.
head -c 8192 "$ROOT/made/grove.db" >"$ST/.grove.db.NEW-4242-00000000deadbeef"
head -c 512 /dev/zero >"$ST/.grove.db.NEW-4242-00000000deadbeef-journal"
: >"$ST/.grove.db.NEW-4343-0123456789abcdef"
cp "$ROOT/made/grove.db" "$ST/.grove.db.NEW-4444-fedcba9876543210"
chmod 600 "$ST"/.grove.db.NEW-*
stow_works
[[ $(ls -A "$ST") == "grove.db"$'\n'"locks" ]] ||
	fail "temporaries of killed runs were left in the state dir: $(ls -A "$ST")"
# The log is the one this run made, not a planted one (their transaction was on another target).
expect_exit 0 "$GROVE" --json log -t "$ROOT/made-target"
expect_out_has '"transactions": []'
check "temporaries and their rollback journals that killed runs left are removed by the run that makes the log"

fresh kept
mk_file "$ROOT/outside" "outside"
ln -s "$ROOT/outside" "$ST/.grove.db.NEW-1-1111111111111111"
mkdir "$ST/.grove.db.NEW-2-2222222222222222"
: >"$ST/.grove.db.NEW-3-3333333333333333"
chown 65534:65534 "$ST/.grove.db.NEW-3-3333333333333333"
: >"$ST/.grove.db.NEW-4-4444444444444444-journal"
: >"$ST/.grove.db.NEXT"
# One another grove is making right now: it holds the claim on the file's first byte.
: >"$ST/.grove.db.NEW-5-5555555555555555"
coproc HOLD {
	exec "$GROVE_TEST_PY" -c '
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 1, 0))
print("held", flush=True)
sys.stdin.read()
' "$ST/.grove.db.NEW-5-5555555555555555"
}
hold_pid=$HOLD_PID # bash unsets HOLD_PID as soon as the coprocess exits
hold_in=${HOLD[1]}
read -r held <&"${HOLD[0]}"
[[ $held == held ]] || fail "the helper did not take its lock"
stow_works
exec {hold_in}>&- # the helper reads to the end, then lets go
wait "$hold_pid"
for f in 1-1111111111111111 2-2222222222222222 3-3333333333333333 4-4444444444444444-journal \
	5-5555555555555555; do
	[[ -e $ST/.grove.db.NEW-$f || -L $ST/.grove.db.NEW-$f ]] || fail "'.grove.db.NEW-$f' was removed"
done
[[ -e $ST/.grove.db.NEXT && $(readlink "$ST/.grove.db.NEW-1-1111111111111111") == "$ROOT/outside" &&
	-d $ST/.grove.db.NEW-2-2222222222222222 &&
	$(stat -c %u "$ST/.grove.db.NEW-3-3333333333333333") == 65534 ]] ||
	fail "a name that is not grove's temporary was touched: $(ls -lA "$ST")"
[[ $(cat "$ROOT/outside") == outside ]] ||
	fail "the file a planted symlink points to was changed"
check "left as they are: a temporary in use, a symlink, a folder, another user's file, a lone journal, other names"

# ---------------------------------------------------------------- a rollback journal without its log

fresh lone
head -c 512 /dev/urandom >"$ST/grove.db-journal"
snapshot "$ST" lone
expect_exit 78 "$GROVE" stow -d "$S" -t "$T" a
expect_err_line "^grove: journal '$ST/grove\.db-journal' is a rollback journal without its log \('$ST/grove\.db' is missing\): refusing to start a new log beside it \(move it aside, with the log it belongs to\)$"
expect_unchanged "$ST" lone
expect_exit 0 "$GROVE" status -t "$T"
expect_unchanged "$ST" lone
check "a rollback journal without its log: no new log beside it (exit 78, nothing made); readers read an empty log"
mv "$ST/grove.db-journal" "$ROOT/journal.aside"
stow_works
check "moved aside, the next run makes a new log"

# ---------------------------------------------------------------- no RENAME_NOREPLACE

fresh nfs
rm -rf "$T"
mkdir -p "$T"
# LeakSanitizer cannot run under ptrace.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -o "$ROOT/nfs.trace" \
	-e trace=renameat2,linkat -e inject=renameat2:error=EINVAL:when=1 -- "$GROVE" stow -d "$S" -t "$T" a \
	2>"$ERR" || fail "the stow failed without RENAME_NOREPLACE: $(cat "$ERR")"
if ! grep -q 'renameat2(.*"\.grove\.db\.NEW-[^"]*", .*"grove\.db", RENAME_NOREPLACE) = -1 EINVAL .*(INJECTED)' "$ROOT/nfs.trace" ||
	! grep -q 'linkat(.*"\.grove\.db\.NEW-[^"]*", .*"grove\.db", 0) = 0' "$ROOT/nfs.trace"; then
	fail "the log was not named by linkat after renameat2 failed: $(cat "$ROOT/nfs.trace")"
fi
expect_tree "$T" "l bin -> ../stow/a/bin"
[[ $(ls -A "$ST") == "grove.db"$'\n'"locks" && $(stat -c '%h %a' "$ST/grove.db") == "1 600" ]] ||
	fail "after linkat: not one private grove.db with one name: $(ls -lA "$ST")"
expect_exit 0 "$GROVE" --json log -t "$T"
expect_out_has '"state": "committed"'
check "without RENAME_NOREPLACE the log is named by linkat, and the temporary name goes"
