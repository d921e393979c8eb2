#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Reading folders (docs/architecture.md, "Reading folders"): on ext4, tmpfs, XFS and btrfs a
# folder's getdents64 fills its buffer while entries are left, so grove reads each package folder
# with one call, stopping at a read that leaves room for the longest entry, where reading to the
# end takes a second call that returns 0. A folder across a mount point may be on any filesystem:
# it is read to its end, as before. The stow is the same either way.
source "$(dirname "$0")/lib.sh"

TRACED_ASAN=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
strace -qq -o /dev/null -e trace=getdents64 -- true 2>/dev/null || fail "strace is needed here"

# On a filesystem the flag is not for, a short read says nothing: work on tmpfs then.
W=$ROOT
case $(stat -f -c %T "$ROOT") in
ext2/ext3 | tmpfs | xfs | btrfs) ;;
*)
	W=$(mktemp -d /dev/shm/grove-t0040.XXXXXX)
	at_exit "rm -rf '$W'"
	;;
esac
S=$W/stow
T=$W/target
mkdir -p "$T"
for i in $(seq -w 0 19); do mk_file "$S/p/share/d$i/f" "p$i"; done
mk_file "$S/p/bin/p" p
mk_file "$S/q/share/d00/g" q
mk_file "$S/q/bin/q" q
# What the mount below puts over p/share/d00: the same file, so that the restow changes nothing.
mk_file "$W/other/f" p00

# traced FILE CMD…: CMD under strace, its getdents64 calls on folders (fds decoded) in FILE.
traced()
{
	local file=$1
	shift
	ASAN_OPTIONS=$TRACED_ASAN strace -f -qq -y -o "$file" -e trace=getdents64 -- "$@"
}

# The getdents64 calls on the stow dir's folders in trace $1, as "folder result" lines.
stow_reads()
{
	sed -n "s|^.*getdents64([0-9]*<\\($S[^>]*\\)>.* = \\([0-9-]*\\)\$|\\1 \\2|p" "$1"
}

expect_exit 0 traced "$W/stow.trace" "$GROVE" stow -d "$S" -t "$T" p q
expect_tree "$T" <<EOF
d bin
l bin/p -> ../../stow/p/bin/p
l bin/q -> ../../stow/q/bin/q
d share
d share/d00
l share/d00/f -> ../../../stow/p/share/d00/f
l share/d00/g -> ../../../stow/q/share/d00/g
$(for i in $(seq -w 1 19); do echo "l share/d$i -> ../../stow/p/share/d$i"; done)
EOF
reads=$(stow_reads "$W/stow.trace")
folders=$(cut -d' ' -f1 <<<"$reads" | sort -u | wc -l)
calls=$(wc -l <<<"$reads")
# p, p/bin, p/share, p/share/d00; q, q/bin, q/share, q/share/d00. p's share/d01 to d19 fold
# into links and are not read (docs/stow.md, "What grove reads below a folded folder").
((folders == 8)) || fail "expected the 8 package folders the plan enters listed, got $folders: $reads"
((calls == folders)) || fail "expected one getdents64 per package folder, got $calls for $folders: $reads"
check "on $(stat -f -c %T "$W"), each package folder is listed with one getdents64, and the stow is right"

# A folder behind a mount point (a bind mount in a private mount namespace): read to its end.
if unshare -m true 2>/dev/null; then
	snapshot "$T"
	expect_exit 0 unshare -m bash -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' _ \
		"$W/other" "$S/p/share/d00" \
		env ASAN_OPTIONS="$TRACED_ASAN" strace -f -qq -y -o "$W/mount.trace" -e trace=getdents64 -- \
		"$GROVE" restow -d "$S" -t "$T" p q
	expect_unchanged "$T"
	reads=$(stow_reads "$W/mount.trace")
	d00=$(grep -c "^$S/p/share/d00 " <<<"$reads" || true)
	d00_end=$(grep -c "^$S/p/share/d00 0\$" <<<"$reads" || true)
	zeros=$(grep -c ' 0$' <<<"$reads" || true)
	((d00 == 2 && d00_end == 1)) ||
		fail "expected the mounted folder read to its end (two calls, the last returning 0): $reads"
	((zeros == 1)) || fail "expected no other folder read to its end: $reads"
	check "a folder across a mount point is read to its end; the others with one call each"
else
	echo "ok - # SKIP a folder across a mount point: no mount namespace here (unshare -m failed)"
fi
