#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove alt import takes over the groups the real update-alternatives made: no link changes, and
# afterwards grove's --query, --display and --get-selections say what update-alternatives says;
# the import is one transaction that `grove undo` forgets; a corrupt file stops it, nothing taken.
source "$(dirname "$0")/lib.sh"

need_ua

I=$ROOT/i
ADM=$ROOT/adm
mkdir -p "$I/bin" "$I/man" "$I/alt" "$ADM"
for f in ed ed.1 red vi vi.1 nvi; do mk_file "$I/opt/$f" "$f"; done
ua()
{
	"$UA" --altdir "$I/alt" --admindir "$ADM" --log "$ROOT/ua.log" "$@" >/dev/null
}
GA=(alt --altdir "$I/alt" --admindir "$ADM" --instdir "$I")
ua --install "$I/bin/ed" ed "$I/opt/ed" 10 --slave "$I/man/ed.1" ed.1 "$I/opt/ed.1"
ua --install "$I/bin/ed" ed "$I/opt/red" 20
ua --install "$I/bin/vi" vi "$I/opt/vi" 30 --slave "$I/man/vi.1" vi.1 "$I/opt/vi.1"
ua --install "$I/bin/vi" vi "$I/opt/nvi" 40
ua --set vi "$I/opt/vi"
snapshot "$I"

expect_exit 0 "$GROVE" "${GA[@]}" import
expect_out_has "grove alt: took over 2 link groups from $ADM"
expect_unchanged "$I"
check "import changes no link"

for g in ed vi; do
	for cmd in --query --display --list; do
		"$UA" --altdir "$I/alt" --admindir "$ADM" "$cmd" "$g" >"$ROOT/ua.out"
		expect_exit 0 "$GROVE" "${GA[@]}" "$cmd" "$g"
		diff "$ROOT/ua.out" "$OUT" || fail "$cmd $g differs after import (- update-alternatives, + grove)"
	done
done
"$UA" --altdir "$I/alt" --admindir "$ADM" --get-selections >"$ROOT/ua.out"
expect_exit 0 "$GROVE" "${GA[@]}" --get-selections
diff "$ROOT/ua.out" "$OUT" || fail "--get-selections differs after import"
check "after import --query, --display, --list and --get-selections match update-alternatives"

# grove now manages them: --auto vi switches to the best choice, its followers with it.
expect_exit 0 "$GROVE" "${GA[@]}" --auto vi
[[ $(readlink "$I/alt/vi") == "$I/opt/nvi" && ! -e $I/alt/vi.1 && ! -L $I/man/vi.1 ]] ||
	fail "--auto vi after import did not switch vi and drop its follower"
expect_exit 0 "$GROVE" undo -t "$I"
[[ $(readlink "$I/alt/vi") == "$I/opt/vi" && $(readlink "$I/alt/vi.1") == "$I/opt/vi.1" ]] ||
	fail "undo of --auto did not put vi back"
check "imported groups are grove's: a switch and its undo"

# Undoing the import forgets the groups (and changes no link).
snapshot "$I"
expect_exit 0 "$GROVE" undo -t "$I"
expect_unchanged "$I"
expect_exit 2 "$GROVE" "${GA[@]}" --query ed
expect_err_has "no alternatives for ed"
check "undo of the import forgets the groups, links untouched"

# A corrupt file: update-alternatives' words, exit 2, nothing taken over.
printf 'auto\n%s\n\n%s\nten\n\n' "$I/bin/xx" "$I/opt/ed" >"$ADM/xx"
expect_exit 2 "$GROVE" "${GA[@]}" import
expect_err_has "grove alt: error: $ADM/xx corrupt: priority of $I/opt/ed: ten"
expect_exit 2 "$GROVE" "${GA[@]}" --query ed
check "a corrupt admin file stops the import before anything is taken over"
