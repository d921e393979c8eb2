#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Hints that fit: no --adopt hint for a link --adopt cannot take; grove switch for a package that
# replaces another; root for a permission error; "did you mean" for a mistyped package or
# command; a plain message for a stow dir at the top level and for a stow dir that is not there;
# "1 op", not "1 ops".
source "$(dirname "$0")/lib.sh"

S=$ROOT/stow
T=$ROOT/target
mk_file "$S/hello-2.12/bin/hello" "2.12"
mk_file "$S/hello-2.13/bin/hello" "2.13"
mk_file "$S/vim/.vimrc" "vim"
mk_file "$S/f/foreign" "mine"
mk_file "$S/a/x" "x"
mkdir -p "$T"
chmod -R a+rX "$ROOT"
cd "$S"

ln -s /etc/hostname "$T/foreign"
expect_exit 1 "$GROVE" stow --adopt -t ../target f
expect_err_has "existing target is not owned by stow: foreign"
expect_err_has "hint: it is a link grove did not make (--adopt takes files only)"
grep -q -- "--adopt moves" "$ERR" && fail "the --adopt hint after --adopt: $(cat "$ERR")"
rm "$T/foreign"
check "a foreign link: no --adopt hint, even with --adopt"

expect_exit 0 "$GROVE" stow -t ../target hello-2.12
expect_exit 1 "$GROVE" stow -t ../target hello-2.13
expect_err_has "hint: package 'hello-2.12' has these paths: replace it in one step (grove switch hello-2.12 hello-2.13)"
expect_exit 0 "$GROVE" switch -t ../target hello-2.12 hello-2.13
expect_tree "$T" <<'SPEC'
l bin -> ../stow/hello-2.13/bin
SPEC
check "a package another one provides: the hint names grove switch, which works"

expect_exit 1 "$GROVE" stow -t ../target vmi
expect_err_has "does not contain package 'vmi'"
expect_err_has "hint: no package 'vmi': did you mean 'vim'?"
expect_exit 1 "$GROVE" stow -t ../target zz
grep -q "did you mean" "$ERR" && fail "a hint for a name near nothing: $(cat "$ERR")"
expect_exit 2 "$GROVE" stwo vim
expect_err_line "unknown command 'stwo' \(did you mean 'stow'\?\)"
expect_exit 1 "$GROVE" -q stow -t ../target vmi
grep -q "hint:" "$ERR" && fail "a hint with -q: $(cat "$ERR")"
check "did you mean: a mistyped package or command; nothing for a word near nothing, or with -q"

expect_exit 1 "$GROVE" stow -d dotfilez -t ../target vim
expect_err_line "stow directory: open 'dotfilez': No such file or directory"
expect_exit 1 "$GROVE" stow -d ../stwo -t ../target vim
expect_err_has "hint: no folder 'stwo': did you mean 'stow'?"
expect_exit 1 "$GROVE" stow -t ../targte vim
expect_err_has "hint: no folder 'targte': did you mean 'target'?"
check "a missing stow dir or target: no jargon, and did you mean"

if [[ -d /tmp ]]; then
	(cd /tmp && GROVE_STATE_DIR=$ROOT/tmpstate "$GROVE" stow nothing-here) >"$OUT" 2>"$ERR" && fail "stow from /tmp succeeded"
	expect_err_has "no target: the default target is the stow directory's parent, and for '/tmp', at the top level"
	expect_err_has "give the target with -t DIR"
	check "a stow dir at the top level: the message says why there is no target"
fi

expect_exit 0 "$GROVE" log -t ../target
grep -Eq ' 1 op +grove switch' "$OUT" || fail "log: $(cat "$OUT")"
grep -q '1 ops' "$OUT" && fail "log says 1 ops: $(cat "$OUT")"
check "1 op"

# A normal user refused a change: the hint names root.
mkdir -p "$ROOT/nobody-state"
chown 65534 "$ROOT/nobody-state"
chmod 700 "$ROOT/nobody-state"
run setpriv --reuid=65534 --regid=65534 --clear-groups env GROVE_STATE_DIR="$ROOT/nobody-state" \
	"$GROVE" stow -t ../target a
[[ $RC == 1 ]] || fail "stow as nobody into root's target: exit $RC: $(cat "$ERR")"
expect_err_has "Permission denied"
expect_err_has "hint: you (uid 65534) lack the permission; a system folder such as /usr/local needs root: sudo grove"
check "permission denied for a normal user: the hint names root"
