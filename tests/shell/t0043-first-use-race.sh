#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Eight grove commands started at once on a fresh state dir (the first use in a fleet, or under
# dpkg triggers, is often concurrent): each finds no log, or a whole one, never a half-made one.
# All eight succeed: five stows into five targets, and status, log and verify. Each round starts
# from a state dir that does not exist; the commands wait at a real barrier (a flock(1) shared lock
# on a file the test holds exclusively) until all eight are blocked on it (/proc/locks shows eight
# waiters), then are let go together. GROVE_FIRST_USE_ROUNDS sets the count of rounds (default 30).
source "$(dirname "$0")/lib.sh"

ROUNDS=${GROVE_FIRST_USE_ROUNDS:-30}
S=$ROOT/stow
B=$ROOT/barrier
OUTS=$ROOT/outs
NT=5
mkdir -p "$OUTS"
for ((i = 1; i <= NT; i++)); do
	mk_file "$S/p$i/bin/x$i" "x$i"
done
: >"$B"
BINO=$(stat -c %i "$B")

# waiters: N is the count of processes blocked on the barrier's lock.
waiters()
{
	local line
	N=0
	while IFS= read -r line; do
		if [[ $line == *"-> FLOCK"*":$BINO "* ]]; then
			N=$((N + 1))
		fi
	done </proc/locks
}

for ((round = 1; round <= ROUNDS; round++)); do
	ST=$ROOT/state-$round
	export GROVE_STATE_DIR=$ST
	TS=()
	for ((i = 1; i <= NT; i++)); do
		TS+=("$ROOT/t$round-$i")
		mkdir -p "$ROOT/t$round-$i"
	done
	# The test holds the barrier exclusively on fd 9; the commands must not inherit fd 9 (9>&-),
	# or the lock would outlive the test's close of it.
	exec 9>"$B"
	flock -x 9
	pids=()
	names=()
	for ((i = 1; i <= NT; i++)); do
		flock -s -o "$B" "$GROVE" stow -d "$S" -t "${TS[i - 1]}" "p$i" >"$OUTS/stow$i.out" 2>"$OUTS/stow$i.err" 9>&- &
		pids+=($!)
		names+=("stow p$i")
	done
	flock -s -o "$B" "$GROVE" status -d "$S" -t "${TS[0]}" >"$OUTS/status.out" 2>"$OUTS/status.err" 9>&- &
	pids+=($!)
	names+=(status)
	flock -s -o "$B" "$GROVE" log -t "${TS[1]}" >"$OUTS/log.out" 2>"$OUTS/log.err" 9>&- &
	pids+=($!)
	names+=(log)
	flock -s -o "$B" "$GROVE" verify -d "$S" -t "${TS[2]}" >"$OUTS/verify.out" 2>"$OUTS/verify.err" 9>&- &
	pids+=($!)
	names+=(verify)
	# All eight blocked on the barrier (bounded: a child that died early would never block).
	start=$SECONDS
	waiters
	while ((N < ${#pids[@]})); do
		((SECONDS - start < 60)) || fail "round $round: only $N of ${#pids[@]} commands reached the barrier"
		waiters
	done
	exec 9>&- # let them go
	failed=()
	for i in "${!pids[@]}"; do
		rc=0
		wait "${pids[i]}" || rc=$?
		((rc == 0)) || failed+=("${names[i]} exited $rc")
	done
	if ((${#failed[@]})); then
		for f in "$OUTS"/*.err; do
			[[ -s $f ]] && sed "s|^|    $(basename "$f" .err): |" "$f" >&2
		done
		fail "round $round: ${failed[*]}"
	fi
	# Each stow did its work (one folded link per target) and is the one committed transaction
	# of its target; the log is whole, made by grove, and nothing else is left in the state dir.
	for ((i = 1; i <= NT; i++)); do
		[[ $(ls -A "${TS[i - 1]}") == bin && $(readlink "${TS[i - 1]}/bin") == "../stow/p$i/bin" ]] ||
			fail "round $round: target $i is not one link bin -> ../stow/p$i/bin: $(ls -lA "${TS[i - 1]}")"
		expect_exit 0 "$GROVE" --json log -t "${TS[i - 1]}"
		[[ $(grep -o '"state": "committed"' "$OUT" | wc -l) == 1 ]] ||
			fail "round $round: target $i: not one committed transaction: $(cat "$OUT")"
	done
	[[ $(stat -c '%a %s' "$ST/grove.db") =~ ^600\ [1-9] ]] ||
		fail "round $round: grove.db is not a private non-empty file: $(stat -c '%a %s' "$ST/grove.db")"
	[[ $(ls -A "$ST") == "grove.db"$'\n'"locks" ]] ||
		fail "round $round: the state dir holds more than grove.db and locks/: $(ls -A "$ST")"
done
check "$ROUNDS rounds of eight commands started at once on a fresh state dir: all succeed"
