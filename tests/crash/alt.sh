#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# All or nothing for grove alt: a group switch with followers (and an install that switches, an
# undo of a switch, a remove-all) is killed at each of its mutating syscalls in turn and then
# recovered, and each of those syscalls is made to fail. After recovery every link of the group
# shows the old choice or every link the new one, the admin file (ADMINDIR/NAME, written under a
# temporary name, synced and renamed) and the saved group (`--query`) say the same side,
# the log agrees, and `grove verify` is clean. update-alternatives itself renames the links one by
# one and can leave a group mixed.
#
# Knobs (environment): ALT_CRASH_ERRNOS (default "EIO"), ALT_CRASH_SQLITE_STRIDE (test every Nth
# pwrite64, SQLite's writes into its database and rollback journal, default 1: all of them),
# ALT_CRASH_STRIDE (every Nth call of each other syscall, default 1: all), ALT_CRASH_ONLY (command
# names). tests/meson.build sets the strides for CI.
set -euo pipefail
# shellcheck source=tests/shell/lib.sh
. "$(dirname "$0")/../shell/lib.sh"
TEST_NAME=crash-alt
# shellcheck source=tests/crash/lib.sh
. "$(dirname "$0")/lib.sh"

ERRNOS=${ALT_CRASH_ERRNOS:-EIO}
SQLITE_STRIDE=${ALT_CRASH_SQLITE_STRIDE:-1}
STRIDE=${ALT_CRASH_STRIDE:-1}
SYSCALLS=(symlinkat renameat2 mkdirat unlinkat unlink fsync fdatasync pwrite64 ftruncate write)
crash_init

# W holds the installation root I (links, alternatives dir, the choices' files) and the admindir.
W=$ROOT/w
I=$W/i
ADM=$W/adm
export GROVE_STATE_DIR=$ROOT/state
ST=$GROVE_STATE_DIR
LOG_TARGET=$I
PREP=$ROOT/prep
LOGS=$ROOT/logs
mkdir -p "$I/bin" "$I/man" "$I/alt" "$ADM" "$PREP" "$LOGS" "$ST"
ALT=(alt --altdir "$I/alt" --admindir "$ADM" --instdir "$I")

for c in a b; do
	mk_file "$I/opt/$c/ed" "ed-$c"
	mk_file "$I/opt/$c/ed.1" "man-$c"
	mk_file "$I/opt/$c/red" "red-$c"
done

# The installation root is never replaced (grove knows a target by device and inode), only its
# contents, as are those of the admindir, the altdir (the log records both with each transaction,
# and a replay refuses another folder in their place: journal.md, "Roots") and the state dir.
SAVED=(w state)
EMPTIED=("$I" "$I/alt" "$ADM" "$ST")

# Every entry of W with the content of every file: the admin files (ADMINDIR/NAME, what
# update-alternatives reads) must be old or new together with the links. tree_now sets NOW.
tree_now()
{
	NOW=$("$CRASH_TREE" list -c '' "$W")
}

# query_now: Q is what --query says of the group (and how it exited, when not 0).
query_now()
{
	local rc=0
	Q=$("$GROVE" "${ALT[@]}" --query ed 2>&1) || rc=$?
	((rc == 0)) || Q+=$'\n'"query exit $rc"
}

install_of()
{
	echo "--install $I/bin/ed ed $I/opt/$1/ed $2 --slave $I/man/ed.1 ed.1 $I/opt/$1/ed.1" \
		"--slave $I/bin/red red $I/opt/$1/red"
}

# shellcheck disable=SC2046
gr "${ALT[@]}" $(install_of a 10) # a in auto mode: three pairs of links
save_state one
# shellcheck disable=SC2046
gr "${ALT[@]}" $(install_of b 5) # b known, a still chosen
save_state two
gr "${ALT[@]}" --set ed "$I/opt/b/ed" # the switch, manual mode
save_state switched

NAMES=(set undo remove-all install)
declare -A PREP_OF=([set]=two [install]=one [undo]=switched [remove-all]=two)
declare -A ARGS_OF=(
	[set]="${ALT[*]} --set ed $I/opt/b/ed"
	[install]="${ALT[*]} $(install_of b 20)"
	[undo]="undo -t $I"
	[remove-all]="${ALT[*]} --remove-all ed"
)

FAILS=0
TOTAL_KILL=0
TOTAL_ERR=0
TOTAL_FAIL=0
START=$SECONDS

# outcome: OUT is "before", "after" or "other" for the tree and the saved group together.
outcome()
{
	tree_now
	query_now
	if [[ $NOW == "$FBEFORE" && $Q == "$QBEFORE" ]]; then
		OUT=before
	elif [[ $NOW == "$FAFTER" && $Q == "$QAFTER" ]]; then
		OUT=after
	else
		{
			echo "tree (- before, + now):"
			diff <(printf '%s\n' "$FBEFORE") <(printf '%s\n' "$NOW") || true
			echo "query (- before, + now):"
			diff <(printf '%s\n' "$QBEFORE") <(printf '%s\n' "$Q") || true
		} | head -n 30 >"$LOGS/diff"
		OUT=other
	fi
}

settle()
{
	local label=$1 rc=0 id st committed=0
	"$GROVE" recover -t "$I" >"$LOGS/recover.out" 2>"$LOGS/recover.err" || rc=$?
	if ((rc != 0)); then
		point_fail "$label: 'grove recover' exited $rc: $(head -c 400 "$LOGS/recover.err")"
		return 1
	fi
	outcome
	if [[ $OUT == other ]]; then
		point_fail "$label: after recovery the links and the group are neither all old nor all new:"
		sed 's/^/    /' "$LOGS/diff" >&2
		return 1
	fi
	read_states || {
		point_fail "$label: 'grove log' failed: $(head -c 400 "$LOGS/log.err")"
		return 1
	}
	while read -r id st; do
		[[ -n $id ]] || continue
		case $st in
		interrupted | stuck)
			point_fail "$label: transaction $id is '$st' in the log"
			return 1
			;;
		committed) ((id > N0)) && committed=1 ;;
		esac
	done <<<"$STATES"
	if [[ $OUT == after && $committed == 0 ]] || [[ $OUT == before && $committed == 1 ]]; then
		point_fail "$label: the target is as $OUT, but the log disagrees (committed=$committed)"
		return 1
	fi
	rc=0
	"$GROVE" verify -t "$I" >"$LOGS/verify.out" 2>&1 || rc=$?
	if ((rc != 0)); then
		point_fail "$label: 'grove verify' exited $rc: $(head -c 400 "$LOGS/verify.out")"
		return 1
	fi
	return 0
}

run_command()
{
	local name=$1 sc k e rc label n_kill=0 n_err=0 out step
	local -A count=()
	read -ra CMD <<<"${ARGS_OF[$name]}"
	FAILS=0
	restore "${PREP_OF[$name]}"
	tree_now
	FBEFORE=$NOW
	query_now
	QBEFORE=$Q
	read_states || fail "$name: 'grove log' failed: $(cat "$LOGS/log.err")"
	N0=${STATES%% *}
	N0=${N0:-0}
	rc=0
	ASAN_OPTIONS=$TRACED_ASAN strace -f -qq -o "$LOGS/strace" -e trace="$TRACE_SET" -- \
		"$GROVE" "${CMD[@]}" >"$LOGS/count.out" 2>"$LOGS/count.err" || rc=$?
	((rc == 0)) || fail "$name: the clean run exited $rc: $(cat "$LOGS/count.err")"
	for sc in "${SYSCALLS[@]}"; do
		count[$sc]=$(grep -Ec "^([0-9]+ +)?$sc\(" "$LOGS/strace" || true)
	done
	tree_now
	FAFTER=$NOW
	query_now
	QAFTER=$Q
	[[ $FAFTER != "$FBEFORE" && $QAFTER != "$QBEFORE" ]] ||
		fail "$name: the clean run did not change both the links and the group"
	[[ $FAFTER != *.grove-* ]] || fail "$name: the clean run left temporary entries"
	if [[ $name == undo ]]; then
		# The undo of the switch is the state before it, group included.
		restore two
		tree_now
		query_now
		[[ $FAFTER == "$NOW" && $QAFTER == "$Q" ]] ||
			fail "undo: the clean run did not bring back the links and the group before the switch"
	fi

	for sc in "${SYSCALLS[@]}"; do
		step=$STRIDE
		[[ $sc != pwrite64 ]] || step=$SQLITE_STRIDE
		for ((k = 1; k <= count[$sc]; k += step)); do
			label="$name: kill at $sc #$k"
			n_kill=$((n_kill + 1))
			restore "${PREP_OF[$name]}"
			rc=0
			traced_grove signal=SIGKILL "$sc" "$k" "${CMD[@]}" >/dev/null 2>&1 || rc=$?
			if ((rc != 137)); then
				point_fail "$label: grove was not killed (exit $rc)"
				continue
			fi
			settle "$label" || true
		done
	done

	for e in $ERRNOS; do
		for sc in "${SYSCALLS[@]}"; do
			step=$STRIDE
			[[ $sc != pwrite64 ]] || step=$SQLITE_STRIDE
			for ((k = 1; k <= count[$sc]; k += step)); do
				label="$name: $e at $sc #$k"
				n_err=$((n_err + 1))
				restore "${PREP_OF[$name]}"
				rc=0
				traced_grove "error=$e" "$sc" "$k" "${CMD[@]}" >"$LOGS/err.out" 2>"$LOGS/err.err" || rc=$?
				if ((rc > 128)); then
					point_fail "$label: grove died (exit $rc): $(head -c 400 "$LOGS/err.err")"
					continue
				fi
				if ((rc != 0)) && ! has_line "$LOGS/err.err" "^grove( alt)?: "; then
					point_fail "$label: exit $rc without a message: $(head -c 300 "$LOGS/err.err")"
				fi
				# Whatever the exit status (SQLite ignores some failed syncs), the links and the
				# group agree right away, before any recovery.
				outcome
				out=$OUT
				if [[ $out == other ]]; then
					point_fail "$label: exit $rc, and the links and the group are neither all old nor all new:"
					sed 's/^/    /' "$LOGS/diff" >&2
					continue
				fi
				if ((rc == 0)) && [[ $out != after ]]; then
					point_fail "$label: exit 0 but the change is not there"
				fi
				settle "$label" || true
			done
		done
	done
	printf '%-10s %4d kill points, %4d error points (%s), %d failures\n' "$name" "$n_kill" \
		"$n_err" "${ERRNOS// /, }" "$FAILS"
	TOTAL_KILL=$((TOTAL_KILL + n_kill))
	TOTAL_ERR=$((TOTAL_ERR + n_err))
	TOTAL_FAIL=$((TOTAL_FAIL + FAILS))
	if ((FAILS == 0)); then check "$name: every kill and error point ends all old or all new"; fi
}

for name in "${NAMES[@]}"; do
	if [[ -n ${ALT_CRASH_ONLY:-} && " $ALT_CRASH_ONLY " != *" $name "* ]]; then
		continue
	fi
	run_command "$name"
done
echo "crash-alt: $TOTAL_KILL kill points, $TOTAL_ERR error points, $TOTAL_FAIL failures ($((SECONDS - START)) s)"
((TOTAL_FAIL == 0)) || exit 1
