#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove alt reads again only the admin files that changed since it took them in (issue 38 item
# 7): a --set among twelve groups opens its own group's file and the one the command before it
# wrote, no other; and still sees every change right away, in the same tick as its last look:
# update-alternatives' --set (a file renamed over the old one), --install of a new group,
# --remove-all, and a file edited in place keeping its size.
source "$(dirname "$0")/lib.sh"

need_ua
command -v strace >/dev/null || fail "strace is needed (apt-get install strace)"

G=$ROOT/g
mkdir -p "$G/i/bin" "$G/i/alt" "$G/adm" "$G/i/opt"
gr()
{
	"$GROVE" alt --altdir "$G/i/alt" --admindir "$G/adm" --instdir "$G/i" "$@"
}
ua_g()
{
	"$UA" --altdir "$G/i/alt" --admindir "$G/adm" --log "$G/log" "$@"
}
for n in $(seq 1 12); do
	for c in a b; do mk_file "$G/i/opt/g$n-$c" "g$n-$c"; done
	ua_g --install "$G/i/bin/g$n" "g$n" "$G/i/opt/g$n-a" 10 >/dev/null
	ua_g --install "$G/i/bin/g$n" "g$n" "$G/i/opt/g$n-b" 20 >/dev/null
done
# What update-alternatives reads from the admindir, against what grove reads.
same_selections()
{
	local u
	u=$(ua_g --get-selections) || fail "$1: update-alternatives --get-selections failed"
	expect_exit 0 gr --get-selections
	[[ $(cat "$OUT") == "$u" ]] ||
		fail "$1: grove reads '$(cat "$OUT")', update-alternatives '$u'"
}

# A file is known unchanged by its stamp only once the coarse clock (which stamps files) has moved
# past its change time (git's "racily clean" rule, src/alt/alt_admin.c's stamp_settled): a command
# that starts in the same tick as a change reads that file again. settled waits for exactly
# that condition on every admin file, so that what the next command may skip does not depend on
# how fast the machine runs the commands.
settled()
{
	"$GROVE_TEST_PY" - "$G/adm" <<'PY' || fail "the coarse clock did not pass the admin files' change times"
import os, sys, time
d = sys.argv[1]
newest = max(os.lstat(os.path.join(d, f)).st_ctime_ns for f in os.listdir(d))
deadline = time.monotonic() + 10
while time.clock_gettime_ns(5) <= newest:  # 5: CLOCK_REALTIME_COARSE (Linux)
    if time.monotonic() > deadline:
        sys.exit(1)
    time.sleep(0.001)
PY
}

# Two commands take everything in (the second the file the first wrote); the third reads its own
# group's file and the one the second wrote.
settled
expect_exit 0 gr --set g1 "$G/i/opt/g1-a"
settled
expect_exit 0 gr --set g2 "$G/i/opt/g2-a"
settled
# (LeakSanitizer does not run under ptrace)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -f -qq -o "$ROOT/set.strace" -e trace=open,openat,openat2 \
		"$GROVE" alt --altdir "$G/i/alt" --admindir "$G/adm" --instdir "$G/i" \
			--set g3 "$G/i/opt/g3-a" >/dev/null 2>&1 || fail "grove alt --set g3 under strace failed"
read_files=$(grep -o '"g[0-9]*"' "$ROOT/set.strace" | sort -u | tr -d '"' | tr '\n' ' ')
[[ $read_files == "g2 g3 " || $read_files == "g3 " ]] ||
	fail "--set g3 opened the admin files '$read_files', not only g3's and g2's"
check "a command reads only the admin files changed since grove last took them in"

# Right after a grove command, in the same tick: every change is seen.
expect_exit 0 gr --set g4 "$G/i/opt/g4-a"
ua_g --set g5 "$G/i/opt/g5-a" >/dev/null
same_selections "update-alternatives --set"
expect_exit 0 gr --set g4 "$G/i/opt/g4-b"
mk_file "$G/i/opt/g13-a" g13-a
ua_g --install "$G/i/bin/g13" g13 "$G/i/opt/g13-a" 5 >/dev/null
ua_g --remove-all g6 >/dev/null
same_selections "update-alternatives --install and --remove-all"
check "a change update-alternatives makes in the same tick is seen"

# A file edited in place, its size kept (g7's priorities 10 and 20 become 30 and 20): the next
# command takes the change in (a logged transaction of its own) and goes on from it.
expect_exit 0 gr --set g8 "$G/i/opt/g8-a"
n_txn=$("$GROVE" log -t "$G/i" | grep -c .)
python3 - "$G/adm/g7" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    text = f.read()
    new = text.replace(b"\n10\n", b"\n30\n")
    assert new != text and len(new) == len(text)
    f.seek(0)
    f.write(new)
PY
expect_exit 0 gr --set g8 "$G/i/opt/g8-b"
[[ $("$GROVE" log -t "$G/i" | grep -c .) -eq $((n_txn + 2)) ]] ||
	fail "the in-place edit of g7's admin file was not taken in"
expect_exit 0 gr --query g7
expect_out_has "Priority: 30"
check "an admin file edited in place, its size kept, is taken in"
