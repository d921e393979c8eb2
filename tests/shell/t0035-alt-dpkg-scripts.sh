#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Maintainer scripts as dpkg runs them, with grove standing in for update-alternatives (a link
# named update-alternatives first on PATH, as the dpkg-divert recipe puts it in place), beside the
# same scripts with the real update-alternatives in a twin root ($DPKG_ROOT, as dpkg --root sets
# it): a provider's postinst, an install with a follower, a manual --set, an upgrade with a new path
# and priority (the old file gone, as dpkg removes it), --auto, a prerm --remove, a purge's
# --remove-all. After every step: the same output and exit status, the same links, admin files
# byte for byte, and the real update-alternatives' --query of grove's root the same as of its own.
# (dpkg --root itself runs the scripts chrooted, which needs a whole system in the root: the
# scripts are run as dpkg would run them instead.)
source "$(dirname "$0")/lib.sh"
need_ua

mkdir -p "$ROOT/gbin"
ln -s "$GROVE" "$ROOT/gbin/update-alternatives"
G=$ROOT/g U=$ROOT/u
for r in "$G" "$U"; do
	mkdir -p "$r/usr/bin" "$r/usr/share/man/man1" "$r/etc/alternatives" \
		"$r/var/lib/dpkg/alternatives" "$r/var/log"
done

# The scripts debhelper writes for a package providing the myed alternative (version V, priority P).
mkdir -p "$ROOT/pkg"
cat >"$ROOT/pkg/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ] || [ "$1" = abort-upgrade ] || [ "$1" = abort-deconfigure ] ||
	[ "$1" = abort-remove ]; then
	update-alternatives --install /usr/bin/myed myed "/usr/bin/$PKG-$V" "$P" \
		--slave /usr/share/man/man1/myed.1.gz myed.1.gz "/usr/share/man/man1/$PKG-$V.1.gz"
fi
EOF
cat >"$ROOT/pkg/prerm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = remove ] || [ "$1" = deconfigure ]; then
	update-alternatives --remove myed "/usr/bin/$PKG-$V"
fi
EOF
cat >"$ROOT/pkg/postrm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = purge ]; then
	update-alternatives --remove-all myed
fi
EOF

# unpack ROOT PKG V: the package's files, as dpkg unpacks them.
unpack()
{
	mk_file "$1/usr/bin/$2-$3" "$2 $3"
	mk_file "$1/usr/share/man/man1/$2-$3.1.gz" "man $2 $3"
}
# remove_files ROOT PKG V: an old version's files, as dpkg removes them.
remove_files()
{
	rm -f "$1/usr/bin/$2-$3" "$1/usr/share/man/man1/$2-$3.1.gz"
}

# What the alternatives leave in a root: every link and the admin files, paths relative to it.
state()
{
	local r=$1 f
	(
		cd "$r" || exit 1
		for f in usr/bin/myed usr/share/man/man1/myed.1.gz etc/alternatives/myed \
			etc/alternatives/myed.1.gz; do
			if [[ -L $f ]]; then
				echo "$f -> $(readlink "$f")"
			elif [[ -e $f ]]; then
				echo "$f is not a link"
			fi
		done
		for f in var/lib/dpkg/alternatives/*; do
			[[ -e $f ]] || continue
			echo "== $f"
			cat "$f"
		done
	)
}

steps=0
# step WHAT SCRIPT ARG PKG V P: the script run in both roots; everything must agree.
step()
{
	local what=$1 script=$2 arg=$3 grc gout gerr
	run env PATH="$ROOT/gbin:$PATH" DPKG_ROOT="$G" PKG="$4" V="$5" P="${6:-0}" \
		sh "$ROOT/pkg/$script" "$arg"
	grc=$RC gout=$(cat "$OUT") gerr=$(cat "$ERR")
	run env DPKG_ROOT="$U" PKG="$4" V="$5" P="${6:-0}" UA_PATH="$UA" \
		sh -c 'PATH=$(dirname "$UA_PATH"):$PATH; exec sh "$0" "$1"' "$ROOT/pkg/$script" "$arg"
	[[ $grc == "$RC" ]] || fail "$what: grove exit $grc, update-alternatives $RC ($gerr)"
	[[ $gout == "$(cat "$OUT")" ]] || fail "$what: stdout differs: '$gout' vs '$(cat "$OUT")'"
	[[ $gerr == "$(cat "$ERR")" ]] || fail "$what: stderr differs: '$gerr' vs '$(cat "$ERR")'"
	diff <(state "$U") <(state "$G") >&2 || fail "$what: links or admin files differ (- ua, + grove)"
	# The real update-alternatives reads what grove left as it reads its own.
	local qg qu
	qg=$(DPKG_ROOT="$G" "$UA" --query myed 2>&1 || true)
	qu=$(DPKG_ROOT="$U" "$UA" --query myed 2>&1 || true)
	[[ $qg == "$qu" ]] || fail "$what: update-alternatives --query differs: '$qg' vs '$qu'"
	steps=$((steps + 1))
}

# A standalone command in both roots, as an admin types it.
both_cmd()
{
	local what=$1 grc gout
	shift
	run env DPKG_ROOT="$G" "$ROOT/gbin/update-alternatives" "$@"
	grc=$RC gout=$(cat "$OUT")
	run env DPKG_ROOT="$U" "$UA" "$@"
	[[ $grc == "$RC" && $gout == "$(cat "$OUT")" ]] ||
		fail "$what: grove exit $grc '$gout', update-alternatives $RC '$(cat "$OUT")'"
	diff <(state "$U") <(state "$G") >&2 || fail "$what: links or admin files differ (- ua, + grove)"
	steps=$((steps + 1))
}

for r in "$G" "$U"; do unpack "$r" othered 1; done
step "othered: postinst configure" postinst configure othered 1 40
for r in "$G" "$U"; do unpack "$r" myed 1; done
step "myed 1.0: postinst configure (auto picks it)" postinst configure myed 1 50
[[ $(readlink "$G/etc/alternatives/myed") == /usr/bin/myed-1 ]] || fail "myed-1 was not chosen"
both_cmd "an admin's --set" --set myed /usr/bin/othered-1
# Upgrade to 2.0: the old prerm (upgrade: nothing), the new files, the old ones gone, the new
# postinst configure with the new path and priority.
step "myed 1.0: prerm upgrade" prerm upgrade myed 1 50
for r in "$G" "$U"; do
	unpack "$r" myed 2
	remove_files "$r" myed 1
done
step "myed 2.0: postinst configure (manual choice kept, the gone path dropped)" postinst configure myed 2 60
[[ $(readlink "$G/etc/alternatives/myed") == /usr/bin/othered-1 ]] || fail "the manual choice was lost"
both_cmd "back to auto" --auto myed
[[ $(readlink "$G/etc/alternatives/myed") == /usr/bin/myed-2 ]] || fail "auto did not pick myed-2"
step "myed 2.0: prerm remove" prerm remove myed 2 60
for r in "$G" "$U"; do remove_files "$r" myed 2; done
step "othered: prerm remove" prerm remove othered 1 40
step "othered: postrm purge (--remove-all)" postrm purge othered 1 40
[[ ! -e $G/var/lib/dpkg/alternatives/myed && ! -L $G/etc/alternatives/myed ]] ||
	fail "the group outlived its purge"
# grove did the work in its root: its log holds the transactions.
expect_exit 0 "$GROVE" log -t "$G"
grep -q "update-alternatives --install /usr/bin/myed myed /usr/bin/myed-2" "$OUT" ||
	fail "grove's log does not show the upgrade's install: $(cat "$OUT")"
check "maintainer scripts with grove as update-alternatives: $steps steps, the same as the real one's"
