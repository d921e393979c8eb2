#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Scaffolding shared by the strace crash harnesses (tests/crash/run.sh, tests/crash/alt.sh,
# tests/profile/crash.sh). Source it after tests/shell/lib.sh and TEST_NAME, set SYSCALLS (the
# syscalls to count and kill at) and call crash_init; set LOG_TARGET and LOGS before using
# log_states or read_states, and PREP, SAVED and EMPTIED before save_state and restore.
#
# A point runs a dozen processes or more (restore, the traced command, recovery, listings, the log,
# verify), and on a small VM starting one costs milliseconds: CRASH_TREE (tests/crash/tree.c) lists
# and restores a tree in one process each, and the helpers here fill variables rather than print
# into a command substitution (each $(…) is a fork, each pipe in it more).
: "${CRASH_TREE:?CRASH_TREE must name the crash-tree helper (tests/meson.build sets it)}"

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

# save_state NAME: the folders SAVED (names in ROOT) into the prepared state NAME, a copy in PREP
# (types, contents, link texts, modes and times to the nanosecond).
save_state()
{
	"$CRASH_TREE" save "$PREP/$1" "$ROOT" "${SAVED[@]}"
}

# restore NAME: makes the folders SAVED what the prepared state NAME holds. The folders EMPTIED
# (absolute paths) and those on the way to them are kept (grove knows a target by device and inode)
# and emptied; everything else is removed, then the copy is made over them.
restore()
{
	"$CRASH_TREE" restore "$PREP/$1" "$ROOT" "${EMPTIED[@]}"
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

# read_states: STATES holds "ID STATE" per transaction of LOG_TARGET, newest first, one a line;
# returns non-zero when `grove log` fails.
read_states()
{
	local line re='^\{"id": ([0-9]+), "time": "[^"]*", "state": "([a-z-]+)"'
	STATES=
	"$GROVE" log -t "$LOG_TARGET" --json >"$LOGS/log.json" 2>"$LOGS/log.err" || return 1
	# (The document is one line: each transaction's start, one a line, by grep -o.)
	while IFS= read -r line || [[ -n $line ]]; do
		if [[ $line =~ $re ]]; then
			STATES+="${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"$'\n'
		fi
	done < <(grep -oE '\{"id": [0-9]+, "time": "[^"]*", "state": "[a-z-]+"' "$LOGS/log.json" || true)
	return 0
}

# log_states: prints STATES (read_states).
log_states()
{
	read_states && printf '%s' "$STATES"
}

# has_line FILE ERE: whether a line of FILE matches ERE (bash's own, not grep: one process less
# per point).
has_line()
{
	local line
	while IFS= read -r line || [[ -n $line ]]; do
		[[ ! $line =~ $2 ]] || return 0
	done <"$1"
	return 1
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
