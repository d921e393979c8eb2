#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# While generations switch, a reader resolving a path both generations provide through the
# user's link (~/.grove-profile -> profile -> NAME-N-link -> folder -> package) never fails. One
# generation has bin/ folded into a package, the other a folder of links: the switch is one
# rename of the profile link, so neither shape is ever seen half-made.
source "$(dirname "$0")/lib.sh"
: "${PROFILE_READER:?PROFILE_READER must name the reader helper}"

S=$ROOT/stow
SWITCHES=${PROFILE_READER_SWITCHES:-40}
mk_file "$S/one/bin/tool" "tool one"
mk_file "$S/two/bin/tool" "tool two"
mk_file "$S/extra/bin/extra" "extra"

expect_exit 0 "$GROVE" profile -d "$S" build one
expect_exit 0 "$GROVE" profile -d "$S" build two extra
[[ -L $GROVE_STATE_DIR/profiles/default.generations/1/bin ]] || fail "generation 1 has no folded bin"
[[ -d $GROVE_STATE_DIR/profiles/default.generations/2/bin && ! -L $GROVE_STATE_DIR/profiles/default.generations/2/bin ]] ||
	fail "generation 2 has no bin folder"
[[ $(cat "$HOME/.grove-profile/bin/tool") == "tool two" ]] || fail "the user's link does not resolve"

flag=$ROOT/done
"$PROFILE_READER" "$HOME/.grove-profile/bin/tool" "$flag" "tool one" "tool two" >"$ROOT/reader.out" &
reader=$!
for ((i = 0; i < SWITCHES; i++)); do
	expect_exit 0 "$GROVE" profile switch 1
	expect_exit 0 "$GROVE" profile switch 2
done
touch "$flag"
wait "$reader" || fail "the reader failed"
read -r reads misses wrong <"$ROOT/reader.out"
((reads > 2 * SWITCHES)) || fail "the reader only read $reads times: the test proves nothing"
((misses == 0)) || fail "bin/tool failed to resolve $misses times out of $reads reads"
((wrong == 0)) || fail "bin/tool had unexpected content $wrong times out of $reads reads"
expect_exit 0 "$GROVE" log -t "$GROVE_STATE_DIR/profiles/default.generations"
[[ $(grep -c committed "$OUT") == $((2 * SWITCHES + 2)) ]] || fail "not every switch was a committed transaction"
check "during $((2 * SWITCHES)) switches a reader never failed to resolve bin/tool ($reads reads)"
