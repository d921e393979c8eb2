#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A manifest's alternatives.root means update-alternatives' --root (issue 38, item 6): every path of
# the section (links, choices, followers, altdir, admindir) lies inside the root, and the admindir
# and altdir default to the root's own. A manifest applied to one root and the same requests made
# by the real update-alternatives --root on a twin root give the same links and admin files: with
# the defaults, with an altdir and admindir of its own, and on a merged-/usr root (/bin -> usr/bin).
# $DPKG_ADMINDIR is ignored with a root, as by --root.
source "$(dirname "$0")/lib.sh"
need_ua

# A Debian 12 root: /bin a relative link into /usr, the programs and man pages of two netcats.
debian_root()
{
	local r=$1
	mkdir -p "$r/usr/bin" "$r/usr/share/man/man1" "$r/etc/alternatives" \
		"$r/var/lib/dpkg/alternatives"
	ln -s usr/bin "$r/bin"
	for f in nc.openbsd nc.traditional; do
		mk_file "$r/usr/bin/$f" "$f"
	done
	for f in nc_openbsd.1.gz nc.traditional.1.gz; do
		mk_file "$r/usr/share/man/man1/$f" "$f"
	done
}

# The root's links (their text) and admin files (their text); grove's lock in the admindir (named
# as update-alternatives' temporary files, which it passes over) is not one.
state()
{
	local r=$1 f
	(
		cd "$r" || exit 1
		find . -path ./var/log -prune -o \( -type l -printf '%p -> %l\n' \) -o \
			\( -type f -path './*/alt*/*' ! -name '*.dpkg-tmp' -printf '== %p\n' -exec cat {} \; \) | sort
	)
}

# same WHAT: the twins' states agree (the roots' own paths written as @).
same()
{
	diff <(state "$U" | sed "s#$U#@#g") <(state "$M" | sed "s#$M#@#g") >&2 ||
		fail "$1: links or admin files differ (- update-alternatives --root, + grove apply)"
}

# A harmless $DPKG_ADMINDIR: with a root, neither tool may use it.
export DPKG_ADMINDIR=$ROOT/host-dpkg
mkdir -p "$DPKG_ADMINDIR/alternatives"

# manifest ROOT MODE [ALTDIR ADMINDIR]: the nc group, both netcats, in MODE (manual: traditional).
manifest()
{
	{
		echo "alternatives:"
		echo "  root: $1"
		if [[ -n ${3-} ]]; then echo "  altdir: $3"; fi
		if [[ -n ${4-} ]]; then echo "  admindir: $4"; fi
		cat <<'YAML'
  groups:
    - name: nc
      link: /bin/nc
      followers:
        - name: nc.1.gz
          link: /usr/share/man/man1/nc.1.gz
        - name: netcat
          link: /bin/netcat
      choices:
        - path: /bin/nc.openbsd
          priority: 50
          followers:
            nc.1.gz: /usr/share/man/man1/nc_openbsd.1.gz
        - path: /bin/nc.traditional
          priority: 10
          followers:
            nc.1.gz: /usr/share/man/man1/nc.traditional.1.gz
            netcat: /bin/nc.traditional
YAML
		if [[ $2 == manual ]]; then
			printf '      mode: manual\n      choice: /bin/nc.traditional\n'
		fi
	} >"$ROOT/grove.yaml"
}

# case NAME [ALTDIR ADMINDIR]: a fresh pair of roots, the manifest applied to one and
# update-alternatives --root run on the other; then the mode changed, then nothing.
run_case()
{
	local name=$1 altdir=${2-} admindir=${3-} ua_opt=()
	M=$ROOT/$name-m U=$ROOT/$name-u
	debian_root "$M"
	debian_root "$U"
	if [[ -n $altdir ]]; then
		mkdir -p "$M$altdir" "$U$altdir" "$M$admindir" "$U$admindir"
		# update-alternatives takes --altdir inside the root, --admindir as a host path.
		ua_opt=(--altdir "$altdir" --admindir "$U$admindir")
	fi
	local ua=("$UA" --root "$U" "${ua_opt[@]}")

	manifest "$M" manual "$altdir" "$admindir"
	expect_exit 0 "$GROVE" apply -f "$ROOT/grove.yaml"
	expect_exit 0 "${ua[@]}" --install /bin/nc nc /bin/nc.openbsd 50 \
		--slave /usr/share/man/man1/nc.1.gz nc.1.gz /usr/share/man/man1/nc_openbsd.1.gz
	expect_exit 0 "${ua[@]}" --install /bin/nc nc /bin/nc.traditional 10 \
		--slave /usr/share/man/man1/nc.1.gz nc.1.gz /usr/share/man/man1/nc.traditional.1.gz \
		--slave /bin/netcat netcat /bin/nc.traditional
	expect_exit 0 "${ua[@]}" --set nc /bin/nc.traditional
	same "$name: install, install, set"
	[[ -L $M/usr/bin/nc && -L $M${altdir:-/etc/alternatives}/nc ]] ||
		fail "$name: the links are not inside the root"
	[[ -f $M${admindir:-/var/lib/dpkg/alternatives}/nc ]] ||
		fail "$name: the admin file is not inside the root"
	[[ -z $(ls -A "$DPKG_ADMINDIR/alternatives") ]] || fail "$name: \$DPKG_ADMINDIR was used"

	manifest "$M" auto "$altdir" "$admindir"
	expect_exit 0 "$GROVE" apply -f "$ROOT/grove.yaml"
	expect_exit 0 "${ua[@]}" --auto nc
	same "$name: back to auto"
	expect_exit 0 "$GROVE" apply -f "$ROOT/grove.yaml"
	expect_out_has "nothing to change"
	same "$name: applied again"
	check "alternatives.root ($name): the same links and admin files as update-alternatives --root"
}

run_case defaults
run_case own-dirs /etc/alt2 /var/lib/alt-admin

# With a root, a relative altdir or admindir names nothing inside it: refused, nothing changed.
M=$ROOT/rel-m
debian_root "$M"
manifest "$M" auto alt2
before=$(state "$M")
expect_exit 78 "$GROVE" apply -f "$ROOT/grove.yaml"
expect_err_has "'alt2' is not an absolute path"
[[ $(state "$M") == "$before" ]] || fail "a refused manifest changed the root"
check "alternatives.root with a relative altdir is refused"
