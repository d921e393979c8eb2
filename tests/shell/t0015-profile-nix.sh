#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove profile delete means what nix-env --delete-generations means (issue 16). Each case below
# was measured with nix-env 2.8 (Debian's nix-bin) on a private profile; grove must give the same
# survivors. When nix-env is installed, it is run on the same generations too, so the table is
# checked against the real tool rather than trusted.
source "$(dirname "$0")/lib.sh"

S=$ROOT/stow
mk_file "$S/a/bin/a" "a"
mk_file "$S/b/bin/b" "b"

# Five generations, generation i built (10 - i) days and 12 hours ago, kept as a template.
T=$ROOT/template
for i in 1 2 3 4 5; do
	mk_file "$S/p$i/share/p$i" "$i"
	expect_exit 0 "$GROVE" profile -p "$T/main" build -d "$S" "p$i"
done
now=$(date +%s)
for i in 1 2 3 4 5; do
	sed -i "s/^time .*/time $((now - (10 - i) * 86400 - 43200))/" "$T/main.generations/$i/.grove-generation"
done

have_nix=false
if command -v nix-env >/dev/null 2>&1; then
	have_nix=true
	NIXTMP=$ROOT/nix
	mkdir -p "$NIXTMP/state" "$NIXTMP/store"
fi

# survivors DIR NAME: the generation links left in DIR, as "1 2 3".
survivors()
{
	find "$1" -maxdepth 1 -type l -name "$2-*-link" -printf '%f\n' |
		sed "s/^$2-\([0-9]*\)-link\$/\1/" | sort -n | tr '\n' ' ' | sed 's/ $//'
}

# case CURRENT "ARGS" RC "SURVIVORS"
case_()
{
	local cur=$1 args=$2 want_rc=$3 want=$4 got
	rm -rf "$ROOT/g" && cp -a "$T" "$ROOT/g"
	if [[ $(readlink "$ROOT/g/main") != "main-$cur-link" ]]; then
		expect_exit 0 "$GROVE" profile -p "$ROOT/g/main" switch "$cur"
	fi
	# shellcheck disable=SC2086
	run "$GROVE" profile -p "$ROOT/g/main" delete $args
	got=$(survivors "$ROOT/g" main)
	if [[ $RC != "$want_rc" || $got != "$want" ]]; then
		_lib_show_run
		fail "current $cur, delete $args: grove left '$got' (exit $RC), nix-env leaves '$want' (exit $want_rc)"
	fi
	if $have_nix; then
		rm -rf "$NIXTMP/p" && mkdir "$NIXTMP/p"
		for i in 1 2 3 4 5; do
			ln -s "/nix/store/none-$i" "$NIXTMP/p/prof-$i-link"
			touch -h -d "@$((now - (10 - i) * 86400 - 43200))" "$NIXTMP/p/prof-$i-link"
		done
		ln -s "prof-$cur-link" "$NIXTMP/p/prof"
		# shellcheck disable=SC2086
		NIX_STATE_DIR=$NIXTMP/state NIX_STORE_DIR=$NIXTMP/store NIX_CONF_DIR=$NIXTMP \
			run nix-env -p "$NIXTMP/p/prof" --delete-generations $args
		got=$(survivors "$NIXTMP/p" prof)
		[[ $got == "$want" ]] || fail "nix-env itself left '$got' for current $cur, delete $args"
		if [[ ($want_rc == 0 && $RC != 0) || ($want_rc != 0 && $RC == 0) ]]; then
			fail "nix-env exit $RC for current $cur, delete $args"
		fi
	fi
}

# Explicit numbers: one that names no generation is ignored; the current one refuses it all.
case_ 3 "1 9" 0 "2 3 4 5"
case_ 3 "1 3" 1 "1 2 3 4 5"
case_ 3 "2 4" 0 "1 3 5"
check "delete N…: missing numbers ignored, the current one refused whole (as nix-env)"

# +N: newer generations stay; the current one is the first of the N kept.
case_ 3 "+2" 0 "2 3 4 5"
case_ 3 "+1" 0 "3 4 5"
case_ 3 "+9" 0 "1 2 3 4 5"
case_ 5 "+2" 0 "4 5"
case_ 1 "+1" 0 "1 2 3 4 5"
case_ 3 "+0" 2 "1 2 3 4 5"
check "delete +N: keeps the current one, N - 1 older ones and every newer one (as nix-env)"

# Nd: the newest generation built before the cutoff stays (the profile as it was N days ago).
case_ 3 "6d" 0 "3 4 5"
case_ 3 "8d" 0 "2 3 4 5"
case_ 3 "7d" 0 "3 4 5"
case_ 3 "1d" 0 "3 5"
case_ 5 "1d" 0 "5"
case_ 3 "100d" 0 "1 2 3 4 5"
check "delete Nd: older generations go, but not the one that was current N days ago (as nix-env)"

case_ 3 "old" 0 "3"
case_ 1 "old" 0 "1"
check "delete old: all but the current one (as nix-env)"

$have_nix && echo "# compared with $(nix-env --version)" || echo "# nix-env not installed: checked against the recorded table only"
