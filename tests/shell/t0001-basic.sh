#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The main job end to end on the bundled example packages: stow, unfold, fold back, restow, unstow;
# every expected tree is written by hand from GNU Stow's rules.
source "$(dirname "$0")/lib.sh"

S=$ROOT/stow
T=$ROOT/home
cp -a "$GROVE_SOURCE_ROOT/examples/packages" "$S"
mkdir "$T"
cd "$ROOT"

expect_exit 0 "$GROVE" -d stow -t home --dotfiles -S bash vim git tools
expect_out_empty
expect_err_empty
expect_tree "$T" <<'SPEC'
l .bashrc -> ../stow/bash/dot-bashrc
l .gitconfig -> ../stow/git/dot-gitconfig
l .vim -> ../stow/vim/dot-vim
l .vimrc -> ../stow/vim/dot-vimrc
l bin -> ../stow/tools/bin
l share -> ../stow/tools/share
SPEC
check "stow: one link per top-level entry (folded), dot-X named .X with --dotfiles"

expect_exit 0 "$GROVE" plan -d stow -t home --dotfiles -S extras
expect_out_has "unfold bin (was -> ../stow/tools/bin)"
expect_out_has "link   bin/bye -> ../../stow/extras/bin/bye"
expect_tree "$T" <<'SPEC'
l .bashrc -> ../stow/bash/dot-bashrc
l .gitconfig -> ../stow/git/dot-gitconfig
l .vim -> ../stow/vim/dot-vim
l .vimrc -> ../stow/vim/dot-vimrc
l bin -> ../stow/tools/bin
l share -> ../stow/tools/share
SPEC
check "plan prints the unfold and changes nothing"

expect_exit 0 "$GROVE" -d stow -t home --dotfiles -S extras
expect_tree "$T" <<'SPEC'
l .bashrc -> ../stow/bash/dot-bashrc
l .gitconfig -> ../stow/git/dot-gitconfig
l .vim -> ../stow/vim/dot-vim
l .vimrc -> ../stow/vim/dot-vimrc
d bin
l bin/bye -> ../../stow/extras/bin/bye
l bin/hello -> ../../stow/tools/bin/hello
d share
l share/doc -> ../../stow/extras/share/doc
l share/man -> ../../stow/tools/share/man
SPEC
[[ $("$T/bin/hello") == "hello from the tools package" ]] || fail "bin/hello does not run through the forest"
check "a second package unfolds the shared folders into real folders of links"

snapshot "$T"
expect_exit 0 "$GROVE" -d stow -t home --dotfiles -R extras tools
expect_unchanged "$T"
check "restow of stowed packages changes nothing (not even a link's inode)"

expect_exit 0 "$GROVE" -d stow -t home --dotfiles -D tools
expect_tree "$T" <<'SPEC'
l .bashrc -> ../stow/bash/dot-bashrc
l .gitconfig -> ../stow/git/dot-gitconfig
l .vim -> ../stow/vim/dot-vim
l .vimrc -> ../stow/vim/dot-vimrc
l bin -> ../stow/extras/bin
l share -> ../stow/extras/share
SPEC
check "unstow folds the folders back into links to the remaining package"

mk_file "$T/.profile" "mine"
mk_file "$S/bash/dot-profile" "theirs"
snapshot "$T"
expect_exit 1 "$GROVE" -d stow -t home --dotfiles -R bash
expect_err_has "WARNING! stowing bash would cause conflicts:"
expect_err_has "  * cannot stow ../stow/bash/dot-profile over existing target .profile since neither a link nor a directory and --adopt not specified"
expect_err_has "All operations aborted."
expect_unchanged "$T"
check "a conflict refuses the whole request (exit 1, Stow's message) and nothing changes"

expect_exit 0 "$GROVE" -d stow -t home --dotfiles --adopt -S bash
[[ $(cat "$S/bash/dot-profile") == mine ]] || fail "--adopt did not move the user's file into the package"
[[ -L $T/.profile && $(readlink "$T/.profile") == ../stow/bash/dot-profile ]] || fail "--adopt did not link .profile"
check "--adopt moves the user's file into the package and links it"

mkdir "$ROOT/as-stow" && ln -s "$GROVE" "$ROOT/as-stow/stow"
expect_exit 0 "$ROOT/as-stow/stow" -d stow -t home --dotfiles -D bash vim git extras
expect_tree "$T" ""
check "invoked as 'stow', grove takes Stow's command line; unstowing everything empties the target"

[[ -f $S/vim/dot-vimrc && -f $S/tools/bin/hello ]] || fail "the packages lost files"
check "the packages still hold their files"
