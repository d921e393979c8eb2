#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# By hand (needs root, debootstrap and the network to Debian's archive; about 5 minutes): the
# packages built from this source installed with apt in a fresh Debian 12 (bookworm) debootstrap
# root, grove put in place as /usr/bin/update-alternatives by grove-alternatives, and real
# packages whose maintainer scripts use alternatives installed, reinstalled and removed under it.
# Every apt or dpkg run is traced (strace -f): no call may unlink /usr/bin/update-alternatives or
# rename it away, so it is never missing; after every step it is grove's link (dpkg's program under
# /usr/bin/update-alternatives.dpkg-real, grove-alternatives' diversion) or, once the package is
# removed, dpkg's own program again. Steps: a configure that fails (grove alt import cannot use
# its state dir), the configure retried, nano and less installed (editor, pager groups by grove),
# apt-get install --reinstall dpkg, an upgrade of grove and grove-alternatives to a rebuilt
# version, nano and less removed and purged, grove-alternatives removed, installed again, purged.
#
#   bash tests/debian/bookworm-install.sh [MIRROR]     (default http://deb.debian.org/debian)
#
# Everything happens in a mount namespace of its own under a fresh folder in /var/tmp (removed at
# the end; GROVE_KEEP=1 keeps it; GROVE_BOOKWORM_CACHE=DIR keeps a pristine debootstrap there for
# the next run); the host's update-alternatives and /var/lib/grove are not touched.
# docs/testing.md records the last result.
set -euo pipefail

if [[ ${GROVE_BOOKWORM_NS:-} != 1 ]]; then
	[[ $(id -u) == 0 ]] || { echo "run as root" >&2; exit 2; }
	for t in debootstrap strace dpkg-buildpackage unshare; do
		command -v "$t" >/dev/null || { echo "$t is not installed (apt-get install debootstrap strace dpkg-dev)" >&2; exit 2; }
	done
	exec unshare --mount --propagation private env GROVE_BOOKWORM_NS=1 bash "$0" "$@"
fi

MIRROR=${1:-http://deb.debian.org/debian}
SRC_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d /var/tmp/grove-bookworm.XXXXXX)
R=$W/root
UA=/usr/bin/update-alternatives
start=$SECONDS
n=0
renames=0

cleanup()
{
	local rc=$?
	umount -l "$R/proc" "$R/dev" 2>/dev/null || true
	if [[ ${GROVE_KEEP:-} == 1 ]]; then
		echo "# kept $W"
	else
		rm -rf --one-file-system "$W"
	fi
	((rc == 0)) && echo "# bookworm-install: $n steps passed in $((SECONDS - start)) s" ||
		echo "# bookworm-install: FAILED after $n steps" >&2
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { n=$((n + 1)); echo "ok $n - $* ($((SECONDS - start)) s)"; }

host_ua=$(sha256sum "$UA")
host_grove=$(ls -la --time-style=full-iso /var/lib/grove 2>&1 || true)

# The packages, built from a copy of the source as a clone has it.
mkdir -p "$W/src/grove"
(cd "$SRC_ROOT" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh | tar --null -T - -cf -) |
	tar -xf - -C "$W/src/grove"
(cd "$W/src/grove" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b >"$W/build.log" 2>&1) ||
	fail "dpkg-buildpackage: $(tail -20 "$W/build.log")"
ok "packages built: $(cd "$W/src" && echo *.deb)"

# GROVE_BOOKWORM_CACHE=DIR: a pristine debootstrap kept there (made on the first run) is copied
# instead of running debootstrap again.
if [[ -n ${GROVE_BOOKWORM_CACHE:-} && -d $GROVE_BOOKWORM_CACHE/usr ]]; then
	cp -a "$GROVE_BOOKWORM_CACHE" "$R"
	apt_update=1
else
	debootstrap --variant=minbase bookworm "$R" "$MIRROR" >"$W/debootstrap.log" 2>&1 ||
		fail "debootstrap: $(tail -20 "$W/debootstrap.log")"
	[[ -z ${GROVE_BOOKWORM_CACHE:-} ]] || cp -a "$R" "$GROVE_BOOKWORM_CACHE"
fi
mount -t proc proc "$R/proc"
mount -t tmpfs -o mode=755 tmpfs "$R/dev"
for d in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
	IFS=: read -r name maj min <<<"$d"
	mknod -m 666 "$R/dev/$name" c "$maj" "$min"
done
mkdir -p "$R/dev/pts" "$R/root/debs"
cp /etc/resolv.conf "$R/etc/resolv.conf"
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d" && chmod 755 "$R/usr/sbin/policy-rc.d"
cp "$W"/src/*.deb "$R/root/debs/"
mkdir -p "$R/root/debs/up"
for p in grove grove-alternatives; do
	f=$(cd "$R/root/debs" && echo "${p}"_*.deb)
	rm -rf "$R/root/up"
	chroot "$R" dpkg-deb -R "/root/debs/$f" /root/up
	sed -i 's/^Version: .*/&+rebuilt1/' "$R/root/up/DEBIAN/control"
	chroot "$R" dpkg-deb -b -Zgzip /root/up "/root/debs/up/$f" >/dev/null
done
real_sum=$(sha256sum <"$R$UA")
if [[ -n ${apt_update:-} ]]; then
	chroot "$R" apt-get update >"$W/update.log" 2>&1 || fail "apt-get update: $(tail "$W/update.log")"
fi
ok "debootstrap bookworm ($(chroot "$R" dpkg-query -W -f '${Version}' dpkg) dpkg) from $MIRROR"

sys()
{
	chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@"
}

# One apt or dpkg run, traced: no unlink of the name, no rename of it elsewhere.
traced()
{
	local log=$W/strace.log rc=0
	strace -f -qq -o "$log" -e trace=unlink,unlinkat,rename,renameat,renameat2,rmdir \
		chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@" >"$W/out" 2>&1 || rc=$?
	if grep -E '(unlink|unlinkat|rename|renameat|renameat2|rmdir)\((AT_FDCWD, |[0-9]+, )?"(/usr/bin/)?update-alternatives"' "$log"; then
		fail "$*: $UA went missing"
	fi
	grep -qE 'rename(at2?)?\(.*"/usr/bin/update-alternatives"' "$log" && renames=$((renames + 1)) || true
	return "$rc"
}

expect_ua()
{
	local what=$1 step=$2 audit=${3:-audit}
	if [[ $what == grove ]]; then
		[[ -L $R$UA && $(readlink "$R$UA") == grove ]] || fail "$step: $UA is not grove: $(ls -l "$R$UA")"
		[[ -f $R$UA.dpkg-real && ! -L $R$UA.dpkg-real ]] || fail "$step: no $UA.dpkg-real"
		[[ $(sys dpkg-divert --listpackage "$UA") == grove-alternatives ]] || fail "$step: not diverted by grove-alternatives"
		sys "$UA" --get-selections >"$W/sel" || fail "$step: $UA --get-selections"
		sys "$UA.dpkg-real" --get-selections >"$W/sel-real" || fail "$step: $UA.dpkg-real --get-selections"
		diff "$W/sel-real" "$W/sel" >&2 || fail "$step: grove's and dpkg's --get-selections differ"
	else
		[[ -f $R$UA && ! -L $R$UA ]] || fail "$step: $UA is not a file: $(ls -l "$R$UA")"
		[[ $(sha256sum <"$R$UA") == "$real_sum" ]] || fail "$step: $UA is not dpkg's program"
		[[ ! -e $R$UA.dpkg-real ]] || fail "$step: $UA.dpkg-real left"
		[[ -z $(sys dpkg-divert --listpackage "$UA") ]] || fail "$step: still diverted"
	fi
	if [[ $audit == audit ]]; then
		sys dpkg --audit >"$W/audit" 2>&1 || true
		[[ ! -s $W/audit ]] || fail "$step: dpkg --audit: $(cat "$W/audit")"
	fi
}

G=/root/debs/$(cd "$R/root/debs" && echo grove_*.deb)
A=/root/debs/$(cd "$R/root/debs" && echo grove-alternatives_*.deb)

: >"$R/var/lib/grove"
traced apt-get install -y "$G" "$A" && fail "the install with an unusable state dir succeeded"
[[ $(sys dpkg-query -W -f '${Status}' grove-alternatives) == *half-configured* ]] || fail "not half-configured"
expect_ua dpkg "a failed configure" noaudit
ok "a failed configure (grove alt import fails): dpkg's update-alternatives stays, not diverted"

rm "$R/var/lib/grove"
traced apt-get install -f -y || fail "apt-get install -f: $(tail "$W/out")"
expect_ua grove "the configure retried"
sys grove log -t / | grep -q 'alt import' || fail "no import in grove's log"
ok "the configure retried: grove is update-alternatives, the groups imported"

traced apt-get install -y nano less || fail "apt-get install nano less: $(tail "$W/out")"
expect_ua grove "nano and less installed"
for g in editor pager; do
	sys grove log -t / | grep -q -- "--install /usr/bin/$g $g" || fail "grove's log has no --install of $g"
	sys "$UA.dpkg-real" --query "$g" >/dev/null || fail "dpkg's program cannot read grove's $g"
done
[[ $(readlink "$R/etc/alternatives/editor") == /bin/nano ]] || fail "editor: $(readlink "$R/etc/alternatives/editor")"
ok "nano and less installed: their editor and pager groups made by grove, read by dpkg's program"

traced apt-get install -y --reinstall dpkg || fail "apt-get install --reinstall dpkg: $(tail "$W/out")"
expect_ua grove "dpkg reinstalled"
[[ $(sha256sum <"$R$UA.dpkg-real") == "$real_sum" ]] || fail "dpkg's program under the diverted name is not the same"
ok "apt-get install --reinstall dpkg: dpkg's update-alternatives unpacked under the diverted name, grove stays"

up=("$R"/root/debs/up/*.deb)
traced apt-get install -y "${up[@]#"$R"}" || fail "the upgrade: $(tail "$W/out")"
[[ $(sys dpkg-query -W -f '${Version}' grove-alternatives) == *rebuilt1 ]] || fail "not upgraded"
expect_ua grove "upgrade"
ok "grove and grove-alternatives upgraded to a rebuilt version: grove stays"

traced apt-get purge -y nano less || fail "apt-get purge nano less: $(tail "$W/out")"
expect_ua grove "nano and less purged"
# (util-linux's /bin/more stays a pager choice.)
! grep -qx /bin/nano "$R/var/lib/dpkg/alternatives/editor" 2>/dev/null || fail "nano is still an editor"
! grep -qx /usr/bin/less "$R/var/lib/dpkg/alternatives/pager" 2>/dev/null || fail "less is still a pager"
for g in editor pager; do
	a=$(sys "$UA" --list "$g" 2>&1 || true) b=$(sys "$UA.dpkg-real" --list "$g" 2>&1 || true)
	[[ ${a//grove alt/update-alternatives} == "$b" ]] || fail "--list $g: grove '$a', dpkg's '$b'"
done
traced apt-get install -y nano || fail "apt-get install nano again: $(tail "$W/out")"
ok "nano and less purged (their choices gone, --list as dpkg's), nano installed again"

traced apt-get remove -y grove-alternatives || fail "apt-get remove grove-alternatives: $(tail "$W/out")"
expect_ua dpkg "grove-alternatives removed"
sys update-alternatives --query editor >/dev/null || fail "dpkg's program does not read the editor group"
traced apt-get install -y "$A" || fail "apt-get install grove-alternatives again: $(tail "$W/out")"
expect_ua grove "grove-alternatives installed again"
traced apt-get purge -y grove-alternatives grove || fail "apt-get purge: $(tail "$W/out")"
expect_ua dpkg "purged"
traced apt-get purge -y nano || fail "apt-get purge nano: $(tail "$W/out")"
ok "grove-alternatives removed, installed again, purged with grove: dpkg's program back each time"

((renames == 4)) || fail "$renames apt runs replaced $UA by a rename, not 4"
[[ $(sha256sum "$UA") == "$host_ua" ]] || fail "the host's $UA changed"
[[ $(ls -la --time-style=full-iso /var/lib/grove 2>&1 || true) == "$host_grove" ]] || fail "the host's /var/lib/grove changed"
ok "4 runs replaced $UA by a rename and none removed it; the host is untouched"
