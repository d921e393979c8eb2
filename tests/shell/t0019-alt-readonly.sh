#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove alt's read-only commands (--get-selections, --query, --display, --list) create nothing —
# no admindir, no state dir, no journal row — and answer as update-alternatives does for a
# missing --root, $DPKG_ROOT, --admindir or $DPKG_ADMINDIR (the real one is the oracle).
source "$(dirname "$0")/lib.sh"
need_ua

S=$ROOT/state
export GROVE_STATE_DIR=$S
W=$ROOT/w # the folder every case points into
mkdir -p "$W"

# Every entry beneath $ROOT (the sandbox and grove's state dir), with size and mtime.
tree_now()
{
	find "$ROOT" -printf '%y %p %s %T@\n' | sort
}

# Runs grove alt and update-alternatives with the same environment (VAR=VALUE words first) and
# arguments; exit status and output (the program's name aside) must agree, and neither may create
# or change anything.
same_and_nothing_made()
{
	local envs=() before after gout gerr grc
	while [[ $1 == *=* ]]; do
		envs+=("$1")
		shift
	done
	before=$(tree_now)
	run env "${envs[@]}" "$GROVE" alt "$@"
	grc=$RC
	gout=$(cat "$OUT")
	gerr=$(sed 's/^grove alt:/P:/' "$ERR")
	after=$(tree_now)
	[[ $before == "$after" ]] ||
		fail "grove alt ${envs[*]} $*: made or changed something: $(diff <(echo "$before") <(echo "$after"))"
	run env "${envs[@]}" "$UA" "$@"
	[[ $(tree_now) == "$after" ]] || fail "update-alternatives ${envs[*]} $* made something"
	[[ $grc == "$RC" ]] || fail "${envs[*]} $*: grove exit $grc, update-alternatives $RC"
	[[ $gout == "$(cat "$OUT")" ]] || fail "${envs[*]} $*: stdout differs: '$gout'"
	[[ $gerr == "$(sed 's/^update-alternatives:/P:/' "$ERR")" ]] ||
		fail "${envs[*]} $*: stderr differs: '$gerr' vs '$(cat "$ERR")'"
}

readers=("--get-selections" "--query x" "--display x" "--list x")

for cmd in "${readers[@]}"; do
	# shellcheck disable=SC2086 # the command's words
	same_and_nothing_made --admindir "$W/no-adm" --altdir "$W/alt" $cmd
	# shellcheck disable=SC2086
	same_and_nothing_made --root "$W/no-root" $cmd
	# shellcheck disable=SC2086
	same_and_nothing_made DPKG_ROOT="$W/no-root" $cmd
	# shellcheck disable=SC2086
	same_and_nothing_made DPKG_ROOT="$W/no-root" DPKG_ADMINDIR="$W/no-adm" $cmd
	# shellcheck disable=SC2086
	same_and_nothing_made DPKG_ADMINDIR="$W/no-adm" --altdir "$W/alt" $cmd
done
# A group update-alternatives made, and no journal at all: the admin files alone answer.
mkdir -p "$W/i3/usr/bin" "$W/i3/opt" "$W/i3/alt" "$W/adm3"
mk_file "$W/i3/opt/a" a
"$UA" --admindir "$W/adm3" --altdir "$W/i3/alt" --instdir "$W/i3" --log /dev/null \
	--install "$W/i3/usr/bin/x" x "$W/i3/opt/a" 5 >/dev/null || fail "update-alternatives --install failed"
for cmd in "${readers[@]}"; do
	# shellcheck disable=SC2086
	same_and_nothing_made --admindir "$W/adm3" --altdir "$W/i3/alt" --instdir "$W/i3" $cmd
done
grep -q "^Value: $W/i3/opt/a" <("$GROVE" alt --admindir "$W/adm3" --altdir "$W/i3/alt" --instdir "$W/i3" --query x) ||
	fail "grove alt --query without a journal did not read update-alternatives' group"
[[ ! -e $S ]] || fail "the state dir was made"
check "readers on a missing admindir or root without a state dir: update-alternatives' answer, nothing made; update-alternatives' groups read from the admin files alone"

# With a journal that knows another admindir: still nothing registered or made.
mkdir -p "$W/i/usr/bin" "$W/i/opt"
mk_file "$W/i/opt/a" a
expect_exit 0 "$GROVE" alt --admindir "$W/adm1" --altdir "$W/i/alt" --instdir "$W/i" \
	--install "$W/i/usr/bin/x" x "$W/i/opt/a" 1
mkdir "$W/adm2" "$W/R"
for cmd in "${readers[@]}"; do
	# shellcheck disable=SC2086
	same_and_nothing_made --admindir "$W/adm2" --altdir "$W/i/alt" $cmd
	# shellcheck disable=SC2086
	same_and_nothing_made --admindir "$W/no-adm" --altdir "$W/i/alt" $cmd
	# shellcheck disable=SC2086
	same_and_nothing_made --root "$W/R" $cmd
done
check "readers on an empty or missing admindir with a journal: update-alternatives' answer, nothing made"
