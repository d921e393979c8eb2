#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove import of a large Stow farm in bounded memory (issue 41 item 4): the import is planned
# folder by folder and logged in batches (docs/architecture.md, "The bounded walk";
# docs/journal.md, "Streamed plans"), so its peak does not grow with the links; whichever way it
# is planned (the whole scan, or the walk forced by GROVE_PLAN_BUDGET=1), what it prints and
# what status, verify, the log and undo say afterwards are the same, on a farm GNU Stow made
# with two stow dirs, folded and unfolded packages, --dotfiles packages and one without, links
# it leaves out; and an import killed part-way leaves the log as it was.
source "$(dirname "$0")/lib.sh"
need_stow
command -v strace >/dev/null || fail "strace is needed (the kills of the import)"

# ASan's allocator keeps what is freed in quarantine: without it, its peak is what is live.
MEASURED_ASAN=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0
# LeakSanitizer does not run under ptrace (the runs under strace below).
TRACED_ASAN=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

# ---------------------------------------------------------------- the farm, made by GNU Stow

# home/ is the target, and holds both stow dirs: dotfiles/ and opt/stow/.
#   dotfiles, with --dotfiles: vim (.vimrc, .vim folded), git, kitty (.config folded), bin and
#     tools (bin/ shared, unfolded), deep (a/ folded); flat with --no-folding (share/x/y, x/z
#     made folders); mixed without --dotfiles (its link is 'dot-a'); extra not stowed
#   opt/stow: p1 (bin/p1 into dotfiles' bin/, lib/ shared with p2), p2 (lib/, share/p2 folded
#     into flat's share/)
#   .oldrc: a link into vim to nothing; .abs: an absolute link (not Stow's)
F=$ROOT/farm
mkdir -p "$F/home"
(
	cd "$F/home"
	mk_file dotfiles/vim/dot-vimrc vimrc
	mk_file dotfiles/vim/dot-vim/colors/x.vim x
	mk_file dotfiles/vim/README.md readme
	mk_file dotfiles/git/dot-gitconfig gitconfig
	mk_file dotfiles/kitty/dot-config/kitty/kitty.conf kitty
	mk_file dotfiles/bin/bin/b1 b1
	mk_file dotfiles/tools/bin/t1 t1
	mk_file dotfiles/deep/a/b/c/f1 f1
	mk_file dotfiles/deep/a/b/c/f2 f2
	mk_file dotfiles/deep/a/b/d/f3 f3
	mk_file dotfiles/flat/share/x/y/f1 f1
	mk_file dotfiles/flat/share/x/y/f2 f2
	mk_file dotfiles/flat/share/x/z/f3 f3
	mk_file dotfiles/mixed/dot-a a
	mk_file dotfiles/extra/dot-extrarc extrarc
	stow_ref -d dotfiles -t . --dotfiles vim git kitty bin tools deep
	stow_ref -d dotfiles -t . --dotfiles --no-folding flat
	stow_ref -d dotfiles -t . mixed
	mk_file opt/stow/p1/bin/p1 p1
	mk_file opt/stow/p1/lib/libp1.so p1
	mk_file opt/stow/p2/lib/libp2.so p2
	mk_file opt/stow/p2/share/p2/doc doc
	stow_ref -d opt/stow -t . p1 p2
	mk_link .oldrc dotfiles/vim/dot-oldrc
	mk_link .abs /nonexistent
)
expect_tree "$F/home" <<-'EOF'
	l .abs -> /nonexistent
	l .config -> dotfiles/kitty/dot-config
	l .gitconfig -> dotfiles/git/dot-gitconfig
	l .oldrc -> dotfiles/vim/dot-oldrc
	l .vim -> dotfiles/vim/dot-vim
	l .vimrc -> dotfiles/vim/dot-vimrc
	l a -> dotfiles/deep/a
	d bin
	l bin/b1 -> ../dotfiles/bin/bin/b1
	l bin/p1 -> ../opt/stow/p1/bin/p1
	l bin/t1 -> ../dotfiles/tools/bin/t1
	l dot-a -> dotfiles/mixed/dot-a
	d dotfiles
	d dotfiles/bin
	d dotfiles/bin/bin
	f dotfiles/bin/bin/b1 b1
	d dotfiles/deep
	d dotfiles/deep/a
	d dotfiles/deep/a/b
	d dotfiles/deep/a/b/c
	f dotfiles/deep/a/b/c/f1 f1
	f dotfiles/deep/a/b/c/f2 f2
	d dotfiles/deep/a/b/d
	f dotfiles/deep/a/b/d/f3 f3
	d dotfiles/extra
	f dotfiles/extra/dot-extrarc extrarc
	d dotfiles/flat
	d dotfiles/flat/share
	d dotfiles/flat/share/x
	d dotfiles/flat/share/x/y
	f dotfiles/flat/share/x/y/f1 f1
	f dotfiles/flat/share/x/y/f2 f2
	d dotfiles/flat/share/x/z
	f dotfiles/flat/share/x/z/f3 f3
	d dotfiles/git
	f dotfiles/git/dot-gitconfig gitconfig
	d dotfiles/kitty
	d dotfiles/kitty/dot-config
	d dotfiles/kitty/dot-config/kitty
	f dotfiles/kitty/dot-config/kitty/kitty.conf kitty
	d dotfiles/mixed
	f dotfiles/mixed/dot-a a
	d dotfiles/tools
	d dotfiles/tools/bin
	f dotfiles/tools/bin/t1 t1
	d dotfiles/vim
	f dotfiles/vim/README.md readme
	d dotfiles/vim/dot-vim
	d dotfiles/vim/dot-vim/colors
	f dotfiles/vim/dot-vim/colors/x.vim x
	f dotfiles/vim/dot-vimrc vimrc
	d lib
	l lib/libp1.so -> ../opt/stow/p1/lib/libp1.so
	l lib/libp2.so -> ../opt/stow/p2/lib/libp2.so
	d opt
	d opt/stow
	d opt/stow/p1
	d opt/stow/p1/bin
	f opt/stow/p1/bin/p1 p1
	d opt/stow/p1/lib
	f opt/stow/p1/lib/libp1.so p1
	d opt/stow/p2
	d opt/stow/p2/lib
	f opt/stow/p2/lib/libp2.so p2
	d opt/stow/p2/share
	d opt/stow/p2/share/p2
	f opt/stow/p2/share/p2/doc doc
	d share
	l share/p2 -> ../opt/stow/p2/share/p2
	d share/x
	d share/x/y
	l share/x/y/f1 -> ../../../dotfiles/flat/share/x/y/f1
	l share/x/y/f2 -> ../../../dotfiles/flat/share/x/y/f2
	d share/x/z
	l share/x/z/f3 -> ../../../dotfiles/flat/share/x/z/f3
EOF
check "GNU Stow made the farm: two stow dirs, folded and unfolded, --dotfiles and not, a dangling link"

# ---------------------------------------------------------------- the same, walked or not

W=$ROOT/w
# session TAG: the imports, status, verify, log and undos on a fresh copy of the farm (at the same
# path each time, so that every path printed is the same) with its own log; each command's exit
# status, stdout and stderr (times taken out) in $ROOT/TAG/NN. The disk must end as it began.
session()
{
	local tag=$1 n=0
	rm -rf "$W"
	cp -a "$F" "$W"
	export GROVE_STATE_DIR=$ROOT/state-$tag
	mkdir -p "$ROOT/$tag"
	cd "$W/home"
	snapshot . "$tag"
	step()
	{
		run "$GROVE" "$@"
		n=$((n + 1))
		{
			echo "\$ grove $* (exit $RC)"
			cat "$OUT"
			echo "--- stderr"
			cat "$ERR"
		} | sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}/TIME/' >"$ROOT/$tag/$(printf %02d $n)"
	}
	step import -n -d dotfiles -t . --dotfiles vim bin kitty deep flat mixed
	step import -d dotfiles -t . --dotfiles vim bin kitty deep flat mixed
	step status -t . -d dotfiles
	step verify -t .
	step log -t . -v
	step import -d dotfiles -t . --dotfiles
	step import -d opt/stow -t .
	step import -d opt/stow -t . p1
	step status -t . -d opt/stow
	step verify -t .
	step log -t . -v
	# Both layouts in one package (extra, not imported yet): refused, nothing logged.
	mk_file dotfiles/extra/dot-b b
	mk_link .extrarc dotfiles/extra/dot-extrarc
	mk_link dot-b dotfiles/extra/dot-b
	step import -d dotfiles -t . --dotfiles extra
	rm .extrarc dot-b dotfiles/extra/dot-b
	step log -t .
	step undo -t .
	step status -t . -d opt/stow
	step rollback -t . --to 0
	step status -t . -d dotfiles
	step verify -t .
	step log -t . -v
	# (The refused import's links, made and removed here, moved two folders' mtimes.)
	expect_unchanged --rolled-back . "$tag"
	cd "$ROOT"
}

unset GROVE_PLAN_BUDGET
session whole
GROVE_PLAN_BUDGET=1 session walked
unset GROVE_PLAN_BUDGET
diff -ru "$ROOT/whole" "$ROOT/walked" >"$ROOT/sessions.diff" ||
	fail "the imports planned folder by folder differ from the whole scan's: $(cat "$ROOT/sessions.diff")"
[[ $(ls "$ROOT/walked" | wc -l) == 19 ]] || fail "not every step ran: $(ls "$ROOT/walked")"
check "with GROVE_PLAN_BUDGET=1 (the walk, a batch per op) and without: the same output of 19 steps"

# What the steps say, from the farm: 9 links of the 6 packages named (in the order of their first
# link's path: .config, .vim, a, bin/b1, dot-a, share/x), the 2 other packages' links left out
# and said, the link to nothing said; then the other 2 (git, tools) with the 9 known; then the
# second stow dir's 4 (p1, p2); the undo of those, then the rollback of all.
s=$ROOT/walked
grep -qx 'recorded 9 links (kitty, vim, deep, bin, mixed, flat) as transaction 1' "$s/02" ||
	fail "import of 6 packages: $(cat "$s/02")"
grep -qF "WARNING: not imported: '.gitconfig' links into package 'git', which is not being imported" "$s/02" &&
	grep -qF "WARNING: not imported: 'bin/t1' links into package 'tools', which is not being imported" "$s/02" &&
	grep -qF "WARNING: not imported: '.oldrc' links to 'dotfiles/vim/dot-oldrc', which does not exist" "$s/02" &&
	grep -qF "mixed: its links were made with no --dotfiles ('dot-a' links to 'dotfiles/mixed/dot-a')" "$s/02" ||
	fail "import of 6 packages, its warnings: $(cat "$s/02")"
grep -q 'verified 9 entries: 0 missing, 0 changed, 0 broken, 0 foreign' "$s/04" || fail "verify: $(cat "$s/04")"
grep -qx 'recorded 2 links (git, tools) as transaction 2; 9 more were grove.s already' "$s/06" ||
	fail "import of the rest: $(cat "$s/06")"
grep -qx 'recorded 4 links (p1, p2) as transaction 3' "$s/07" || fail "import of opt/stow: $(cat "$s/07")"
grep -q 'verified 15 entries: 0 missing' "$s/10" || fail "verify after 3 imports: $(cat "$s/10")"
grep -q "package 'extra' has links made with --dotfiles ('.extrarc' links to 'dotfiles/extra/dot-extrarc') and links made without it ('dot-b' links to 'dotfiles/extra/dot-b')" "$s/12" ||
	fail "both layouts: $(cat "$s/12")"
grep -q 'reverted transaction 3 as transaction 4: 4 ops' "$s/14" || fail "undo: $(cat "$s/14")"
grep -q '(nothing stowed by grove)' "$s/17" && grep -q 'verified 0 entries' "$s/18" ||
	fail "after the rollback: $(cat "$s/17" "$s/18")"
check "what they say: 9 links of 6 packages, 2 more with 9 known, 4 of the second stow dir, 15 verified; undo and rollback drop them"

# ---------------------------------------------------------------- memory: 10,000 links, 40,000

# A farm as GNU Stow lays out a package of FOLDERS x FILES files with --no-folding (one link per
# file, made by grove's stow, then its log dropped: the import finds Stow's links), in DIR/t.
farm()
{
	local d=$1 i
	mkdir -p "$d/stow/big" "$d/t"
	for i in $(seq -w 1 "$2"); do
		mkdir "$d/stow/big/d$i"
		(cd "$d/stow/big/d$i" && eval "touch f{1..$3}")
	done
	expect_exit 0 "$GROVE" --state "$d/made" stow --no-folding -d "$d/stow" -t "$d/t" big
	rm -rf "$d/made"
}

# peak CMD…: the peak RSS (KiB) of grove CMD (exit 0).
peak()
{
	local kib
	kib=$({ ASAN_OPTIONS=$MEASURED_ASAN /usr/bin/time -f '%M' "$GROVE" "$@" >"$ROOT/peak.out" 2>"$ROOT/peak.err"; } 2>&1 &&
		tail -n 1 "$ROOT/peak.err") || fail "grove $*: failed: $(cat "$ROOT/peak.err")"
	echo "$kib"
}

farm "$ROOT/tiny" 2 100
mkdir -p "$ROOT/ref/t"
cp -a "$ROOT/tiny/stow" "$ROOT/ref/"
(cd "$ROOT/ref" && stow_ref --no-folding -d stow -t t big)
expect_same_tree "$ROOT/tiny" "$ROOT/ref"
farm "$ROOT/small" 10 1000
farm "$ROOT/large" 40 1000
s=$(peak --state "$ROOT/small/state" import -d "$ROOT/small/stow" -t "$ROOT/small/t")
l=$(peak --state "$ROOT/large/state" import -d "$ROOT/large/stow" -t "$ROOT/large/t")
grep -qx 'recorded 40000 links (big) as transaction 1' "$ROOT/peak.out" || fail "import of 40,000: $(cat "$ROOT/peak.out")"
# The whole scan's model and plan cost ~400 bytes per link: 30,000 more links, ~11.6 MiB more
# (819d51b: 8.1 and 19.7 MiB). Streamed, a batch of 4,096 ops is held at 10,000 links as at
# 40,000; what still grows is SQLite's page cache (up to 2 MiB) as the log grows: ~1 MiB.
((l - s < 4096)) || fail "grove import: peak $s KiB at 10,000 links, $l KiB at 40,000: it grows with the links"
echo "# import: peak $s KiB at 10,000 links, $l KiB at 40,000"
expect_exit 0 "$GROVE" --state "$ROOT/large/state" verify -t "$ROOT/large/t"
expect_out_has "verified 40000 entries: 0 missing, 0 changed, 0 broken, 0 foreign"
check "an import of 40,000 links takes the memory of 10,000 (peaks within 4 MiB), the farm laid out as GNU Stow's"

snapshot "$ROOT/large/t" large
expect_exit 0 "$GROVE" --state "$ROOT/large/state" undo -t "$ROOT/large/t"
expect_out_has "reverted transaction 1 as transaction 2: 40000 ops (40000 links forgotten, left on disk)"
expect_unchanged "$ROOT/large/t" large
expect_exit 0 "$GROVE" --state "$ROOT/large/state" status -t "$ROOT/large/t"
expect_out_has "(nothing stowed by grove)"
check "its undo drops the 40,000 rows and leaves every link"

# ---------------------------------------------------------------- killed part-way

# The import of 40,000 links logs ~10 batches in one SQLite write transaction; killed at its k-th
# write to the log (early, a quarter and half-way through), the next run finds the log as it was:
# nothing owned, nothing committed, the disk untouched.
ST=$ROOT/large/killed
ASAN_OPTIONS=$TRACED_ASAN strace -f -qq -o "$ROOT/count.strace" -e trace=pwrite64 -- \
	"$GROVE" --state "$ROOT/large/count" import -d "$ROOT/large/stow" -t "$ROOT/large/t" >/dev/null
writes=$(grep -c 'pwrite64(' "$ROOT/count.strace")
((writes > 20)) || fail "the import wrote $writes times to its log"
for k in 2 $((writes / 4)) $((writes / 2)); do
	rm -rf "$ST"
	ASAN_OPTIONS=$TRACED_ASAN run strace -f -qq -o /dev/null -e trace=pwrite64 -e inject=pwrite64:signal=SIGKILL:when=$k -- \
		"$GROVE" --state "$ST" import -d "$ROOT/large/stow" -t "$ROOT/large/t"
	[[ $RC != 0 ]] || fail "the import killed at write $k of $writes exited 0"
	expect_exit 0 "$GROVE" --state "$ST" recover -t "$ROOT/large/t"
	expect_exit 0 "$GROVE" --state "$ST" status -t "$ROOT/large/t"
	expect_out_has "(nothing stowed by grove)"
	expect_exit 0 "$GROVE" --state "$ST" log -t "$ROOT/large/t"
	grep -q committed "$OUT" && fail "killed at write $k of $writes: a committed transaction: $(cat "$OUT")"
	expect_unchanged "$ROOT/large/t" large
done
expect_exit 0 "$GROVE" --state "$ST" import -d "$ROOT/large/stow" -t "$ROOT/large/t"
expect_out_has "recorded 40000 links (big)"
check "an import killed at its 2nd write to the log, a quarter and half-way through them: the log owns nothing after recovery; it then imports"
