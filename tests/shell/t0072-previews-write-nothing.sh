#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A dry run is the real run reading only (issue 39 item 1): before grove ever wrote, the previews of
# every changing command (-n stow/unstow/restow, plan, -n undo, -n rollback, apply --check,
# -n profile build) make no state dir and no log; once there is a log, they change nothing in it
# nor in the target.
source "$(dirname "$0")/lib.sh"

S=$ROOT/stow
T=$ROOT/target
mk_file "$S/pkg/bin/tool" "tool"
mk_file "$S/other/bin/other" "other"
mkdir -p "$T"
cat >"$ROOT/grove.yaml" <<YAML
targets:
  - path: $T
    dir: $S
    packages: [pkg]
profiles:
  - name: tools
    dir: $S
    packages: [pkg]
YAML

previews()
{
	expect_exit 0 "$GROVE" -n stow -d "$S" -t "$T" pkg
	expect_exit 0 "$GROVE" -n restow -d "$S" -t "$T" pkg
	expect_exit 0 "$GROVE" -n unstow -d "$S" -t "$T" pkg
	expect_exit 0 "$GROVE" plan -d "$S" -t "$T" other
	expect_exit_in "0 1" "$GROVE" -n undo -t "$T"
	expect_exit 0 "$GROVE" -n rollback --to 0 -t "$T"
	expect_exit_in "0 1" "$GROVE" apply -f "$ROOT/grove.yaml" --check
	expect_exit 0 "$GROVE" -n profile -p tools build -d "$S" other
}

previews
[[ ! -e $GROVE_STATE_DIR ]] || fail "a preview made the state dir: $(ls -R "$GROVE_STATE_DIR")"
expect_tree "$T" ""
check "before any run, no preview makes the state dir or the log"

expect_exit 0 "$GROVE" stow -d "$S" -t "$T" pkg
expect_exit 0 "$GROVE" apply -f "$ROOT/grove.yaml"
snapshot "$T"
snapshot "$GROVE_STATE_DIR" state
sum=$(sha256sum "$GROVE_STATE_DIR/grove.db")
previews
expect_unchanged "$T"
expect_unchanged "$GROVE_STATE_DIR" state
[[ $(sha256sum "$GROVE_STATE_DIR/grove.db") == "$sum" ]] || fail "a preview changed the log"
check "with a log, the previews change neither the target nor the log"

# A run killed part-way leaves an interrupted transaction, which every real run rolls back first.
# A preview does not roll it back (it writes nothing): it says so, naming the transaction, and
# grove -n recover says what grove recover would do instead of "nothing to recover".
if strace -qq -o /dev/null -e trace=getpid -e inject=getpid:error=EIO -- true 2>/dev/null; then
	mk_file "$S/big/share/a" "a"
	mk_file "$S/big/share/b" "b"
	mk_file "$S/big/share/c" "c"
	mk_file "$S/big/lib/d" "d"
	run env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -o /dev/null -e trace=symlinkat -e inject=symlinkat:signal=SIGKILL:when=2 -- \
		"$GROVE" stow -d "$S" -t "$T" big
	((RC == 137)) || fail "the stow was not killed at its second link (exit $RC)"
	expect_exit 4 "$GROVE" --json status -t "$T"
	txn=$("$GROVE_TEST_PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["unfinished_state"] == "interrupted"; print(d["unfinished"])' "$OUT") ||
		fail "grove status names no pending transaction: $(cat "$OUT")"
	snapshot "$T" killed
	want="transaction $txn was interrupted: a real run rolls it back first"
	expect_exit 0 "$GROVE" -n stow -d "$S" -t "$T" big
	expect_err_has "$want"
	expect_exit 0 "$GROVE" plan -d "$S" -t "$T" big
	expect_err_has "$want"
	expect_exit_in "0 1" "$GROVE" -n undo -t "$T"
	expect_err_has "$want"
	expect_exit_in "0 1" "$GROVE" apply -f "$ROOT/grove.yaml" --check
	expect_err_has "$want"
	expect_exit 0 "$GROVE" -n recover -t "$T"
	expect_out_has "would roll back interrupted transaction $txn"
	expect_unchanged "$T" killed
	expect_exit 0 "$GROVE" recover -t "$T"
	expect_err_has "rolled back interrupted transaction $txn"
	check "with an interrupted transaction, every preview says the real run rolls it back first"
else
	echo "ok - # SKIP interrupted transactions: strace fault injection is not available"
fi
