#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Merged /usr (issue 38): on Debian 12 /bin, /sbin and /lib are links into /usr, and packages put
# alternatives there (netcat's /bin/nc, cpio's and mt-st's /bin/mt, cpp's /lib/cpp).
# update-alternatives follows those links; grove alt follows them too, inside the root only, and
# only when root or the root folder's owner made them. Every command (install, set, auto, remove,
# remove-all, config, set-selections, the readers) runs as update-alternatives in a twin root
# (--root, then --instdir/--altdir/--admindir without --root): the same exit status, output, links
# and admin files; then grove undo and a killed run's recovery give back update-alternatives'
# state from before; the altdir and admindir beneath links; a link made by another user is
# refused; links leading out of the root lead nowhere outside it.
source "$(dirname "$0")/lib.sh"
need_ua

mkdir -p "$ROOT/gbin"
ln -s "$GROVE" "$ROOT/gbin/update-alternatives"
GUA=$ROOT/gbin/update-alternatives

# A Debian 12 root: /bin, /sbin, /lib are relative links into /usr (as debootstrap makes them).
debian_root()
{
	local r=$1
	mkdir -p "$r/usr/bin" "$r/usr/sbin" "$r/usr/lib" "$r/usr/share/man/man1" \
		"$r/etc/alternatives" "$r/var/lib/dpkg/alternatives" "$r/var/log"
	ln -s usr/bin "$r/bin"
	ln -s usr/sbin "$r/sbin"
	ln -s usr/lib "$r/lib"
	# The packages' files, where dpkg puts them (it too follows the links).
	for f in nc.openbsd nc.traditional mt-gnu mt-st cpp-12 x86_64-linux-gnu-cpp-12; do
		mk_file "$r/usr/bin/$f" "$f"
	done
	for f in nc_openbsd.1.gz nc.traditional.1.gz mt-gnu.1.gz mt-st.1.gz; do
		mk_file "$r/usr/share/man/man1/$f" "$f"
	done
}

# Every entry of the root's link folders (a link's text, "dir", "file") and the admin files.
state()
{
	local r=$1 f
	(
		cd "$r" || exit 1
		for f in bin sbin lib etc/alternatives usr/bin/* usr/sbin/* usr/lib/* \
			usr/share/man/man1/* etc/alternatives/* var/lib/dpkg/alternatives/*; do
			if [[ -L $f ]]; then
				echo "$f -> $(readlink "$f")"
			elif [[ -d $f ]]; then
				echo "$f dir"
			elif [[ -e $f && $f == var/lib/dpkg/alternatives/* ]]; then
				echo "== $f"
				cat "$f"
			elif [[ -e $f ]]; then
				echo "$f file"
			fi
		done
	)
}

steps=0
# same WHAT [--in TEXT] ARGS...: the command as update-alternatives (grove under that name) in
# $G and the real one in $U, with $GOPT / $UOPT before ARGS; "@" in ARGS and TEXT is the root
# (with --root: nothing). Exit status, stdout and stderr (the roots' paths as @) and state agree.
same()
{
	local what=$1 input="" grc gout gerr a
	shift
	if [[ $1 == --in ]]; then
		input=$2
		shift 2
	fi
	local ga=() ua=()
	for a in "$@"; do
		ga+=("${a//@/$GAT}")
		ua+=("${a//@/$UAT}")
	done
	run "$GUA" "${GOPT[@]}" "${ga[@]}" <<<"${input//@/$GAT}"
	grc=$RC gout=$(sed "s#$G#@#g" "$OUT") gerr=$(sed "s#$G#@#g" "$ERR")
	run "$UA" "${UOPT[@]}" "${ua[@]}" <<<"${input//@/$UAT}"
	[[ $grc == "$RC" ]] || fail "$what: grove exit $grc ($gerr), update-alternatives $RC ($(cat "$ERR"))"
	[[ $gout == "$(sed "s#$U#@#g" "$OUT")" ]] ||
		fail "$what: stdout differs: '$gout' vs '$(sed "s#$U#@#g" "$OUT")'"
	[[ $gerr == "$(sed "s#$U#@#g" "$ERR")" ]] ||
		fail "$what: stderr differs: '$gerr' vs '$(sed "s#$U#@#g" "$ERR")'"
	diff <(state "$U" | sed "s#$U#@#g") <(state "$G" | sed "s#$G#@#g") >&2 ||
		fail "$what: links or admin files differ (- update-alternatives, + grove)"
	steps=$((steps + 1))
}

# The command sequence: netcat's two providers with their man pages and a /bin follower, cpio's
# and mt-st's /bin/mt, cpp's /lib/cpp, then every command on them.
sequence()
{
	same "netcat-openbsd postinst" --install @/bin/nc nc @/bin/nc.openbsd 50 \
		--slave @/usr/share/man/man1/nc.1.gz nc.1.gz @/usr/share/man/man1/nc_openbsd.1.gz
	same "netcat-traditional postinst" --install @/bin/nc nc @/bin/nc.traditional 10 \
		--slave @/bin/netcat netcat @/bin/nc.traditional \
		--slave @/usr/share/man/man1/nc.1.gz nc.1.gz @/usr/share/man/man1/nc.traditional.1.gz
	same "cpio postinst" --install @/bin/mt mt @/bin/mt-gnu 50 \
		--slave @/usr/share/man/man1/mt.1.gz mt.1.gz @/usr/share/man/man1/mt-gnu.1.gz
	same "mt-st postinst" --install @/bin/mt mt @/bin/mt-st 60 \
		--slave @/usr/share/man/man1/mt.1.gz mt.1.gz @/usr/share/man/man1/mt-st.1.gz
	same "cpp postinst" --install @/lib/cpp cpp @/usr/bin/cpp-12 10
	same "cpp: a second provider through /bin" --install @/lib/cpp cpp @/bin/x86_64-linux-gnu-cpp-12 5
	same "query" --query nc
	same "display" --display mt
	same "list" --list cpp
	same "get-selections" --get-selections
	same "set through /bin" --set nc @/bin/nc.traditional
	same "set through /usr/bin" --set mt @/usr/bin/mt-gnu
	same "auto" --auto nc
	same "config: choose 2" --in $'2\n' --config mt
	same "config: keep" --in $'\n' --config cpp
	same "set-selections" --in $'nc manual @/bin/nc.traditional\nmt auto @/bin/mt-st\n' \
		--set-selections
	same "remove the current choice" --remove nc @/bin/nc.traditional
	same "remove by its /usr path" --remove mt @/usr/bin/mt-st
	same "remove-all" --remove-all cpp
	same "remove the last" --remove nc @/bin/nc.openbsd
	same "remove-all of what is left" --remove-all mt
}

# --- 1. --root, as dpkg --root and $DPKG_ROOT use it ---
G=$ROOT/g U=$ROOT/u
debian_root "$G"
debian_root "$U"
GAT="" UAT=""
GOPT=(--root "$G") UOPT=(--root "$U")
# The issue's reproducer first: this was "open 'bin': a symlink is on the way", exit 2.
sequence
[[ -L $G/bin && $(readlink "$G/bin") == usr/bin ]] || fail "the /bin link itself was changed"
check "merged /usr with --root: $steps commands as update-alternatives runs them"

# --- 2. without --root: the instdir, altdir and admindir given (links named by real paths) ---
G=$ROOT/gi U=$ROOT/ui
debian_root "$G"
debian_root "$U"
# An absolute link into the instdir is followed as the real filesystem follows it.
rm "$G/sbin" "$U/sbin"
ln -s "$G/usr/sbin" "$G/sbin"
ln -s "$U/usr/sbin" "$U/sbin"
GAT=$G UAT=$U
GOPT=(--instdir "$G" --altdir "$G/etc/alternatives" --admindir "$G/var/lib/dpkg/alternatives")
UOPT=(--instdir "$U" --altdir "$U/etc/alternatives" --admindir "$U/var/lib/dpkg/alternatives")
steps=0
sequence
mk_file "$G/usr/sbin/iptables-nft" x
mk_file "$U/usr/sbin/iptables-nft" x
same "iptables postinst through an absolute /sbin link" --install @/sbin/iptables iptables \
	@/usr/sbin/iptables-nft 20
check "merged /usr with --instdir: $steps commands as update-alternatives runs them"

# --- 3. the altdir and the admindir beneath links (an image with /etc and /var/lib/dpkg moved) ---
G=$ROOT/ga U=$ROOT/ua
for r in "$G" "$U"; do
	debian_root "$r"
	mkdir -p "$r/srv/etc" "$r/srv/dpkg"
	mv "$r/etc/alternatives" "$r/srv/etc/alternatives"
	mv "$r/var/lib/dpkg" "$r/srv/dpkg/dpkg"
	ln -s ../srv/etc/alternatives "$r/etc/alternatives"
	ln -s ../../srv/dpkg/dpkg "$r/var/lib/dpkg"
done
GAT="" UAT=""
GOPT=(--root "$G") UOPT=(--root "$U")
steps=0
sequence
same "an install left in place" --install @/bin/nc nc @/bin/nc.openbsd 50
[[ -f $G/srv/dpkg/dpkg/alternatives/nc && -L $G/srv/etc/alternatives/nc ]] ||
	fail "the admin file or the altdir link is not where the links lead"
check "altdir and admindir beneath links: $steps commands as update-alternatives runs them"

# back_to WHAT BEFORE: the state of $G (the roots' paths as @) is BEFORE.
back_to()
{
	local now
	now=$(state "$G" | sed "s#$G#@#g")
	[[ $now == "$2" ]] || {
		diff <(echo "$2") <(echo "$now") >&2 || true
		fail "$1"
	}
}

# --- 4. grove undo and recovery give back update-alternatives' state from before ---
G=$ROOT/gu U=$ROOT/uu
debian_root "$G"
debian_root "$U"
GOPT=(--root "$G") UOPT=(--root "$U")
same "openbsd" --install @/bin/nc nc @/bin/nc.openbsd 50 \
	--slave @/bin/netcat netcat @/bin/nc.openbsd
same "traditional" --install @/bin/nc nc @/bin/nc.traditional 10 \
	--slave @/bin/netcat netcat @/bin/nc.traditional
before=$(state "$U" | sed "s#$U#@#g")
same "set" --set nc @/bin/nc.traditional
expect_exit 0 "$GROVE" undo -t "$G"
back_to "undo of a --set did not give back the state before it" "$before"
# (the twin goes back the same way, by update-alternatives' own --auto)
run "$UA" --root "$U" --auto nc
before=$(state "$U" | sed "s#$U#@#g")
same "remove-all" --remove-all nc
expect_exit 0 "$GROVE" undo -t "$G"
back_to "undo of a --remove-all did not give back the state before it" "$before"
check "grove undo on a merged /usr root gives back the state before"

if strace -qq -o /dev/null -e trace=getpid -e inject=getpid:error=EIO -- true 2>/dev/null; then
	# A --set killed at its second exchange (one link switched, the other not): grove recover
	# rolls it back.
	# (the twin gets back the group the undo brought back, by update-alternatives' own installs)
	run "$UA" --root "$U" --install /bin/nc nc /bin/nc.openbsd 50 --slave /bin/netcat netcat /bin/nc.openbsd
	run "$UA" --root "$U" --install /bin/nc nc /bin/nc.traditional 10 \
		--slave /bin/netcat netcat /bin/nc.traditional
	before=$(state "$U" | sed "s#$U#@#g")
	back_to "the twins differ after the undo" "$before"
	run strace -f -qq -o /dev/null -e trace=renameat2 -e inject=renameat2:signal=SIGKILL:when=2 -- \
		"$GUA" --root "$G" --set nc /bin/nc.traditional
	((RC == 137)) || fail "the killed run exited $RC ($(cat "$ERR"))"
	[[ $(state "$G" | sed "s#$G#@#g") != "$before" ]] || fail "the killed run changed nothing"
	expect_exit 0 "$GROVE" recover -t "$G"
	back_to "recovery did not give back the state before the killed --set" "$before"
	same "the --set again, after recovery" --set nc @/bin/nc.traditional
	check "a killed --set on a merged /usr root is rolled back by recovery"
else
	echo "ok - # SKIP recovery: strace fault injection is not available"
fi

# --- 5. a link made by another user is not followed ---
N=$ROOT/n
debian_root "$N"
rm "$N/bin"
chmod 1777 "$N"
setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s usr/bin "$N/bin"
[[ $(stat -c %U "$N/bin") == nobody ]] || fail "setup: the link is not nobody's"
snapshot "$N"
expect_exit 2 "$GUA" --root "$N" --install /bin/nc nc /bin/nc.openbsd 50
expect_err_has "update-alternatives: error: link '/bin/nc': open 'bin': the symlink 'bin' belongs to uid $(id -u nobody), neither root nor the owner of the root folder (uid 0): not followed"
# What it leaves is what any run leaves: the admindir's lock file, and the system log's lines of
# what was attempted (update-alternatives logs them before it acts, and so does grove).
grep -q 'run with --root .* --install /bin/nc nc /bin/nc.openbsd 50$' "$N/var/log/alternatives.log" ||
	fail "the attempt is not in the system log"
rm "$N/var/lib/dpkg/alternatives/.grove lock.dpkg-tmp" "$N/var/log/alternatives.log"
expect_unchanged --rolled-back "$N"
# The root's owner may make them: a root of nobody's, run by nobody.
M=$ROOT/m
debian_root "$M"
mkdir "$ROOT/mstate"
chown -R nobody:nogroup "$M" "$ROOT/mstate"
chown -h nobody:nogroup "$M/bin"
expect_exit 0 setpriv --reuid=nobody --regid=nogroup --clear-groups env GROVE_STATE_DIR="$ROOT/mstate" \
	"$GUA" --root "$M" --install /bin/nc nc /bin/nc.openbsd 50
[[ $(readlink "$M/usr/bin/nc") == /etc/alternatives/nc ]] || fail "the owner's link was not followed"
check "a symlink on the way made by another user is refused, one of the root's owner followed"

# --- 6. links out of the root lead nowhere outside it ---
X=$ROOT/x
debian_root "$X"
mkdir -p "$ROOT/outside"
rm "$X/bin" "$X/lib"
ln -s /grove-t0050-outside "$X/bin" # absolute: the root's /grove-t0050-outside
ln -s ../../../../../../../../"$ROOT"/outside "$X/lib" # '..' stops at the root
snapshot "$ROOT/outside" out
mkdir -p "$X/grove-t0050-outside"
mk_file "$X/grove-t0050-outside/zz-a" a
expect_exit 0 "$GUA" --root "$X" --install /bin/zz zz /bin/zz-a 1
[[ $(readlink "$X/grove-t0050-outside/zz") == /etc/alternatives/zz ]] ||
	fail "an absolute link was not followed inside the root"
[[ ! -e /grove-t0050-outside && ! -L /grove-t0050-outside ]] || fail "something was made at the host's /"
expect_exit 2 "$GUA" --root "$X" --install /lib/zz2 zz2 /bin/zz-a 1
expect_unchanged "$ROOT/outside" out
# Without --root, an absolute link that leaves the instdir is refused.
I=$ROOT/i
debian_root "$I"
rm "$I/bin"
ln -s "$ROOT/outside" "$I/bin"
mk_file "$I/usr/bin/zz-a" a
expect_exit 2 "$GUA" --instdir "$I" --altdir "$I/etc/alternatives" \
	--admindir "$I/var/lib/dpkg/alternatives" --install "$I/bin/zz" zz "$I/usr/bin/zz-a" 1
expect_err_has "leads outside the root"
expect_unchanged "$ROOT/outside" out
check "links leading out of the root: followed inside it (--root) or refused (--instdir)"
