#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `grove PKG` and `grove --dotfiles PKG` behave the same (issue 40 item 9): a first word that is no
# command but names a package of the stow dir (-d from .stowrc, else $STOW_DIR, else the current
# folder) starts GNU Stow's spelling, as an option in front of it always did, so both stow, as
# `stow PKG` and `stow --dotfiles PKG` do. Checked against GNU Stow 2.4.1 on twin trees. A
# command's name stays the command (`grove log` shows the log; `grove -S log` stows the package
# log); a word that is neither is an unknown command, with the package it is one or two edits
# from as a hint.
source "$(dirname "$0")/lib.sh"
need_stow

# The twin farms: $ROOT/g (grove) and $ROOT/r (GNU Stow), each a home with a dotfiles stow dir.
for side in g r; do
	mk_file "$ROOT/$side/home/dotfiles/vim/.vimrc" "set nocp"
	mk_file "$ROOT/$side/home/dotfiles/vim/.vim/colors/dark.vim" "dark"
	mk_file "$ROOT/$side/home/dotfiles/git/dot-gitconfig" "git"
	mk_file "$ROOT/$side/home/dotfiles/zsh/dot-zshrc" "zsh"
	mk_file "$ROOT/$side/home/dotfiles/log/bin/logtool" "log"
	mk_file "$ROOT/$side/home/dotfiles/README.md" "readme"
done
G=$ROOT/g/home/dotfiles R=$ROOT/r/home/dotfiles

ntxn()
{
	"$GROVE" log -t "$1" | grep -c committed || true
}

# ---- grove PKG: stows, as stow PKG ----
cd "$R" && stow_ref vim && cd "$ROOT"
cd "$G"
expect_exit 0 "$GROVE" vim
cd "$ROOT"
expect_same_tree "$ROOT/r/home" "$ROOT/g/home"
[[ $(ntxn "$ROOT/g/home") == 1 ]] || fail "grove vim: expected one transaction"
"$GROVE" log -t "$ROOT/g/home" | grep -q "committed .* grove vim$" || fail "the log does not name 'grove vim'"
check "grove vim (no verb, run in the stow dir) stows vim as GNU Stow's 'stow vim' does, one transaction"

# ---- grove --dotfiles PKG and grove PKG --dotfiles: the same ----
cd "$R" && stow_ref --dotfiles git && cd "$ROOT"
cd "$G"
expect_exit 0 "$GROVE" git --dotfiles
cd "$ROOT"
expect_same_tree "$ROOT/r/home" "$ROOT/g/home"
cd "$R" && stow_ref --dotfiles zsh && cd "$ROOT"
cd "$G"
expect_exit 0 "$GROVE" --dotfiles zsh
cd "$ROOT"
expect_same_tree "$ROOT/r/home" "$ROOT/g/home"
check "grove git --dotfiles and grove --dotfiles zsh: both stow with --dotfiles, as stow --dotfiles does"

# ---- several words: every one a package, as in Stow's spelling ----
cd "$R" && stow_ref -D vim && stow_ref -D --dotfiles git zsh && cd "$ROOT"
cd "$G"
expect_exit 0 "$GROVE" unstow vim git zsh
cd "$ROOT"
expect_same_tree "$ROOT/r/home" "$ROOT/g/home"
cd "$R" && stow_ref vim git && cd "$ROOT"
cd "$G"
expect_exit 0 "$GROVE" vim git
cd "$ROOT"
expect_same_tree "$ROOT/r/home" "$ROOT/g/home"
# A word after a package that is no package: refused as Stow's spelling refuses it.
snapshot "$ROOT/g/home"
cd "$G"
expect_exit 1 "$GROVE" vim README.md
expect_err_line "^grove: the stow directory 'dotfiles' does not contain package 'README.md' \(it is a file, not a folder\)$"
cd "$ROOT"
expect_unchanged "$ROOT/g/home"
check "grove vim git stows both; grove vim README.md is refused as grove -S vim README.md is"

# ---- from elsewhere, with STOW_DIR ----
cd "$R" && stow_ref -D vim git && cd "$ROOT"
STOW_DIR=$R stow_ref vim
STOW_DIR=$G expect_exit 0 "$GROVE" unstow vim git
STOW_DIR=$G expect_exit 0 "$GROVE" vim
expect_same_tree "$ROOT/r/home" "$ROOT/g/home"
check "STOW_DIR=… grove vim from another folder stows into the stow dir's parent, as stow does"

# ---- a command's name is the command ----
cd "$G"
expect_exit 0 "$GROVE" log
expect_out_has "grove vim"
[[ ! -e $ROOT/g/home/bin ]] || fail "grove log stowed the package log"
expect_exit 0 "$GROVE" -S log
cd "$ROOT"
cd "$R" && stow_ref -S log && cd "$ROOT"
expect_same_tree "$ROOT/r/home" "$ROOT/g/home"
check "grove log shows the log even with a package named log; grove -S log stows it"

# ---- neither a command nor a package ----
snapshot "$ROOT/g/home"
cd "$G"
expect_exit 2 "$GROVE" vmi
expect_err_has "grove: unknown command 'vmi' (try 'grove --help')"
expect_err_has "hint: no package 'vmi': did you mean 'vim'?"
expect_exit 2 "$GROVE" -q vmi
expect_err_line "^grove: unknown command 'vmi' \(try 'grove --help'\)$"
expect_exit 2 "$GROVE" stauts
expect_err_line "^grove: unknown command 'stauts' \(did you mean 'status'\?\)$"
cd "$ROOT"
expect_unchanged "$ROOT/g/home"
check "grove vmi: unknown command, exit 2, with the package it may mean; nothing changed"
