#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove rollback --before T (issue 40 item 8): the state before transaction T of the target, T and
# every later committed transaction of the target reverted as one new transaction, whatever other
# targets of the same state dir logged in between (transaction numbers are shared, so --to T-1
# would name another target's). T must be the target's own; -n changes nothing; run again it has
# nothing left to do; exactly one of --to and --before.
source "$(dirname "$0")/lib.sh"

S=$ROOT/stow T=$ROOT/t U=$ROOT/u
mk_file "$S/a/fa" a
mk_file "$S/b/fb" b
mk_file "$S/c/fc" c
mkdir -p "$T" "$U"
# 1: a into t, 2: b into u (another target), 3: b into t, 4: c into t.
for step in "a $T" "b $U" "b $T" "c $T"; do
	set -- $step
	expect_exit 0 "$GROVE" stow -d "$S" -t "$2" "$1"
done
expect_exit 0 "$GROVE" --json log -t "$T"
python3 - "$OUT" <<'PY' || fail "the log of t is not transactions 4, 3, 1: $(cat "$OUT")"
import json, sys
ids = [t["id"] for t in json.load(open(sys.argv[1]))["transactions"]]
sys.exit(0 if ids == [4, 3, 1] else 1)
PY
snapshot "$T"
snapshot "$U"

# A number that is not the target's, or not in the log, or no number: refused, nothing changed.
expect_exit 1 "$GROVE" rollback -t "$T" --before 2
expect_err_has "transaction 2 is not in the log of '$T' but another target's"
expect_exit 1 "$GROVE" rollback -t "$T" --before 99
expect_err_has "no transaction 99 in the log"
for bad in 0 -1 x ""; do
	expect_exit 2 "$GROVE" rollback -t "$T" --before "$bad"
	expect_err_has "option '--before' needs a transaction number"
done
expect_exit 2 "$GROVE" rollback -t "$T" --to 1 --before 3
expect_err_has "options '--to' and '--before' exclude each other"
expect_exit 2 "$GROVE" rollback -t "$T"
expect_err_has "needs one of --to N and --before T"
expect_unchanged "$T"
expect_unchanged "$U"
check "--before refuses another target's number, an unknown one, a bad value, and --to with it"

# -n: the plan (3 and 4 reverted: fb and fc go), nothing changed.
expect_exit 0 "$GROVE" -n --json rollback -t "$T" --before=3
python3 - "$OUT" <<'PY' || fail "the preview is not the revert of 3 and 4: $(cat "$OUT")"
import json, sys
d = json.load(open(sys.argv[1]))
ok = (d["dry_run"] and d["changed"] and d["transaction"] == 0 and d["reverts"] == [3, 4] and
      sorted((o["op"], o["path"]) for o in d["ops"]) == [("unlink", "fb"), ("unlink", "fc")])
sys.exit(0 if ok else 1)
PY
expect_unchanged "$T"
check "-n previews the revert of T and what came after it on the target"

expect_exit 0 "$GROVE" rollback -t "$T" --before 3
expect_out_has "reverted transactions 3, 4 as transaction 5"
expect_tree "$T" <<'SPEC'
l fa -> ../stow/a/fa
SPEC
expect_unchanged "$U"
expect_exit 0 "$GROVE" --json log -t "$T"
python3 - "$OUT" <<'PY' || fail "the log does not name the rollback: $(cat "$OUT")"
import json, sys
t = json.load(open(sys.argv[1]))["transactions"][0]
sys.exit(0 if t["id"] == 5 and "rollback --before 3" in t["command"] else 1)
PY
check "--before 3 reverts 3 and 4 of t, not 2 (u's), as one transaction logged as such"

# Again: the state before 3 is already there; nothing changes, exit 0.
snapshot "$T" again
expect_exit 0 "$GROVE" --json rollback -t "$T" --before 3
python3 - "$OUT" <<'PY' || fail "the second rollback changed something: $(cat "$OUT")"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if not d["changed"] and d["transaction"] == 0 and d["ops"] == [] else 1)
PY
expect_unchanged "$T" again
# Before the first: back to an empty target.
expect_exit 0 "$GROVE" rollback -t "$T" --before 1
expect_tree "$T" ''
expect_unchanged "$U"
check "run again it changes nothing; --before the first transaction empties the target"
