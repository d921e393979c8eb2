#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove import of a farm GNU Stow made with --dotfiles, imported without it (issue 40 item 2): a
# link '.config' to 'kitty/dot-config' only --dotfiles makes, so the import records each package
# with the --dotfiles its links were made with, and says so; a later 'grove unstow kitty' then
# removes its links (the tree compared with GNU Stow 2.4.1's 'stow -D --dotfiles kitty' on a twin).
# An unstow that finds nothing of a package the log says is stowed says so; one given the option
# the links were made with, against a record that says otherwise, unstows them.
source "$(dirname "$0")/lib.sh"
need_stow

A=$ROOT/a # GNU Stow's copy
B=$ROOT/b # grove's copy
for h in "$A" "$B"; do
	mk_file "$h/dotfiles/kitty/dot-config/kitty/kitty.conf" "kitty"
	mk_file "$h/dotfiles/vim/dot-vimrc" "vim"
	mk_file "$h/dotfiles/tools/bin/tool" "tool"
	mk_file "$h/dotfiles/mixed/dot-a" "a"
	mk_file "$h/dotfiles/mixed/dot-b" "b"
	mkdir -p "$h/home"
	(cd "$h/dotfiles" && stow_ref -t ../home --dotfiles kitty vim tools)
done

# ---- imported without --dotfiles: recorded with it, and said ----
cd "$B/dotfiles"
expect_exit 0 "$GROVE" import -t ../home
expect_out_has "recorded 3 links (kitty, vim, tools)"
expect_err_has "kitty: its links were made with --dotfiles ('.config' links to '../dotfiles/kitty/dot-config'): recorded as stowed with --dotfiles"
expect_err_has "vim: its links were made with --dotfiles ('.vimrc' links to '../dotfiles/vim/dot-vimrc')"
expect_err_lacks "tools:"
check "import without --dotfiles of a --dotfiles farm: kitty and vim recorded with --dotfiles, said on stderr; tools (no dot- name) as given"

expect_exit 0 "$GROVE" unstow -t ../home kitty
(cd "$A/dotfiles" && stow_ref -t ../home --dotfiles -D kitty)
expect_same_tree "$A" "$B"
[[ ! -e $B/home/.config ]] || fail "grove unstow kitty left .config"
expect_exit 0 "$GROVE" unstow -t ../home vim tools
(cd "$A/dotfiles" && stow_ref -t ../home --dotfiles -D vim tools)
expect_same_tree "$A" "$B"
check "then 'grove unstow kitty' (and vim, tools) removes the links, as GNU Stow's 'stow -D --dotfiles'"

# ---- a farm made without --dotfiles, imported with it: recorded without ----
(cd "$B/dotfiles" && stow_ref -t ../home mixed)
expect_exit 0 "$GROVE" import -t ../home --dotfiles mixed
expect_err_has "mixed: its links were made with no --dotfiles ('dot-a' links to '../dotfiles/mixed/dot-a'): recorded as stowed with no --dotfiles"
expect_exit 0 "$GROVE" unstow -t ../home mixed
[[ ! -e $B/home/dot-a && ! -e $B/home/dot-b ]] || fail "grove unstow mixed left its links"
check "a farm made without --dotfiles imported with it: recorded without, said; unstow removes its links"

# ---- a package whose links were made both ways: refused, nothing recorded ----
ln -s ../dotfiles/mixed/dot-a "$B/home/.a"
ln -s ../dotfiles/mixed/dot-b "$B/home/dot-b"
n=$("$GROVE" log -t ../home | grep -c committed || true)
expect_exit 1 "$GROVE" import -t ../home mixed
expect_err_line "^grove: package 'mixed' has links made with --dotfiles \('.a' links to '../dotfiles/mixed/dot-a'\) and links made without it \('dot-b' links to '../dotfiles/mixed/dot-b'\)"
[[ $("$GROVE" log -t ../home | grep -c committed || true) == "$n" ]] || fail "a refused import made a transaction"
rm "$B/home/.a" "$B/home/dot-b"
check "a package with links of both layouts: import refused (exit 1) naming one of each, nothing recorded"

# ---- the log says stowed, the disk says otherwise ----
expect_exit 0 "$GROVE" stow -t ../home tools
rm "$B/home/bin"
expect_exit 0 "$GROVE" unstow -t ../home tools
expect_err_has "WARNING: unstow tools: no link of it was found to remove, though grove's log says it is stowed here"
check "an unstow that finds nothing of a package the log says is stowed warns, never a silent 0"

# kitty recorded as stowed without --dotfiles (grove stowed it so), then linked by GNU Stow with it.
expect_exit 0 "$GROVE" stow -t ../home --no-dotfiles kitty
rm "$B/home/dot-config"
(cd "$B/dotfiles" && stow_ref -t ../home --dotfiles kitty)
(cd "$A/dotfiles" && stow_ref -t ../home --dotfiles kitty)
expect_exit 0 "$GROVE" unstow -t ../home kitty
expect_err_has "WARNING: unstow kitty: no link of it was found to remove"
[[ -L $B/home/.config ]] || fail "unstow with the recorded layout removed the other one's link"
expect_exit 0 "$GROVE" stow -t ../home --no-dotfiles kitty
rm "$B/home/dot-config"
expect_exit 0 "$GROVE" unstow -t ../home --dotfiles kitty
expect_err_has "WARNING: kitty was stowed without --dotfiles as grove's log says; unstowing it with --dotfiles, as this command gives"
(cd "$A/dotfiles" && stow_ref -t ../home --dotfiles -D kitty)
[[ ! -e $B/home/.config ]] || fail "grove unstow --dotfiles kitty left .config"
check "against a record without --dotfiles, 'grove unstow --dotfiles kitty' unstows as given and says so"
