#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A package that folds (issue 41 item 1): grove reads no folder below a folder it folds into one
# link, as GNU Stow reads none, so a stow or unstow costs the links it makes, not what the
# package holds (docs/stow.md, "What grove reads below a folded folder"). A later plan that
# unfolds such a folder reads it then.
source "$(dirname "$0")/lib.sh"

TRACED_ASAN=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
strace -qq -o /dev/null -e trace=openat -- true 2>/dev/null || fail "strace is needed here"

S=$ROOT/stow
T=$ROOT/target
mkdir -p "$T"
# A prefix: bin/, lib/ and share/big/dNN/ (30 folders of 20 files), and below one of them a
# folder nesting deeper still.
mk_file "$S/big/bin/tool" tool
mk_file "$S/big/lib/libbig.so" lib
for d in $(seq -w 0 29); do
	mkdir -p "$S/big/share/big/d$d"
	(cd "$S/big/share/big/d$d" && touch f{00..19})
done
mkdir -p "$S/big/share/big/d07/deep/er/still"

# traced FILE CMD…: CMD under strace; the opens and listings (fds and paths decoded) in FILE.
traced()
{
	local file=$1
	shift
	ASAN_OPTIONS=$TRACED_ASAN strace -f -qq -y -o "$file" \
		-e trace=openat,openat2,open,getdents64,newfstatat,statx,readlinkat -- "$@"
}

# below FILE: the trace's lines that name a path below the package's top folders (bin, lib and
# share are the folds: nothing beneath them is to be opened, listed or looked at).
below()
{
	grep -E "big/(bin|lib|share)/|\"(d[0-9]+|deep|er|still|tool|libbig\\.so|f[0-9]+)\"" "$1" || true
}

expect_exit 0 traced "$ROOT/stow.trace" "$GROVE" stow -d "$S" -t "$T" big
expect_tree "$T" <<EOF
l bin -> ../stow/big/bin
l lib -> ../stow/big/lib
l share -> ../stow/big/share
EOF
seen=$(below "$ROOT/stow.trace")
[[ -z $seen ]] || fail "the folded stow looked below the folded folders: $seen"
lists=$(grep -c "getdents64([0-9]*<$S" "$ROOT/stow.trace" || true)
((lists <= 2)) || fail "expected the package's top folder listed only (at most 2 getdents64), got $lists"
check "a folded stow of a big package opens and lists nothing below the folded folders"

expect_exit 0 traced "$ROOT/restow.trace" "$GROVE" restow -d "$S" -t "$T" big
seen=$(below "$ROOT/restow.trace")
[[ -z $seen ]] || fail "the no-op restow looked below the folded folders: $seen"
expect_exit 0 traced "$ROOT/unstow.trace" "$GROVE" unstow -d "$S" -t "$T" big
expect_tree "$T" </dev/null
seen=$(below "$ROOT/unstow.trace")
[[ -z $seen ]] || fail "the folded unstow looked below the folded folders: $seen"
check "a restow and an unstow of it look below nothing either"

# Unfolded later, by a second package with a file in share/big/d07: the folders on the way are
# read then, and what they hold is linked as Stow links it.
mk_file "$S/other/share/big/d07/mine" mine
expect_exit 0 "$GROVE" stow -d "$S" -t "$T" big
expect_exit 0 "$GROVE" stow -d "$S" -t "$T" other
[[ $(readlink "$T/share/big/d07/f03") == ../../../../stow/big/share/big/d07/f03 ]] ||
	fail "share/big/d07/f03 is not big's link after the unfold"
[[ $(readlink "$T/share/big/d07/deep") == ../../../../stow/big/share/big/d07/deep ]] ||
	fail "share/big/d07/deep is not one folded link after the unfold"
[[ $(readlink "$T/share/big/d07/mine") == ../../../../stow/other/share/big/d07/mine ]] ||
	fail "share/big/d07/mine is not other's link"
[[ $(readlink "$T/share/big/d08") == ../../../stow/big/share/big/d08 ]] ||
	fail "share/big/d08 is not one folded link after the unfold"
expect_exit 0 "$GROVE" unstow -d "$S" -t "$T" other
expect_tree "$T" <<EOF
l bin -> ../stow/big/bin
l lib -> ../stow/big/lib
l share -> ../stow/big/share
EOF
check "a second package unfolds the folders it needs, read then; its unstow folds them back"

echo "# $TEST_NAME: $_lib_checks checks passed"
