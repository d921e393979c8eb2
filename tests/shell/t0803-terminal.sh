#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Colour and the progress line appear on a terminal (stdout and stderr on pseudo-terminals) and
# never in a pipe, with NO_COLOR, --color=never, TERM=dumb or -q; --color=always forces colour.
. "$(dirname "$0")/lib.sh"

PTY=$GROVE_SOURCE_ROOT/tests/tty/pty-run.py
ESC=$'\033'
export TERM=xterm

# tty CMD...: run on two pseudo-terminals; $OUT and $ERR get what was written, $RC the status.
tty()
{
	_lib_cmd=("$@")
	RC=0
	"$GROVE_TEST_PY" "$PTY" "$OUT" "$ERR" "$@" || RC=$?
}
has_esc() { grep -q "$ESC\[" "$1"; }

S=$ROOT/stow T=$ROOT/target
for i in $(seq 1 150); do mk_file "$S/big/share/doc/f$i" "$i"; done
mk_file "$S/a/bin/x" a
mk_file "$S/b/bin/x" b
mkdir -p "$T"
cd "$ROOT"

tty "$GROVE" plan stow -d stow -t target a
[[ $RC == 0 ]] || fail "plan under a tty exited $RC: $(cat "$ERR")"
grep -q "${ESC}\[32mlink${ESC}\[0m   bin -> ../stow/a/bin" "$OUT" || fail "no coloured op on a tty: $(cat -v "$OUT")"
run "$GROVE" plan stow -d stow -t target a
has_esc "$OUT" && fail "colour in a pipe: $(cat -v "$OUT")"
expect_out_has "link   bin -> ../stow/a/bin"
check "plan: the op's kind is coloured on a terminal, plain in a pipe"

NO_COLOR=1 tty "$GROVE" plan stow -d stow -t target a
has_esc "$OUT" && fail "colour with NO_COLOR: $(cat -v "$OUT")"
NO_COLOR= tty "$GROVE" plan stow -d stow -t target a
has_esc "$OUT" || fail "an empty NO_COLOR turned colour off: $(cat -v "$OUT")"
tty "$GROVE" --color=never plan stow -d stow -t target a
has_esc "$OUT" && fail "colour with --color=never: $(cat -v "$OUT")"
TERM=dumb tty "$GROVE" plan stow -d stow -t target a
has_esc "$OUT" && fail "colour with TERM=dumb: $(cat -v "$OUT")"
NO_COLOR=1 run "$GROVE" --color=always plan stow -d stow -t target a
grep -q "${ESC}\[32mlink" "$OUT" || fail "--color=always gave no colour in a pipe: $(cat -v "$OUT")"
expect_exit 2 "$GROVE" --color=sometimes plan stow -d stow -t target a
expect_err_line "--color" "sometimes"
check "no colour with NO_COLOR (set, not empty), --color=never or TERM=dumb; --color=always forces it; a bad WHEN is exit 2"

# Conflicts and errors on stderr.
expect_exit 0 "$GROVE" stow -d stow -t target a
tty "$GROVE" stow -d stow -t target b
[[ $RC == 1 ]] || fail "a conflict under a tty exited $RC"
grep -q "${ESC}\[1;33mWARNING!${ESC}\[0m stowing b would cause conflicts:" "$ERR" || fail "no coloured warning: $(cat -v "$ERR")"
grep -q "${ESC}\[36m  hint: package 'a' has these paths: replace it in one step (grove switch a b), unstow it first (grove unstow a)" "$ERR" ||
	fail "no coloured hint: $(cat -v "$ERR")"
tty "$GROVE" stow -d stow -t target nosuch
grep -q "^${ESC}\[1;31mgrove:${ESC}\[0m .*nosuch" "$ERR" || fail "no coloured error prefix: $(cat -v "$ERR")"
run "$GROVE" stow -d stow -t target b
has_esc "$ERR" && fail "colour on stderr in a pipe: $(cat -v "$ERR")"
expect_err_has "  hint: package 'a' has these paths"
check "conflicts, hints and errors are coloured on a terminal's stderr, plain in a pipe"

# Progress: a plan of 150 links (--no-folding) shows "grove: N/150 ops" and erases it.
tty "$GROVE" stow --no-folding -d stow -t target big
[[ $RC == 0 ]] || fail "stow big under a tty exited $RC: $(cat -v "$ERR")"
grep -q "grove: 1/15[0-9] ops" "$ERR" || fail "no progress line on a terminal: $(cat -v "$ERR")"
grep -aq "grove: 15[0-9]/15[0-9] ops" "$ERR" || fail "the progress line never reached the total: $(cat -v "$ERR")"
[[ $(tail -c 4 "$ERR" | od -An -c | tr -d ' ') == '\r033[K' ]] ||
	fail "the progress line was not erased at the end: $(tail -c 40 "$ERR" | od -c)"
[[ -L $T/share/doc/f150 ]] || fail "big was not stowed"
expect_exit 0 "$GROVE" unstow -d stow -t target big
tty "$GROVE" -q stow --no-folding -d stow -t target big
[[ $RC == 0 && ! -s $ERR ]] || fail "-q still printed on stderr: $(cat -v "$ERR")"
expect_exit 0 "$GROVE" unstow -d stow -t target big
run "$GROVE" stow --no-folding -d stow -t target big
[[ $RC == 0 ]] || fail "stow big in a pipe exited $RC"
expect_err_empty
tty "$GROVE" stow -d stow -t target b --override=bin
grep -q " ops" "$ERR" && fail "a progress line for a small plan: $(cat -v "$ERR")"
check "progress (ops done/total) on a terminal's stderr for a large plan, erased when done; none with -q, in a pipe, or for a small plan"
