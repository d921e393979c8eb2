# shellcheck shell=bash disable=SC2034 # the DEB_ variables are for the sourcing test
# SPDX-License-Identifier: GPL-3.0-or-later
# Builds the Debian packages for the deb tests (t0806, t0808), after lib.sh: `deb_build` copies the
# source as a clone would have it (tracked and new files, no build folders; the build writes nothing
# into the source tree) to $ROOT/src/grove, runs `dpkg-buildpackage -us -uc -b` there, and sets
# DEB_GROVE, DEB_ALT and DEB_STOW to the three .debs it made.

deb_build()
{
	local t src=$ROOT/src/grove
	for t in dpkg-buildpackage dh lintian; do
		command -v "$t" >/dev/null || fail "$t is not installed (scripts/install-deps.sh installs it)"
	done
	mkdir -p "$src"
	if git -C "$GROVE_SOURCE_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
		(cd "$GROVE_SOURCE_ROOT" && git ls-files -z --cached --others --exclude-standard |
			xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
			tar --null -T - -cf -) | tar -xf - -C "$src"
	else
		tar -C "$GROVE_SOURCE_ROOT" --exclude='./build*' --exclude=./obj-* -cf - . | tar -xf - -C "$src"
	fi
	[[ -f $src/debian/control ]] || fail "no debian/control in the copied source"

	run env -C "$src" DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b
	((RC == 0)) || fail "dpkg-buildpackage failed (exit $RC): $(tail -30 "$OUT" "$ERR")"
	DEB_GROVE=$(deb_one grove_)
	DEB_ALT=$(deb_one grove-alternatives_)
	DEB_STOW=$(deb_one grove-stow_)
}

# The one .deb of $ROOT/src named PREFIX*.deb.
deb_one()
{
	local debs=("$ROOT"/src/"$1"*.deb)
	[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || fail "expected one $1*.deb, got: $(ls "$ROOT/src")"
	echo "${debs[0]}"
}
