#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Invariant 4 (all or nothing) under strace's fault injection: every mutating command is killed at
# each of its mutating syscalls in turn and then recovered, and each of those syscalls is made to
# fail (EIO, ENOSPC, EACCES); the target must end exactly as before or exactly as after, with the
# log agreeing and `grove verify` clean. Recovery itself is killed too.
#
# Knobs (environment):
#   CRASH_ERRNOS        default "EIO ENOSPC EACCES"; "ENOSPC/3" tries that errno at every 3rd error
#                       point only, from the 1st; "ENOSPC/2@2" at every 2nd from the 2nd, so that
#                       "EIO/2 ENOSPC/2@2" fails every point once, with one errno or the other
#   CRASH_ERROR_STRIDE  every Nth error point of each syscall for an errno without its own
#                       (default 1: all of them)
#   CRASH_KILL_STRIDE   kill at every Nth point of each syscall, recovery at every Nth of its own
#                       (default 1: all); the half-done points for the recovery kills are picked
#                       among those tried
#   CRASH_RECOVERY_POINTS  how many half-done kill points of the commands in RECOVERY_OF get
#                       their recovery killed (default 3)
#   CRASH_ONLY          space-separated command names to run (default all)
#   CRASH_STREAM_KILL_STRIDE, CRASH_STREAM_ERRNOS  CRASH_KILL_STRIDE and CRASH_ERRNOS for the
#                       streamed commands, *-streamed and *-walked (default: the same as the others; CRASH_STREAM_ERRNOS
#                       set empty: no error points for them)
set -euo pipefail
# shellcheck source=tests/shell/lib.sh
. "$(dirname "$0")/../shell/lib.sh"
TEST_NAME=crash
# shellcheck source=tests/crash/lib.sh
. "$(dirname "$0")/lib.sh"

ERRNOS=${CRASH_ERRNOS:-EIO ENOSPC EACCES}
ERROR_STRIDE=${CRASH_ERROR_STRIDE:-1}
KILL_STRIDE=${CRASH_KILL_STRIDE:-1}
RECOVERY_POINTS=${CRASH_RECOVERY_POINTS:-3}
SYSCALLS=(symlinkat renameat2 mkdirat unlinkat unlink fsync fdatasync pwrite64 ftruncate)
crash_init

# The workspace: W holds the stow dir and the target, so one listing covers both. The target folder
# itself is never replaced (grove knows a target by device, inode and birth time), only its
# contents, as are those of the stow dir and the state dir, from a prepared copy.
W=$ROOT/w
S=$W/stow
T=$W/target
export GROVE_STATE_DIR=$ROOT/state
ST=$GROVE_STATE_DIR
LOG_TARGET=$T
PREP=$ROOT/prep
LOGS=$ROOT/logs
mkdir -p "$S" "$T" "$PREP" "$LOGS"

START=$SECONDS
TOTAL_KILL=0
TOTAL_ERR=0
TOTAL_FAIL=0
TOTAL_EXCUSED=0

# Prepared states are tarballs of w/ and state/; restoring empties the three folders (keeping
# them) and unpacks over them.
SAVED=(w state)
EMPTIED=("$S" "$T" "$ST")

# The verdicts compare listings of W (crash-tree list): type, path, link text and mode of every
# entry, temporary `.grove-*` ones included, and each file's size and modification time. grove
# never writes a file in W, and every point starts from the same copy (times to the nanosecond),
# so a file whose content changed would show a new time. lib.sh's `listing` compares contents but
# starts Python (about 80 ms here, more than a whole grove run), so it records BEFORE and AFTER,
# shows the differences, and must agree with this one on both; the thousands of points use
# crash-tree. tree_now sets NOW to the listing.
tree_now()
{
	NOW=$("$CRASH_TREE" list -m -s "$W")
}

# Adds the inode and mtime of every entry and of W itself: proof that nothing was touched at all.
fmeta()
{
	"$CRASH_TREE" list -i -m "$W"
}

# ---------------------------------------------------------------- the scenario

# a and b share bin/ and share/man/man1/ (stowing b unfolds them, unstowing it folds them back);
# b and a2 both provide bin/y and etc/ (switch replaces them in place); c stands apart.
mk_file "$S/a/bin/x" x
mk_file "$S/a/share/man/man1/a.1" a1
mk_file "$S/b/bin/y" y
mk_file "$S/b/share/man/man1/b.1" b1
mk_file "$S/b/share/doc/b/README" doc
mk_file "$S/b/etc/common.conf" b-conf
mk_file "$S/c/.config/app/c.conf" c
mk_file "$S/a2/bin/y" y2
mk_file "$S/a2/share/man/man1/a2.1" a21
mk_file "$S/a2/etc/common.conf" a2-conf
mk_file "$S/d/opt/d/bin/dx" dx
mk_file "$S/d/opt/d/share/dy" dy
mk_file "$S/d/opt/d/share/dz" dz
mk_file "$S/e/opt/e/ex" ex
mk_file "$S/e/opt/e/lib/ey" ey

# The first run on a state dir that holds no log yet: the log is made on the way (docs/journal.md,
# "How the log is made"), so a kill before its first commit must leave no half-made log behind.
mkdir -p "$ST"
save_state fresh
gr -d "$S" -t "$T" -S a c # transaction 1
save_state base
gr -d "$S" -t "$T" -S b # 2: unfolds bin, share, share/man, share/man/man1
save_state ab
# b stowed without folding: every folder of b's a real folder, each file a link.
restore base
gr --no-folding -d "$S" -t "$T" -S b
save_state abflat
# d stowed without folding into folders of its own, then unstowed: the undo of either is its
# inverse, streamed (a streamed revert: docs/journal.md, "Streamed reverts").
restore base
gr --no-folding -d "$S" -t "$T" -S d
save_state dflat
gr --no-folding -d "$S" -t "$T" -D d
save_state dgone
# e stowed without folding after d, into the opt/ d made: the rollback of both is the chain of
# their inverses, e's then d's, streamed as one revert (docs/journal.md, "Streamed reverts").
restore dflat
gr --no-folding -d "$S" -t "$T" -S e
save_state dechain
# b unstowed from "ab": bin, share/man and share/man/man1 fold back into a's links.
restore ab
gr -d "$S" -t "$T" -D b
save_state bgone
restore ab
# Restow after the packages grew: a's share/doc/a.txt unfolds share/doc, b's bin/z is a new link.
mk_file "$S/a/share/doc/a.txt" a-doc
mk_file "$S/b/bin/z" z
save_state grown
restore ab
gr switch -d "$S" -t "$T" b a2 # 3
gr -d "$S" -t "$T" -D c        # 4
gr -d "$S" -t "$T" -D a        # 5: folds bin and share/man/man1 into a2's
save_state hist

# grove apply from "base": drops a and c, adds a2 (a's folded bin/ and share/ relinked to a2's),
# in one transaction. Small on purpose: apply executes through the same session as the others.
# The manifest lives outside W.
cat >"$ROOT/grove.yaml" <<YAML
targets:
  - path: $T
    dir: $S
    packages: [a2]
YAML

NAMES=(stow-first stow unstow unstow-all restow switch undo rollback apply stow-streamed unstow-streamed
	unstow-all-streamed stow-flat-walked unstow-flat-walked undo-streamed undo-unstow-streamed
	undo-unfold-streamed undo-fold-streamed rollback-streamed)
declare -A PREP_OF=([stow-first]=fresh [stow]=base [unstow]=ab [unstow-all]=ab [restow]=grown [switch]=ab [undo]=ab
	[rollback]=hist [apply]=base)
declare -A ARGS_OF=(
	[stow-first]="-d $S -t $T -S a c"
	[stow]="-d $S -t $T -S b"
	[unstow]="-d $S -t $T -D b"
	# bin/ and share/ go whole: each moved aside once and emptied there (the executor's
	# folder removal), so a crash leaves a temporary folder of links for recovery.
	[unstow-all]="-d $S -t $T -D a b"
	[restow]="-d $S -t $T -R a b"
	[switch]="switch -d $S -t $T b a2"
	[undo]="undo -t $T"
	[rollback]="rollback -t $T --to 1"
	[apply]="apply -f $ROOT/grove.yaml"
)
# The streamed path (docs/journal.md, "Streamed plans"): the same commands with a plan budget of 2
# ops, so that their plans (an unfold, a fold, folders removed whole) are logged in batches while
# planned and run from the log in batches, a block longer than a batch left open from one to the
# next (src/exec/exec_block.c).
declare -A BUDGET_OF=()
for n in stow unstow unstow-all; do
	PREP_OF[$n-streamed]=${PREP_OF[$n]}
	ARGS_OF[$n-streamed]=${ARGS_OF[$n]}
	BUDGET_OF[$n-streamed]=2
done
# The bounded walk (docs/architecture.md, "The bounded walk"): a streamed request without folding
# is planned, logged and run folder by folder; stowing b this way unfolds a's bin/ and share/.
PREP_OF[stow-flat-walked]=base
ARGS_OF[stow-flat-walked]="--no-folding -d $S -t $T -S b"
BUDGET_OF[stow-flat-walked]=2
PREP_OF[unstow-flat-walked]=abflat
ARGS_OF[unstow-flat-walked]="-d $S -t $T -D b"
BUDGET_OF[unstow-flat-walked]=2
# The streamed revert: the undo of a stow and of an unstow, each its inverse logged and run in
# batches.
PREP_OF[undo-streamed]=dflat
ARGS_OF[undo-streamed]="undo -t $T"
BUDGET_OF[undo-streamed]=2
PREP_OF[undo-unstow-streamed]=dgone
ARGS_OF[undo-unstow-streamed]="undo -t $T"
BUDGET_OF[undo-unstow-streamed]=2
# The streamed revert of blocks: the undo of b's stow folds a's folders back (each fold ahead of
# its block's inverses), the undo of b's unstow unfolds them again.
PREP_OF[undo-unfold-streamed]=ab
ARGS_OF[undo-unfold-streamed]="undo -t $T"
BUDGET_OF[undo-unfold-streamed]=2
PREP_OF[undo-fold-streamed]=bgone
ARGS_OF[undo-fold-streamed]="undo -t $T"
BUDGET_OF[undo-fold-streamed]=2
# The streamed rollback over two transactions (d's stow, then e's into the opt/ d made): one
# revert, e's inverses then d's, logged and run in batches.
PREP_OF[rollback-streamed]=dechain
ARGS_OF[rollback-streamed]="rollback -t $T --to 1"
BUDGET_OF[rollback-streamed]=2

# The commands whose half-done states get their recovery killed: an unfold, a fold, folders
# removed whole, and streamed reverts (of one transaction and of a chain).
RECOVERY_OF=(stow unstow unstow-all undo-streamed unstow-all-streamed stow-streamed unstow-streamed
	rollback-streamed)

# ---------------------------------------------------------------- one point

# Per command: BEFORE/AFTER listings and the last transaction id of the prepared log.
BEFORE=
AFTER=
FBEFORE=
FAFTER=
N0=0
CMD=()
FAILS=0

# tree_outcome: OUTCOME is "before", "after" or "other" for W now (the difference in $LOGS/diff).
tree_outcome()
{
	tree_now
	if [[ $NOW == "$FBEFORE" ]]; then
		OUTCOME=before
	elif [[ $NOW == "$FAFTER" ]]; then
		OUTCOME=after
	else
		diff <(printf '%s\n' "$BEFORE") <(listing "$W") | head -n 20 >"$LOGS/diff" || true
		OUTCOME=other
	fi
}

# The log after the dust settled: nothing interrupted or stuck, and the command's transaction
# committed exactly when the tree is AFTER.
log_agrees()
{
	local label=$1 outcome=$2 committed=0 id st
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
	if [[ $outcome == after && $committed == 0 ]]; then
		point_fail "$label: the target is as after, but the log has no committed transaction for it"
		return 1
	fi
	if [[ $outcome == before && $committed == 1 ]]; then
		point_fail "$label: the target is as before, but the log says the transaction committed"
		return 1
	fi
	return 0
}

# settle LABEL [before]: run `grove recover`, then the target must be BEFORE or AFTER (only BEFORE
# with "before"), the log agree, and `grove verify` pass.
settle()
{
	local label=$1 only=${2:-} rc=0
	"$GROVE" recover -t "$T" >"$LOGS/recover.out" 2>"$LOGS/recover.err" || rc=$?
	if ((rc != 0)); then
		point_fail "$label: 'grove recover' exited $rc: $(head -c 400 "$LOGS/recover.err")"
		return 1
	fi
	tree_outcome
	if [[ $OUTCOME == other || ($only == before && $OUTCOME != before) ]]; then
		point_fail "$label: after recovery the target is neither exactly as before nor as after (- before, + now):"
		sed 's/^/    /' "$LOGS/diff" >&2
		return 1
	fi
	log_agrees "$label" "$OUTCOME" || return 1
	# A log made on the way by a run that was killed: recovery made it again and removed the
	# killed run's temporary.
	local tmp
	for tmp in "$ST"/.grove.db.NEW-*; do
		if [[ -e $tmp ]]; then
			point_fail "$label: recovery left the temporary log '${tmp##*/}' in the state dir"
			return 1
		fi
	done
	rc=0
	"$GROVE" verify -t "$T" >"$LOGS/verify.out" 2>&1 || rc=$?
	if ((rc != 0)); then
		point_fail "$label: 'grove verify' exited $rc after recovery: $(head -c 400 "$LOGS/verify.out")"
		return 1
	fi
	return 0
}

# traced_grove_log ACTION SYSCALL K ARGS…: as traced_grove, also tracing fsync, with fd paths, to
# $LOGS/trace (to tell SQLite's ignored folder syncs from grove's own).
traced_grove_log()
{
	local action=$1 sc=$2 k=$3 set=$2
	shift 3
	[[ $sc == fsync ]] || set=$sc,fsync
	ASAN_OPTIONS=$TRACED_ASAN strace -f -qq -y -o "$LOGS/trace" -e trace="$set" \
		-e inject="$sc:$action:when=$k" -- "$GROVE" "$@"
}

# SQLite ignores the result of the folder sync it makes after creating its -journal file (a
# failure there cannot reach grove). grove therefore syncs the state dir itself, with fsync,
# right after the intent is logged and after the commit; on Linux a real writeback error is
# reported to every fd open before it happened, so grove's own fsync sees it. An error injected
# into that one SQLite call is not a writeback error, so nothing later can see it: such a point is
# excused, and counted, when the failing call was SQLite's sync of the state dir and grove's own
# fsync of the state dir followed it.
excused_dir_sync()
{
	awk -v state="$ST" '
		/INJECTED/ && $0 ~ "fdatasync\\([0-9]+<" state ">\\)" { injected = 1; next }
		injected && $0 ~ "fsync\\([0-9]+<" state ">\\) = 0" { ok = 1 }
		END { exit !(injected && ok) }' "$LOGS/trace"
}

# kill_at SYSCALL K: the command killed at SYSCALL's K-th call; returns 0 when it was killed.
kill_at()
{
	local rc=0
	traced_grove signal=SIGKILL "$1" "$2" "${CMD[@]}" >/dev/null 2>"$LOGS/kill.err" || rc=$?
	if ((rc != 137)); then
		point_fail "$NAME: kill at $1 #$2: grove was not killed (exit $rc; the clean run made that call)"
		return 1
	fi
	return 0
}

# streamed_chain: the clean run's revert (transaction N0 + 1) begins with the inverse of the last op
# of the newest transaction it reverts (N0), as a streamed revert does (the whole plan orders its
# ops by path, and puts opt/d's first).
streamed_chain()
{
	"$GROVE" show -t "$T" --json "$N0" >"$LOGS/chain.old" &&
		"$GROVE" show -t "$T" --json $((N0 + 1)) >"$LOGS/chain.new" &&
		python3 - "$LOGS/chain.old" "$LOGS/chain.new" <<'PY'
import json, sys

inverse = {"link": "unlink", "unlink": "link", "mkdir": "rmdir", "rmdir": "mkdir"}
old = json.load(open(sys.argv[1]))["transaction"]["changes"][-1]
new = json.load(open(sys.argv[2]))["transaction"]["changes"][0]
sys.exit(not (new["op"] == inverse[old["op"]] and new["path"] == old["path"]))
PY
}

# ---------------------------------------------------------------- the loops

run_command()
{
	NAME=$1
	local prep=${PREP_OF[$NAME]} sc k e spec stride first rc outcome states newest label n_kill=0 n_err=0 n_excused=0 half=() pre_meta
	local -A count=()
	local -A exits=()
	local KILL_STRIDE=$KILL_STRIDE ERRNOS=$ERRNOS
	read -ra CMD <<<"${ARGS_OF[$NAME]}"
	FAILS=0
	if [[ -n ${BUDGET_OF[$NAME]:-} ]]; then
		export GROVE_PLAN_BUDGET=${BUDGET_OF[$NAME]}
		KILL_STRIDE=${CRASH_STREAM_KILL_STRIDE:-$KILL_STRIDE}
		ERRNOS=${CRASH_STREAM_ERRNOS-$ERRNOS}
	else
		unset GROVE_PLAN_BUDGET
	fi

	# The clean run: BEFORE, AFTER, and how often it makes each mutating syscall.
	restore "$prep"
	BEFORE=$(listing "$W")
	tree_now
	FBEFORE=$NOW
	read_states || fail "$NAME: 'grove log' failed: $(cat "$LOGS/log.err")"
	N0=${STATES%% *}
	N0=${N0:-0}
	rc=0
	count_syscalls count "${CMD[@]}" || rc=$?
	if ((rc != 0)); then
		cat "$LOGS/count.err" >&2
		fail "$NAME: the clean run of 'grove ${CMD[*]}' exited $rc"
	fi
	AFTER=$(listing "$W")
	tree_now
	FAFTER=$NOW
	[[ $(wc -l <<<"$AFTER") == $(find "$W" -mindepth 1 | wc -l) && $(wc -l <<<"$FAFTER") == $(wc -l <<<"$AFTER") ]] ||
		fail "$NAME: lib.sh's listing, find and crash-tree disagree on the entries of '$W'"
	[[ $AFTER != "$BEFORE" ]] || fail "$NAME: the clean run changed nothing; the scenario is wrong"
	[[ $AFTER != *.grove-* ]] || fail "$NAME: the clean run left temporary entries"
	[[ $NAME != rollback-streamed ]] || streamed_chain ||
		fail "$NAME: the clean run was not the streamed revert (its first op is not the inverse of transaction $N0's last)"
	case $NAME in
	undo | rollback | rollback-streamed)
		# They go back to the state after transaction 1.
		restore base
		[[ $AFTER == "$(listing "$W")" ]] ||
			fail "$NAME: the clean run did not restore the tree after transaction 1"
		;;
	esac

	# Kill at every mutating syscall.
	for sc in "${SYSCALLS[@]}"; do
		for ((k = 1; k <= count[$sc]; k += KILL_STRIDE)); do
			label="$NAME: kill at $sc #$k"
			n_kill=$((n_kill + 1))
			restore "$prep"
			kill_at "$sc" "$k" || continue
			if [[ " ${RECOVERY_OF[*]} " == *" $NAME "* ]]; then
				tree_now
				[[ $NOW == "$FBEFORE" || $NOW == "$FAFTER" ]] || half+=("$sc:$k")
			fi
			settle "$label" || true
		done
	done

	# Kill inside recovery, at half-done points spread over the run (first, middle, last…).
	local picks=() i m n=${#half[@]} r_points=0
	m=$((RECOVERY_POINTS < n ? RECOVERY_POINTS : n))
	for ((i = 0; i < m; i++)); do
		picks+=("${half[m == 1 ? 0 : i * (n - 1) / (m - 1)]}")
	done
	if ((n == 0)) && [[ " ${RECOVERY_OF[*]} " == *" $NAME "* ]]; then
		point_fail "$NAME: no kill point left the target half-changed; recovery was not killed"
	fi
	local p rsc rk
	local -A rcount=()
	for p in "${picks[@]}"; do
		restore "$prep"
		kill_at "${p%%:*}" "${p#*:}" || continue
		rc=0
		count_syscalls rcount recover -t "$T" || rc=$?
		if ((rc != 0)); then
			point_fail "$NAME: kill at ${p/:/ #}, then 'grove recover' exited $rc: $(head -c 400 "$LOGS/count.err")"
			continue
		fi
		for rsc in "${SYSCALLS[@]}"; do
			for ((rk = 1; rk <= rcount[$rsc]; rk += KILL_STRIDE)); do
				label="$NAME: kill at ${p/:/ #}, recovery killed at $rsc #$rk"
				r_points=$((r_points + 1))
				restore "$prep"
				kill_at "${p%%:*}" "${p#*:}" || continue
				rc=0
				traced_grove signal=SIGKILL "$rsc" "$rk" recover -t "$T" >/dev/null 2>&1 || rc=$?
				if ((rc != 137)); then
					point_fail "$label: recovery was not killed (exit $rc)"
					continue
				fi
				settle "$label" before || true
			done
		done
	done
	n_kill=$((n_kill + r_points))

	# Failing syscalls: exit non-zero with a message, the target as before (or as after when only
	# a durability step after the commit failed), and untouched when the intent never landed.
	for spec in $ERRNOS; do
		e=${spec%%/*}
		stride=$ERROR_STRIDE
		first=1
		[[ $spec == */* ]] && stride=${spec#*/}
		[[ $stride == *@* ]] && first=${stride#*@} && stride=${stride%%@*}
		for sc in "${SYSCALLS[@]}"; do
			for ((k = first; k <= count[$sc]; k += stride)); do
				label="$NAME: $e at $sc #$k"
				n_err=$((n_err + 1))
				restore "$prep"
				pre_meta=$("$CRASH_TREE" list -i -m "$W")
				rc=0
				traced_grove_log "error=$e" "$sc" "$k" "${CMD[@]}" >"$LOGS/err.out" 2>"$LOGS/err.err" || rc=$?
				exits[$rc]=$((${exits[$rc]:-0} + 1))
				if ((rc == 0)) && excused_dir_sync; then
					n_excused=$((n_excused + 1))
				elif ((rc == 0)); then
					point_fail "$label: grove exited 0 (stderr: $(head -c 300 "$LOGS/err.err"))"
				elif ((rc > 128)); then
					point_fail "$label: grove died (exit $rc): $(head -c 600 "$LOGS/err.err")"
				elif ! has_line "$LOGS/err.err" "^grove: .*('[^']+'|grove\.db|log|journal)"; then
					point_fail "$label: exit $rc without a 'grove: …' message naming a path or the log: $(head -c 300 "$LOGS/err.err")"
				fi
				tree_outcome
				outcome=$OUTCOME
				read_states || point_fail "$label: 'grove log' failed: $(head -c 400 "$LOGS/log.err")"
				states=$STATES
				if [[ $outcome == other ]]; then
					point_fail "$label: exit $rc, and the target is neither as before nor as after (- before, + now):"
					sed 's/^/    /' "$LOGS/diff" >&2
					sed 's/^/    stderr: /' "$LOGS/err.err" >&2
				elif [[ $outcome == after && $'\n'$states != *$'\n'"$((N0 + 1)) committed"$'\n'* ]]; then
					point_fail "$label: exit $rc, the target is as after, but the transaction is not committed"
				fi
				newest=${states%% *}
				if ((${newest:-0} <= N0)); then
					# No intent was logged: not a single entry may have been touched.
					if [[ $(fmeta) != "$pre_meta" ]]; then
						point_fail "$label: no transaction was logged, yet the tree was touched:"
						diff <(printf '%s\n' "$pre_meta") <(fmeta) | head -n 10 | sed 's/^/    /' >&2 || true
					fi
				fi
				[[ $outcome == other ]] || settle "$label" || true
			done
		done
	done

	local ex=""
	for rc in "${!exits[@]}"; do ex+=" exit $rc: ${exits[$rc]};"; done
	printf '%-9s grove %-40s %4d kill points (%d in recovery%s), %4d error points (%s; %d excused: SQLite'"'"'s ignored folder sync, re-synced by grove), %d failures;%s\n' \
		"$NAME" "$(printf '%s ' "${CMD[@]}" | sed "s|$W/||g")" "$n_kill" "$r_points" \
		"$( ((KILL_STRIDE == 1)) || echo "; every ${KILL_STRIDE}th kill point")" "$n_err" \
		"${ERRNOS// /, }$( ((ERROR_STRIDE == 1)) || echo ", others every ${ERROR_STRIDE}th")" "$n_excused" "$FAILS" "$ex"
	TOTAL_EXCUSED=$((TOTAL_EXCUSED + n_excused))
	TOTAL_KILL=$((TOTAL_KILL + n_kill))
	TOTAL_ERR=$((TOTAL_ERR + n_err))
	TOTAL_FAIL=$((TOTAL_FAIL + FAILS))
	if ((FAILS == 0)); then check "$NAME: every kill and error point ends as before or after"; fi
}

for NAME in "${NAMES[@]}"; do
	if [[ -n ${CRASH_ONLY:-} && " $CRASH_ONLY " != *" $NAME "* ]]; then
		echo "ok - # SKIP $NAME (not in CRASH_ONLY)"
		continue
	fi
	run_command "$NAME"
done

echo "crash: $TOTAL_KILL kill points, $TOTAL_ERR error points ($TOTAL_EXCUSED excused), $TOTAL_FAIL failures ($((SECONDS - START)) s)"
((TOTAL_FAIL == 0)) || exit 1
