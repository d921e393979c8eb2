#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove log's filters and who ran what (issue 40 item 8): --limit N and -n N (log's own -n, not
# the dry run, when a number follows), log PKG (the transactions that stow or unstow PKG, undo and
# rollback included), and the user each transaction was run by: through sudo, SUDO_USER is kept
# and shown; another user's transaction names that user; the reader's own say nothing more. A log
# of schema 13 is migrated and its transactions have no user.
source "$(dirname "$0")/lib.sh"

S=$ROOT/stow T=$ROOT/t
mk_file "$S/a/fa" a
mk_file "$S/b/fb" b
mkdir -p "$T"
expect_exit 0 "$GROVE" stow -d "$S" -t "$T" a      # 1
expect_exit 0 "$GROVE" stow -d "$S" -t "$T" b      # 2
expect_exit 0 "$GROVE" unstow -d "$S" -t "$T" a    # 3
expect_exit 0 "$GROVE" undo -t "$T"                # 4: puts a back

ids()
{
	python3 -c 'import json,sys; print(" ".join(str(t["id"]) for t in json.load(open(sys.argv[1]))["transactions"]))' "$OUT"
}
expect_exit 0 "$GROVE" --json log -t "$T"
[[ $(ids) == "4 3 2 1" ]] || fail "the whole log: $(ids)"
expect_exit 0 "$GROVE" --json log -t "$T" --limit 2
[[ $(ids) == "4 3" ]] || fail "--limit 2: $(ids)"
expect_exit 0 "$GROVE" --json log -t "$T" -n 1
[[ $(ids) == "4" ]] || fail "-n 1: $(ids)"
expect_exit 0 "$GROVE" log -t "$T" --limit=3
[[ $(grep -c committed "$OUT") == 3 ]] || fail "--limit=3 printed: $(cat "$OUT")"
for bad in 0 x -2; do
	expect_exit 2 "$GROVE" log -t "$T" --limit "$bad"
	expect_err_has "option '--limit' needs a number of transactions"
done
check "--limit N and -n N show the newest N; a bad N is a usage error"

expect_exit 0 "$GROVE" --json log -t "$T" a
[[ $(ids) == "4 3 1" ]] || fail "log a: $(ids)"
expect_exit 0 "$GROVE" --json log -t "$T" b
[[ $(ids) == "2" ]] || fail "log b: $(ids)"
expect_exit 0 "$GROVE" --json log -t "$T" a -n 2
[[ $(ids) == "4 3" ]] || fail "log a -n 2: $(ids)"
expect_exit 0 "$GROVE" --json log -t "$T" nosuch
[[ $(ids) == "" ]] || fail "log nosuch: $(ids)"
expect_exit 2 "$GROVE" log -t "$T" a b
expect_err_has "'log' takes one package name"
check "log PKG lists the transactions of PKG (its undo too), with --limit after the filter"

# Who: the reader's own transactions say nothing more; through sudo, SUDO_USER is kept.
expect_exit 0 "$GROVE" log -t "$T"
expect_out_has "grove stow -d $S -t $T a"
! grep -q "(by " "$OUT" || fail "the reader's own transactions name a user: $(cat "$OUT")"
SUDO_USER=alice expect_exit 0 "$GROVE" unstow -d "$S" -t "$T" b   # 5
expect_exit 0 "$GROVE" log -t "$T" -n 1
expect_out_has "(by alice with sudo)"
expect_exit 0 "$GROVE" --json log -t "$T" -n 1
python3 - "$OUT" "$(id -u)" <<'PY' || fail "the sudo user in JSON: $(cat "$OUT")"
import json, sys
t = json.load(open(sys.argv[1]))["transactions"][0]
sys.exit(0 if t["sudo_user"] == "alice" and t["uid"] == int(sys.argv[2]) and t["user"] else 1)
PY
# Another user's transaction (root's shared log read by nobody): named.
cp -a "$GROVE_STATE_DIR" "$ROOT/shared-state"
chmod 755 "$ROOT" "$T"
chmod -R a+rX "$ROOT/shared-state" "$S"
expect_exit 0 setpriv --reuid=nobody --regid=nogroup --clear-groups "$GROVE" --state "$ROOT/shared-state" log -t "$T" -n 2
expect_out_has "(by $(id -un))"
check "the user who ran a transaction: SUDO_USER through sudo, another user by name"

# A log of schema 13 (before users were kept) is migrated; its transactions have no user.
expect_exit 0 sqlite3 "$GROVE_STATE_DIR/grove.db" \
	"DROP TABLE pkg_told; ALTER TABLE txns DROP COLUMN uid; ALTER TABLE txns DROP COLUMN sudo_user; PRAGMA user_version = 13;"
expect_exit 0 "$GROVE" --json log -t "$T" -n 1
python3 - "$OUT" <<'PY' || fail "a migrated log's transaction: $(cat "$OUT")"
import json, sys
t = json.load(open(sys.argv[1]))["transactions"][0]
sys.exit(0 if t["uid"] is None and t["user"] is None and t["sudo_user"] is None else 1)
PY
expect_exit 0 sqlite3 "$GROVE_STATE_DIR/grove.db" "PRAGMA user_version"
expect_out_has "15"
check "a schema 13 log is migrated to 14 (and on); its transactions have no user"
