#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# --version and --help; every command has its help; the man pages were built, and grove(1)
# documents every command and option `grove --help` lists (and the check fails when one is missing).
. "$(dirname "$0")/lib.sh"

: "${GROVE_VERSION:?meson passes the project version}"
MAN=$GROVE_BUILD_ROOT/docs/man
CHECK=$GROVE_SOURCE_ROOT/tests/man/check-help.py

expect_exit 0 "$GROVE" --version
[[ $(cat "$OUT") == "grove (GNU Stow compatible) version $GROVE_VERSION" ]] ||
	fail "--version does not print the project version $GROVE_VERSION: $(cat "$OUT")"
check "--version prints meson's project version"

expect_exit 0 "$GROVE" --help
cp "$OUT" "$ROOT/help.txt"
expect_out_has "Usage:"
expect_out_has "Exit status:"
check "--help prints the overview, exit 0"

# Every command of the overview has a help page: grove help CMD, and CMD --help.
cmds=$(sed -n '/^Commands:/,/^$/s/^    \([a-z][a-z-]*\).*/\1/p' "$ROOT/help.txt")
[[ $(wc -w <<<"$cmds") -ge 14 ]] || fail "expected the commands in --help, got: $cmds"
for c in $cmds; do
	case $c in
	profile | apply) continue ;; # issue 5 and 6 print their own help
	esac
	expect_exit 0 "$GROVE" help "$c"
	[[ -s $OUT ]] || fail "'grove help $c' printed nothing"
	grep -q "$c" "$OUT" || fail "'grove help $c' does not name the command: $(cat "$OUT")"
	if [[ $c != help ]]; then
		cp "$OUT" "$ROOT/page"
		expect_exit 0 "$GROVE" "$c" --help
		cmp -s "$OUT" "$ROOT/page" || fail "'grove $c --help' differs from 'grove help $c'"
	fi
done
expect_exit 0 "$GROVE" log -h
expect_out_has "Usage: grove log"
expect_exit 2 "$GROVE" help frobnicate
expect_err_has "unknown command 'frobnicate'"
check "every command has its help (grove help CMD = grove CMD --help); an unknown one is exit 2"

for p in grove.1 grove-stow.1 grove-alt.1 grove-profile.1 grove.yaml.5; do
	[[ -s $MAN/$p ]] || fail "man page $p was not built in $MAN"
	head -20 "$MAN/$p" | grep -q '^\.TH' || fail "$p has no .TH header"
	for s in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
		grep -q "^\.SH \"*$s" "$MAN/$p" || fail "$p has no $s section"
	done
done
for s in "GLOBAL OPTIONS" COMMANDS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES; do
	grep -q "^\.SH \"*$s" "$MAN/grove.1" || fail "grove.1 has no $s section"
done
check "the five man pages are built, with their sections"

"$GROVE_TEST_PY" "$CHECK" "$ROOT/help.txt" "$MAN/grove.1" >"$OUT" 2>&1 ||
	fail "grove(1) is missing what --help lists: $(cat "$OUT")"
check "grove(1) documents every command and option of grove --help ($(tail -1 "$OUT"))"

# The check can fail: drop one option's entry, or one command's, from the page.
sed 's/\\fB--wait\\fR/wait/g' "$MAN/grove.1" >"$ROOT/no-wait.1"
if "$GROVE_TEST_PY" "$CHECK" "$ROOT/help.txt" "$ROOT/no-wait.1" >"$OUT" 2>&1; then
	fail "the check passed on a page without --wait"
fi
grep -q "option '--wait'" "$OUT" || fail "the check did not name --wait: $(cat "$OUT")"
sed 's/^\\fBverify\\fR$/verify/' "$MAN/grove.1" >"$ROOT/no-verify.1"
if "$GROVE_TEST_PY" "$CHECK" "$ROOT/help.txt" "$ROOT/no-verify.1" >"$OUT" 2>&1; then
	fail "the check passed on a page without the verify command"
fi
grep -q "command 'verify'" "$OUT" || fail "the check did not name verify: $(cat "$OUT")"
check "the check fails, naming it, when an option or a command is missing from grove(1)"
