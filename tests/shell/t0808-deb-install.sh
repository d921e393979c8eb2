#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The Debian packages installed for real, by dpkg, in a throwaway copy of this Debian system (an
# overlay of / on a tmpfs, in a private mount namespace, chrooted): grove-alternatives puts grove
# in place as /usr/bin/update-alternatives (not over another package's or a local diversion of it)
# and takes it out again, and at no moment of an install,
# a failed configure, a package's alternatives calls, a reinstall of dpkg, an upgrade, a removal
# or a purge is that name missing: dpkg and the maintainer scripts run under strace, and no call
# unlinks the name or renames it away (only a rename onto it replaces it, which is atomic); after
# each step it is grove's link or dpkg's own program, as the step requires. grove-stow makes
# /usr/bin/stow grove acting as Stow. Nothing outside the tmpfs changes (the host's
# update-alternatives and /var/lib/grove are checked); offline (dpkg's package for the reinstall is
# rebuilt from its installed files, as dpkg-repack does).

# The mounts live in a mount namespace of their own: they disappear with the test's processes.
if [[ ${GROVE_T0808_NS:-} != 1 ]]; then
	command -v unshare >/dev/null || { echo "FAIL: unshare is not installed" >&2; exit 1; }
	exec unshare --mount --propagation private env GROVE_T0808_NS=1 bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deb-lib.sh"
command -v strace >/dev/null || fail "strace is not installed (scripts/install-deps.sh installs it)"
start=$SECONDS

UA=/usr/bin/update-alternatives
host_ua=$(sha256sum "$UA")
[[ ! -e /var/lib/grove ]] || host_grove=$(ls -la --time-style=full-iso /var/lib/grove)

deb_build
check "the three packages are built"

# The throwaway system: / seen through an overlay whose upper layer is a tmpfs; /dev a tmpfs with
# the few nodes dpkg and the shells use (no bind of the host's /dev), /proc the namespace's own.
mkdir -p "$ROOT/ov" "$ROOT/m"
mount -t tmpfs -o size=2g,mode=755 tmpfs "$ROOT/ov"
at_exit "umount -l '$ROOT/ov'"
mkdir "$ROOT/ov/upper" "$ROOT/ov/work"
M=$ROOT/m
mount -t overlay overlay -o "lowerdir=/,upperdir=$ROOT/ov/upper,workdir=$ROOT/ov/work" "$M"
at_exit "umount -l '$M'"
mount -t tmpfs -o mode=755 tmpfs "$M/dev"
at_exit "umount -l '$M/dev'"
for n in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
	IFS=: read -r name maj min <<<"$n"
	mknod -m 666 "$M/dev/$name" c "$maj" "$min"
done
mount -t proc proc "$M/proc"
at_exit "umount -l '$M/proc'"
# man-db's trigger would index every man page at each dpkg run (most of this test's time).
rm -f "$M/var/lib/man-db/auto-update"
mkdir -p "$M/root/debs"
cp "$DEB_GROVE" "$DEB_ALT" "$DEB_STOW" "$M/root/debs/"
G=/root/debs/$(basename "$DEB_GROVE") A=/root/debs/$(basename "$DEB_ALT") S=/root/debs/$(basename "$DEB_STOW")
[[ ! -e $M/usr/bin/grove ]] || fail "grove is already installed on this system"
[[ -z $(chroot "$M" dpkg-divert --listpackage "$UA") ]] || fail "$UA is already diverted here"
real_sum=$(sha256sum <"$M$UA")

# Inside the copy, as the system: no test state dir, grove's state is /var/lib/grove there.
sys()
{
	chroot "$M" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@"
}

# A dpkg run under strace: what it and every maintainer script did to /usr/bin/update-alternatives.
# The name may only be replaced by a rename onto it; an unlink of it or a rename of it elsewhere
# leaves it missing until the next step.
traced()
{
	local log=$ROOT/strace.log
	run strace -f -qq -o "$log" -e trace=unlink,unlinkat,rename,renameat,renameat2,rmdir \
		chroot "$M" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@"
	if grep -E '(unlink|unlinkat|rename|renameat|renameat2|rmdir)\((AT_FDCWD, |[0-9]+, )?"(/usr/bin/)?update-alternatives"' \
		"$log" >"$ROOT/gone"; then
		fail "$*: $UA went missing: $(cat "$ROOT/gone")"
	fi
	grep -qE 'rename(at2?)?\(.*"/usr/bin/update-alternatives"' "$log" && renames=$((renames + 1)) || true
}
renames=0

# The name's state: "grove" (the link to grove, dpkg's program under its diverted name, the
# diversion grove-alternatives') or "dpkg" (dpkg's own program there, no diversion, no second name).
expect_ua()
{
	local what=$1 step=$2
	case $what in
	grove)
		[[ -L $M$UA && $(readlink "$M$UA") == grove ]] || fail "$step: $UA is not the link to grove: $(ls -l "$M$UA")"
		[[ -f $M$UA.dpkg-real && ! -L $M$UA.dpkg-real ]] || fail "$step: no $UA.dpkg-real"
		[[ $(sha256sum <"$M$UA.dpkg-real") == "$real_sum" ]] || fail "$step: $UA.dpkg-real is not dpkg's program"
		[[ $(sys dpkg-divert --listpackage "$UA") == grove-alternatives ]] || fail "$step: the diversion is not grove-alternatives'"
		[[ $(sys dpkg-divert --truename "$UA") == "$UA.dpkg-real" ]] || fail "$step: the diversion does not go to $UA.dpkg-real"
		;;
	dpkg)
		[[ -f $M$UA && ! -L $M$UA ]] || fail "$step: $UA is not a file: $(ls -l "$M$UA")"
		[[ $(sha256sum <"$M$UA") == "$real_sum" ]] || fail "$step: $UA is not dpkg's program"
		[[ ! -e $M$UA.dpkg-real && ! -L $M$UA.dpkg-real ]] || fail "$step: $UA.dpkg-real is left"
		[[ -z $(sys dpkg-divert --listpackage "$UA") ]] || fail "$step: $UA is still diverted"
		;;
	esac
	# What runs under the name answers for the system's groups, as dpkg's own program does.
	sys "$UA" --get-selections >"$ROOT/sel" || fail "$step: $UA --get-selections failed"
	sys "$UA.dpkg-real" --get-selections >"$ROOT/sel-real" 2>/dev/null ||
		sys "$UA" --get-selections >"$ROOT/sel-real"
	diff "$ROOT/sel-real" "$ROOT/sel" >&2 || fail "$step: the selections differ from dpkg's program's"
	sys dpkg --verify dpkg >"$ROOT/verify" 2>&1 || true
	[[ ! -s $ROOT/verify ]] || fail "$step: dpkg --verify dpkg: $(cat "$ROOT/verify")"
}

# dpkg's package for step 4, rebuilt from its installed files and scripts (before anything is
# diverted), as dpkg-repack does: apt-get install --reinstall dpkg without the network.
D=$M/root/dpkg-repack
mkdir -p "$D/DEBIAN"
# (A folder of the package that is a link on this merged-/usr system, /lib or /sbin, is a folder in
# the package: the link itself is left out.)
sys dpkg-query -L dpkg | grep '^/' | while IFS= read -r f; do
	[[ -L $M$f && -d $M$f ]] || printf '.%s\n' "$f"
done >"$ROOT/dpkg.list"
(cd "$M" && tar --no-recursion -cf - -T "$ROOT/dpkg.list") | tar -xf - -C "$D"
sys dpkg-query -s dpkg | awk '/^(Status|Conffiles):/ { skip = 1; next } /^[^ ]/ { skip = 0 } !skip' >"$D/DEBIAN/control"
for s in preinst postinst prerm postrm conffiles; do
	[[ ! -f $M/var/lib/dpkg/info/dpkg.$s ]] || cp -p "$M/var/lib/dpkg/info/dpkg.$s" "$D/DEBIAN/$s"
done
[[ -f $D$UA && ! -L $D$UA ]] || fail "the rebuilt dpkg package lacks $UA"
sys dpkg-deb -b -Zgzip -z1 /root/dpkg-repack /root/debs/dpkg.deb >/dev/null

# 0. The name already diverted by someone else (here a local diversion, as the hand recipe of
# earlier docs made): the configure refuses, naming the diverter, and changes nothing.
sys dpkg-divert --local --no-rename --divert "$UA.distrib" --add "$UA" >/dev/null
traced dpkg -i "$G" "$A"
((RC != 0)) || fail "dpkg -i over a local diversion succeeded"
grep -q "grove-alternatives: $UA is already diverted by LOCAL" "$ERR" ||
	fail "no message naming the other diversion: $(cat "$ERR")"
[[ $(sys dpkg-divert --listpackage "$UA") == LOCAL && -f $M$UA && ! -L $M$UA ]] ||
	fail "the refused configure changed $UA or its diversion: $(ls -l "$M$UA")"
[[ $(sha256sum <"$M$UA") == "$real_sum" && ! -e $M$UA.dpkg-real ]] || fail "the refused configure changed $UA"
sys dpkg-divert --local --no-rename --remove "$UA" >/dev/null
check "a name diverted by someone else: the configure refuses, naming it, and changes nothing"

# 1. A configure that fails: grove's state dir is unusable (a file), so grove alt import fails;
# dpkg's program stays in place, nothing is diverted, and the package is left half-configured.
# (In the overlay: a /var/lib/grove of the machine running the test is hidden, never touched.)
rm -rf "$M/var/lib/grove"
: >"$M/var/lib/grove"
traced dpkg -i "$G" "$A"
((RC != 0)) || fail "dpkg -i with an unusable state dir succeeded"
[[ $(sys dpkg-query -W -f '${Status}' grove-alternatives) == *half-configured* ]] ||
	fail "grove-alternatives is not half-configured: $(sys dpkg-query -W -f '${Status}' grove-alternatives)"
expect_ua dpkg "a failed configure"
check "a failed configure (grove alt import fails) leaves dpkg's update-alternatives in place, not diverted"

# 2. The configure done again once the state dir is fixed: grove in place, the groups imported.
rm "$M/var/lib/grove"
traced dpkg --configure -a
((RC == 0)) || fail "dpkg --configure -a: exit $RC: $(cat "$ERR")"
expect_ua grove "install"
[[ -f $M/var/lib/grove/grove.db ]] || fail "no /var/lib/grove/grove.db: grove alt import did not run"
run sys grove log -t /
((RC == 0)) || fail "grove log -t /: exit $RC: $(cat "$ERR")"
expect_out_has "alt import"
check "install: $UA is the link to grove, dpkg's program is $UA.dpkg-real, the groups imported"

# 3. A package whose maintainer scripts use alternatives (as debhelper writes them): installed and
# removed with grove in place, each call a grove transaction on the system's admindir.
P=$M/root/tedit
mkdir -p "$P/DEBIAN" "$P/usr/bin"
printf '#!/bin/sh\necho tedit-a\n' >"$P/usr/bin/tedit-a"
chmod 755 "$P/usr/bin/tedit-a"
cat >"$P/DEBIAN/control" <<'CTL'
Package: grove-t-tedit
Version: 1.0
Architecture: all
Maintainer: grove tests <tests@example.invalid>
Description: an editor with an alternative (grove's t0808)
CTL
printf '#!/bin/sh\nset -e\nif [ "$1" = configure ]; then update-alternatives --install /usr/bin/tedit tedit /usr/bin/tedit-a 50; fi\n' >"$P/DEBIAN/postinst"
printf '#!/bin/sh\nset -e\nif [ "$1" = remove ]; then update-alternatives --remove tedit /usr/bin/tedit-a; fi\n' >"$P/DEBIAN/prerm"
chmod 755 "$P/DEBIAN/postinst" "$P/DEBIAN/prerm"
sys dpkg-deb -b -Zgzip /root/tedit /root/debs/tedit.deb >/dev/null
traced dpkg -i /root/debs/tedit.deb
((RC == 0)) || fail "dpkg -i tedit: exit $RC: $(cat "$ERR")"
[[ $(readlink "$M/usr/bin/tedit") == /etc/alternatives/tedit && $(readlink "$M/etc/alternatives/tedit") == /usr/bin/tedit-a ]] ||
	fail "tedit's links: $(ls -l "$M/usr/bin/tedit" "$M/etc/alternatives/tedit")"
[[ $(sys tedit) == tedit-a ]] || fail "tedit does not run"
run sys grove log -t /
expect_out_has "--install /usr/bin/tedit tedit /usr/bin/tedit-a 50"
run sys "$UA.dpkg-real" --query tedit
((RC == 0)) || fail "dpkg's update-alternatives does not read grove's admin file: $(cat "$ERR")"
expect_out_has "Value: /usr/bin/tedit-a"
expect_ua grove "a package's postinst"
traced dpkg --purge grove-t-tedit
((RC == 0)) || fail "dpkg --purge tedit: exit $RC: $(cat "$ERR")"
[[ ! -e $M/usr/bin/tedit && ! -L $M/usr/bin/tedit && ! -e $M/var/lib/dpkg/alternatives/tedit ]] ||
	fail "tedit's group is left after its removal"
run sys grove log -t /
expect_out_has "--remove tedit /usr/bin/tedit-a"
expect_ua grove "a package's prerm"
check "a package's alternatives installed and removed by grove as update-alternatives"

# 4. dpkg reinstalled (as apt-get install --reinstall dpkg does: unpack over itself, configure):
# its update-alternatives is unpacked under the diverted name, grove stays in place.
traced dpkg -i /root/debs/dpkg.deb
((RC == 0)) || fail "dpkg -i dpkg.deb (reinstall): exit $RC: $(cat "$ERR")"
expect_ua grove "a reinstall of dpkg"
check "a reinstall of dpkg puts its update-alternatives under the diverted name; grove stays"

# 5. An upgrade of grove and grove-alternatives (the same packages, a newer version).
for deb in "$G" "$A"; do
	rm -rf "$M/root/up"
	sys dpkg-deb -R "$deb" /root/up
	sed -i 's/^Version: .*/&+t0808/' "$M/root/up/DEBIAN/control"
	sys dpkg-deb -b -Zgzip -z1 /root/up "/root/debs/up-$(basename "$deb")" >/dev/null
done
traced dpkg -i "/root/debs/up-$(basename "$G")" "/root/debs/up-$(basename "$A")"
((RC == 0)) || fail "the upgrade: exit $RC: $(cat "$ERR")"
[[ $(sys dpkg-query -W -f '${Version}' grove-alternatives) == *+t0808 ]] || fail "grove-alternatives was not upgraded"
expect_ua grove "an upgrade"
check "an upgrade of grove and grove-alternatives keeps grove in place"

# 6. Removal: dpkg's program back in place, the diversion and the second name gone; grove's
# journal keeps the history. Then an install again and a purge.
traced dpkg -r grove-alternatives
((RC == 0)) || fail "dpkg -r grove-alternatives: exit $RC: $(cat "$ERR")"
expect_ua dpkg "removal"
[[ -f $M/var/lib/grove/grove.db ]] || fail "grove's journal is gone"
traced dpkg -i "$A"
((RC == 0)) || fail "dpkg -i grove-alternatives again: exit $RC: $(cat "$ERR")"
expect_ua grove "an install after a removal"
traced dpkg --purge grove-alternatives
((RC == 0)) || fail "dpkg --purge grove-alternatives: exit $RC: $(cat "$ERR")"
expect_ua dpkg "purge"
[[ -z $(sys dpkg-query -W -f '${Status}' grove-alternatives 2>/dev/null | grep -v not-installed) ]] ||
	fail "grove-alternatives is still known to dpkg: $(sys dpkg-query -W -f '${Status}' grove-alternatives)"
check "removal and purge put dpkg's update-alternatives back, with no diversion and no second name"
((renames == 4)) || fail "$renames dpkg runs replaced $UA by a rename, not 4 (install, removal, install, purge)"

# 7. grove-stow: /usr/bin/stow is grove, acting as GNU Stow (one folder, folded: Stow links the
# package's bin folder itself).
traced dpkg -i "$S"
((RC == 0)) || fail "dpkg -i grove-stow: exit $RC: $(cat "$ERR")"
[[ $(readlink "$M/usr/bin/stow") == grove ]] || fail "/usr/bin/stow is not the link to grove"
mkdir -p "$M/root/stow/pkg/bin" "$M/root/target"
printf 'x\n' >"$M/root/stow/pkg/bin/x"
run sys stow -d /root/stow -t /root/target pkg
((RC == 0)) || fail "stow: exit $RC: $(cat "$ERR")"
[[ $(readlink "$M/root/target/bin") == ../stow/pkg/bin ]] || fail "stow made: $(ls -l "$M/root/target")"
traced dpkg --purge grove-stow grove
((RC == 0)) || fail "dpkg --purge grove-stow grove: exit $RC: $(cat "$ERR")"
[[ ! -e $M/usr/bin/stow && ! -L $M/usr/bin/stow && ! -e $M/usr/bin/grove ]] || fail "stow or grove left after the purge"
expect_ua dpkg "grove purged"
check "grove-stow: /usr/bin/stow is grove and stows as GNU Stow; purged with grove"

# The host is as it was.
[[ $(sha256sum "$UA") == "$host_ua" ]] || fail "the host's $UA changed"
if [[ -n ${host_grove:-} ]]; then
	[[ $(ls -la --time-style=full-iso /var/lib/grove) == "$host_grove" ]] || fail "the host's /var/lib/grove changed"
else
	[[ ! -e /var/lib/grove ]] || fail "the host now has a /var/lib/grove"
fi
check "the host's update-alternatives and /var/lib/grove are untouched"
echo "# deb-install: $renames dpkg runs replaced $UA by a rename, none removed it; $((SECONDS - start)) s"
