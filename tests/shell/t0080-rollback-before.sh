#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove rollback --before T (issue 42 item 4, issue 40 item 8): the target back to its state before
# its transaction T - T and every later committed transaction of that target reverted, as one new
# transaction - on a state dir whose numbers two targets share (so T - 1 is the other target's).
# T must be the target's own; anything else is refused with one line and nothing changed. The
# expected trees are written here from GNU Stow's folding rules, not taken from grove.
set -euo pipefail
# shellcheck source=tests/shell/lib.sh
. "$(dirname "$0")/lib.sh"

S=$ROOT/stow
A=$ROOT/a
B=$ROOT/b
mkdir -p "$S" "$A" "$B"
mk_file "$S/p/bin/x" x
mk_file "$S/q/bin/y" y
mk_file "$S/r/etc/r.conf" r
cd "$ROOT"

# Transactions, numbered by the shared log: 1 on a, 2 on b, 3 on a, 4 on b, 5 on a.
expect_exit 0 "$GROVE" -d stow -t a -S p # 1
expect_exit 0 "$GROVE" -d stow -t b -S r # 2
expect_exit 0 "$GROVE" -d stow -t a -S q # 3: unfolds bin/
expect_exit 0 "$GROVE" -d stow -t b -D r # 4
expect_exit 0 "$GROVE" -d stow -t a -S r # 5
expect_tree "$A" <<-T
	d bin
	l bin/x -> ../../stow/p/bin/x
	l bin/y -> ../../stow/q/bin/y
	l etc -> ../stow/r/etc
T
expect_tree "$B" ""
snapshot "$B"
check "a history of two targets in one log: a has 1, 3, 5; b has 2, 4"

# Refused, nothing changed: another target's number, one the log lacks, no number, 0, both forms.
snapshot "$A"
expect_exit 1 "$GROVE" rollback -t a --before 4
expect_err_has "transaction 4 is not in the log of '$A' but another target's"
expect_exit 1 "$GROVE" rollback -t a --before 99
expect_err_has "no transaction 99 in the log"
expect_exit 2 "$GROVE" rollback -t a --before
expect_err_has "option '--before' needs a transaction number"
expect_exit 2 "$GROVE" rollback -t a --before=0
expect_exit 2 "$GROVE" rollback -t a --before 3x
expect_exit 2 "$GROVE" rollback -t a --to 2 --before 3
expect_err_has "options '--to' and '--before' exclude each other"
expect_unchanged "$A"
expect_exit 0 "$GROVE" log -t a
[[ $(grep -c committed "$OUT") == 3 ]] || fail "refused rollbacks logged something: $(cat "$OUT")"
check "rollback --before: another target's T, an unknown T, a missing, zero or bad number, or --to too: refused, nothing changed"

# -n plans it and changes nothing; --json names what it would revert.
expect_exit 0 "$GROVE" --json -n rollback -t a --before 3
grep -q '"reverts":\[3,5\]' "$OUT" || grep -q '"reverts": \[3, 5\]' "$OUT" ||
	fail "rollback -n --before 3: expected reverts 3 and 5: $(cat "$OUT")"
expect_unchanged "$A"
check "rollback -n --before 3 plans the revert of 3 and 5 and changes nothing"

# For real: before 3 is the state after 1 (2 is b's: --to 2 would say the same, --to 1 too).
expect_exit 0 "$GROVE" rollback -t a --before 3 # 6
expect_tree "$A" <<-T
	l bin -> ../stow/p/bin
T
expect_unchanged "$B"
expect_exit 0 "$GROVE" verify -t a
expect_exit 0 "$GROVE" log -t a
grep -Eq '^ +6 .* committed .*grove rollback --before 3' "$OUT" || fail "log: $(cat "$OUT")"
check "rollback --before 3 leaves a as after 1, in one transaction logged as such; b untouched"

# Again: nothing left to revert from 3 on (no transaction). Then before 1: a empty.
expect_exit 0 "$GROVE" rollback -t a --before 3
expect_tree "$A" <<-T
	l bin -> ../stow/p/bin
T
expect_exit 0 "$GROVE" log -t a
[[ $(grep -c committed "$OUT") == 4 ]] || fail "a second rollback --before 3 logged a transaction: $(cat "$OUT")"
expect_exit 0 "$GROVE" rollback -t a --before=1 # 7
expect_tree "$A" ""
expect_unchanged "$B"
expect_exit 0 "$GROVE" verify -t a
check "rollback --before again changes nothing; --before=1 (the target's first) empties it"

# The alternatives root: a rollback run again finds the group as it wants it and commits nothing
# (before, each rerun logged an empty transaction: the admin file's "change" from a text to itself).
R=$ROOT/altroot
mkdir -p "$R/usr/bin" "$R/etc/alternatives" "$R/var/lib/dpkg/alternatives"
mk_file "$R/usr/bin/ed.a" a
mk_file "$R/usr/bin/ed.b" b
# The root's links and files (alternatives.log, which each command appends to, and grove's lock
# aside).
alt_state() { listing "$R" | grep -v -e ' var/log/alternatives\.log ' -e 'grove\\x20lock'; }
expect_exit 0 "$GROVE" alt --root "$R" --install /usr/bin/ed ed /usr/bin/ed.a 50 # 8
L8=$(alt_state)
expect_exit 0 "$GROVE" alt --root "$R" --install /usr/bin/ed ed /usr/bin/ed.b 40 # 9
expect_exit 0 "$GROVE" alt --root "$R" --set ed /usr/bin/ed.b # 10
[[ $(alt_state) != "$L8" ]] || fail "--set ed.b changed nothing"
expect_exit 0 "$GROVE" rollback -t altroot --before 9 # 11
[[ $(alt_state) == "$L8" ]] || fail "rollback --before 9: not as after 8: $(diff <(echo "$L8") <(alt_state))"
for _ in 1 2; do
	expect_exit 0 "$GROVE" rollback -t altroot --before 9
	expect_out_has "nothing to change"
done
[[ $(alt_state) == "$L8" ]] || fail "rollback --before 9 run again: not as after 8: $(diff <(echo "$L8") <(alt_state))"
expect_exit 0 "$GROVE" log -t altroot
[[ $(grep -c committed "$OUT") == 4 ]] || fail "rollback --before run again logged transactions: $(cat "$OUT")"
expect_exit 0 "$GROVE" verify -t altroot
check "on the alternatives root: rollback --before 9 puts the group and its links back as after 8; run again twice, no transaction"
