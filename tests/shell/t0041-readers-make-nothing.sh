#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The reading commands (status, log, show, verify) make nothing: before grove ever wrote, a state
# dir that is not there, or holds no journal, reads as an empty log, and stays as it was (no
# grove.db, no locks/); what they print is what an empty log prints. After a stow they read it.
source "$(dirname "$0")/lib.sh"

S=$ROOT/stow
T=$ROOT/target
mk_file "$S/a/bin/x" "x"
mkdir -p "$T"
export GROVE_STATE_DIR=$ROOT/state

readers() {
	expect_exit 0 "$GROVE" status -d "$S" -t "$T"
	expect_out_has "(nothing stowed by grove)"
	expect_out_has "not stowed"
	expect_exit 0 "$GROVE" log -t "$T"
	expect_out_empty
	expect_exit 0 "$GROVE" --json log -t "$T"
	expect_out_has "\"log\": \"$GROVE_STATE_DIR/grove.db\""
	expect_out_has "\"transactions\": []"
	expect_exit 1 "$GROVE" show 1 -t "$T"
	expect_err_has "no transaction 1 in the log"
	expect_exit 0 "$GROVE" verify -d "$S" -t "$T"
	expect_out_has "verified 0 entries"
	expect_exit 0 "$GROVE" --json status -d "$S" -t "$T"
	expect_out_has "\"holder\": null"
}

readers
[[ ! -e $GROVE_STATE_DIR ]] || fail "a reading command made the state dir: $(ls -la "$GROVE_STATE_DIR")"
check "no state dir: the readers answer as for an empty log and make none"

mkdir -m 700 "$GROVE_STATE_DIR"
readers
[[ -z $(ls -A "$GROVE_STATE_DIR") ]] || fail "a reading command wrote into the state dir: $(ls -A "$GROVE_STATE_DIR")"
check "an empty state dir: the readers write nothing into it"

expect_exit 0 "$GROVE" stow -d "$S" -t "$T" a
expect_exit 0 "$GROVE" log -t "$T"
expect_out_has "grove stow -d $S -t $T a"
expect_exit 0 "$GROVE" status -t "$T"
expect_out_has "1 link"
check "after a stow the readers read the log it made"
