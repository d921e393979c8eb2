#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Profiles under kill -9 (strace fault injection, as tests/crash/run.sh): install (build + switch),
# rollback, delete and gc are each killed at every mutating syscall in turn, then recovered; the
# profile dir must be exactly as before or as after, the profile must resolve to a complete
# generation, `profile list` must agree with the links on disk, and the log must hold nothing
# interrupted (and, where the kill left the profile half-changed, the generic `grove recover -t
# D/main.generations` must refuse and change nothing). Recovery of a half-built generation is killed
# too, at every syscall. Each of grove's own mutating syscalls is also made to fail with EIO: a clear
# error, and the profile as before.
#
# SQLite's page writes inside one of its transactions (pwrite64, ftruncate) are made atomic by
# SQLite's rollback journal, and tests/crash/run.sh kills grove at every one of them; here every
# PROFILE_CRASH_SQLITE_STRIDE-th of them (default 4) and the last are killed, every other syscall
# at each of its calls (the fsyncs and fdatasyncs mark each log transaction's boundaries).
#
# Knobs: PROFILE_CRASH_RECOVERY_POINTS (half-done install points whose recovery is killed,
# default 2), PROFILE_CRASH_SQLITE_STRIDE (above), PROFILE_CRASH_STRIDE (every Nth call of each
# other syscall, killed or failed, and the last; default 1: all), PROFILE_CRASH_ONLY (command
# names to run, default all).
set -euo pipefail
# shellcheck source=tests/shell/lib.sh
. "$(dirname "$0")/../shell/lib.sh"
TEST_NAME=profile-crash
# shellcheck source=tests/crash/lib.sh
. "$(dirname "$0")/../crash/lib.sh"

RECOVERY_POINTS=${PROFILE_CRASH_RECOVERY_POINTS:-2}
SQLITE_STRIDE=${PROFILE_CRASH_SQLITE_STRIDE:-4}
STRIDE=${PROFILE_CRASH_STRIDE:-1}
ERR_SYSCALLS=(symlinkat renameat2 mkdirat unlinkat fsync write)

# points SYSCALL COUNT: the call numbers to kill at (or fail).
points()
{
	local k step=$STRIDE
	[[ $1 == pwrite64 || $1 == ftruncate ]] && step=$SQLITE_STRIDE
	for ((k = 1; k <= $2; k += step)); do echo "$k"; done
	(($2 > 0 && ($2 - 1) % step != 0)) && echo "$2"
	return 0
}
SYSCALLS=(symlinkat renameat2 mkdirat unlinkat fsync fdatasync pwrite64 ftruncate write)
crash_init

S=$ROOT/stow
D=$ROOT/prof
P=$D/main
export GROVE_STATE_DIR=$ROOT/state
PREP=$ROOT/prep
LOGS=$ROOT/logs
mkdir -p "$S" "$D" "$PREP" "$LOGS"

# The profile dir and NAME.generations keep their inodes: the log knows NAME.generations by device,
# inode and birth time, so a folder made again would be another target (and, where the filesystem
# hands the old inode to a new folder made meanwhile, the same target by chance only: a test run
# beside others once counted a different number of writes than the runs it then killed).
SAVED=(prof state)
EMPTIED=("$GROVE_STATE_DIR")
restore()
{
	"$CRASH_TREE" restore "$PREP/$1" "$ROOT" "$D/main.generations" "${EMPTIED[@]}"
}

# Type, path, link text of every entry of D, and each file's content without the record's time:
# tree_now sets NOW.
tree_now()
{
	NOW=$("$CRASH_TREE" list -c 'time ' "$D")
}

mk_file "$S/a/bin/a" a
mk_file "$S/a/share/doc/a.txt" a-doc
mk_file "$S/b/bin/b" b
mk_file "$S/b/share/doc/b.txt" b-doc
mk_file "$S/c/etc/c.conf" c
mk_file "$S/d/bin/d" d
mk_file "$S/d/share/man/d.1" d1

gr profile -p "$P" build -d "$S" a # 1
gr profile -p "$P" install b       # 2
gr profile -p "$P" install c       # 3
gr profile -p "$P" install d       # 4
gr profile -p "$P" remove c        # 5
gr profile -p "$P" delete 1 2
gr profile -p "$P" switch 4 # links 3, 4, 5; folders 1 and 2 unreferenced
save_state hist

NAMES=(install rollback delete gc)
declare -A ARGS_OF=(
	[install]="profile -p $P build a d"
	[rollback]="profile -p $P rollback"
	[delete]="profile -p $P delete 5 3"
	[gc]="profile -p $P gc"
)

FAILS=0

# The profile resolves to a complete generation, list agrees with the disk, the log is settled.
# NOW must be D's listing as it is (the callers have just made it). In bash rather than pipes of
# find, sed, sort and tr: a dozen processes less per point.
consistent()
{
	local label=$1 cur n line json got want re
	local -a nums=()
	re=$'(^|\n)l main -> ([^\n]*)'
	[[ $NOW =~ $re ]] || {
		point_fail "$label: the profile link is missing"
		return 1
	}
	cur=${BASH_REMATCH[2]}
	n=${cur//[!0-9]/}
	if [[ ! -f $P/.grove-generation || $'\n'$(<"$P/.grove-generation")$'\n' != *$'\n'"number $n"$'\n'* ]]; then
		point_fail "$label: the profile ($cur) does not resolve to a complete generation"
		return 1
	fi
	[[ -f $P/bin/a && $(<"$P/bin/a") == a ]] || {
		point_fail "$label: bin/a does not resolve through the profile"
		return 1
	}
	re='^l main-([0-9]+)-link -> '
	while IFS= read -r line; do
		if [[ $line =~ $re ]]; then nums[BASH_REMATCH[1]]=1; fi
	done <<<"$NOW"
	want=
	for line in "${!nums[@]}"; do want+="$line "; done
	want+="current $n"
	"$GROVE" profile -p "$P" list --json >"$LOGS/list.json" 2>&1 || true
	json=$(<"$LOGS/list.json")
	got=
	re='"number": ([0-9]+)'
	line=$json
	while [[ $line =~ $re ]]; do
		got+="${BASH_REMATCH[1]} "
		line=${line#*"${BASH_REMATCH[0]}"}
	done
	re='^\{"grove": 2, "command": "profile list", "profile": .*, "current": ([0-9]+), "generations"'
	got+="current "
	if [[ $json =~ $re ]]; then got+=${BASH_REMATCH[1]}; fi
	[[ $got == "$want" ]] || {
		point_fail "$label: list says '$got', the disk '$want'"
		return 1
	}
	"$GROVE" log --json -t "$D/main.generations" >"$LOGS/plog.json" 2>&1 || true
	if has_line "$LOGS/plog.json" '"state": "(interrupted|stuck)"'; then
		point_fail "$label: the log holds an interrupted or stuck transaction"
		return 1
	fi
	return 0
}

# settle LABEL: recover, then exactly before or after, and consistent.
settle()
{
	local label=$1 rc=0 now
	"$GROVE" profile -p "$P" recover >"$LOGS/recover.out" 2>"$LOGS/recover.err" || rc=$?
	if ((rc != 0)); then
		point_fail "$label: 'profile recover' exited $rc: $(head -c 300 "$LOGS/recover.err")"
		return 1
	fi
	tree_now
	if [[ $NOW != "$FBEFORE" && $NOW != "$FAFTER" ]]; then
		point_fail "$label: the profile dir is neither as before nor as after (- before, + now):"
		diff <(printf '%s\n' "$FBEFORE") <(printf '%s\n' "$NOW") | head -n 20 | sed 's/^/    /' >&2
		return 1
	fi
	consistent "$label"
}

kill_at()
{
	local sc=$1 k=$2 rc=0
	shift 2
	# (The braces keep bash's "Killed" notice out of the test's output.)
	{ traced_grove signal=SIGKILL "$sc" "$k" "$@" >/dev/null 2>&1 || rc=$?; } 2>/dev/null
	((rc == 137))
}

START=$SECONDS
TOTAL=0
for NAME in "${NAMES[@]}"; do
	if [[ -n ${PROFILE_CRASH_ONLY:-} && " $PROFILE_CRASH_ONLY " != *" $NAME "* ]]; then
		continue
	fi
	read -ra CMD <<<"${ARGS_OF[$NAME]}"
	declare -A count=()
	restore hist
	tree_now
	FBEFORE=$NOW
	count_syscalls count "${CMD[@]}" || fail "$NAME: the clean run failed: $(cat "$LOGS/count.err")"
	tree_now
	FAFTER=$NOW
	[[ $FAFTER != "$FBEFORE" ]] || fail "$NAME: the clean run changed nothing"
	[[ $FAFTER != *.grove-[0-9]* ]] || fail "$NAME: the clean run left temporary entries"
	consistent "$NAME: clean run" || fail "$NAME: inconsistent after the clean run"
	half=()
	n=0
	for sc in "${SYSCALLS[@]}"; do
		for k in $(points "$sc" "${count[$sc]}"); do
			n=$((n + 1))
			restore hist
			if ! kill_at "$sc" "$k" "${CMD[@]}"; then
				point_fail "$NAME: kill at $sc #$k: grove was not killed"
				continue
			fi
			tree_now
			now=$NOW
			if [[ $now != "$FBEFORE" && $now != "$FAFTER" ]]; then
				half+=("$sc:$k")
				# The generic recovery must not touch a profile's log target.
				rc=0
				"$GROVE" recover -t "$D/main.generations" >/dev/null 2>"$LOGS/generic.err" || rc=$?
				tree_now
				if ((rc != 2)) || [[ $NOW != "$now" ]]; then
					point_fail "$NAME: kill at $sc #$k: 'grove recover -t' on the profile's log exited $rc (want 2) or changed it"
				fi
			fi
			settle "$NAME: kill at $sc #$k" || true
		done
	done
	# Recovery killed at every syscall, for half-done points of the build.
	r_points=0
	if [[ $NAME == install ]]; then
		m=${#half[@]}
		((m > 0)) || point_fail "install: no kill point left the profile half-changed"
		picks=()
		for ((i = 0; i < RECOVERY_POINTS && i < m; i++)); do
			picks+=("${half[RECOVERY_POINTS == 1 ? 0 : i * (m - 1) / (RECOVERY_POINTS - 1)]}")
		done
		for p in "${picks[@]}"; do
			declare -A rcount=()
			restore hist
			kill_at "${p%%:*}" "${p#*:}" "${CMD[@]}" || continue
			count_syscalls rcount profile -p "$P" recover || point_fail "install: recover after $p failed"
			for rsc in "${SYSCALLS[@]}"; do
				for rk in $(points "$rsc" "${rcount[$rsc]}"); do
					r_points=$((r_points + 1))
					restore hist
					kill_at "${p%%:*}" "${p#*:}" "${CMD[@]}" || continue
					if ! kill_at "$rsc" "$rk" profile -p "$P" recover; then
						point_fail "install: kill at $p, recovery not killed at $rsc #$rk"
						continue
					fi
					settle "install: kill at $p, recovery killed at $rsc #$rk" || true
				done
			done
		done
	fi
	# Failing syscalls (EIO at every call of grove's own mutating syscalls): a one-line error
	# naming a path, and, without any recovery, the profile dir as before (or as after, when only a
	# sync after the commit failed); then consistent.
	e_points=0
	for sc in "${ERR_SYSCALLS[@]}"; do
		for k in $(points "$sc" "${count[$sc]}"); do
			e_points=$((e_points + 1))
			label="$NAME: EIO at $sc #$k"
			restore hist
			rc=0
			ASAN_OPTIONS=$TRACED_ASAN strace -f -qq -o /dev/null -e trace="$sc" \
				-e inject="$sc:error=EIO:when=$k" -- "$GROVE" "${CMD[@]}" >/dev/null 2>"$LOGS/err.err" || rc=$?
			tree_now
			now=$NOW
			if ((rc > 128)); then
				point_fail "$label: grove died (exit $rc): $(head -c 300 "$LOGS/err.err")"
			elif ((rc != 0)) && ! has_line "$LOGS/err.err" "^grove: .*'[^']+'"; then
				point_fail "$label: exit $rc without a message naming a path: $(head -c 300 "$LOGS/err.err")"
			elif [[ $now != "$FBEFORE" && $now != "$FAFTER" ]]; then
				point_fail "$label: exit $rc, and the profile dir is neither as before nor as after:"
				diff <(printf '%s\n' "$FBEFORE") <(printf '%s\n' "$now") | head -n 20 | sed 's/^/    /' >&2
			elif ((rc == 0)) && [[ $now != "$FAFTER" ]]; then
				point_fail "$label: exit 0, but the profile dir is not as after"
			else
				settle "$label" || true
			fi
		done
	done
	TOTAL=$((TOTAL + n + r_points + e_points))
	echo "# $NAME: $n kill points, $r_points in recovery, $e_points error points"
done
echo "# profile-crash: $TOTAL kill and error points, $FAILS failures ($((SECONDS - START)) s)"
((FAILS == 0)) || exit 1
check "every kill and error point of install, rollback, delete and gc (and kill point of recovery) ends as before or after"
