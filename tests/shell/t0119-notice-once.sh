#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The recorded-options notice once per package (issue 40 item 9; docs/stow.md "Recorded options"):
# "grove: vim was stowed with --dotfiles; using it again" is printed by the first command that
# uses vim's record and changes something, and the log remembers it was shown (schema 15's
# pkg_told), so later commands on vim are silent; per package, per target and per options (new
# options, after a restow changed them, are told once again). A dry run (plan, -n) prints it
# without remembering, and -q neither prints nor remembers it. A log of schema 14 is migrated.
source "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || fail "sqlite3 (the command) is needed to read the log's schema"

S=$ROOT/dotfiles
H=$ROOT/home
H2=$ROOT/home2
mk_file "$S/vim/dot-vimrc" "set nocp"
mk_file "$S/vim/dot-vim/colors/dark.vim" "dark"
mk_file "$S/git/dot-gitconfig" "git"
mkdir -p "$H" "$H2"

notices() # how many notice lines stderr holds
{
	grep -c 'was stowed with' "$ERR" || true
}
expect_silent()
{
	[[ $(notices) == 0 ]] || { _lib_show_run; fail "expected no notice"; }
}

expect_exit 0 "$GROVE" stow -d "$S" -t "$H" --dotfiles vim git
expect_exit 0 "$GROVE" plan restow -d "$S" -t "$H" vim
expect_err_line "^grove: vim was stowed with --dotfiles; using it again \(see 'Recorded options' in grove\(1\)\)$"
expect_exit 0 "$GROVE" restow -n -d "$S" -t "$H" vim
expect_err_has "grove: vim was stowed with --dotfiles; using it again"
expect_exit 0 "$GROVE" -q restow -d "$S" -t "$H" vim
expect_err_empty
check "plan and -n print the notice and do not remember it; -q hides it"

expect_exit 0 "$GROVE" restow -d "$S" -t "$H" vim
expect_err_line "^grove: vim was stowed with --dotfiles; using it again"
expect_exit 0 "$GROVE" restow -d "$S" -t "$H" vim
expect_silent
expect_exit 0 "$GROVE" plan unstow -d "$S" -t "$H" vim
expect_silent
expect_exit 0 "$GROVE" restow -d "$S" -t "$H" vim git
expect_err_line "^grove: git was stowed with --dotfiles; using it again"
expect_exit 0 "$GROVE" restow -d "$S" -t "$H" vim git
expect_silent
expect_exit 0 "$GROVE" unstow -d "$S" -t "$H" vim
expect_silent
[[ ! -e $H/.vimrc && ! -L $H/.vimrc ]] || fail "the unstow did not use the record"
check "shown by the first command that uses the record, then never again for that package (restow, plan, unstow)"

# Per options: a restow that changes them, then the new record is told once.
expect_exit 0 "$GROVE" stow -d "$S" -t "$H" --dotfiles vim
expect_exit 0 "$GROVE" restow -d "$S" -t "$H" --no-folding vim
expect_err_has "grove: restowing vim with --dotfiles --no-folding; it was stowed with --dotfiles"
expect_exit 0 "$GROVE" restow -d "$S" -t "$H" vim
expect_err_line "^grove: vim was stowed with --dotfiles --no-folding; using them again"
expect_exit 0 "$GROVE" restow -d "$S" -t "$H" vim
expect_silent
check "new options (a restow changed them) are told once again"

# Per target.
expect_exit 0 "$GROVE" stow -d "$S" -t "$H2" --dotfiles git
expect_exit 0 "$GROVE" restow -d "$S" -t "$H2" git
expect_err_line "^grove: git was stowed with --dotfiles; using it again"
expect_exit 0 "$GROVE" restow -d "$S" -t "$H2" git
expect_silent
check "another target is told on its own"

# A log of schema 14 (no pkg_told) is migrated on open, and tells again.
DB=$GROVE_STATE_DIR/grove.db
[[ $(sqlite3 "$DB" "PRAGMA user_version") == 15 ]] || fail "the log is not at schema 15"
sqlite3 "$DB" "DROP TABLE pkg_told; PRAGMA user_version = 14" || fail "cannot edit the log"
expect_exit 0 "$GROVE" restow -d "$S" -t "$H2" git
expect_err_line "^grove: git was stowed with --dotfiles; using it again"
[[ $(sqlite3 "$DB" "PRAGMA user_version") == 15 ]] || fail "the log was not migrated to 15"
expect_exit 0 "$GROVE" restow -d "$S" -t "$H2" git
expect_silent
check "a schema-14 log is migrated to 15 and the notice is told once more"
