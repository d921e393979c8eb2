#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The Debian packages: `dpkg-buildpackage -us -uc -b` on a copy of the source makes grove_*.deb
# (the program, the man pages, the completions in Debian's paths, the documentation in
# /usr/share/doc/grove, the Ansible collection where ansible looks), grove-alternatives_*.deb (grove
# as update-alternatives, by maintainer scripts) and grove-stow_*.deb (grove as /usr/bin/stow), and
# lintian finds nothing in them, not even a pedantic tag, that is not overridden with a reason.
# t0808 installs them in a throwaway copy of the system.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deb-lib.sh"
start=$SECONDS

deb_build
check "dpkg-buildpackage -us -uc -b makes $(basename "$DEB_GROVE"), $(basename "$DEB_ALT"), $(basename "$DEB_STOW")"

# The files of each package: path, and link target for a link.
contents()
{
	dpkg-deb -c "$1" | awk '{ p = $6; sub(/^\.\//, "/", p); if ($7 == "->") p = p " -> " $8; print p }'
}
contents "$DEB_GROVE" >"$ROOT/contents"
for f in /usr/bin/grove \
	/usr/share/man/man1/grove.1.gz /usr/share/man/man1/grove-stow.1.gz \
	/usr/share/man/man1/grove-alt.1.gz /usr/share/man/man1/grove-profile.1.gz \
	/usr/share/man/man5/grove.yaml.5.gz \
	/usr/share/bash-completion/completions/grove \
	/usr/share/zsh/vendor-completions/_grove \
	/usr/share/fish/vendor_completions.d/grove.fish \
	/usr/share/doc/grove/copyright; do
	grep -qx "$f" "$ROOT/contents" || fail "the .deb lacks $f: $(cat "$ROOT/contents")"
done
! grep -q '^/usr/local' "$ROOT/contents" || fail "the .deb installs under /usr/local"
[[ $(dpkg-deb -f "$DEB_GROVE" Package) == grove ]] || fail "the package is not named grove"
dpkg-deb -x "$DEB_GROVE" "$ROOT/x"
expect_exit 0 "$ROOT/x/usr/bin/grove" --version
expect_out_has "version"
check "the .deb holds the program (it runs), five man pages and the three completions in Debian's paths"

# Every doc of the source (docs/*.md, the schema, the README), in /usr/share/doc/grove, compressed
# as dh_compress does (above 4 kB; the schema stays plain), with the same text; grove(1) names
# the folder.
n=0
for f in "$GROVE_SOURCE_ROOT"/docs/*.md "$GROVE_SOURCE_ROOT"/README.md "$GROVE_SOURCE_ROOT"/docs/grove.schema.json; do
	d=$ROOT/x/usr/share/doc/grove/$(basename "$f")
	if [[ -f $d.gz ]]; then
		zcat "$d.gz" | cmp -s - "$f" || fail "$d.gz is not $f"
	else
		cmp -s "$d" "$f" || fail "$d is not $f (or missing)"
	fi
	n=$((n + 1))
done
[[ -f $ROOT/x/usr/share/doc/grove/grove.schema.json ]] || fail "the schema was compressed"
zcat "$ROOT/x/usr/share/man/man1/grove.1.gz" | grep -c '/usr/share/doc/grove' >/dev/null ||
	fail "grove(1) does not point to /usr/share/doc/grove"
check "the $n documents of docs/ and the README are in /usr/share/doc/grove, and grove(1) says so"

# The Ansible collection: every file of ansible/ under the collections path Debian's ansible-core
# searches by default (ansible-config: COLLECTIONS_PATHS), and ansible finds its modules there.
coll=/usr/share/ansible/collections/ansible_collections/grove/farm
n=0
while IFS= read -r -d '' f; do
	rel=${f#"$GROVE_SOURCE_ROOT"/ansible/}
	cmp -s "$f" "$ROOT/x$coll/$rel" || fail "$coll/$rel is not ansible/$rel (or missing)"
	n=$((n + 1))
done < <(find "$GROVE_SOURCE_ROOT/ansible" -type f ! -name '*.pyc' -print0)
((n >= 10)) || fail "only $n files under ansible/"
if command -v ansible-config >/dev/null; then
	ansible-config dump 2>/dev/null | grep -E '^COLLECTIONS_PATHS' | grep -c "'/usr/share/ansible/collections'" >/dev/null ||
		fail "ansible does not search /usr/share/ansible/collections: $(ansible-config dump | grep COLLECTIONS_PATHS)"
	run env ANSIBLE_COLLECTIONS_PATH="$ROOT/x/usr/share/ansible/collections" ANSIBLE_LOCAL_TEMP="$ROOT/ans" \
		ansible-doc -t module grove.farm.alternative
	((RC == 0)) || fail "ansible-doc grove.farm.alternative: exit $RC: $(cat "$ERR")"
	expect_out_has "GROVE.FARM.ALTERNATIVE"
fi
check "the $n files of the Ansible collection are in $coll, where ansible finds grove.farm"

# grove-alternatives: no file of its own but its docs; its maintainer scripts make the diversion
# and the link (t0808 runs them).
contents "$DEB_ALT" | grep -v -e '/$' -e '^/usr/share/doc/grove-alternatives/' \
	-e '^/usr/share/lintian/overrides/grove-alternatives$' >"$ROOT/alt-extra" || true
[[ ! -s $ROOT/alt-extra ]] || fail "grove-alternatives ships more than its docs: $(cat "$ROOT/alt-extra")"
dpkg-deb -e "$DEB_ALT" "$ROOT/alt-ctl"
for s in postinst prerm postrm; do
	[[ -x $ROOT/alt-ctl/$s ]] || fail "grove-alternatives has no $s"
	sh -n "$ROOT/alt-ctl/$s" || fail "grove-alternatives' $s is not valid sh"
done
grep -q 'dpkg-divert --package "$PKG" --no-rename --divert "$REAL" --add "$UA"' "$ROOT/alt-ctl/postinst" ||
	fail "the postinst does not add the diversion"
grep -q 'grove alt import' "$ROOT/alt-ctl/postinst" || fail "the postinst does not run grove alt import"
grep -q -- '--remove "$UA"' "$ROOT/alt-ctl/prerm" || fail "the prerm does not remove the diversion"
[[ $(dpkg-deb -f "$DEB_ALT" Architecture) == all ]] || fail "grove-alternatives is not Architecture: all"
dpkg-deb -f "$DEB_ALT" Depends | grep -q 'grove (>= ' || fail "grove-alternatives does not depend on grove"
check "grove-alternatives ships only its docs, depends on grove, and its scripts divert and put back"

# grove-stow: /usr/bin/stow and stow(8) pointing to grove's; it provides, conflicts with and
# replaces stow.
contents "$DEB_STOW" >"$ROOT/stow-contents"
grep -qx '/usr/bin/stow -> grove' "$ROOT/stow-contents" || fail "no /usr/bin/stow -> grove: $(cat "$ROOT/stow-contents")"
grep -qx '/usr/share/man/man8/stow.8.gz -> ../man1/grove-stow.1.gz' "$ROOT/stow-contents" ||
	fail "no stow(8) pointing to grove-stow(1): $(cat "$ROOT/stow-contents")"
for f in Provides Conflicts Replaces; do
	[[ $(dpkg-deb -f "$DEB_STOW" "$f") == stow ]] || fail "grove-stow's $f is not stow"
done
check "grove-stow ships /usr/bin/stow -> grove and stow(8) -> grove-stow(1), and takes stow's place"

# lintian, pedantic: every tag is either absent or overridden (the overrides give their reasons).
run lintian --pedantic --display-info --fail-on error,warning,info,pedantic "${ROOT}"/src/grove_*.changes
grep -E '^[EWIPX]: ' "$OUT" | sed 's/^/# lintian: /' || true
((RC == 0)) || fail "lintian reports tags (exit $RC): $(grep -E '^[EWIPX]: ' "$OUT")"
! grep -qE '^[EWIPX]: ' "$OUT" || fail "lintian reports tags: $(grep -E '^[EWIPX]: ' "$OUT")"
run lintian --pedantic --display-info --show-overrides "${ROOT}"/src/grove_*.changes
grep -q '^O: grove-alternatives: empty-binary-package' "$OUT" || fail "lintian does not see the three packages"
check "lintian (pedantic) finds no tag that is not overridden with a reason in the three packages"
echo "# deb: built and checked in $((SECONDS - start)) s"
