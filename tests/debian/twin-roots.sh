#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# By hand (needs root, debootstrap, dpkg-buildpackage and the network to Debian's archive; 4 to
# 7 minutes): two Debian 12 (bookworm) roots made from one debootstrap, root D with dpkg's own
# update-alternatives, root G with grove put in place by the grove-alternatives package built from
# this source. The same steps run in both -- apt installs of packages whose maintainer scripts use
# alternatives, update-alternatives --set, --config, --set-selections, --auto, a --set that fails,
# apt removals, purges and reinstalls -- and after every step the two roots are compared:
#   - the step's exit status (and, for an update-alternatives command, its output),
#   - update-alternatives --get-selections (grove's in G while it is in place, dpkg's in D),
#   - every entry of /etc/alternatives (its type and link text),
#   - every admin file of /var/lib/dpkg/alternatives, byte for byte (grove's lock file
#     '.grove lock.dpkg-tmp' aside),
#   - the lines the step added to /var/log/alternatives.log, program name and time stamp stripped.
# Between these steps, in G only, the grove package is installed, upgraded to a rebuilt version,
# removed (dpkg's program then reads grove's admin files: the next steps still compare equal) and
# installed again. Each difference is printed; a documented one (docs/alternatives.md's table,
# known_difference below) is counted, any other fails the run.
#
#   bash tests/debian/twin-roots.sh [MIRROR]     (default http://deb.debian.org/debian)
#
# Environment: GROVE_BOOKWORM_CACHE=DIR keeps a pristine debootstrap there (made on the first run,
# copied on the next ones; the same cache as bookworm-install.sh's); GROVE_TWIN_ARCHIVES=DIR keeps
# the downloaded .debs there (shared by both roots in any case, so each is downloaded once);
# GROVE_TWIN_DEBS=DIR takes grove's .debs from DIR instead of building them; GROVE_KEEP=1 keeps the
# work folder. Everything happens in a mount namespace of its own under a fresh folder in /var/tmp,
# removed at the end; the host's update-alternatives and /var/lib/grove are not touched.
# docs/testing.md records the last result.
set -euo pipefail

if [[ ${GROVE_TWIN_NS:-} != 1 ]]; then
	[[ $(id -u) == 0 ]] || { echo "run as root" >&2; exit 2; }
	for t in debootstrap dpkg-buildpackage unshare; do
		command -v "$t" >/dev/null || { echo "$t is not installed (apt-get install debootstrap dpkg-dev)" >&2; exit 2; }
	done
	exec unshare --mount --propagation private env GROVE_TWIN_NS=1 bash "$0" "$@"
fi

MIRROR=${1:-http://deb.debian.org/debian}
SRC_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d /var/tmp/grove-twin.XXXXXX)
D=$W/d
G=$W/g
UA=/usr/bin/update-alternatives
start=$SECONDS
steps=0
known=0
unknown=0
mounts=()

# The packages: every one's maintainer scripts register alternatives (at least 20 packages;
# the issue names nano, vim-tiny, vim, gawk, less, w3m, lynx, iptables, netcat-openbsd,
# netcat-traditional, cpio, mt-st, cpp). Those under /bin and /lib (nc, mt, cpp) go through
# the merged-/usr links.
PKGS=(nano vim-tiny vim gawk original-awk less most w3m lynx elinks links iptables arptables
	ebtables netcat-openbsd netcat-traditional cpio mt-st cpp nvi joe mg fakeroot traceroute
	pinentry-curses lua5.4 lua5.3 rename rlwrap telnet tnftp inetutils-ftp)
# Removed, then purged, then installed again.
GONE=(vim vim-tiny gawk lynx netcat-openbsd cpio nano w3m traceroute lua5.4 fakeroot)
# The groups switched.
GROUPS_SW=(editor vi ex view rview awk pager www-browser nc mt iptables ip6tables arptables ebtables fakeroot
	lua-interpreter ftp)

cleanup()
{
	local rc=$? i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}" 2>/dev/null || true
	done
	if grep -q " $W/" /proc/self/mounts; then
		echo "# mounts left under $W: not removing it" >&2
	elif [[ ${GROVE_KEEP:-} == 1 ]]; then
		echo "# kept $W"
	else
		rm -rf --one-file-system "$W"
	fi
	((rc == 0)) && echo "# twin-roots: $steps steps compared in $((SECONDS - start)) s; $known documented differences, 0 unknown" ||
		echo "# twin-roots: FAILED after $steps steps ($known documented differences, $unknown unknown)" >&2
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $* ($((SECONDS - start)) s)"; }

host_ua=$(sha256sum "$UA")
host_grove=$(ls -la --time-style=full-iso /var/lib/grove 2>&1 || true)

# grove's packages, built from a copy of the source as a clone has it, and a rebuilt version of
# grove and grove-alternatives (the version bumped) for the upgrade.
mkdir -p "$W/debs/up"
if [[ -n ${GROVE_TWIN_DEBS:-} ]]; then
	cp "$GROVE_TWIN_DEBS"/grove_*.deb "$GROVE_TWIN_DEBS"/grove-alternatives_*.deb "$W/debs/"
else
	mkdir -p "$W/src/grove"
	(cd "$SRC_ROOT" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh | tar --null -T - -cf -) |
		tar -xf - -C "$W/src/grove"
	(cd "$W/src/grove" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b >"$W/build.log" 2>&1) ||
		fail "dpkg-buildpackage: $(tail -20 "$W/build.log")"
	cp "$W"/src/grove_*.deb "$W"/src/grove-alternatives_*.deb "$W/debs/"
fi
for p in grove grove-alternatives; do
	f=$(cd "$W/debs" && echo "${p}"_*.deb)
	rm -rf "$W/up"
	dpkg-deb -R "$W/debs/$f" "$W/up"
	sed -i 's/^Version: .*/&+rebuilt1/' "$W/up/DEBIAN/control"
	dpkg-deb -b -Zgzip "$W/up" "$W/debs/up/$f" >/dev/null
done
rm -rf "$W/up"
note "grove's packages: $(cd "$W/debs" && echo *.deb), rebuilt in up/"

# One pristine root, then its twin: a copy.
P=$W/pristine
if [[ -n ${GROVE_BOOKWORM_CACHE:-} && -d $GROVE_BOOKWORM_CACHE/usr ]]; then
	cp -a "$GROVE_BOOKWORM_CACHE" "$P"
else
	debootstrap --variant=minbase bookworm "$P" "$MIRROR" >"$W/debootstrap.log" 2>&1 ||
		fail "debootstrap: $(tail -20 "$W/debootstrap.log")"
	[[ -z ${GROVE_BOOKWORM_CACHE:-} ]] || cp -a "$P" "$GROVE_BOOKWORM_CACHE"
fi
echo "deb $MIRROR bookworm main" >"$P/etc/apt/sources.list"
cp /etc/resolv.conf "$P/etc/resolv.conf"
printf '#!/bin/sh\nexit 101\n' >"$P/usr/sbin/policy-rc.d" && chmod 755 "$P/usr/sbin/policy-rc.d"
ARCH=${GROVE_TWIN_ARCHIVES:-$W/archives}
mkdir -p "$ARCH/partial"

mount_root()
{
	local r=$1 d name maj min
	mount -t proc proc "$r/proc" && mounts+=("$r/proc")
	mount -t tmpfs -o mode=755 tmpfs "$r/dev" && mounts+=("$r/dev")
	for d in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
		IFS=: read -r name maj min <<<"$d"
		mknod -m 666 "$r/dev/$name" c "$maj" "$min"
	done
	mkdir -p "$r/dev/pts"
	mount --bind "$ARCH" "$r/var/cache/apt/archives" && mounts+=("$r/var/cache/apt/archives")
}
umount_root()
{
	local r=$1 m keep=()
	for m in "${mounts[@]}"; do
		if [[ $m == "$r"/* ]]; then umount "$m"; else keep+=("$m"); fi
	done
	mounts=("${keep[@]}")
}
sys()
{
	local r=$1
	shift
	chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@"
}

mount_root "$P"
sys "$P" apt-get update >"$W/update.log" 2>&1 || fail "apt-get update: $(tail "$W/update.log")"
missing=()
for p in "${PKGS[@]}"; do
	sys "$P" apt-cache show "$p" >/dev/null 2>&1 || missing+=("$p")
done
((${#missing[@]} == 0)) || fail "not in bookworm: ${missing[*]}"
# The .debs both roots will install, downloaded once.
sys "$P" apt-get install -y --download-only "${PKGS[@]}" >"$W/download.log" 2>&1 ||
	fail "apt-get --download-only: $(tail "$W/download.log")"
umount_root "$P"
cp -a "$P" "$D"
mv "$P" "$G"
mkdir -p "$G/root/debs"
cp -a "$W/debs/." "$G/root/debs/"
mount_root "$D"
mount_root "$G"
real_sum=$(sha256sum <"$D$UA")
note "two roots from one debootstrap of bookworm (dpkg $(sys "$D" dpkg-query -W -f '${Version}' dpkg)), ${#PKGS[@]} packages' .debs downloaded"

# ---- the comparison ----------------------------------------------------------------------------

declare -A logn=([d]=0 [g]=0)

# snap ROOT KEY RC OUTFILE: what is compared, one section per line prefix.
snap()
{
	local r=$1 k=$2 rc=$3 out=$4 f n
	{
		echo "rc $rc"
		[[ -z $out ]] || sed 's/^/out /' "$out"
		sys "$r" update-alternatives --get-selections 2>&1 | sed 's/^/sel /'
		# shellcheck disable=SC2016 # expanded in the root's shell
		sys "$r" sh -c 'for f in /var/lib/dpkg/alternatives/*; do
			n=${f##*/}; case $n in *.dpkg-tmp) continue ;; esac
			update-alternatives --query "$n" 2>&1 | sed "s|^|query $n |"; done'
		(cd "$r/etc/alternatives" && find . -mindepth 1 -printf 'link %P %y %l\n' | LC_ALL=C sort)
		for f in "$r"/var/lib/dpkg/alternatives/* "$r"/var/lib/dpkg/alternatives/.[!.]*; do
			[[ -e $f || -L $f ]] || continue
			[[ ${f##*/} == ".grove lock.dpkg-tmp" ]] && continue
			echo "admin ${f##*/} $(sha256sum <"$f" | cut -c1-16)"
			sed "s|^|admin ${f##*/}: |" "$f"
		done
		n=0
		[[ -f $r/var/log/alternatives.log ]] && n=$(wc -l <"$r/var/log/alternatives.log")
		if ((n > logn[$k])); then
			tail -n +"$((logn[$k] + 1))" "$r/var/log/alternatives.log" |
				sed -E 's/^[^ ]+ [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}: /log /'
		fi
		logn[$k]=$n
	}
}

# A difference documented in docs/alternatives.md's table, by its kind; nothing for any other.
# None of the table's kinds can arise from these steps as they are: no regular file stands where a
# link goes (foreign-file-kept, --force), every link stays inside the root (Debian's links are
# relative), one run at a time (lock), the log is the system's default under update-alternatives'
# own name, no --set-selections names a group twice, no line of 1,024 bytes; grove's lock file is
# left out of the snapshot. A step added that meets one gets its pattern here, with its kind.
known_difference()
{
	case $1 in
	*) return 1 ;;
	esac
}

# While grove is in place in G, dpkg's own program (its diverted name) reads grove's admin files
# as grove does.
cross_read()
{
	local what=$1
	[[ -L $G$UA && -f $G$UA.dpkg-real ]] || return 0
	sys "$G" update-alternatives --get-selections >"$W/sel-grove" 2>&1 || true
	sys "$G" update-alternatives.dpkg-real --get-selections >"$W/sel-real" 2>&1 || true
	diff "$W/sel-real" "$W/sel-grove" >&2 || fail "$what: in G, dpkg's program and grove read the admin files differently"
}

compare()
{
	local what=$1 line kind
	steps=$((steps + 1))
	cross_read "$what"
	if diff "$W/snap-d" "$W/snap-g" >"$W/diff"; then
		echo "ok $steps - $what ($((SECONDS - start)) s)"
		return 0
	fi
	echo "# step $steps, $what: D (dpkg's) and G (grove's) differ:"
	local u=0
	while IFS= read -r line; do
		[[ $line == [\<\>]* ]] || continue
		if kind=$(known_difference "$line"); then
			known=$((known + 1))
			echo "#   documented ($kind): $line"
		else
			u=$((u + 1))
			((u > 60)) || echo "#   UNKNOWN: $line"
		fi
	done <"$W/diff"
	((u <= 60)) || echo "#   ... and $((u - 60)) more unknown lines (GROVE_KEEP=1 keeps $W/snap-d and snap-g)"
	unknown=$((unknown + u))
	((u == 0)) || { echo "not ok $steps - $what"; fail "step $steps ($what): $u unexplained differences"; }
	echo "ok $steps - $what, documented differences only ($((SECONDS - start)) s)"
}

# both WHAT COMMAND [ua]: the shell COMMAND in D, then in G; then compare. With "ua" the
# command's output is compared too (an update-alternatives command; apt's output is not).
both()
{
	local what=$1 cmd=$2 ua=${3:-} rc k r bad=()
	for k in d g; do
		r=$W/$k
		rc=0
		sys "$r" sh -c "$cmd" >"$W/out-$k" 2>&1 || rc=$?
		if [[ -z $ua ]]; then
			((rc == 0)) || bad+=("exited $rc in ${k^^}: $(tail -5 "$W/out-$k")")
			snap "$r" "$k" "$rc" "" >"$W/snap-$k"
		else
			snap "$r" "$k" "$rc" "$W/out-$k" >"$W/snap-$k"
		fi
	done
	compare "$what"
	# An apt run must succeed (two equal failures would compare equal).
	((${#bad[@]} == 0)) || fail "$what: '$cmd' ${bad[*]}"
}

# in_g WHAT COMMAND: a step of G alone (the grove package), then the roots compared again.
in_g()
{
	local what=$1 cmd=$2 k
	sys "$G" sh -c "$cmd" >"$W/out-g" 2>&1 || fail "$what: $(tail -20 "$W/out-g")"
	for k in d g; do
		snap "$W/$k" "$k" 0 "" >"$W/snap-$k"
	done
	compare "$what (in G only)"
}

expect_ua()
{
	local what=$1
	if [[ $what == grove ]]; then
		[[ -L $G$UA && $(readlink "$G$UA") == grove ]] || fail "$UA in G is not grove: $(ls -l "$G$UA")"
	else
		[[ -f $G$UA && ! -L $G$UA && $(sha256sum <"$G$UA") == "$real_sum" ]] || fail "$UA in G is not dpkg's: $(ls -l "$G$UA")"
	fi
	[[ -f $D$UA && ! -L $D$UA && $(sha256sum <"$D$UA") == "$real_sum" ]] || fail "$UA in D is not dpkg's"
}

# The choice of GROUP in D that is not the current one: its last in --list order, else its first.
other_choice()
{
	local g=$1 cur
	cur=$(readlink "$D/etc/alternatives/$g" || true)
	sys "$D" update-alternatives --list "$g" | { grep -vxF -- "$cur" || true; } | tail -1
}
# The group's choice numbered as --config numbers them (its --list order, 1-based).
choice_no()
{
	local g=$1 want=$2
	sys "$D" update-alternatives --list "$g" | { grep -nxF -- "$want" || true; } | cut -d: -f1
}

APT="apt-get -y -o Dpkg::Use-Pty=0"
NEW=/root/debs/up

# ---- the steps ---------------------------------------------------------------------------------

both "the starting roots" "true"
# The comparison sees a difference: a link in /etc/alternatives, a log line and an exit status
# that only G has.
ln -s /nowhere "$G/etc/alternatives/grove-twin-canary"
echo "update-alternatives 2026-01-01 00:00:00: grove-twin canary" >>"$G/var/log/alternatives.log"
snap "$D" d 0 "" >"$W/snap-d"
snap "$G" g 1 "" >"$W/snap-g"
canary=$(diff "$W/snap-d" "$W/snap-g" | grep -c '^>' || true)
((canary == 3)) || fail "the canary: $canary differences seen, not 3: $(diff "$W/snap-d" "$W/snap-g")"
rm "$G/etc/alternatives/grove-twin-canary"
if [[ -s $D/var/log/alternatives.log ]]; then
	sed -i '$d' "$G/var/log/alternatives.log"
else
	rm "$G/var/log/alternatives.log"
fi
logn[g]=${logn[d]}
note "the canary: a link, a log line and an exit status of G's alone are 3 differences"
in_g "grove and grove-alternatives installed" "$APT install /root/debs/grove_*.deb /root/debs/grove-alternatives_*.deb"
expect_ua grove
both "apt-get install ${#PKGS[@]} packages with alternatives" "$APT install ${PKGS[*]}"
note "$(find "$D/var/lib/dpkg/alternatives" -mindepth 1 | wc -l) groups in D after the installs"

for g in "${GROUPS_SW[@]}"; do
	c=$(other_choice "$g") || fail "group $g: --list failed in D"
	[[ -n $c ]] || fail "group $g has no second choice"
	both "update-alternatives --set $g $c" "update-alternatives --set $g $c" ua
done
both "update-alternatives --set editor /usr/bin/no-such-editor (fails)" \
	"update-alternatives --set editor /usr/bin/no-such-editor" ua
for g in editor pager www-browser nc; do
	c=$(sys "$D" update-alternatives --list "$g" | sed -n 1p)
	i=$(choice_no "$g" "$c")
	both "echo $i | update-alternatives --config $g ($c)" "echo $i | update-alternatives --config $g" ua
done
both "echo 0 | update-alternatives --config awk (auto)" "echo 0 | update-alternatives --config awk" ua
both "update-alternatives --config ex with no answer" "update-alternatives --config ex </dev/null" ua

in_g "grove and grove-alternatives upgraded to a rebuilt version" "$APT install $NEW/grove_*.deb $NEW/grove-alternatives_*.deb"
expect_ua grove
[[ $(sys "$G" dpkg-query -W -f '${Version}' grove-alternatives) == *rebuilt1 ]] || fail "not upgraded"

sel=$(for g in editor vi mt nc; do
	c=$(other_choice "$g")
	echo "$g manual $c"
done
echo "awk manual /usr/bin/original-awk"
echo "pager auto /usr/bin/less"
echo "no-such-group auto /usr/bin/none")
printf '%s\n' "$sel" >"$D/root/sel"
cp "$D/root/sel" "$G/root/sel"
both "update-alternatives --set-selections ($(echo "$sel" | wc -l) lines)" "update-alternatives --set-selections </root/sel" ua
both "update-alternatives --get-selections | --set-selections (the same again)" \
	"update-alternatives --get-selections | update-alternatives --set-selections" ua
for g in editor awk pager www-browser nc mt rename; do
	both "update-alternatives --auto $g" "update-alternatives --auto $g" ua
done
both "update-alternatives --set vi $(other_choice vi)" "update-alternatives --set vi $(other_choice vi)" ua
both "update-alternatives --install editor mg 200 with a follower" \
	"update-alternatives --install /usr/bin/editor editor /usr/bin/mg 200 --slave /usr/share/man/man1/editor.1.gz editor.1.gz /usr/share/man/man1/mg.1.gz" ua
both "update-alternatives --remove editor /usr/bin/mg" "update-alternatives --remove editor /usr/bin/mg" ua
both "update-alternatives --remove-all rename" "update-alternatives --remove-all rename" ua
both "apt-get install --reinstall rename" "$APT install --reinstall rename"
# grove made these groups in G: its journal has the maintainer scripts' commands.
sys "$G" grove log -t / >"$W/grove-log" 2>&1 || fail "grove log: $(tail "$W/grove-log")"
for c in "--install /usr/bin/editor editor /bin/nano" "--install /bin/nc nc /bin/nc.openbsd" \
	"--install /bin/mt mt /bin/mt-gnu" "--install /lib/cpp cpp /usr/bin/cpp" "--set-selections" \
	"--remove-all rename"; do
	grep -qF -- " $c" "$W/grove-log" || fail "grove's journal has no 'update-alternatives ... $c'"
done
note "grove's journal in G: $(grep -c 'update-alternatives' "$W/grove-log") update-alternatives transactions"

both "apt-get remove ${GONE[*]}" "$APT remove ${GONE[*]}"
both "apt-get install --reinstall nvi mg" "$APT install --reinstall nvi mg"
both "apt-get purge ${GONE[*]}" "$APT purge ${GONE[*]}"

in_g "grove-alternatives removed (dpkg's program back)" "$APT remove grove-alternatives"
expect_ua dpkg
both "apt-get install ${GONE[*]} (grove removed from G)" "$APT install ${GONE[*]}"
both "update-alternatives --set editor $(other_choice editor) (dpkg's in both)" \
	"update-alternatives --set editor $(other_choice editor)" ua
in_g "grove-alternatives installed again (the rebuilt version)" "$APT install $NEW/grove-alternatives_*.deb"
expect_ua grove

both "apt-get install --reinstall vim nano netcat-traditional" "$APT install --reinstall vim nano netcat-traditional"
for g in editor nc mt; do
	both "update-alternatives --set $g $(other_choice $g)" "update-alternatives --set $g $(other_choice $g)" ua
done
both "apt-get purge vim-tiny vim mt-st" "$APT purge vim-tiny vim mt-st"
both "apt-get install vim-tiny vim mt-st" "$APT install vim-tiny vim mt-st"
both "apt-get purge every package" "$APT purge ${PKGS[*]}"
both "apt-get autoremove --purge" "$APT autoremove --purge"

in_g "grove-alternatives and grove purged" "$APT purge grove-alternatives grove"
expect_ua dpkg
both "apt-get install ${PKGS[*]:0:10} (no grove anywhere)" "$APT install ${PKGS[*]:0:10}"

[[ $(sha256sum "$UA") == "$host_ua" ]] || fail "the host's $UA changed"
[[ $(ls -la --time-style=full-iso /var/lib/grove 2>&1 || true) == "$host_grove" ]] || fail "the host's /var/lib/grove changed"
note "the host's $UA and /var/lib/grove untouched"
