#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A streamed undo (docs/journal.md, "Streamed reverts": the inverse of a transaction over the
# plan budget, logged and run in batches) does what the undo planned whole does: each scenario
# runs twice from the same start, with a budget of 2 ops (streamed) and of 100,000 (whole), and
# the two must agree on the exit status, what is printed, the target, the undo's ops and `grove
# status`; a conflict changes nothing either way. An unfold reverts as a fold and a fold as an
# unfold, streamed too; what the inverse does not take (a conflict) goes the whole way and must
# agree as well.
source "$(dirname "$0")/lib.sh"

# One side: ROOT/$1 with its own stow dir, target and log; setup_$2 runs there, then the undo.
side()
{
	local dir=$ROOT/$1 name=$2 budget=$3
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
	"setup_$name"
	snapshot "$T" "$name-$budget"
	GROVE_PLAN_BUDGET=$budget run "$GROVE" undo -t "$T"
	{
		echo "exit $RC"
		sed "s|$dir|DIR|g" "$OUT" "$ERR"
		listing "$T"
		if ((RC == 0)); then
			"$GROVE" show -t "$T" "$(last_txn)" | tail -n +2 | LC_ALL=C sort
		else
			expect_unchanged "$T" "$name-$budget"
		fi
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
	side a "$name" 2
	side b "$name" 100000
	if ! diff -u "$ROOT/$name.100000" "$ROOT/$name.2" >"$ROOT/$name.diff"; then
		echo "FAIL: $TEST_NAME: $name: the streamed undo (+) differs from the whole one (-):" >&2
		sed 's/^/    /' "$ROOT/$name.diff" >&2
		exit 1
	fi
	check "$what"
}

setup_stow_flat() { "$GROVE" stow --no-folding -d "$S" -t "$T" p; }
scenario stow_flat "the undo of a stow without folding removes every link and folder it made"
grep -q '^reverted transaction 1 as transaction 2: 10 ops (4 unlink, 6 rmdir)$' "$ROOT/stow_flat.2" ||
	fail "stow_flat: unexpected summary: $(head -3 "$ROOT/stow_flat.2")"

setup_unstow_flat()
{
	"$GROVE" stow --no-folding -d "$S" -t "$T" p
	"$GROVE" unstow --no-folding -d "$S" -t "$T" p
}
scenario unstow_flat "the undo of an unstow without folding puts back what it removed"

setup_into_folders()
{
	mkdir -p "$T/opt/p/bin" "$T/etc"
	"$GROVE" stow -d "$S" -t "$T" p
}
scenario into_folders "the undo of a stow into existing folders leaves the folders"

setup_changed_link()
{
	"$GROVE" stow --no-folding -d "$S" -t "$T" p
	rm "$T/opt/p/bin/y"
	echo mine >"$T/opt/p/bin/y"
}
scenario changed_link "a link replaced by a file since: the same conflict, nothing changed"
grep -q '^exit 1$' "$ROOT/changed_link.2" || fail "changed_link: not refused"

setup_foreign()
{
	"$GROVE" stow --no-folding -d "$S" -t "$T" p
	echo mine >"$T/opt/p/share/doc/mine"
}
scenario foreign "a file of someone else's in a folder the stow made: the same conflict"
grep -q '^exit 1$' "$ROOT/foreign.2" || fail "foreign: not refused"

setup_folder_gone()
{
	"$GROVE" stow --no-folding -d "$S" -t "$T" p
	rm -r "$T/opt/p/share"
}
scenario folder_gone "a folder the stow made removed by hand: the same conflict"

setup_unfold()
{
	"$GROVE" stow -d "$S" -t "$T" p
	"$GROVE" stow -d "$S" -t "$T" q
}
scenario unfold "the undo of a stow that unfolded a folder folds it back"
grep -q '^ *fold   opt -> ../stow/p/opt$' "$ROOT/unfold.2" || fail "unfold: no fold in the undo"

setup_fold()
{
	"$GROVE" stow -d "$S" -t "$T" p
	"$GROVE" stow -d "$S" -t "$T" q
	"$GROVE" unstow -d "$S" -t "$T" q
}
scenario fold "the undo of an unstow that folded a folder unfolds it again"
grep -q '^ *unfold opt (was -> ../stow/p/opt)$' "$ROOT/fold.2" || fail "fold: no unfold in the undo"

setup_unfold_foreign()
{
	"$GROVE" stow -d "$S" -t "$T" p
	"$GROVE" stow -d "$S" -t "$T" q
	echo mine >"$T/opt/p/bin/mine"
}
scenario unfold_foreign "a file of someone else's in the folder a stow unfolded: the same conflict"
grep -q '^exit 1$' "$ROOT/unfold_foreign.2" || fail "unfold_foreign: not refused"
