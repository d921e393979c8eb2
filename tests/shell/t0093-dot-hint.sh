#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A package whose top-level entries have dot- names stowed without --dotfiles (issue 40 item 9):
# the stow goes ahead as asked (GNU Stow links dot-bashrc as it is too), and grove asks whether
# --dotfiles was meant. Not with --dotfiles given or recorded, not for a package without such
# names, not with -q, and never as `stow` (GNU Stow says nothing).
source "$(dirname "$0")/lib.sh"

S=$ROOT/dots T=$ROOT/home
mk_file "$S/bash/dot-bashrc" b
mk_file "$S/vim/.vimrc" v
mk_file "$S/git/dot-gitconfig" g
mkdir -p "$T"

expect_exit 0 "$GROVE" stow -d "$S" -t "$T" bash vim
expect_err_has "hint: 'bash' has dot- names, linked as they are"
expect_err_has "did you mean --dotfiles?"
expect_err_lacks "'vim' has dot- names"
expect_tree "$T" <<'SPEC'
l dot-bashrc -> ../dots/bash/dot-bashrc
l .vimrc -> ../dots/vim/.vimrc
SPEC
check "stowed as asked (dot-bashrc, as GNU Stow), with a hint naming the package"

expect_exit 0 "$GROVE" unstow -d "$S" -t "$T" bash
expect_exit 0 "$GROVE" stow -d "$S" -t "$T" --dotfiles bash
expect_err_lacks "did you mean --dotfiles"
expect_exit 0 "$GROVE" restow -d "$S" -t "$T" bash
expect_err_lacks "did you mean --dotfiles"
expect_exit 0 "$GROVE" -q stow -d "$S" -t "$T" git
expect_err_lacks "did you mean --dotfiles"
check "no hint with --dotfiles given or recorded, nor with -q"

mkdir -p "$ROOT/bin" "$ROOT/home2"
ln -s "$(realpath "$GROVE")" "$ROOT/bin/stow"
expect_exit 0 "$ROOT/bin/stow" -d "$S" -t "$ROOT/home2" bash
expect_err_lacks "did you mean"
check "as stow: nothing but what GNU Stow says"
