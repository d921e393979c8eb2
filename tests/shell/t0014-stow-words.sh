#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 16: Stow's words and exit codes when grove runs as `stow` (each compared with GNU Stow
# 2.4.1 byte for byte), grove's own clear words otherwise, and `grove PKG…` without a verb.
. "$(dirname "$0")/lib.sh"

need_stow
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
expect_err_line "'abs' \(it is an absolute link out of the stow directory\)"
rm "$W/t/d/abs"
check "as grove, a missing package or a file: one line saying which and why, exit 1"

expect_exit 0 "$GROVE" unstow vim
expect_err_has "WARNING: Ignoring an absolute symlink: .x => /nonexistent"
check "as grove, the absolute-symlink notice is a WARNING"

snapshot "$W"
expect_exit 2 "$GROVE" nosuch
expect_err_line "^grove: unknown command 'nosuch' \(try 'grove --help'\)$"
expect_exit 2 "$GROVE" README.md
expect_err_line "^grove: unknown command 'README.md' \(try 'grove --help'\)$"
cd "$ROOT"
expect_unchanged "$W"
check "grove WORD (no verb), WORD neither a command nor a package: unknown command, exit 2, nothing changed (grove PKG stows: t0118)"

# Stow's own examples, run as `stow` and by GNU Stow on twin trees: the trees must be equal.
# twin_run DIR ARGS…: in $ROOT/a/DIR under GNU Stow and $ROOT/b/DIR as stow, same exit status.
twin_run()
{
	local dir=$1 rc_ref
	shift
	cd "$ROOT/a/$dir" && run stow_ref "$@"
	rc_ref=$RC
	cd "$ROOT/b/$dir" && run "$STOW" "$@"
	[[ $RC == "$rc_ref" ]] || { _lib_show_run; fail "stow $*: exit $RC, GNU Stow $rc_ref"; }
	cd "$ROOT"
	expect_same_tree "$ROOT/a" "$ROOT/b"
}
# t/examples.t "bug 2": two marked stow dirs inside the target.
mk_file "$ROOT/a/t/stow/.stow" ""
mk_file "$ROOT/a/t/stow/pkg2a/bin2/file2a" "a"
mk_file "$ROOT/a/t/stow2b/.stow" ""
mk_file "$ROOT/a/t/stow2b/pkg2b/bin2/file2b" "b"
cp -a "$ROOT/a" "$ROOT/b"
twin_run t -d stow -t . pkg2a
twin_run t -d stow2b -t . pkg2b
[[ -d $ROOT/b/t/bin2 && ! -L $ROOT/b/t/bin2 ]] || fail "bin2 was not unfolded"
twin_run t -d stow2b -t . -D pkg2b
[[ $(readlink "$ROOT/b/t/bin2") == stow/pkg2a/bin2 ]] || fail "bin2 was not folded back"
twin_run t -d stow2b -t . pkg2b
twin_run t -d stow -t . -D pkg2a
[[ $(readlink "$ROOT/b/t/bin2") == stow2b/pkg2b/bin2 ]] || fail "bin2 was not folded into stow2b"
check "a second marked stow dir inside the target: unfolded and folded as GNU Stow does"

# t/unstow.t: a package that is a link out of the stow dir and back in.
rm -rf "$ROOT/a" "$ROOT/b"
mk_file "$ROOT/a/t/stow/pkg7a/stow/pkg7b/file7b" "7b"
mk_link "$ROOT/a/t/stow/pkg7b" ../stow/pkg7a/stow/pkg7b
cp -a "$ROOT/a" "$ROOT/b"
twin_run t -d stow -t . pkg7b
[[ $(readlink "$ROOT/b/t/file7b") == stow/pkg7b/file7b ]] || fail "pkg7b was not stowed"
twin_run t -d stow -t . -D pkg7b
twin_run t -d stow -t . -R pkg7b
check "a package that is a link out of the stow dir and back in: used as GNU Stow uses it"
