#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# undo and rollback say what they changed; rollback --to refuses a transaction the log does not
# have or that is another target's (but takes T - 1 before the target's own T, and 0); grove show
# N prints one transaction's ops (text and --json); grove log -v lists every transaction's ops.
source "$(dirname "$0")/lib.sh"

S=$ROOT/stow
mk_file "$S/a/bin/a1" "a1"
mk_file "$S/b/b1" "b1"
mk_file "$S/other/o1" "o1"
mkdir -p "$ROOT/t" "$ROOT/other"
cd "$S"

# Transactions 1 and 2 are another target's; this target's are 3 and 4.
expect_exit 0 "$GROVE" stow -t ../other other
expect_exit 0 "$GROVE" unstow -t ../other other
expect_exit 0 "$GROVE" stow -t ../t a
expect_exit 0 "$GROVE" stow -t ../t b

expect_exit 0 "$GROVE" undo -t ../t
[[ $(cat "$OUT") == "reverted transaction 4 as transaction 5: 1 op (1 unlink)" ]] ||
	fail "undo said: $(cat "$OUT")"
expect_tree "$ROOT/t" <<'SPEC'
l bin -> ../stow/a/bin
SPEC
check "undo says what it reverted and what changed"

snapshot "$ROOT/t"
expect_exit 1 "$GROVE" rollback --to 1 -t ../t
expect_err_line "transaction 1 is not in the log of '$ROOT/t'" "another target's"
expect_exit 1 "$GROVE" rollback --to 9999 -t ../t
expect_err_line "no transaction 9999 in the log"
expect_exit 1 "$GROVE" --json rollback --to 9999 -t ../t
python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); sys.exit(0 if d["exit"] == 1 and "9999" in d["error"]["message"] else 1)' "$OUT" ||
	fail "--json rollback of an unknown transaction is not the error document: $(cat "$OUT")"
expect_unchanged "$ROOT/t"
check "rollback --to: another target's transaction and an unknown one are refused, nothing changed"

# T - 1 for the target's first transaction T (here 2, the other target's) is accepted.
expect_exit 0 "$GROVE" rollback -n --to 2 -t ../t
expect_out_has "would revert transactions 3, 4, 5: 1 op (1 unlink)"
expect_exit 0 "$GROVE" rollback --to 2 -t ../t
expect_out_has "reverted transactions 3, 4, 5 as transaction 6: 1 op (1 unlink)"
expect_tree "$ROOT/t" ""
expect_exit 0 "$GROVE" rollback --to 6 -t ../t
expect_out_has "nothing to roll back"
check "rollback --to T-1 and to the last transaction"

expect_exit 0 "$GROVE" show 3 -t ../t
[[ $(sed 1d "$OUT") == "        link   bin -> ../stow/a/bin" ]] || fail "show 3: $(cat "$OUT")"
head -1 "$OUT" | grep -Eq '^ +3  [0-9-]+ [0-9:]+  committed +1 op +grove stow -t \.\./t a$' ||
	fail "show 3 header: $(head -1 "$OUT")"
expect_exit 0 "$GROVE" --json show 3 -t ../t
"$GROVE_TEST_PY" - "$OUT" <<'PY' || fail "show --json: $(cat "$OUT")"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["transaction"]
assert d["command"] == "show" and d["grove"] == 2, d
assert t["id"] == 3 and t["state"] == "committed" and t["ops"] == 1, t
assert t["changes"] == [{"op": "link", "path": "bin", "text": "../stow/a/bin",
                         "old_text": None, "package": "a"}], t["changes"]
PY
expect_exit 1 "$GROVE" show 1 -t ../t
expect_err_has "another target's"
expect_exit 1 "$GROVE" show 42 -t ../t
expect_err_has "no transaction 42"
expect_exit 2 "$GROVE" show -t ../t
check "show N prints one transaction's ops, in text and JSON; refuses others'"

expect_exit 0 "$GROVE" log -v -t ../t
grep -qx '        unlink b1 (was -> ../stow/b/b1)' "$OUT" ||
	fail "log -v has no ops: $(cat "$OUT")"
[[ $(grep -c '^        ' "$OUT") == 4 ]] || fail "log -v: expected 4 op lines: $(cat "$OUT")"
expect_exit 0 "$GROVE" log -t ../t
[[ $(grep -c '^        ' "$OUT") == 0 ]] || fail "log without -v lists ops: $(cat "$OUT")"
expect_exit 0 "$GROVE" --json log -v -t ../t
"$GROVE_TEST_PY" - "$OUT" <<'PY' || fail "log -v --json: $(cat "$OUT")"
import json, sys
d = json.load(open(sys.argv[1]))
assert [t["id"] for t in d["transactions"]] == [6, 5, 4, 3], d
assert all(len(t["changes"]) == t["ops"] for t in d["transactions"]), d
PY
check "log -v lists each transaction's ops (text and JSON)"

# The ops are read a batch of the plan budget at a time: with a budget of 1 op, show and log -v
# print exactly what they print with the whole transaction in one batch, in text and in JSON (a
# transaction of 5 ops, on a target of its own).
mk_file "$S/many/m/m1" m1
mk_file "$S/many/m/m2" m2
mk_file "$S/many/n1" n1
mkdir -p "$ROOT/t3"
expect_exit 0 "$GROVE" stow --no-folding -t ../t3 many
expect_exit 0 "$GROVE" --json log -t ../t3
id=$("$GROVE_TEST_PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["transactions"][0]["id"])' "$OUT")
for cmd in "show $id" "log -v" "--json show $id" "--json log -v"; do
	# shellcheck disable=SC2086 # cmd is words
	expect_exit 0 "$GROVE" $cmd -t ../t3
	cp "$OUT" "$ROOT/whole.out"
	[[ $(grep -o 'm/m[12]' "$OUT" | sort -u | wc -l) == 2 ]] || fail "'grove $cmd' does not show the 2 links in m/: $(cat "$OUT")"
	# shellcheck disable=SC2086
	GROVE_PLAN_BUDGET=1 expect_exit 0 "$GROVE" $cmd -t ../t3
	cmp -s "$OUT" "$ROOT/whole.out" ||
		fail "'grove $cmd' differs a batch at a time: $(diff "$ROOT/whole.out" "$OUT")"
done
check "show and log -v print every op, a batch at a time as whole"
