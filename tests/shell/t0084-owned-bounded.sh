#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `grove status` and `grove verify` in bounded memory (issue 41 item 2): what grove owns is read
# from the log in order (docs/journal.md, "What grove owns, read in order") and the target
# checked folder by folder, so their peak memory does not grow with the links; and whichever way
# the log is read (its runs merged, every run read back, or the whole map), the output is the
# same.
source "$(dirname "$0")/lib.sh"

# ASan's allocator keeps what is freed in quarantine: without it, its peak is what is live.
MEASURED_ASAN=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0

# farm DIR FOLDERS FILES: a package of FOLDERS x FILES files stowed without folding into DIR/t
# (one link per file), with its own log in DIR/state.
farm()
{
	local d=$1 i
	mkdir -p "$d/stow/big" "$d/t"
	for i in $(seq -w 1 "$2"); do
		mkdir "$d/stow/big/d$i"
		(cd "$d/stow/big/d$i" && eval "touch f{1..$3}")
	done
	expect_exit 0 "$GROVE" --state "$d/state" stow --no-folding -d "$d/stow" -t "$d/t" big
}

# peak CMD…: the peak RSS (KiB) of grove CMD (exit 0).
peak()
{
	local kib
	kib=$({ ASAN_OPTIONS=$MEASURED_ASAN /usr/bin/time -f '%M' "$GROVE" "$@" >/dev/null 2>"$ROOT/peak.err"; } 2>&1 &&
		tail -n 1 "$ROOT/peak.err") || fail "grove $*: failed: $(cat "$ROOT/peak.err")"
	echo "$kib"
}

farm "$ROOT/small" 2 100
farm "$ROOT/large" 40 1000
for cmd in status verify; do
	s=$(peak --state "$ROOT/small/state" "$cmd" -t "$ROOT/small/t")
	l=$(peak --state "$ROOT/large/state" "$cmd" -t "$ROOT/large/t")
	# The map of every entry cost ~160 bytes per link: 40,000 links, ~6,400 KiB more. (SQLite's page
	# cache, up to 2 MiB, fills with the larger log.)
	((l - s < 4096)) ||
		fail "grove $cmd: peak $s KiB at 200 links, $l KiB at 40,000: it grows with the links"
	echo "# $cmd: peak $s KiB at 200 links, $l KiB at 40,000"
done
expect_exit 0 "$GROVE" --state "$ROOT/large/state" verify -t "$ROOT/large/t"
expect_out_has "verified 40040 entries: 0 missing, 0 changed, 0 broken, 0 foreign"
check "status and verify of 40,000 links take the memory of 200 (peaks within 4 MiB: the log's page cache is 2)"

# A history with folds, unfolds, undo, rollback and drift: the same output whichever way the log
# is read (GROVE_OWNED_RUN: runs of 1 or 3 ops read back from the log, 0 the whole map).
H=$ROOT/history
mkdir -p "$H/t"
for p in p q r; do
	for d in a/b a/c x; do mk_file "$H/stow/$p/$d/f-$p" "$p"; done
	mk_file "$H/stow/$p/top-$p" "$p"
done
mk_file "$H/stow/q/a/b/only-q" q
G=("$GROVE" --state "$H/state")
quiet() { "$@" >/dev/null 2>&1 || true; }
quiet "${G[@]}" stow -d "$H/stow" -t "$H/t" p
quiet "${G[@]}" stow -d "$H/stow" -t "$H/t" q
quiet "${G[@]}" stow --no-folding -d "$H/stow" -t "$H/t" r
quiet "${G[@]}" unstow -d "$H/stow" -t "$H/t" q
quiet "${G[@]}" undo -t "$H/t"
quiet env GROVE_PLAN_BUDGET=1 "${G[@]}" unstow -d "$H/stow" -t "$H/t" p
quiet "${G[@]}" rollback --to 4 -t "$H/t"
quiet "${G[@]}" restow -d "$H/stow" -t "$H/t" q
# Drift, in real folders only (find does not follow the folded links): a link removed, one
# replaced, a file added beside a third.
mapfile -t links < <(find "$H/t" -mindepth 2 -type l | sort)
((${#links[@]} >= 3)) || fail "the history left fewer than 3 links in folders: ${links[*]}"
rm "${links[0]}"
rm "${links[1]}"
ln -s elsewhere "${links[1]}"
mk_file "$(dirname "${links[2]}")/mine" mine
for cmd in status verify "--json status" "--json verify" "status -d $H/stow"; do
	rc0=0
	# shellcheck disable=SC2086
	GROVE_OWNED_RUN=0 "${G[@]}" $cmd -t "$H/t" >"$H/map.out" 2>"$H/map.err" || rc0=$?
	for mode in 1 3 ""; do
		rc=0
		# shellcheck disable=SC2086
		GROVE_OWNED_RUN=$mode "${G[@]}" $cmd -t "$H/t" >"$H/run.out" 2>"$H/run.err" || rc=$?
		((rc == rc0)) || fail "grove $cmd: exit $rc read in runs ($mode), $rc0 from the map"
		diff -u "$H/map.out" "$H/run.out" ||
			fail "grove $cmd: the output read in runs ($mode) differs from the map's"
		diff -u "$H/map.err" "$H/run.err" ||
			fail "grove $cmd: the messages read in runs ($mode) differ from the map's"
	done
done
GROVE_OWNED_RUN=1 "${G[@]}" verify -t "$H/t" >"$OUT" 2>&1 || true
expect_out_has "missing  ${links[0]#"$H/t/"}"
expect_out_has "changed  ${links[1]#"$H/t/"}"
check "status and verify say the same whether the log is merged in runs or read whole"

echo "# $TEST_NAME: $_lib_checks checks passed"
