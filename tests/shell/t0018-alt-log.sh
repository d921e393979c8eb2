#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove alt --log takes what update-alternatives takes: /dev/null and other character devices, a
# regular file (appended), a missing folder (made); a folder or a path through a file is an error.
# Each case runs the real update-alternatives in a twin sandbox as the oracle.
source "$(dirname "$0")/lib.sh"
need_ua

G=$ROOT/g # grove's sandbox
U=$ROOT/u # update-alternatives'
for d in "$G" "$U"; do
	mkdir -p "$d/i/usr/bin" "$d/i/alt"
	mk_file "$d/i/opt/a" a
	mk_file "$d/i/opt/b" b
	mk_file "$d/file" f
	mkdir "$d/folder"
done

# Runs both with --log LOG (in each sandbox: @ is its folder) and the same command; stdout,
# stderr (the program's name aside) and the exit status must agree.
both()
{
	local log=$1 gl ul
	shift
	gl=${log//@/$G} ul=${log//@/$U}
	run "$GROVE" alt --altdir "$G/i/alt" --admindir "$G/adm" --instdir "$G/i" --log "$gl" \
		"${@//@/$G}"
	local grc=$RC gout gerr
	gout=$(sed "s|$G|@|g; s|^grove alt:|P:|" "$OUT")
	gerr=$(sed "s|$G|@|g; s|^grove alt:|P:|" "$ERR")
	run "$UA" --altdir "$U/i/alt" --admindir "$U/adm" --instdir "$U/i" --log "$ul" "${@//@/$U}"
	local uout uerr
	uout=$(sed "s|$U|@|g; s|^update-alternatives:|P:|" "$OUT")
	uerr=$(sed "s|$U|@|g; s|^update-alternatives:|P:|" "$ERR")
	[[ $grc == "$RC" ]] || fail "--log $log $*: grove exit $grc, update-alternatives $RC ($gerr | $uerr)"
	[[ $gout == "$uout" ]] || fail "--log $log $*: stdout differs: '$gout' vs '$uout'"
	[[ $gerr == "$uerr" ]] || fail "--log $log $*: stderr differs: '$gerr' vs '$uerr'"
}

both /dev/null --install @/i/usr/bin/x x @/i/opt/a 10
[[ $RC == 0 ]] || fail "update-alternatives refused --log /dev/null"
[[ $(readlink "$G/i/alt/x") == "$G/i/opt/a" ]] || fail "grove did not install with --log /dev/null"
[[ -c /dev/null ]] || fail "/dev/null is no longer a character device"
check "--log /dev/null: the install is done, exit 0, as update-alternatives"

both /dev/zero --install @/i/usr/bin/x x @/i/opt/b 20
[[ $RC == 0 && $(readlink "$G/i/alt/x") == "$G/i/opt/b" ]] || fail "--log /dev/zero refused"
check "--log /dev/zero (another character device) as update-alternatives"

both @/new/sub/log --set x @/i/opt/a
[[ -f $G/new/sub/log && -f $U/new/sub/log ]] || fail "the log's missing folders were not made"
diff <(sed -E "s/^[a-z -]+ [0-9-]+ [0-9:]+: //; s|$G|@|g" "$G/new/sub/log") \
	<(sed -E "s/^[a-z -]+ [0-9-]+ [0-9:]+: //; s|$U|@|g" "$U/new/sub/log") ||
	fail "the new log's lines differ (time stamps aside)"
check "--log in a missing folder: the folders are made and the lines written, as update-alternatives"

both @/new/sub/log --auto x
[[ $(grep -c 'run with' "$G/new/sub/log") == 2 ]] || fail "the log was not appended to"
check "--log appends to a regular file"

both @/folder --set x @/i/opt/a
[[ $RC == 2 ]] || fail "update-alternatives accepted a folder as its log"
both @/file/log --set x @/i/opt/a
[[ $RC == 2 ]] || fail "update-alternatives accepted a log beneath a file"
[[ $(readlink "$G/i/alt/x") == "$G/i/opt/b" ]] || fail "grove changed the group despite a bad --log"
check "--log naming a folder or a path through a file: exit 2 with update-alternatives' message"
