#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# --set-selections reads its lines as update-alternatives 1.21 does, into 1,024 bytes (issue 37
# item 8): a line of up to 1,022 bytes and its newline is read, a longer one is "too long" (exit
# 2), and so is a line holding a NUL byte or a last line without its newline; compared with the
# real update-alternatives. And grove holds no more of a line than that: a 64 MiB line without a
# newline ends the command with the same error while grove's memory stays small.
source "$(dirname "$0")/lib.sh"

need_ua

U=$ROOT/u
G=$ROOT/g
for s in "$U" "$G"; do
	mkdir -p "$s/i/bin" "$s/i/alt" "$s/adm"
	mk_file "$s/i/opt/a" a
	mk_file "$s/i/opt/b" b
done
ua()
{
	"$UA" --altdir "$U/i/alt" --admindir "$U/adm" --log "$U/log" "$@"
}
gr()
{
	"$GROVE" alt --altdir "$G/i/alt" --admindir "$G/adm" --instdir "$G/i" "$@"
}
for s in a b; do
	ua --install "$U/i/bin/x" x "$U/i/opt/$s" 1 >/dev/null
	expect_exit 0 gr --install "$G/i/bin/x" x "$G/i/opt/$s" 1
done
# A line of LEN bytes before its newline ("x manual PATH" padded with blanks before the path,
# which update-alternatives skips), then "x auto" (shows whether reading went on). With NUL,
# a NUL byte in the padding; with CUT, no newline at the end.
line()
{
	local s=$1 len=$2 how=${3:-} pad
	local path="$s/i/opt/a"
	pad=$((len - 9 - ${#path}))
	{
		printf 'x manual'
		if [[ $how == nul ]]; then
			printf ' \0'
			pad=$((pad - 1))
		fi
		printf '%*s' "$pad" ''
		printf ' %s' "$path"
		[[ $how == cut ]] || printf '\nx auto\n'
	} >"$ROOT/in.$len$how"
}
n=0
for c in 100 1021 1022 1023 1024 3000 100nul 1022nul 40cut; do
	len=${c%%[a-z]*} how=${c#"$len"}
	urc=0 grc=0
	line "$U" "$len" "$how"
	ua --set-selections <"$ROOT/in.$len$how" >"$ROOT/u.out" 2>&1 || urc=$?
	line "$G" "$len" "$how"
	gr --set-selections <"$ROOT/in.$len$how" >"$ROOT/g.out" 2>&1 || grc=$?
	((urc == grc)) || fail "a line of $len bytes $how: update-alternatives exited $urc, grove $grc: $(cat "$ROOT/g.out")"
	sed -e "s|$U/|@/|g" -e 's/update-alternatives/PROG/g' "$ROOT/u.out" >"$ROOT/u.norm"
	sed -e "s|$G/|@/|g" -e 's/grove alt/PROG/g' "$ROOT/g.out" >"$ROOT/g.norm"
	diff "$ROOT/u.norm" "$ROOT/g.norm" >"$ROOT/out.diff" ||
		fail "a line of $len bytes $how: output differs (- update-alternatives, + grove alt):"$'\n'"$(cat "$ROOT/out.diff")"
	[[ $(readlink "$U/i/alt/x" | sed "s|$U/|@/|") == "$(readlink "$G/i/alt/x" | sed "s|$G/|@/|")" ]] ||
		fail "a line of $len bytes $how: the links differ"
	n=$((n + 1))
done
check "$n --set-selections inputs with long lines, NUL bytes and a cut last line: update-alternatives' output, status and links"

# 64 MiB without a newline: read no further than a line's bound.
rss=$( { head -c $((64 << 20)) /dev/zero | tr '\0' 'a' |
	/usr/bin/time -f '%M' "$GROVE" alt --altdir "$G/i/alt" --admindir "$G/adm" --instdir "$G/i" \
		--set-selections >/dev/null 2>"$ROOT/err"; } 2>&1; tail -n 1 "$ROOT/err")
grep -q "line too long or not terminated while trying to read <standard input>" "$ROOT/err" ||
	fail "a 64 MiB line: not update-alternatives' error: $(head -c 300 "$ROOT/err")"
((rss < 32768)) || fail "a 64 MiB line: grove's peak memory was $rss KiB (it holds the line)"
check "a 64 MiB line is refused without being held in memory (peak $rss KiB)"
