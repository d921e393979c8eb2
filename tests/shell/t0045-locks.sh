#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# No user can lock root out, or spoof root's live-holder mark (issue 37, items 1 and 5; DESIGN.md
# invariant 11). Root's state dir is readable by all (the system log), but its lock files are
# root's alone: user nobody cannot open them, so cannot hold them (root's stow goes on), cannot
# mark them after a crash (root's status and verify still say "interrupted", exit 4), and an
# earlier grove's lock file that nobody opened while it was readable is replaced, not locked.
# grove alt's admindir lock is a private file in it: nobody holding the admindir folder itself
# blocks nothing. Nobody's holder reports through a fifo what it holds before root runs.
set -euo pipefail
# shellcheck source=tests/shell/lib.sh
. "$(dirname "$0")/lib.sh"

SYS=$ROOT/system-state
S=$ROOT/stow
T=$ROOT/target
mkdir -p "$T"
for p in a b c d e f; do
	mk_file "$S/$p/bin/$p" "$p"
done
cd "$ROOT"

# as_root CMD…: grove as root with no state dir named: the system one, readable by users.
as_root()
{
	env -u GROVE_STATE_DIR GROVE_SYSTEM_STATE_DIR="$SYS" "$@"
}
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

# hold WHO KIND FILE: as WHO (nobody or root), opens FILE read-only (all flock(2) needs) and takes
# KIND on it: "flock" (LOCK_EX), "mark" (the OFD read lock grove's live-holder mark is) or "both".
# What it got, "held" or "refused: REASON", is read from a fifo into $SAID; it keeps what it holds
# (alive, as a grove run is while it holds its lock) until release.
hold()
{
	local -a as=()
	[[ $1 == nobody ]] && as=("${NOBODY[@]}")
	rm -f "$ROOT/said" "$ROOT/go"
	mkfifo -m 666 "$ROOT/said" "$ROOT/go"
	"${as[@]}" "$GROVE_TEST_PY" - "$2" "$3" "$ROOT/said" "$ROOT/go" >"$ROOT/holder.log" 2>&1 <<-'PY' &
		import fcntl, os, struct, sys
		kind, path, said, go = sys.argv[1:]
		try:
		    fd = os.open(path, os.O_RDONLY)
		    if kind in ('flock', 'both'):
		        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
		    if kind in ('mark', 'both'):
		        fl = struct.pack('@hhqqixxxx', fcntl.F_RDLCK, os.SEEK_SET, 1 << 30, 1, 0)
		        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, fl)
		    msg = 'held'
		except OSError as e:
		    msg = 'refused: ' + e.strerror
		with open(said, 'w') as f:
		    f.write(msg + '\n')
		with open(go) as f:
		    f.read()
	PY
	HOLDER=$!
	at_exit "kill $HOLDER"
	# Read and write: the open does not wait for the holder, the read is bounded if it died.
	exec 7<>"$ROOT/said"
	read -r -t 120 SAID <&7 || fail "the holder said nothing: $(cat "$ROOT/holder.log")"
	exec 7<&-
}
release()
{
	echo >"$ROOT/go"
	wait "$HOLDER" || fail "the holder failed: $(cat "$ROOT/holder.log")"
}
lock_of()
{
	local f
	f=$(find "$1/locks" -name '*.lock')
	[[ $(wc -l <<<"$f") == 1 && -f $f ]] || fail "expected one lock file in $1/locks: $(ls -la "$1/locks")"
	echo "$f"
}

# ---------------------------------------------------------------- the target lock

expect_exit 0 as_root "$GROVE" -d stow -t target -S a
L=$(lock_of "$SYS")
[[ $(stat -c %a "$SYS/locks") == 755 && $(stat -c '%a %u' "$L") == "600 0" ]] ||
	fail "root's lock file is not root's alone: $(ls -la "$SYS/locks")"
check "root's state dir is readable (locks/ 755), its lock file is 0600 root's"

hold nobody flock "$L"
expect_exit 0 as_root "$GROVE" --wait 0 -d stow -t target -S b
release
[[ $SAID == "refused: Permission denied" ]] || fail "nobody could open root's lock file: $SAID"
[[ -L $T/bin/b || -L $T/bin ]] || fail "b was not stowed"
check "nobody cannot open root's lock file, and root's stow goes on while nobody tries"

# An earlier grove made it 0644: whoever opened it then may hold it still. It is replaced.
chmod 644 "$L"
old_ino=$(stat -c %i "$L")
hold nobody flock "$L"
[[ $SAID == held ]] || fail "nobody could not hold a 0644 lock file: $SAID"
expect_exit 0 as_root "$GROVE" --wait 0 -d stow -t target -S c
[[ $(stat -c '%a %u' "$L") == "600 0" && $(stat -c %i "$L") != "$old_ino" ]] ||
	fail "the earlier lock file was not replaced: $(ls -lai "$SYS/locks")"
expect_exit 0 as_root "$GROVE" --wait 0 -d stow -t target -S d
release
check "an earlier grove's 0644 lock file that nobody holds is replaced by a private one; root's runs go on"

# ... but not while a run of root's (an earlier grove mid-upgrade) holds it.
chmod 644 "$L"
hold root flock "$L"
[[ $SAID == held ]] || fail "root could not hold the lock file: $SAID"
expect_exit 75 as_root "$GROVE" --wait 0 -d stow -t target -S e
expect_err_line "target 'target' is locked by another grove run"
release
[[ $(stat -c %a "$L") == 644 ]] || fail "the earlier lock file was replaced while root's run held it"
expect_exit 0 as_root "$GROVE" --wait 0 -d stow -t target -S e
[[ $(stat -c %a "$L") == 600 ]] || fail "the earlier lock file was not replaced once free"
check "an earlier lock file a root process holds is waited for (exit 75 with --wait 0), replaced once free"

# A locks/ folder or lock file another user could have made or filled is refused.
chown nobody "$SYS/locks"
expect_exit 78 as_root "$GROVE" --wait 0 -d stow -t target -S f
expect_err_line "lock folder '$SYS/locks' is owned by uid 65534, not by the state dir's owner \(uid 0\)"
chown root "$SYS/locks"
chmod 777 "$SYS/locks"
expect_exit 78 as_root "$GROVE" --wait 0 -d stow -t target -S f
expect_err_line "lock folder '$SYS/locks' is writable by everyone"
chmod 755 "$SYS/locks"
chown nobody "$L"
expect_exit 78 as_root "$GROVE" --wait 0 -d stow -t target -S f
expect_err_line "lock file '$L' is owned by uid 65534, not by uid 0"
chown root "$L"
[[ ! -e $T/bin/f ]] || fail "f was stowed through a lock another user controls"
check "a locks/ folder owned by another user or writable by others, or a lock file of another user's: refused (78)"

# ---------------------------------------------------------------- the live-holder mark

strace -qq -o /dev/null -e trace=getpid -e inject=getpid:error=EIO -- true ||
	fail "strace with fault injection is needed to stop root's run mid-way"
rm -f "$ROOT/trace"
mkfifo "$ROOT/trace"
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 as_root strace -f -qq -o "$ROOT/trace" \
	-e trace=symlinkat -e inject=symlinkat:signal=SIGSTOP:when=1 -- \
	"$GROVE" -d stow -t target -S f >"$ROOT/held.out" 2>&1 &
tracer=$!
exec 3<"$ROOT/trace"
held=
while IFS= read -r -t 120 line <&3; do
	if [[ $line == *'--- stopped by SIGSTOP ---'* ]]; then
		held=${line%% *}
		break
	fi
done
[[ $held =~ ^[0-9]+$ ]] || fail "root's run did not stop: $(cat "$ROOT/held.out")"
kill -KILL "$held"
cat <&3 >/dev/null
exec 3<&-
wait "$tracer" || true
expect_exit 4 as_root "$GROVE" status -t target
expect_err_line "transaction [0-9]+ .* was interrupted"
check "root's run killed mid-way: status says interrupted (exit 4)"

hold nobody both "$L"
expect_exit 4 as_root "$GROVE" status -t target
expect_err_line "transaction [0-9]+ .* was interrupted"
expect_exit 4 as_root "$GROVE" verify -t target
release
[[ $SAID == "refused: Permission denied" ]] || fail "nobody could mark root's lock file: $SAID"
check "nobody cannot mark root's lock file after the crash: status and verify still exit 4"

# An earlier grove's readable lock file: nobody can open it and place both, but neither is
# believed (a mark or an flock counts only when a process of root's holds it).
chmod 644 "$L"
hold nobody both "$L"
[[ $SAID == held ]] || fail "nobody could not mark a 0644 lock file: $SAID"
expect_exit 4 as_root "$GROVE" status -t target
expect_err_line "transaction [0-9]+ .* was interrupted"
expect_exit 4 as_root "$GROVE" verify -t target
mkdir -p "$ROOT/nobody-state"
chown nobody "$ROOT/nobody-state"
expect_exit 4 "${NOBODY[@]}" env GROVE_STATE_DIR="$ROOT/nobody-state" GROVE_SYSTEM_STATE_DIR="$SYS" \
	"$GROVE" status -t target
release
check "nobody's mark and flock on an earlier grove's readable lock file are not believed: exit 4"
chmod 600 "$L"

# A holder record names a pid: believed only when that process runs as the lock file's owner.
# Root holds the lock (and its mark) with a record naming a process of nobody's.
"${NOBODY[@]}" sleep infinity &
nbpid=$!
at_exit "kill $nbpid"
rm -f "$ROOT/said" "$ROOT/go"
mkfifo "$ROOT/said" "$ROOT/go"
"$GROVE_TEST_PY" - "$L" "$nbpid" "$ROOT/said" "$ROOT/go" <<-'PY' &
	import fcntl, os, struct, sys
	path, pid, said, go = sys.argv[1:]
	fd = os.open(path, os.O_RDWR)
	fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
	rec = ('pid %s\ncommand grove -d stow -t target -S f\n' % pid).encode()
	os.pwrite(fd, rec.ljust(1024, b'\0'), 0)
	fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack('@hhqqixxxx', fcntl.F_RDLCK, os.SEEK_SET, 1 << 30, 1, 0))
	with open(said, 'w') as f:
	    f.write('held\n')
	with open(go) as f:
	    f.read()
PY
rholder=$!
at_exit "kill $rholder"
exec 7<>"$ROOT/said"
read -r -t 120 SAID <&7 || fail "root's holder said nothing"
exec 7<&-
[[ $SAID == held ]] || fail "root's holder: $SAID"
expect_exit 0 as_root "$GROVE" status -t target
expect_err_line "transaction [0-9]+ .* is in progress"
! grep -q "pid $nbpid" "$ERR" || fail "a record naming nobody's process was believed: $(cat "$ERR")"
echo >"$ROOT/go"
wait "$rholder"
kill "$nbpid"
check "a holder record naming a process of another user's is not believed (no pid said)"

expect_exit 0 as_root "$GROVE" recover -t target
expect_exit 0 as_root "$GROVE" status -t target

# ---------------------------------------------------------------- the admindir lock

I=$ROOT/i
ADM=$ROOT/adm
mkdir -p "$I/usr/bin" "$ADM"
mk_file "$I/opt/ed1" ed1
ALT=(alt --altdir "$I/alt" --admindir "$ADM" --instdir "$I" --log /dev/null)
hold nobody flock "$ADM"
[[ $SAID == held ]] || fail "nobody could not flock the admindir folder: $SAID"
expect_exit 0 as_root "$GROVE" --wait 0 "${ALT[@]}" --install "$I/usr/bin/ed" ed "$I/opt/ed1" 10
release
[[ $(readlink "$I/alt/ed") == "$I/opt/ed1" ]] || fail "the install did not happen"
check "nobody holding the admindir folder does not block root's grove alt"

hold nobody flock "$ADM/.grove lock.dpkg-tmp"
release
[[ $SAID == "refused: Permission denied" ]] || fail "nobody could open the admindir's lock file: $SAID"
[[ $(stat -c '%a %u %s' "$ADM/.grove lock.dpkg-tmp") == "600 0 0" ]] ||
	fail "the admindir's lock file is not root's alone and empty: $(ls -la "$ADM")"
update-alternatives --admindir "$ADM" --altdir "$I/alt" --log /dev/null --get-selections >"$ROOT/ua.sel"
[[ $(wc -l <"$ROOT/ua.sel") == 1 && $(cat "$ROOT/ua.sel") == "ed "*" auto "*"$I/opt/ed1" ]] ||
	fail "update-alternatives sees more than the group: $(cat "$ROOT/ua.sel")"
expect_exit 0 as_root "$GROVE" "${ALT[@]}" --get-selections
[[ $(cat "$OUT") == "$(cat "$ROOT/ua.sel")" ]] || fail "grove alt sees more than the group: $(cat "$OUT")"
check "the admindir's lock file is root's alone (nobody cannot open it), empty, and no group for update-alternatives or grove"
