#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Invoked as stow, grove exits as GNU Stow exits where Stow dies (issue 40 item 10): a package
# the stow dir does not contain (`stow *` in a dotfiles repository with a README) and an undefined
# variable in a .stowrc. Perl's die exits with errno, else 255, so Stow's status depends on what
# it did before: 2 (ENOENT) when nothing is there, when a package was planned before, or when no
# ./.stowrc was found; 255 otherwise. Every expected status and message here is GNU Stow 2.4.1's,
# run on a twin tree from the same folder, never grove's own.
source "$(dirname "$0")/lib.sh"
need_stow

mkdir -p "$ROOT/bin"
ln -s "$(realpath "$GROVE")" "$ROOT/bin/stow"
GSTOW=$ROOT/bin/stow

mkrepo() # HOME
{
	mk_file "$1/dotfiles/vim/.vimrc" "set nu"
	mk_file "$1/dotfiles/zsh/.zshrc" "zsh"
	mk_file "$1/dotfiles/README.md" "# my dotfiles"
	mkdir -p "$1/target"
}
mkrepo "$ROOT/a"
mkrepo "$ROOT/b"

# same "what" CMD…: GNU Stow (HOME=a) and grove as stow (HOME=b), each from its dotfiles folder:
# the same exit status, the same stderr, the same trees.
same()
{
	local what=$1 src grc
	shift
	(cd "$ROOT/a/dotfiles" && HOME=$ROOT/a stow_ref "$@") >"$ROOT/a.out" 2>"$ROOT/a.err" && src=0 || src=$?
	(cd "$ROOT/b/dotfiles" && HOME=$ROOT/b "$GSTOW" "$@") >"$ROOT/b.out" 2>"$ROOT/b.err" && grc=0 || grc=$?
	[[ $src == "$grc" ]] || fail "$what: exit status: GNU Stow $src, grove as stow $grc ($(cat "$ROOT/b.err"))"
	sed "s|$ROOT/a|ROOT|g" "$ROOT/a.err" >"$ROOT/a.errs"
	sed "s|$ROOT/b|ROOT|g" "$ROOT/b.err" >"$ROOT/b.errs"
	cmp -s "$ROOT/a.errs" "$ROOT/b.errs" || {
		diff -u "$ROOT/a.errs" "$ROOT/b.errs" >&2
		fail "$what: stderr differs from GNU Stow's"
	}
	expect_same_tree "$ROOT/a" "$ROOT/b"
	STATUS=$src
}

both_rc() # TEXT: ./.stowrc of each copy ("" removes it)
{
	local h
	for h in "$ROOT/a" "$ROOT/b"; do
		rm -f "$h/dotfiles/.stowrc"
		[[ -z $1 ]] || printf '%s\n' "$1" >"$h/dotfiles/.stowrc"
	done
}

# ---- stow * over a README ----
both_rc "--target=~/target"
same "stow * with a .stowrc" README.md vim zsh
[[ $STATUS == 255 ]] || fail "GNU Stow exited $STATUS, not 255: the oracle is not what this test expects"
same "stow -D README.md with a .stowrc" -D README.md
same "stow -n README.md with a .stowrc" -n README.md
check "stow * over a README with a ./.stowrc: Stow's ERROR line and its exit status 255"

same "stow vim README.md with a .stowrc" vim README.md
same "stow -D vim -S README.md with a .stowrc" -D vim -S README.md
same "stow nosuch with a .stowrc" nosuch
same "stow -D nosuch with a .stowrc" -D nosuch
check "a package planned before it, or nothing there at all: exit 2, as Stow"

both_rc ""
same "stow -t ../target * without a .stowrc" -t ../target README.md vim zsh
[[ $STATUS == 2 ]] || fail "GNU Stow exited $STATUS, not 2, without a .stowrc"
same "stow -t ../target -D README.md without a .stowrc" -t ../target -D README.md
check "without a ./.stowrc: exit 2, as Stow"

# ---- an undefined variable in a .stowrc ----
# shellcheck disable=SC2016
both_rc '--target=$GROVE_TEST_UNDEFINED/x'
same "an undefined variable in ./.stowrc" vim
[[ $STATUS == 255 ]] || fail "GNU Stow exited $STATUS, not 255, on an undefined variable"
# shellcheck disable=SC2016
both_rc '--dir=${GROVE_TEST_UNDEFINED}'
same "an undefined \${VAR} in ./.stowrc" -t ../target vim
both_rc ""
for h in "$ROOT/a" "$ROOT/b"; do
	# shellcheck disable=SC2016
	printf '%s\n' '--target=$GROVE_TEST_UNDEFINED' >"$h/.stowrc"
done
same "an undefined variable in ~/.stowrc, no ./.stowrc" vim
[[ $STATUS == 2 ]] || fail "GNU Stow exited $STATUS, not 2, without a ./.stowrc"
both_rc "--verbose=0"
same "an undefined variable in ~/.stowrc, and a ./.stowrc" vim
rm "$ROOT/a/.stowrc" "$ROOT/b/.stowrc"
check "an undefined variable in a .stowrc: Stow's line and exit status (255, or 2 without a ./.stowrc)"

# As grove, its own words and exit statuses stay (DESIGN.md's exit codes).
cd "$ROOT/b/dotfiles"
expect_exit 1 "$GROVE" stow -t ../target README.md vim
expect_err_line "^grove: the stow directory '../dotfiles' does not contain package 'README.md' \(it is a file, not a folder\)$"
check "as grove: the refusal says why, exit 1"
