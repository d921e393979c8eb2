#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A value is never one of grove's global options (issue 37 item 7): --state=DIR, --wait, -n,
# --json and --color written where a command expects a value - alt's arguments, the words after
# profile's subcommand, the value of Stow's -t/-d in any spelling - are that value or a usage
# error, and no state dir is made at the path. And `grove import -- PKG` imports PKG (item 8).
source "$(dirname "$0")/lib.sh"

A=$ROOT/alt
mkdir -p "$A/etc/alternatives" "$A/admin" "$A/usr/bin"
mk_file "$A/usr/bin/vim" "vim"
ALT=(alt --altdir "$A/etc/alternatives" --admindir "$A/admin")
EVIL=$ROOT/evil

no_evil()
{
	[[ ! -e $EVIL ]] || fail "a state dir was made at $EVIL by: $(printf '%q ' "${_lib_cmd[@]}")"
}

# alt: --install LINK NAME PATH PRIORITY and --slave LINK NAME PATH are values, whatever they
# look like (update-alternatives reads them so): a name "--state=DIR" is a bad name.
expect_exit 2 "$GROVE" "${ALT[@]}" --install "$A/usr/bin/editor" "--state=$EVIL" editor "$A/usr/bin/vim" 50
no_evil
expect_exit 2 "$GROVE" "${ALT[@]}" --install "$A/usr/bin/editor" "--state=$EVIL" "$A/usr/bin/vim" 50
expect_err_has "alternative name (--state=$EVIL) must not contain"
no_evil
expect_exit 2 "$GROVE" "${ALT[@]}" --query "--state=$EVIL"
expect_err_has "(--state=$EVIL)"
no_evil
expect_exit 2 "$GROVE" alt --admindir "--state=$EVIL" --altdir "$A/etc/alternatives" --display editor
no_evil
for opt in --wait --color --json -n; do
	expect_exit 2 "$GROVE" "${ALT[@]}" --query "$opt"
	expect_err_has "$opt"
done
expect_exit 0 "$GROVE" "${ALT[@]}" --install "$A/usr/bin/editor" editor "$A/usr/bin/vim" 50 \
	--slave "$A/usr/bin/ex" ex "$A/usr/bin/vim"
expect_exit 2 "$GROVE" "${ALT[@]}" --install "$A/usr/bin/editor" editor "$A/usr/bin/vim" 50 \
	--slave "$A/usr/bin/view" "--state=$EVIL" "$A/usr/bin/vim"
no_evil
expect_exit 2 "$GROVE" "${ALT[@]}" --set --color "$A/usr/bin/vim"
expect_err_has "--color"
check "alt: global options in the place of alt's arguments are those arguments"

# profile: the words after the subcommand are the subcommand's.
S=$ROOT/stow
mk_file "$S/a/bin/a" "a"
P=$ROOT/profiles/p
expect_exit 0 "$GROVE" profile -p "$P" build -d "$S" a
expect_exit 2 "$GROVE" profile -p "$P" delete "--state=$EVIL"
expect_err_line "unknown option '--state=$EVIL'"
no_evil
expect_exit 2 "$GROVE" profile -p "$P" delete 1 "--state=$EVIL"
no_evil
for opt in --wait -n --color --dry-run -q; do
	expect_exit 2 "$GROVE" profile -p "$P" delete "$opt"
	expect_err_line "unknown option '$opt'"
done
expect_exit 2 "$GROVE" profile -p "$P" switch --state "$EVIL"
no_evil
# before the subcommand, and profile's own --json after it: as before.
expect_exit 0 "$GROVE" profile -p "$P" --json list
expect_out_has '"command": "profile list"'
expect_exit 0 "$GROVE" profile -p "$P" list --json
expect_out_has '"command": "profile list"'
check "profile: the words after the subcommand are never grove's global options"

# Stow's -t/-d, in every spelling the packages' parser takes, keep their value.
T=$ROOT/target
mkdir -p "$T"
for spelling in "-t" "--target" "--ta" "-nt" "--d" "--dir" "-d"; do
	expect_exit_in "1 2" "$GROVE" stow -d "$S" "$spelling" "--state=$EVIL" a
	expect_err_has "--state=$EVIL"
	no_evil
done
expect_exit 1 "$GROVE" log -t --json
expect_err_has "'--json'"
expect_out_empty
expect_exit 1 "$GROVE" status -d "$S" -t "--state=$EVIL"
expect_err_has "--state=$EVIL"
no_evil
expect_exit 1 "$GROVE" show --target -n
expect_err_has "'-n'"
expect_exit 1 "$GROVE" switch -d "$S" --ta "--state=$EVIL" a b
expect_err_has "--state=$EVIL"
no_evil
check "Stow's -t and -d, however spelt, keep a value that looks like a global option"

# import: "--" ends the options; it is no package.
rm -rf "$T"
mkdir -p "$T"
mk_file "$S/b/share/b" "b"
ln -s ../stow/a/bin "$T/bin"
ln -s ../stow/b/share "$T/share"
expect_exit 0 "$GROVE" import -d "$S" -t "$T" -- a
expect_out_has "1 link (a)"
expect_err_has "not imported: 'share'"
expect_exit 0 "$GROVE" status -d "$S" -t "$T"
expect_exit 0 "$GROVE" import -d "$S" -t "$T" b --
expect_out_has "1 link (b)"
expect_exit 1 "$GROVE" import -d "$S" -t "$T" -- --
expect_err_has "does not contain package '--'"
check "import -- PKG imports PKG; a package named -- is still reached after --"
