#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Scaffolding shared by the strace crash harnesses (tests/crash/run.sh, tests/crash/alt.sh,
# tests/profile/crash.sh). Source it after tests/shell/lib.sh and TEST_NAME, set SYSCALLS (the
# syscalls to count and kill at) and call crash_init; set LOG_TARGET before using log_states, and
# PREP, SAVED and EMPTIED before save_state and restore.

# crash_init: skips the test (exit 77) without strace fault injection, and sets TRACE_SET (SYSCALLS
# joined by commas) and TRACED_ASAN.
crash_init()
{
	TRACE_SET=$(
		IFS=,
		echo "${SYSCALLS[*]}"
	)
	# LeakSanitizer cannot run under ptrace: traced runs of an ASan build keep it quiet.
	TRACED_ASAN=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	if ! command -v strace >/dev/null ||
		! strace -qq -o /dev/null -e trace=getpid -e inject=getpid:error=EIO -- true 2>/dev/null; then
		echo "$TEST_NAME: strace with fault injection is not available here (needs strace >= 4.16 and ptrace)" >&2
		exit 77
	fi
}

# save_state NAME: the folders SAVED (names in ROOT) into the prepared state NAME, a tarball in PREP.
save_state()
{
	tar -C "$ROOT" -cf "$PREP/$1.tar" "${SAVED[@]}"
}

# restore NAME: empties the folders EMPTIED (keeping them: grove knows a target by device and inode)
# and unpacks the prepared state NAME over them.
restore()
{
	find "${EMPTIED[@]}" -mindepth 1 -delete
	tar -C "$ROOT" -xf "$PREP/$1.tar"
}

# gr ARGS…: a grove run that prepares the scenario; its failure fails the test.
gr()
{
	"$GROVE" "$@" >/dev/null 2>"$LOGS/prep.err" || {
		cat "$LOGS/prep.err" >&2
		fail "preparing the scenario: '$GROVE $*' failed"
	}
}

point_fail()
{
	FAILS=$((FAILS + 1))
	echo "FAIL: $TEST_NAME: $*" >&2
}

# "ID STATE" per transaction of LOG_TARGET, newest first.
log_states()
{
	"$GROVE" log -t "$LOG_TARGET" --json |
		sed -n 's/.*{"id": \([0-9]*\), "time": "[^"]*", "state": "\([a-z-]*\)".*/\1 \2/p'
}

# traced_grove ACTION SYSCALL K ARGS…: runs grove under strace with SYSCALL's K-th call injected.
traced_grove()
{
	local action=$1 sc=$2 k=$3
	shift 3
	ASAN_OPTIONS=$TRACED_ASAN strace -f -qq -o /dev/null -e trace="$sc" \
		-e inject="$sc:$action:when=$k" -- "$GROVE" "$@"
}

# count_syscalls OUTVAR ARGS…: runs grove traced (no injection) and fills the associative array
# OUTVAR with the number of calls of each syscall in SYSCALLS; the exit status is grove's.
count_syscalls()
{
	local -n _counts=$1
	local rc=0 sc
	shift
	ASAN_OPTIONS=$TRACED_ASAN strace -f -qq -o "$LOGS/strace" -e trace="$TRACE_SET" -- \
		"$GROVE" "$@" >"$LOGS/count.out" 2>"$LOGS/count.err" || rc=$?
	for sc in "${SYSCALLS[@]}"; do
		_counts["$sc"]=$(grep -Ec "^([0-9]+ +)?$sc\(" "$LOGS/strace" || true)
	done
	return "$rc"
}
