#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove switch OLD NEW: one transaction, and a file both packages provide is replaced in place,
# never missing, while a reader resolves it in a loop.
source "$(dirname "$0")/lib.sh"

S=$ROOT/stow
T=$ROOT/target
mk_file "$S/old/bin/tool" "old tool"
mk_file "$S/old/share/doc/old.txt" "old doc"
mk_file "$S/new/bin/tool" "new tool"
mk_file "$S/new/share/doc/new.txt" "new doc"
mk_file "$S/other/bin/other" "other"
mkdir -p "$T"

expect_exit 0 "$GROVE" stow -d "$S" -t "$T" old other
expect_exit 0 "$GROVE" switch -d "$S" -t "$T" old new
expect_tree "$T" <<'SPEC'
d bin
l bin/other -> ../../stow/other/bin/other
l bin/tool -> ../../stow/new/bin/tool
l share -> ../stow/new/share
SPEC
expect_exit 0 "$GROVE" log -t "$T"
[[ $(grep -c committed "$OUT") == 2 ]] || fail "switch did not make exactly one transaction"
expect_out_has "grove switch -d"
check "switch unstows OLD and stows NEW in one transaction"

expect_exit 0 "$GROVE" undo -t "$T"
expect_tree "$T" <<'SPEC'
d bin
l bin/other -> ../../stow/other/bin/other
l bin/tool -> ../../stow/old/bin/tool
l share -> ../stow/old/share
SPEC
check "undo of a switch puts OLD back"

# A reader resolves bin/tool as fast as it can while grove switches back and forth; it must
# never find the path missing. The reader stops when the switching is over (a flag file), so
# the loop is bounded by the number of switches, not by time.
flag=$ROOT/done
"$GROVE_TEST_PY" - "$T/bin/tool" "$flag" >"$ROOT/reader.out" <<'PY' &
import os, sys
path, flag = sys.argv[1], sys.argv[2]
reads = misses = 0
while not os.path.exists(flag):
    try:
        with open(path) as f:
            f.read()
    except OSError:
        misses += 1
    reads += 1
print(reads, misses)
PY
reader=$!
for i in $(seq 1 20); do
    expect_exit 0 "$GROVE" switch -d "$S" -t "$T" old new
    expect_exit 0 "$GROVE" switch -d "$S" -t "$T" new old
done
touch "$flag"
wait "$reader"
read -r reads misses <"$ROOT/reader.out"
((reads > 40)) || fail "the reader only read $reads times: the test proves nothing"
((misses == 0)) || fail "bin/tool was missing $misses times out of $reads reads during switches"
check "during 40 switches a reader never found bin/tool missing ($reads reads)"
