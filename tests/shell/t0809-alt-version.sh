#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# --version: update-alternatives (grove under that name) answers as dpkg's update-alternatives does
# (exit 0, stdout only, its first line "Debian update-alternatives version X.Y.Z." with the version
# of the dpkg whose command line grove reproduces, a blank line, then what the program is), at
# once wherever it stands and whatever follows, as the real one does; grove alt --version exits 0
# with a line naming grove alt, its version and update-alternatives' version.
source "$(dirname "$0")/lib.sh"
need_ua

mkdir -p "$ROOT/bin"
ln -s "$GROVE" "$ROOT/bin/update-alternatives"
GUA=$ROOT/bin/update-alternatives

# The real one's answer: its first line's shape, and the dpkg series (1.21) grove is tested against.
expect_exit 0 "$UA" --version
expect_err_empty
ua_first=$(head -1 "$OUT")
[[ $ua_first =~ ^Debian\ update-alternatives\ version\ ([0-9]+\.[0-9]+)\.[0-9]+\.$ ]] ||
	fail "the real update-alternatives --version says: $ua_first"
series=${BASH_REMATCH[1]}
[[ $(sed -n 2p "$OUT") == "" ]] || fail "the real one's second line is not blank"

for args in "--version" "--version --bogus" "--quiet --version" "--display x --version" \
	"--version --help"; do
	# shellcheck disable=SC2086 # the words of $args are the arguments
	expect_exit 0 "$GUA" $args
	expect_err_empty
	first=$(head -1 "$OUT")
	[[ $first =~ ^Debian\ update-alternatives\ version\ ${series//./\\.}\.[0-9]+\.$ ]] ||
		fail "update-alternatives $args: first line '$first', not as '$ua_first'"
	[[ $(sed -n 2p "$OUT") == "" && $(wc -l <"$OUT") -ge 3 ]] || fail "update-alternatives $args: $(cat "$OUT")"
	expect_out_has "grove $("$GROVE" --version | awk '{print $NF}')"
	# shellcheck disable=SC2086
	run "$UA" $args
	((RC == 0)) || fail "the real update-alternatives $args: exit $RC"
done
check "update-alternatives --version: exit 0, dpkg's first line and format, before or after other options"

# An unknown option before it still fails, as in update-alternatives.
expect_exit 2 "$GUA" --bogus --version
run "$UA" --bogus --version
((RC == 2)) || fail "the real one: exit $RC"
check "an unknown option before --version is still a usage error (exit 2)"

expect_exit 0 "$GROVE" alt --version
expect_err_empty
[[ $(wc -l <"$OUT") == 1 ]] || fail "grove alt --version: $(cat "$OUT")"
v=$("$GROVE" --version | awk '{print $NF}')
expect_out_has "grove alt"
expect_out_has "$v"
expect_out_has "update-alternatives $series."
check "grove alt --version: exit 0, one line with grove's version and update-alternatives'"
