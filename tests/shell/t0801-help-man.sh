#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# --version and --help; every command has its help; the man pages were built, and grove(1)
# documents every command and option `grove --help` lists (and the check fails when one is missing).
. "$(dirname "$0")/lib.sh"

: "${GROVE_VERSION:?meson passes the project version}" "${MANIFEST_PROBE:?meson passes the manifest-probe helper}"
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
	expect_exit 0 "$GROVE" help "$c"
	[[ -s $OUT ]] || fail "'grove help $c' printed nothing"
	# One spelling of usage lines: "Usage: grove CMD", and "..." (never "…") for repetition.
	[[ $(head -1 "$OUT") == "Usage: grove $c"* ]] ||
		fail "'grove help $c' does not start with 'Usage: grove $c': $(head -1 "$OUT")"
	! grep -q '…' "$OUT" || fail "'grove help $c' spells a repetition '…': $(grep '…' "$OUT")"
	! grep -q '^usage' "$OUT" || fail "'grove help $c' has a lower-case usage line"
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
! grep -q '…' "$ROOT/help.txt" || fail "grove --help spells a repetition '…'"
expect_exit 2 "$GROVE" switch onlyone
expect_err_has "usage: grove switch [OPTION ...] OLD NEW"
check "every command has its help (grove help CMD = grove CMD --help), each starting 'Usage: grove CMD'; an unknown one is exit 2"

# README, --help and grove(1) list the same exit statuses, those src/cli/cli.h defines.
"$GROVE_TEST_PY" "$GROVE_SOURCE_ROOT/tests/man/check-exit.py" "$GROVE_SOURCE_ROOT/src/cli/cli.h" \
	"$GROVE_SOURCE_ROOT/README.md" "$ROOT/help.txt" "$GROVE_SOURCE_ROOT/docs/man/grove.1.scd" >"$OUT" 2>&1 ||
	fail "the exit statuses differ: $(cat "$OUT")"
sed 's/^\(Exit status: 0 done\), 1 refused (nothing changed)/\1/' "$ROOT/help.txt" >"$ROOT/help-no-1.txt"
! "$GROVE_TEST_PY" "$GROVE_SOURCE_ROOT/tests/man/check-exit.py" "$GROVE_SOURCE_ROOT/src/cli/cli.h" \
	"$GROVE_SOURCE_ROOT/README.md" "$ROOT/help-no-1.txt" "$GROVE_SOURCE_ROOT/docs/man/grove.1.scd" >"$OUT" 2>&1 ||
	fail "the exit-status check passed on a help without status 1"
grep -q "grove --help: missing \[1\]" "$OUT" || fail "the check did not name the missing status: $(cat "$OUT")"
check "README, grove --help and grove(1) list the same exit statuses as src/cli/cli.h (and the check can fail)"

for p in grove.1 grove-stow.1 grove-alt.1 grove-profile.1 grove.yaml.5; do
	[[ -s $MAN/$p ]] || fail "man page $p was not built in $MAN"
	head -20 "$MAN/$p" | grep -c '^\.TH' >/dev/null || fail "$p has no .TH header"
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

# grove.yaml(5)'s example is a valid manifest (read and checked by the manifest parser).
sed -n '/^# EXAMPLE/,/^# /p' "$GROVE_SOURCE_ROOT/docs/man/grove.yaml.5.scd" |
	sed -n '/^```$/,/^```$/p' | sed '1d;$d' | sed 's/\\\\/\\/g' >"$ROOT/example.yaml"
[[ $(wc -l <"$ROOT/example.yaml") -gt 20 ]] || fail "no example found in grove.yaml.5.scd"
expect_exit 0 "$MANIFEST_PROBE" "$ROOT/example.yaml"
expect_out_has "target ~/.local"
check "grove.yaml(5)'s example is a manifest the parser accepts"
