#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove run under the name update-alternatives (a link to it, as dpkg-divert puts it in place) acts
# as grove alt and speaks as update-alternatives: the same stdout, stderr, exit status and --log
# lines, byte for byte (time stamps aside), as the real one in a twin sandbox.
source "$(dirname "$0")/lib.sh"
need_ua

mkdir -p "$ROOT/bin"
ln -s "$GROVE" "$ROOT/bin/update-alternatives"
GUA=$ROOT/bin/update-alternatives

G=$ROOT/g U=$ROOT/u
for d in "$G" "$U"; do
	mkdir -p "$d/i/usr/bin" "$d/i/alt" "$d/i/usr/share/man"
	for c in a b; do
		mk_file "$d/i/opt/$c/ed" "ed-$c"
		mk_file "$d/i/opt/$c/ed.1" "man-$c"
	done
done

steps=0
# Both with the same arguments (@ is the sandbox); everything they print must be the same.
same()
{
	local input=${STDIN:-} grc
	run "$GUA" --altdir "$G/i/alt" --admindir "$G/adm" --instdir "$G/i" --log "$G/log" \
		"${@//@/$G}" <<<"$input"
	grc=$RC
	sed "s|$G|@|g" "$OUT" >"$ROOT/g.out"
	sed "s|$G|@|g" "$ERR" >"$ROOT/g.err"
	run "$UA" --altdir "$U/i/alt" --admindir "$U/adm" --instdir "$U/i" --log "$U/log" \
		"${@//@/$U}" <<<"$input"
	[[ $grc == "$RC" ]] || fail "$*: exit $grc, update-alternatives $RC"
	diff <(sed "s|$U|@|g" "$OUT") "$ROOT/g.out" >&2 || fail "$*: stdout differs (- ua, + grove)"
	diff <(sed "s|$U|@|g" "$ERR") "$ROOT/g.err" >&2 || fail "$*: stderr differs (- ua, + grove)"
	steps=$((steps + 1))
}

same --install @/i/usr/bin/ed ed @/i/opt/a/ed 10 --slave @/i/usr/share/man/ed.1 ed.1 @/i/opt/a/ed.1
same --verbose --install @/i/usr/bin/ed ed @/i/opt/b/ed 20 \
	--slave @/i/usr/share/man/ed.1 ed.1 @/i/opt/b/ed.1
same --set ed @/i/opt/a/ed
same --display ed
same --query ed
same --list ed
same --get-selections
same --auto ed
same --set ed @/i/opt/nope/ed
same --query nosuch
same --install @/i/usr/bin/ed 'bad name' @/i/opt/a/ed 1
same --frobnicate
STDIN="ed manual $U/i/opt/a/ed" same --set-selections
same --remove ed @/i/opt/a/ed
same --remove-all ed
[[ $(readlink "$G/i/usr/bin/ed") == "" && ! -e $G/i/alt/ed ]] || fail "grove left the group's links"
check "$steps commands print as update-alternatives prints them, word for word"

diff <(sed -E "s/ [0-9-]+ [0-9:]+: /: /; s|$U|@|g" "$U/log") \
	<(sed -E "s/ [0-9-]+ [0-9:]+: /: /; s|$G|@|g" "$G/log") >&2 ||
	fail "the --log files differ (time stamps aside; - update-alternatives, + grove)"
grep -q '^update-alternatives [0-9-]* [0-9:]*: run with ' "$G/log" || fail "no 'run with' line"
check "--log lines carry update-alternatives' name"

expect_exit 0 "$GUA" --altdir "$G/i/alt" --admindir "$G/adm" --instdir "$G/i" --install \
	"$G/i/usr/bin/ed" ed "$G/i/opt/a/ed" 1
expect_exit 0 "$GROVE" log -t "$G/i"
expect_out_has "--install $G/i/usr/bin/ed ed $G/i/opt/a/ed 1"
check "a change made as update-alternatives is in grove's journal (grove log)"

# docs/alternatives.md's recipe, in a sandbox root: divert, link, use, take out.
T=$ROOT/sys
mkdir -p "$T/usr/bin" "$T/var/lib/dpkg" "$T/opt"
cp "$UA" "$T/usr/bin/update-alternatives"
: >"$T/var/lib/dpkg/diversions"
mk_file "$T/opt/vi" vi
expect_exit 0 dpkg-divert --root "$T" --local --rename \
	--divert /usr/bin/update-alternatives.distrib --add /usr/bin/update-alternatives
ln -s "$GROVE" "$T/usr/bin/update-alternatives"
expect_exit 0 "$T/usr/bin/update-alternatives" --root "$T" --install /usr/bin/vi vi /opt/vi 1
expect_out_has "update-alternatives: using /opt/vi to provide /usr/bin/vi (vi) in auto mode"
[[ $(readlink "$T/etc/alternatives/vi") == /opt/vi ]] || fail "the diverted name did not run grove"
rm "$T/usr/bin/update-alternatives"
expect_exit 0 dpkg-divert --root "$T" --local --rename --remove /usr/bin/update-alternatives
cmp -s "$UA" "$T/usr/bin/update-alternatives" || fail "the real update-alternatives is not back"
check "the dpkg-divert recipe puts grove in place as update-alternatives and takes it out again"
