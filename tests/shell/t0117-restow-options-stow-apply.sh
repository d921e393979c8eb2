#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Changing a package's options in one step (issue 40 item 7), the other ways in: grove invoked as
# `stow` (`stow -R --no-folding nvim`, GNU Stow's own spelling, is GNU Stow's restow: one
# transaction whose tree is GNU Stow 2.4.1's, and the log records the new option, so that a later
# `grove restow nvim` keeps it), Stow's spelling invoked as grove (`grove -R --no-folding nvim`),
# and the manifest (`grove apply` after a package's options changed: one transaction, the tree of
# `grove restow` with the new options, undone in one step with the old options back).
source "$(dirname "$0")/lib.sh"
need_stow

base()
{
	local d=$1
	mk_file "$d/s/nvim/dot-config/nvim/init.lua" "init"
	mk_file "$d/s/nvim/dot-config/nvim/lua/plug.lua" "plug"
	mk_file "$d/s/nvim/dot-bashrc" "bashrc"
	mk_file "$d/s/git/dot-config/git/config" "git"
	mkdir -p "$d/h"
}

ntxn() # committed transactions of the target $1
{
	"$GROVE" log -t "$1" | grep -c committed || true
}

# grove as `stow`: a link named stow in a folder of its own.
mkdir -p "$ROOT/bin"
ln -s "$GROVE" "$ROOT/bin/stow"
STOW=$ROOT/bin/stow

# ---- as `stow`: -R with another option is GNU Stow's restow, in one transaction ----
for new in --no-folding --dotfiles; do
	g=$ROOT/stow$new o=$ROOT/ref$new
	base "$g"
	base "$o"
	stow_ref -d "$o/s" -t "$o/h" nvim
	stow_ref -d "$o/s" -t "$o/h" -R "$new" nvim
	expect_exit 0 "$STOW" -d "$g/s" -t "$g/h" nvim
	n=$(ntxn "$g/h")
	expect_exit 0 "$STOW" -d "$g/s" -t "$g/h" -R "$new" nvim
	expect_err_empty
	expect_same_tree "$o/h" "$g/h"
	[[ $(ntxn "$g/h") == $((n + 1)) ]] || fail "stow -R $new: expected one transaction"
	expect_exit 0 "$GROVE" restow -d "$g/s" -t "$g/h" nvim
	expect_err_has "grove: nvim was stowed with $new; using it again"
	check "as stow, stow -R $new nvim is GNU Stow's, one transaction; the log records $new"
done

# ---- Stow's spelling invoked as grove: -R is the restow, with the one-step change ----
g=$ROOT/spelled o=$ROOT/spelled-ref
base "$g"
base "$o"
stow_ref -d "$o/s" -t "$o/h" --dotfiles nvim
stow_ref -d "$o/s" -t "$o/h" -D --dotfiles nvim
stow_ref -d "$o/s" -t "$o/h" nvim
expect_exit 0 "$GROVE" -d "$g/s" -t "$g/h" --dotfiles nvim
n=$(ntxn "$g/h")
expect_exit 0 "$GROVE" -d "$g/s" -t "$g/h" --no-dotfiles -R nvim
expect_err_has "grove: restowing nvim with the defaults; it was stowed with --dotfiles"
expect_same_tree "$o/h" "$g/h"
[[ $(ntxn "$g/h") == $((n + 1)) ]] || fail "grove -R --no-dotfiles: expected one transaction"
check "grove -R --no-dotfiles nvim (Stow's spelling) unstows as recorded, stows as given, one transaction"

# ---- the manifest: apply after the options changed ----
g=$ROOT/man r=$ROOT/man-ref
base "$g"
base "$r"
manifest()
{
	cat >"$g/grove.yaml" <<EOF
version: 1
targets:
  - path: $g/h
    dir: $g/s
    packages:
      - name: nvim
        dotfiles: $1
        folding: $2
EOF
}
manifest false true
expect_exit 0 "$GROVE" apply -f "$g/grove.yaml"
expect_exit 0 "$GROVE" stow -d "$r/s" -t "$r/h" nvim
expect_same_tree "$r/h" "$g/h"
before=$(listing "$g/h")
n=$(ntxn "$g/h")
manifest true false
expect_exit 0 "$GROVE" apply -f "$g/grove.yaml"
expect_exit 0 "$GROVE" restow -d "$r/s" -t "$r/h" --dotfiles --no-folding nvim
expect_same_tree "$r/h" "$g/h"
[[ $(ntxn "$g/h") == $((n + 1)) ]] || fail "apply: expected one transaction"
expect_exit 0 "$GROVE" restow -d "$g/s" -t "$g/h" nvim
expect_err_has "grove: nvim was stowed with --dotfiles --no-folding; using them again"
expect_exit 0 "$GROVE" undo -t "$g/h"
[[ $(listing "$g/h") == "$before" ]] || fail "apply: undo did not put the old layout back"
expect_exit 0 "$GROVE" restow -d "$g/s" -t "$g/h" nvim
! grep -q 'was stowed with' "$ERR" || fail "apply: after undo the log still records new options"
[[ $(listing "$g/h") == "$before" ]] || fail "apply: after undo, a restow changed the tree"
check "apply after the options changed: one transaction, the restow's tree, undo puts layout and options back"
