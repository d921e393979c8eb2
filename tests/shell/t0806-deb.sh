#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The Debian package: `dpkg-buildpackage -us -uc -b` on a copy of the source makes grove_*.deb with
# the program, the man pages and the completions in Debian's paths, and lintian finds no error.
. "$(dirname "$0")/lib.sh"

for t in dpkg-buildpackage dh lintian; do
	command -v "$t" >/dev/null || fail "$t is not installed (scripts/install-deps.sh installs it)"
done
start=$SECONDS

# A copy of the source as a clone would have it (tracked and new files, no build folders), so the
# build writes nothing into the source tree.
SRC=$ROOT/src/grove
mkdir -p "$SRC"
if git -C "$GROVE_SOURCE_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$GROVE_SOURCE_ROOT" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		tar --null -T - -cf -) | tar -xf - -C "$SRC"
else
	tar -C "$GROVE_SOURCE_ROOT" --exclude='./build*' --exclude=./obj-* -cf - . | tar -xf - -C "$SRC"
fi
[[ -f $SRC/debian/control ]] || fail "no debian/control in the copied source"

run env -C "$SRC" DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b
((RC == 0)) || fail "dpkg-buildpackage failed (exit $RC): $(tail -30 "$OUT" "$ERR")"
debs=("$ROOT"/src/grove_*.deb)
[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || fail "expected one grove_*.deb, got: $(ls "$ROOT/src")"
DEB=${debs[0]}
check "dpkg-buildpackage -us -uc -b makes $(basename "$DEB")"

dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|' >"$ROOT/contents"
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
[[ $(dpkg-deb -f "$DEB" Package) == grove ]] || fail "the package is not named grove"
dpkg-deb -x "$DEB" "$ROOT/x"
expect_exit 0 "$ROOT/x/usr/bin/grove" --version
expect_out_has "version"
check "the .deb holds the program (it runs), five man pages and the three completions in Debian's paths"

# lintian: no error (warnings and notes are printed for the record).
run lintian --fail-on error "$DEB"
grep -E '^[EW]: ' "$OUT" | sed 's/^/# lintian: /' || true
((RC == 0)) || fail "lintian reports errors: $(grep '^E: ' "$OUT")"
check "lintian finds no error in the .deb"
echo "# deb: built and checked in $((SECONDS - start)) s"
