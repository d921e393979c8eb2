#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Status tells the truth (issue 17, item 6): while a run holds the target, its transaction is in
# progress (with the run's pid and command), not interrupted, and recover says it is locked by
# that run; after a kill -9 it is interrupted, and verify says so first and calls the run's
# half-made links part of it, not foreign. A holder record left by a dead run is not believed.
# The run is held stopped by strace at a syscall, and the test learns it stopped by reading
# strace's output through a fifo: no sleeps.
set -euo pipefail
# shellcheck source=tests/shell/lib.sh
. "$(dirname "$0")/lib.sh"

strace -qq -o /dev/null -e trace=getpid -e inject=getpid:error=EIO -- true 2>/dev/null ||
	skip "strace with fault injection is needed here"
# LeakSanitizer cannot run under ptrace: an ASan build keeps it quiet there.
TRACED_ASAN=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

S=$ROOT/stow
T=$ROOT/target
mkdir -p "$T"
mk_file "$S/a/bin/x" x
mk_file "$S/b/bin/y" y
cd "$ROOT"
expect_exit 0 "$GROVE" -d stow -t target --no-folding -S a

# stop_at SYSCALL CMD…: runs CMD under strace, stopped (SIGSTOP) right after its first SYSCALL;
# returns once it is stopped, with its pid in $HELD and strace's pid in $TRACER. strace writes
# its log into a fifo this shell reads (fd 3) until the stop is reported.
stop_at()
{
	local sc=$1 line
	shift
	rm -f "$ROOT/trace"
	mkfifo "$ROOT/trace"
	ASAN_OPTIONS=$TRACED_ASAN strace -f -qq -o "$ROOT/trace" -e trace="$sc" \
		-e inject="$sc":signal=SIGSTOP:when=1 -- "$@" >"$ROOT/held.out" 2>&1 &
	TRACER=$!
	exec 3<"$ROOT/trace"
	HELD=
	while IFS= read -r -t 120 line <&3; do
		if [[ $line == *'--- stopped by SIGSTOP ---'* ]]; then
			HELD=${line%% *}
			break
		fi
	done
	[[ $HELD =~ ^[0-9]+$ ]] || fail "the traced run did not stop: $(cat "$ROOT/held.out")"
}

# kill_held: kill -9 the stopped run, read strace's log to its end, reap strace.
kill_held()
{
	kill -KILL "$HELD"
	cat <&3 >/dev/null
	exec 3<&-
	wait "$TRACER" || true
}

# ---------------------------------------------------------------- while a run holds the target

stop_at symlinkat "$GROVE" -d stow -t target --no-folding -S b
CMD2="grove -d stow -t target --no-folding -S b"
[[ -L $T/bin/y ]] || fail "the held run has not made its first link"

expect_exit 0 "$GROVE" status -t target
expect_out_has "a                        1 link"
expect_err_line "transaction 2 \($CMD2\) is in progress \(grove pid $HELD\)"
! grep -q interrupted "$ERR" || fail "status calls a running transaction interrupted: $(cat "$ERR")"
check "status while a run holds the target: transaction 2 in progress, with the run's pid (exit 0)"

expect_exit 0 "$GROVE" --json status -t target
field()
{
	"$GROVE_TEST_PY" - "$OUT" "$1" <<-'PY' || fail "expected $1 in: $(cat "$OUT")"
		import json, sys
		d = json.load(open(sys.argv[1]))
		sys.exit(0 if eval(sys.argv[2]) else 1)
	PY
}
field 'd["unfinished"] == 2 and d["unfinished_state"] == "in-progress"'
field 'd["holder"] == {"pid": '"$HELD"', "command": "'"$CMD2"'"}'
field 'd["unfinished_command"] == "'"$CMD2"'" and d["system_log"] is False'
check "status --json: unfinished_state in-progress, the holder's pid and command"

expect_exit 0 "$GROVE" log -t target
grep -Eq '^ +2 .* in-progress +1 op +grove -d stow' "$OUT" || fail "log does not show 2 in progress: $(cat "$OUT")"
expect_exit 0 "$GROVE" --json log -t target
field 'd["transactions"][0]["id"] == 2 and d["transactions"][0]["state"] == "in-progress"'
check "log: the running transaction's state is in-progress"

# Its link is its own, not drift: verify says so and passes.
expect_exit 0 "$GROVE" verify -t target
[[ $(head -n1 "$OUT") == "transaction 2 ($CMD2) is in progress (grove pid $HELD); "* ]] ||
	fail "verify does not start with the transaction in progress: $(cat "$OUT")"
expect_out_has "foreign  bin/y (part of transaction 2, in progress)"
expect_out_has "0 foreign; 1 part of transaction 2, in progress"
check "verify while it runs: the run's link is part of transaction 2, in progress (exit 0)"

expect_exit 75 "$GROVE" recover -t target
expect_err_line "target 'target' is locked by another grove run \(pid $HELD: $CMD2\)"
check "recover while it runs: exit 75, naming the run's pid and command"

kill_held
[[ -L $T/bin/y ]] || fail "the kill took the half-made link"

# ---------------------------------------------------------------- after kill -9

expect_exit 4 "$GROVE" status -t target
expect_err_line "transaction 2 \($CMD2\) was interrupted" "'grove recover -t $T' rolls it back"
check "status after kill -9: transaction 2 interrupted, and the command that recovers it (exit 4)"

expect_exit 4 "$GROVE" verify -t target
[[ $(head -n1 "$OUT") == "transaction 2 ($CMD2) was interrupted "*"'grove recover -t $T' rolls it back"* ]] ||
	fail "verify does not report the pending recovery first: $(cat "$OUT")"
expect_out_has "foreign  bin/y (part of interrupted transaction 2)"
! grep -q "not grove's" "$OUT" || fail "verify calls the interrupted transaction's link foreign: $(cat "$OUT")"
expect_out_has "0 foreign; 1 part of interrupted transaction 2"
expect_exit 4 "$GROVE" --json verify -t target
field 'd["unfinished"] == 2 and d["unfinished_state"] == "interrupted" and d["holder"] is None'
field 'd["issues"] == [{"path": "bin/y", "issue": "foreign", "expected": None, "transaction": 2}]'
field 'd["foreign"] == 0 and d["unfinished_entries"] == 1'
check "verify after kill -9: the pending recovery first, its link part of interrupted transaction 2 (exit 4)"

# The dead run's record is still in the lock file; even naming a live process (a reused pid),
# without a live holder's mark it is not believed.
lock=$(ls "$GROVE_STATE_DIR"/locks/*.lock)
grep -q "^pid $HELD$" "$lock" || fail "the lock file does not hold the run's record"
printf 'pid %s\ncommand grove stow imposter\n' "$$" | dd of="$lock" conv=notrunc status=none
expect_exit 4 "$GROVE" --json status -t target
field 'd["unfinished_state"] == "interrupted" and d["holder"] is None'
expect_exit 0 "$GROVE" log -t target
grep -Eq '^ +2 .* interrupted ' "$OUT" || fail "log does not show 2 interrupted: $(cat "$OUT")"
check "a holder record without a live holder (even with a live pid) is not believed"

expect_exit 0 "$GROVE" recover -t target
expect_err_has "rolled back interrupted transaction 2"
expect_tree "$T" <<-'EOF'
	d bin
	l bin/x -> ../../stow/a/bin/x
EOF
expect_exit 0 "$GROVE" status -t target
expect_err_empty
expect_exit 0 "$GROVE" verify -t target
expect_out_has "verified 2 entries: 0 missing, 0 changed, 0 broken, 0 foreign"
check "recover rolls it back; then status and verify are clean (exit 0)"

# ---------------------------------------------------------------- a run that holds the lock before its transaction

# Stopped at its first read of the target (the lock is held, no intent logged yet).
stop_at getdents64 "$GROVE" -d stow -t target --no-folding -S b
expect_exit 0 "$GROVE" status -t target
expect_err_line "a grove run holds the lock of this target \(grove pid $HELD: $CMD2\)"
kill_held
expect_exit 0 "$GROVE" status -t target
expect_err_empty
check "status names a run holding the lock before it logs anything; nothing once it is gone"
