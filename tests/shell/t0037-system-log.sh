#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Root's log and a user's log (issue 17, item 9): after root stows into a target, a user's
# status, log, show and verify of it read the system log (GROVE_SYSTEM_STATE_DIR here, for
# /var/lib/grove) when the user's own log does not know it, say so in one line (a field in
# --json), and make and write nothing there; an older, untrusted or unreadable system log is
# said and not read; changing commands and --state keep to the user's own log; a transaction
# of root's in progress is seen as one by the user.
set -euo pipefail
# shellcheck source=tests/shell/lib.sh
. "$(dirname "$0")/lib.sh"

SYS=$ROOT/system-state
NB_STATE=$ROOT/nobody-state
S=$ROOT/stow
T=$ROOT/usr-local
mkdir -p "$T" "$NB_STATE"
chown 65534 "$NB_STATE"
mk_file "$S/a/bin/x" x
mk_file "$S/a/share/a.txt" a
mk_file "$S/b/bin/y" y
cd "$ROOT"

# as_root CMD…: grove as root with no state dir named, so its log is the system one.
as_root()
{
	env -u GROVE_STATE_DIR GROVE_SYSTEM_STATE_DIR="$SYS" "$@"
}
# as_nobody CMD…: as user nobody, with a log of its own.
as_nobody()
{
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		env GROVE_STATE_DIR="$NB_STATE" GROVE_SYSTEM_STATE_DIR="$SYS" "$@"
}
as_nobody true 2>/dev/null || skip "setpriv cannot switch to uid 65534 here"

field()
{
	"$GROVE_TEST_PY" - "$OUT" "$1" <<-'PY' || fail "expected $1 in: $(cat "$OUT")"
		import json, sys
		d = json.load(open(sys.argv[1]))
		sys.exit(0 if eval(sys.argv[2]) else 1)
	PY
}
mode_of()
{
	stat -c %a "$1"
}

expect_exit 0 as_root "$GROVE" -d stow -t usr-local -S a
[[ $(mode_of "$SYS") == 755 && $(mode_of "$SYS/grove.db") == 644 && $(mode_of "$SYS/locks") == 755 ]] ||
	fail "the system log is not readable by users: $(ls -la "$SYS")"
[[ $(mode_of "$(ls "$SYS"/locks/*.lock)") == 600 ]] || fail "the system lock file is not root's alone"
check "root's own log (the system state dir) is made readable: 755, grove.db 644, locks 755; its lock files 600"

# ---------------------------------------------------------------- a user reads root's log

snapshot "$SYS" sys
expect_exit 0 as_nobody "$GROVE" status -t usr-local
expect_out_has "(from the system log $SYS/grove.db)"
expect_out_has "a                        2 links"
expect_err_empty
expect_exit 0 as_nobody "$GROVE" log -t usr-local
[[ $(head -n1 "$OUT") == "(from the system log $SYS/grove.db)" ]] || fail "log does not say whose log: $(cat "$OUT")"
grep -Eq '^ +1 .* committed +2 ops +grove -d stow -t usr-local -S a$' "$OUT" || fail "log: $(cat "$OUT")"
expect_exit 0 as_nobody "$GROVE" show 1 -t usr-local
expect_out_has "(from the system log $SYS/grove.db)"
expect_out_has "link   bin -> ../stow/a/bin"
expect_exit 0 as_nobody "$GROVE" verify -t usr-local
expect_out_has "(from the system log $SYS/grove.db)"
expect_out_has "verified 2 entries: 0 missing, 0 changed, 0 broken, 0 foreign"
expect_unchanged "$SYS" sys
check "status, log, show and verify of root's target read the system log and say so; it is left exactly as it was"

for cmd in status log verify; do
	expect_exit 0 as_nobody "$GROVE" --json "$cmd" -t usr-local
	field 'd["system_log"] is True and d["log"] == "'"$SYS/grove.db"'"'
done
field 'd["checked"] == 2'
expect_exit 0 as_nobody "$GROVE" --json show 1 -t usr-local
field 'd["system_log"] is True and d["transaction"]["id"] == 1'
expect_unchanged "$SYS" sys
check "--json: system_log true and the log's path"

# Root's own reads of it are its own log: no line.
expect_exit 0 as_root "$GROVE" status -t usr-local
! grep -q "system log" "$OUT" || fail "root's own log is called the system log: $(cat "$OUT")"
check "root reading its own log: no 'from the system log' line"

# A target the user's own log knows is the user's: no fallback, no line.
mkdir -p "$ROOT/mine"
chown 65534 "$ROOT/mine"
expect_exit 0 as_nobody "$GROVE" -d stow -t mine -S b
expect_exit 0 as_nobody "$GROVE" --json status -t mine
field 'd["system_log"] is False and d["log"] == "'"$NB_STATE/grove.db"'" and d["packages"] == [{"package": "b", "links": 1}]'
# --state names the log to read: no fallback either.
expect_exit 0 as_nobody "$GROVE" --state "$NB_STATE" status -t usr-local
expect_out_has "(nothing stowed by grove)"
! grep -q "system log" "$OUT" || fail "--state fell back to the system log"
check "a target the user's log knows, and --state: the user's own log, no fallback"

# Changing commands use the user's own log only, and touch nothing of root's.
snapshot "$T" target
expect_exit 1 as_nobody "$GROVE" undo -t usr-local
expect_err_has "nothing to undo"
expect_exit 0 as_nobody "$GROVE" recover -t usr-local
expect_out_has "nothing to recover"
expect_unchanged "$SYS" sys
expect_unchanged "$T" target
check "undo and recover as the user: the user's own log (nothing to undo or recover), root's untouched"

# ---------------------------------------------------------------- a system log not to read

cp -a "$SYS" "$ROOT/old-sys"
sqlite3 "$ROOT/old-sys/grove.db" 'PRAGMA user_version = 5'
snapshot "$ROOT/old-sys" old
GROVE_SYSTEM_STATE_DIR=$ROOT/old-sys expect_exit 0 setpriv --reuid=65534 --regid=65534 --clear-groups \
	env GROVE_STATE_DIR="$NB_STATE" "$GROVE" status -t usr-local
expect_out_has "(nothing stowed by grove)"
expect_err_line "not reading the system log" "'$ROOT/old-sys/grove.db'" "older schema \(5\)"
expect_unchanged "$ROOT/old-sys" old
check "a system log that needs a migration: said in one line, not migrated, nothing known"

chmod 666 "$SYS/grove.db"
expect_exit 0 as_nobody "$GROVE" status -t usr-local
expect_out_has "(nothing stowed by grove)"
expect_err_line "not reading the system log" "writable by everyone"
chmod 644 "$SYS/grove.db"
chmod 700 "$SYS"
expect_exit 0 as_nobody "$GROVE" status -t usr-local
expect_out_has "(nothing stowed by grove)"
expect_err_line "not reading the system log" "Permission denied"
mkdir "$ROOT/theirs"
chown 65534 "$ROOT/theirs"
expect_exit 0 as_nobody "$GROVE" status -t theirs
expect_err_empty
chmod 755 "$SYS"
check "a system log others can write, or one the user cannot read (said for a target of root's only): not read"

rm -rf "$ROOT/no-sys"
GROVE_SYSTEM_STATE_DIR=$ROOT/no-sys expect_exit 0 setpriv --reuid=65534 --regid=65534 --clear-groups \
	env GROVE_STATE_DIR="$NB_STATE" "$GROVE" status -t usr-local
expect_err_empty
[[ ! -e $ROOT/no-sys ]] || fail "reading made the system state dir"
check "no system log: nothing said, nothing made"

# ---------------------------------------------------------------- root's transaction in progress

strace -qq -o /dev/null -e trace=getpid -e inject=getpid:error=EIO -- true 2>/dev/null ||
	skip "strace with fault injection is needed for the rest"
rm -f "$ROOT/trace"
mkfifo "$ROOT/trace"
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 as_root strace -f -qq -o "$ROOT/trace" \
	-e trace=symlinkat -e inject=symlinkat:signal=SIGSTOP:when=1 -- \
	"$GROVE" -d stow -t usr-local -S b >"$ROOT/held.out" 2>&1 &
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
expect_exit 0 as_nobody "$GROVE" status -t usr-local
expect_out_has "(from the system log $SYS/grove.db)"
expect_err_line "transaction 2 \(grove -d stow -t usr-local -S b\) is in progress \(grove pid $held\)"
kill -KILL "$held"
cat <&3 >/dev/null
exec 3<&-
wait "$tracer" || true
expect_exit 4 as_nobody "$GROVE" status -t usr-local
expect_err_line "transaction 2 .* was interrupted"
check "root's run in progress is in progress for the user too (its flock, seen in /proc/locks); interrupted once killed"
expect_exit 0 as_root "$GROVE" recover -t usr-local
