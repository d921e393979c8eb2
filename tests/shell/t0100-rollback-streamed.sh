#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A rollback over several transactions is streamed (docs/journal.md, "Streamed reverts": each
# transaction's inverses, newest transaction first, logged and run in batches as one revert) and
# does what the rollback planned whole does: each scenario runs twice from the same start, with a
# budget of 2 ops (streamed) and of 100,000 (whole), and the two must agree on the exit status,
# what is printed, the target, the revert's ops, the log and `grove status`; a conflict changes
# nothing either way. Where the transactions share no path, the streamed revert's ops are the
# inverse of every reverted op, the newest transaction's last op first (derived here from the
# reverted transactions' own ops in the log); where two share a path, it goes the whole way.
source "$(dirname "$0")/lib.sh"

# One side: ROOT/$1 with its own stow dir, target and log; setup_$2 runs there, then the rollback
# with the arguments $4...
side()
{
	local dir=$ROOT/$1 name=$2 budget=$3
	shift 3
	rm -rf "$dir"
	mkdir -p "$dir/target"
	S=$dir/stow T=$dir/target
	export GROVE_STATE_DIR=$dir/state
	mk_file "$S/p/opt/p/bin/x" x
	mk_file "$S/p/opt/p/bin/y" y
	mk_file "$S/p/opt/p/share/doc/r" r
	mk_file "$S/p/etc/p.conf" conf
	mk_file "$S/q/bin/q" q
	mk_file "$S/q/opt/p/bin/z" z
	mk_file "$S/r/var/r/a" a
	mk_file "$S/r/var/r/sub/b" b
	mk_file "$S/u/opt/u/a" a
	mk_file "$S/u/opt/u/sub/b" b
	"setup_$name"
	snapshot "$T" "$name-$budget"
	GROVE_PLAN_BUDGET=$budget run "$GROVE" rollback -t "$T" "$@"
	{
		echo "exit $RC"
		sed "s|$dir|DIR|g" "$OUT" "$ERR"
		listing "$T"
		if ((RC == 0)); then
			"$GROVE" show -t "$T" "$(last_txn)" | tail -n +2 | LC_ALL=C sort
		else
			expect_unchanged "$T" "$name-$budget"
		fi
		# The log: every transaction's number, state, ops, command and what it undoes.
		"$GROVE" log -t "$T" --json | python3 -c '
import json, sys
for t in json.load(sys.stdin)["transactions"]:
    print(t["id"], t["state"], t["ops"], t["command"], t["undoes"])' | sed "s|$dir|DIR|g"
		"$GROVE" status -d "$S" -t "$T" | sed "s|$dir|DIR|g"
	} >"$ROOT/$name.$budget"
}

last_txn()
{
	"$GROVE" log -t "$T" | awk 'NR == 1 { print $1 }'
}

scenario()
{
	local name=$1 what=$2
	shift 2
	side a "$name" 2 "$@"
	STREAMED_T=$T STREAMED_STATE=$GROVE_STATE_DIR
	side b "$name" 100000 "$@"
	if ! diff -u "$ROOT/$name.100000" "$ROOT/$name.2" >"$ROOT/$name.diff"; then
		echo "FAIL: $TEST_NAME: $name: the streamed rollback (+) differs from the whole one (-):" >&2
		sed 's/^/    /' "$ROOT/$name.diff" >&2
		exit 1
	fi
	check "$what"
}

# The streamed side's revert (the last transaction) must be the inverse of transactions $@ (oldest
# first), op by op, the newest's last op first: the order of a streamed revert, where the whole
# plan orders the ops by path.
expect_chain()
{
	local name=$1
	shift
	local made
	made=$(GROVE_STATE_DIR=$STREAMED_STATE T=$STREAMED_T last_txn_of "$STREAMED_T")
	if ! GROVE_STATE_DIR=$STREAMED_STATE python3 - "$GROVE" "$STREAMED_T" "$made" "$@" <<'PY'; then
import json, subprocess, sys

grove, target, made, txns = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]


def ops(txn):
    out = subprocess.run([grove, "show", "-t", target, "--json", txn], check=True,
                         capture_output=True, text=True).stdout
    return [(o["op"], o["path"], o["text"], o["old_text"])
            for o in json.loads(out)["transaction"]["changes"]]


inverse = {"link": "unlink", "unlink": "link", "mkdir": "rmdir", "rmdir": "mkdir",
           "relink": "relink"}
want = [(inverse[k], p, old, new) for t in reversed(txns) for (k, p, new, old) in
        reversed(ops(t))]
got = ops(made)
if got != want:
    print("want:", *want, "got:", *got, sep="\n  ", file=sys.stderr)
    sys.exit(1)
PY
		fail "$name: the rollback was not streamed as the chain of inverses"
	fi
	check "$name: the streamed revert is each op's inverse, newest transaction first"
}

last_txn_of()
{
	"$GROVE" log -t "$1" | awk 'NR == 1 { print $1 }'
}

setup_flat2()
{
	"$GROVE" stow --no-folding -d "$S" -t "$T" p
	"$GROVE" stow --no-folding -d "$S" -t "$T" q
}
scenario flat2 "two stows without folding rolled back: every link and folder they made goes" --to 0
grep -q '^reverted transactions 1, 2 as transaction 3: 13 ops (6 unlink, 7 rmdir)$' "$ROOT/flat2.2" ||
	fail "flat2: unexpected summary: $(head -3 "$ROOT/flat2.2")"
expect_chain flat2 1 2

setup_before3()
{
	"$GROVE" stow --no-folding -d "$S" -t "$T" p
	"$GROVE" stow --no-folding -d "$S" -t "$T" q
	"$GROVE" stow --no-folding -d "$S" -t "$T" r
}
scenario before3 "--before 2 over three stows: the second and third go, the first stays" --before 2
expect_chain before3 2 3

setup_blocks()
{
	"$GROVE" stow -d "$S" -t "$T" p
	"$GROVE" stow -d "$S" -t "$T" q
	"$GROVE" stow --no-folding -d "$S" -t "$T" r
}
scenario blocks "a stow that unfolded a folder and one beside it: the folder folds back" --to 1
grep -q '^ *fold   opt -> ../stow/p/opt$' "$ROOT/blocks.2" || fail "blocks: no fold in the rollback"

setup_inside()
{
	"$GROVE" stow -d "$S" -t "$T" p
	"$GROVE" stow -d "$S" -t "$T" q
	"$GROVE" stow --no-folding -d "$S" -t "$T" u
}
scenario inside "a stow into the folder another unfolded: it goes, then the folder folds back" --to 1
grep -q '^ *fold   opt -> ../stow/p/opt$' "$ROOT/inside.2" || fail "inside: no fold in the rollback"

setup_shared()
{
	"$GROVE" stow --no-folding -d "$S" -t "$T" p
	"$GROVE" stow --no-folding -d "$S" -t "$T" q
	"$GROVE" unstow --no-folding -d "$S" -t "$T" q
	"$GROVE" stow --no-folding -d "$S" -t "$T" r
}
scenario shared "transactions that share paths (a stow and its unstow) go the whole way" --to 1

setup_changed_link()
{
	setup_flat2
	rm "$T/opt/p/bin/z"
	echo mine >"$T/opt/p/bin/z"
}
scenario changed_link "a link replaced by a file since: the same conflict, nothing changed" --to 0
grep -q '^exit 1$' "$ROOT/changed_link.2" || fail "changed_link: not refused"

setup_foreign()
{
	setup_flat2
	echo mine >"$T/opt/p/share/doc/mine"
}
scenario foreign "a file of someone else's in a folder the first stow made: the same conflict" --to 0
grep -q '^exit 1$' "$ROOT/foreign.2" || fail "foreign: not refused"

setup_foreign_newer()
{
	setup_flat2
	"$GROVE" stow --no-folding -d "$S" -t "$T" r
	echo mine >"$T/var/r/sub/mine"
}
scenario foreign_newer "a file of someone else's in a folder the newest stow made: the same conflict" --to 0
grep -q '^exit 1$' "$ROOT/foreign_newer.2" || fail "foreign_newer: not refused"
