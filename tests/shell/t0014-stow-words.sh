#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 16: Stow's words and exit codes when grove runs as `stow` (each compared with GNU Stow
# 2.4.1 byte for byte), grove's own clear words otherwise, and `grove PKG…` without a verb.
. "$(dirname "$0")/lib.sh"

have_stow || fail "GNU Stow 2.4.1 not found (set GROVE_STOW_REF to an unpacked stow_2.4.1 .deb)"
mkdir "$ROOT/bin" && ln -s "$GROVE" "$ROOT/bin/stow"
STOW=$ROOT/bin/stow

# Runs CMD under GNU Stow (on a copy of $W) and as `stow` (on $W): exit status and stderr equal.
W=$ROOT/w
same_as_stow()
{
	local want_rc=$1
	shift
	rm -rf "$ROOT/ref" && cp -a "$W" "$ROOT/ref"
	cd "$ROOT/ref/t/d" && run stow_ref "$@"
	[[ $RC == "$want_rc" ]] || fail "GNU Stow: expected exit $want_rc, got $RC"
	cp "$ERR" "$ROOT/ref.err"
	cd "$W/t/d" && run "$STOW" "$@"
	[[ $RC == "$want_rc" ]] || { _lib_show_run; fail "as stow: expected exit $want_rc, got $RC"; }
	if ! cmp -s "$ROOT/ref.err" "$ERR"; then
		diff -u "$ROOT/ref.err" "$ERR" >&2 || true
		fail "as stow: stderr differs from GNU Stow's"
	fi
	cd "$ROOT"
	expect_same_tree "$ROOT/ref" "$W"
}

mk_file "$W/t/d/vim/.vimrc" "set nu"
mk_file "$W/t/d/README.md" "# my dotfiles"
mk_file "$W/t/d/vim/.x" "x"
mk_link "$W/t/.x" /nonexistent

same_as_stow 2 nosuch
expect_err_has "stow: ERROR: The stow directory d does not contain package nosuch"
same_as_stow 2 -d ../d nosuch
same_as_stow 2 -D nosuch
check "as stow, a missing package: Stow's ERROR line, exit 2, nothing changed"

same_as_stow 2 README.md vim
expect_err_has "stow: ERROR: The stow directory d does not contain package README.md"
check "as stow, a file named as a package (stow *): Stow's ERROR line, exit 2"

same_as_stow 0 -D vim
expect_err_has "Ignoring an absolute symlink: .x => /nonexistent"
check "as stow, the absolute-symlink notice is Stow's line, without a WARNING: prefix"

mkdir -p "$ROOT/t2/stow/.stow" "$ROOT/t2/d/a" && mk_file "$ROOT/t2/d/a/f" x
mkdir -p "$ROOT/t2/d/a/stow" && touch "$ROOT/t2/d/a/stow/.stow"
cd "$ROOT/t2/d" && run "$STOW" a
[[ $RC == 0 ]] || fail "stow a: exit $RC"
run stow_ref -n a
cp "$ERR" "$ROOT/ref.err"
run "$STOW" -n a
cmp -s "$ROOT/ref.err" "$ERR" || { diff -u "$ROOT/ref.err" "$ERR" >&2; fail "skip warning differs"; }
check "as stow, 'WARNING: skipping …' keeps Stow's prefix"

# As grove: grove's style, and as clear as Stow's.
cd "$W/t/d"
expect_exit 1 "$GROVE" stow nosuch
expect_err_line "^grove: the stow directory 'd' does not contain package 'nosuch'$"
expect_exit 1 "$GROVE" stow README.md vim
expect_err_line "^grove: the stow directory 'd' does not contain package 'README.md' \(it is a file, not a folder\)$"
ln -s /nonexistent "$W/t/d/abs"
expect_exit 1 "$GROVE" stow abs
expect_err_line "'abs' \(it is an absolute link"
rm "$W/t/d/abs"
check "as grove, a missing package or a file: one line saying which and why, exit 1"

expect_exit 0 "$GROVE" unstow vim
expect_err_has "WARNING: Ignoring an absolute symlink: .x => /nonexistent"
check "as grove, the absolute-symlink notice is a WARNING"

snapshot "$W"
expect_exit 2 "$GROVE" vim
expect_err_line "^grove: unknown command 'vim' \('vim' is a package: to stow, run 'grove stow vim'\)$"
expect_exit 2 "$GROVE" vim README.md
expect_err_line "run 'grove stow vim README.md'"
expect_exit 2 "$GROVE" nosuch
expect_err_line "^grove: unknown command 'nosuch' \(try 'grove --help'\)$"
expect_exit 2 "$GROVE" README.md
expect_err_line "^grove: unknown command 'README.md' \(try 'grove --help'\)$"
cd "$ROOT"
STOW_DIR=$W/t/d run "$GROVE" vim
[[ $RC == 2 ]] || fail "exit $RC"
expect_err_line "'vim' is a package"
mk_file "$ROOT/rc/.stowrc" "--dir=$W/t/d"
cd "$ROOT/rc" && run "$GROVE" vim && cd "$ROOT"
[[ $RC == 2 ]] || fail "exit $RC"
expect_err_line "'vim' is a package"
expect_unchanged "$W"
check "grove PKG (no verb): names the package and 'grove stow PKG', exit 2, nothing changed"

