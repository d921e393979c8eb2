#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove alt's lock fits its callers (maintainer scripts never retry): one lock per admindir; a
# second command on the same admindir waits for the first (a notice after a second, bounded by
# --wait), commands on different admindirs sharing an instdir and a state dir never wait for each
# other, and a stow run still has the instdir to itself. Lock holders are processes the test
# controls (flock(1), a --config waiting on a fifo); progress is polled on what they print.
source "$(dirname "$0")/lib.sh"

I=$ROOT/i
A1=$ROOT/adm1 A2=$ROOT/adm2
mkdir -p "$I/usr/bin" "$A1" "$A2"
for c in a b c d; do
	mk_file "$I/opt/$c" "$c"
done
alt1=(alt --altdir "$I/alt1" --admindir "$A1" --instdir "$I")
alt2=(alt --altdir "$I/alt2" --admindir "$A2" --instdir "$I")

# Polls (up to 30 s) until file contains text.
await()
{
	local file=$1 text=$2 i
	for ((i = 0; i < 300; i++)); do
		grep -qF -- "$text" "$file" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "gave up waiting for '$text' in $file: $(cat "$file" 2>/dev/null)"
}

# 1. Same admindir: a holder (flock on the admindir's lock file, fd 9) and two installs that must
# wait. The file is made private, as grove makes it.
A1LOCK="$A1/.grove lock.dpkg-tmp"
(umask 077 && : >>"$A1LOCK")
exec 9<"$A1LOCK"
flock -n 9 || fail "could not lock the admindir for the test"
"$GROVE" "${alt1[@]}" --install "$I/usr/bin/x" x "$I/opt/a" 10 9<&- >"$ROOT/w1.out" 2>"$ROOT/w1.err" &
w1=$!
"$GROVE" "${alt1[@]}" --install "$I/usr/bin/x" x "$I/opt/b" 20 9<&- >"$ROOT/w2.out" 2>"$ROOT/w2.err" &
w2=$!
await "$ROOT/w1.err" "grove alt: waiting for administrative directory '$A1': another run holds it"
await "$ROOT/w2.err" "grove alt: waiting for administrative directory '$A1': another run holds it"
[[ ! -e $I/usr/bin/x ]] || fail "an install went on while the admindir was locked"
flock -u 9
exec 9<&-
rc1=0 rc2=0
wait "$w1" || rc1=$?
wait "$w2" || rc2=$?
((rc1 == 0 && rc2 == 0)) || fail "waiting installs: exit $rc1 and $rc2: $(cat "$ROOT"/w?.err)"
[[ $(wc -l <"$ROOT/w1.err") == 1 && $(wc -l <"$ROOT/w2.err") == 1 ]] ||
	fail "more than the one notice line: $(cat "$ROOT"/w?.err)"
expect_exit 0 "$GROVE" "${alt1[@]}" --list x
[[ $(cat "$OUT") == "$I/opt/a"$'\n'"$I/opt/b" ]] || fail "both choices should be installed: $(cat "$OUT")"
[[ $(readlink "$I/alt1/x") == "$I/opt/b" ]] || fail "the best choice is not linked"
check "two installs on a locked admindir wait (one notice line each) and both succeed once it is free"

# 2. Different admindirs, same instdir and state dir: a --config on adm1 holds its locks while it
# waits for its answer on a fifo; meanwhile commands on adm2 go through without waiting.
mkfifo "$ROOT/answer"
"$GROVE" "${alt1[@]}" --config x <"$ROOT/answer" >"$ROOT/config.out" 2>&1 &
holder=$!
exec 8>"$ROOT/answer" # the writer end, opened after the reader so neither blocks
await "$ROOT/config.out" "Press <enter> to keep the current choice"
expect_exit 0 "$GROVE" "${alt2[@]}" --wait 0 --install "$I/usr/bin/y" y "$I/opt/c" 1
expect_exit 0 "$GROVE" "${alt2[@]}" --wait 0 --install "$I/usr/bin/y" y "$I/opt/d" 5
[[ $(readlink "$I/alt2/y") == "$I/opt/d" ]] || fail "the install on adm2 did not happen"
check "installs on another admindir go through at once while a command holds the first one"

expect_exit 2 "$GROVE" "${alt1[@]}" --wait 0 --auto x
expect_err_has "grove alt: error: administrative directory '$A1' is locked by another grove run"
mkdir -p "$ROOT/stow/pkg/bin"
mk_file "$ROOT/stow/pkg/bin/tool" tool
expect_exit 75 "$GROVE" --wait 0 stow -d "$ROOT/stow" -t "$I" pkg
expect_err_has "is locked by another grove run"
[[ ! -e $I/bin ]] || fail "stow went on while grove alt held the instdir"
check "the held admindir still excludes a writer on it, and a stow run into the instdir still waits"

echo 1 >&8
exec 8>&-
rc=0
wait "$holder" || rc=$?
((rc == 0)) || fail "the --config holder: exit $rc: $(cat "$ROOT/config.out")"
[[ $(readlink "$I/alt1/x") == "$I/opt/a" ]] || fail "--config's answer was not applied"
expect_exit 0 "$GROVE" --wait 0 stow -d "$ROOT/stow" -t "$I" pkg
check "once the holder is done, its answer is applied and stow goes on"

# 3. A holder that never lets go: exit 2 after the bound, with a clear message.
exec 9<"$A1LOCK"
flock -n 9 || fail "could not lock the admindir for the test"
t0=$(date +%s.%N)
expect_exit 2 "$GROVE" "${alt1[@]}" --wait 2 --auto x 9<&-
t1=$(date +%s.%N)
exec 9<&-
expect_err_has "grove alt: waiting for administrative directory '$A1': another run holds it (giving up after 2 s)"
expect_err_has "grove alt: error: administrative directory '$A1' is locked by another grove run (waited 2 s)"
awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 2) }' || fail "gave up before the bound"
expect_exit 0 "$GROVE" "${alt1[@]}" --query x
expect_out_has "Status: manual"
check "a holder that never lets go: exit 2 after --wait's bound, the group unchanged"
