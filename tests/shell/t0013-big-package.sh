#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Packages big enough (over 1,024 entries) that the scan drops the entries of folders the plan
# folds into one link (bench/HISTORY.md, "What changed"): the trees grove leaves must be GNU
# Stow 2.4.1's, fifos and escaping links deep inside a folded folder are left to the fold (and
# refused when a plan unfolds them), and folders another package or the target makes the plan
# enter must be read whole.
set -euo pipefail
# shellcheck source=tests/shell/lib.sh
. "$(dirname "$0")/lib.sh"

need_stow

# big_pkg DIR NAME: DIR/bin/NAME, DIR/share/NAME/README, DIR/share/NAME/dNN/fNN (11 x 100 empty
# files), hard-linked from one template per NAME (making inodes is what is slow on the CI disk).
big_pkg()
{
	local t=$ROOT/.template/$2 d
	if [[ ! -d $t ]]; then
		mk_file "$t/bin/$2" "$2"
		mk_file "$t/share/$2/README" "$2 readme"
		for d in $(seq -w 0 10); do
			mkdir -p "$t/share/$2/d$d"
			(cd "$t/share/$2/d$d" && touch f{00..99})
		done
	fi
	mkdir -p "$(dirname "$1")"
	cp -al "$t" "$1"
}

# same_as_stow NAME SETUP ARGS…: grove and Stow, on identical copies ($W/g, $W/s) made by SETUP
# (run inside), run with ARGS from there; both must succeed and leave the same tree.
same_as_stow()
{
	local name=$1 setup=$2
	shift 2
	W=$ROOT/$name
	mkdir -p "$W/g"
	(cd "$W/g" && $setup)
	cp -al "$W/g" "$W/s" # hard links: neither tool writes into the packages
	(cd "$W/g" && expect_exit 0 "$GROVE" "$@")
	(cd "$W/s" && stow_ref "$@" 2>/dev/null) || fail "$name: Stow failed"
	expect_same_tree "$W/g" "$W/s"
}

one_pkg()
{
	big_pkg stow/big big
	mkdir target
}

# A big package into an empty target: three links, as Stow makes them; restow changes nothing;
# unstow removes them.
same_as_stow fold one_pkg -d stow -t target big
expect_tree "$W/g/target" <<'EOF'
l bin -> ../stow/big/bin
l share -> ../stow/big/share
EOF
check "a big package folds into two links, as Stow"
(
	cd "$W/g"
	snapshot target
	expect_exit 0 "$GROVE" restow -d stow -t target big
	expect_unchanged target
)
check "restow of a folded big package changes nothing"
(cd "$W/g" && expect_exit 0 "$GROVE" unstow -d stow -t target big)
expect_tree "$W/g/target" ''
check "unstow of a folded big package removes its links"

# Two big packages sharing share/: the second unfolds the first's link (one run and two runs).
two_pkgs()
{
	big_pkg stow/big big
	big_pkg stow/big2 big2
	mkdir target
}
same_as_stow two-at-once two_pkgs -d stow -t target big big2
expect_tree "$W/g/target" <<'EOF'
d bin
l bin/big -> ../../stow/big/bin/big
l bin/big2 -> ../../stow/big2/bin/big2
d share
l share/big -> ../../stow/big/share/big
l share/big2 -> ../../stow/big2/share/big2
EOF
check "two big packages in one run unfold their shared folders, as Stow"
two_runs()
{
	two_pkgs
	"$GROVE" stow -d stow -t target big
}
same_as_stow two-runs two_runs -d stow -t target big2
expect_same_tree "$ROOT/two-at-once/g/target" "$W/g/target"
check "a big package stowed next to another's fold unfolds it, as Stow"

# Both packages with the same big folder: the plan enters it, and it must be there whole.
same_folder()
{
	big_pkg stow/big big
	big_pkg stow/big2 big
	rm -r stow/big2/share/big/d0[0-9] stow/big2/share/big/README stow/big2/bin
	(cd stow/big2/share/big/d10 && rm f* && touch g{00..99})
	mkdir target
}
same_as_stow same-folder same_folder -d stow -t target big big2
[[ $(readlink "$W/g/target/share/big/d10/f42") == ../../../../stow/big/share/big/d10/f42 ]] ||
	fail "same-folder: share/big/d10/f42 is not big's"
[[ $(readlink "$W/g/target/share/big/d10/g42") == ../../../../stow/big2/share/big/d10/g42 ]] ||
	fail "same-folder: share/big/d10/g42 is not big2's"
check "two big packages with the same folder merge file by file, as Stow"

# The target already has part of the big folder: the plan enters it and meets the file.
target_part()
{
	one_pkg
	mk_file target/share/big/d03/f05 mine
}
W=$ROOT/target-part
mkdir -p "$W"
(
	cd "$W"
	target_part
	snapshot target
	expect_exit 1 "$GROVE" stow -d stow -t target big
	expect_err_has "share/big/d03/f05"
	expect_unchanged target
	rm target/share/big/d03/f05
	expect_exit 0 "$GROVE" stow -d stow -t target big
	[[ $(readlink target/share/big/d03/f05) == ../../../../stow/big/share/big/d03/f05 ]] ||
		fail "target-part: share/big/d03/f05 should be a link (d03 is the target's folder)"
	[[ $(readlink target/share/big/d04) == ../../../stow/big/share/big/d04 ]] ||
		fail "target-part: share/big/d04 should be one link"
)
check "a big folder the target already has is entered: its files conflict, the rest folds"

# Entries grove refuses, deep inside folders that fold: reached through the folded link as
# through Stow's (grove reads nothing below it), so the stow is Stow's; a second package that
# makes the plan unfold those folders (and so link the entries themselves) is refused, naming
# them, with nothing changed.
bad_pkg()
{
	one_pkg
	mkfifo stow/big/share/big/d07/fifo
	mk_link stow/big/share/big/d09/out ../../../../../outside
}
same_as_stow bad bad_pkg -d stow -t target big
expect_tree "$W/g/target" <<'EOF'
l bin -> ../stow/big/bin
l share -> ../stow/big/share
EOF
(
	cd "$W/g"
	mk_file stow/big3/share/big/d07/mine7 mine
	mk_file stow/big3/share/big/d09/mine9 mine
	snapshot target
	expect_exit 1 "$GROVE" stow -d stow -t target big3
	diff -u - "$ERR" <<'EOF' || fail "bad: conflicts differ"
WARNING! stowing big would cause conflicts:
  * source is a symlink that leaves the stow directory or loops ../stow/big/share/big/d09/out => ../../../../../outside
  * source is not a regular file, folder or symlink: ../stow/big/share/big/d07/fifo
All operations aborted.
EOF
	expect_unchanged target
)
check "a fifo and an escaping link deep inside a folded big folder: folded as Stow, refused when unfolded"

echo "# $TEST_NAME: $_lib_checks checks passed"
