#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A fleet of N real hosts on this machine, reached over SSH (docs/fleet.md, "A fleet in network
# namespaces"). Needs root, iproute2, openssh-server, util-linux and ansible-core.
#
#   netns-fleet.sh up FLEET [N] [GROVE]   makes the fleet (N default 12, at most 200) in folder FLEET
#   netns-fleet.sh down FLEET             tears it down: every process, namespace and mount, and
#                                         returns once they are gone
#   netns-fleet.sh exec FLEET CMD...      runs CMD in the controller's network namespace
#   netns-fleet.sh restart FLEET HOST     kills every process of HOST (hNN) and starts its sshd again
#
# Each host hNN is
#  - a network namespace PREFIX-hNN whose eth0 (10.213.0.(10+NN)/24) is one end of a veth pair;
#    the other end is a port of the bridge br0 in the controller's namespace PREFIX-ctl
#    (10.213.0.1/24). Nothing else is in either namespace: no route leaves them, and two fleets
#    (PREFIX is gfl-XXXXXX, made for each fleet) never see each other or this machine's network;
#  - a mount namespace with its own root home (/root), /usr/local (so /usr/local/stow and
#    /usr/local/bin, where the install role puts grove), /etc/alternatives,
#    /var/lib/dpkg/alternatives and grove's state dir /var/lib/grove, bound from FLEET/hosts/hNN/
#    (/var/lib is an overlay whose changes go to that folder too), and FLEET/hosts hidden under an
#    empty tmpfs: grove on one host sees no other host's files, and nothing of this machine's own
#    /usr/local, alternatives, dpkg database or /var/lib/grove is read or written;
#  - an sshd (key-only, root with the fleet's key, a host key made for this fleet) listening on
#    the host's address only, the namespace's first process: killing it and what it started, then
#    deleting the namespace, leaves nothing (the mounts live and die with the mount namespace).
# FLEET/ansible.cfg and FLEET/inventory.ini then reach the hosts as a real deployment does: ssh with
# the fleet's key, known host keys checked, pipelining and ControlPersist on, the grove.farm
# collection installed with ansible-galaxy into FLEET/collections. Run Ansible in the controller's
# namespace:
#   netns-fleet.sh exec FLEET env ANSIBLE_CONFIG=FLEET/ansible.cfg ansible-playbook PLAYBOOK
# With FLEET_STATE_TMPFS="h03 h07" those hosts' /var/lib/grove is a 1 MiB tmpfs of its own (to fill
# and see grove fail on a full disk).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
self=$src/examples/fleet/netns-fleet.sh
usage() { echo "usage: netns-fleet.sh up FLEET [N] [GROVE] | down FLEET | exec FLEET CMD... | restart FLEET HOST" >&2; exit 2; }
cmd=${1:-}
fleet=${2:-}
[[ -n $cmd && -n $fleet ]] || usage

# Every process in the fleet's namespaces killed, then the namespaces deleted. Safe to run twice, and
# on a fleet half made.
down()
{
	local p ns pids
	[[ -f $fleet/prefix ]] || return 0
	p=$(<"$fleet/prefix")
	[[ $p == gfl-?????? ]] || { echo "netns-fleet: bad prefix '$p' in $fleet/prefix" >&2; return 1; }
	local all=()
	for ns in $(ip netns list | awk -v p="$p-" 'index($1, p) == 1 {print $1}'); do
		# Twice: a listener could have forked between the listing and the kill.
		for _ in 1 2; do
			pids=$(ip netns pids "$ns" 2>/dev/null || true)
			[[ -z $pids ]] || kill -9 $pids 2>/dev/null || true
			all+=($pids)
		done
		ip netns del "$ns" 2>/dev/null || true
	done
	wait_gone "${all[@]}"
}

# Returns once the processes $@ have ended (their mount namespaces with them): a pidfd each, no
# polling.
wait_gone()
{
	(($# == 0)) || python3 -c '
import os, select, sys
for p in sys.argv[1:]:
    try:
        fd = os.pidfd_open(int(p))
    except ProcessLookupError:
        continue
    if not select.select([fd], [], [], 30)[0]:
        sys.exit("netns-fleet: process %s still there 30 s after SIGKILL" % p)
' "$@"
}

# Host $1's view of the files, then its sshd, in its namespaces. sshd binds its address before it
# forks into the background and this returns, so the host answers from then on (no polling).
start_host()
{
	local h=$1 r=$fleet/hosts/$1 ssh=$fleet/ssh state_tmpfs=:
	local ns sshd
	ns=$(<"$fleet/prefix")-$h
	sshd=$(command -v sshd || echo /usr/sbin/sshd)
	[[ ! -e $r/state-tmpfs ]] || state_tmpfs="mount -t tmpfs -o size=1m,mode=700 gfl-state /var/lib/grove"
	ip netns exec "$ns" unshare --mount --propagation private /bin/sh -euc "
		mount --bind '$r/root' /root
		mount --bind '$r/usr-local' /usr/local
		mount --bind '$r/etc-alternatives' /etc/alternatives
		mount -t overlay gfl-var-lib -o 'lowerdir=/var/lib,upperdir=$r/var-lib/upper,workdir=$r/var-lib/work' /var/lib
		mkdir -p /var/lib/grove
		mount --bind '$r/state' /var/lib/grove
		$state_tmpfs
		mount --bind '$r/dpkg-alternatives' /var/lib/dpkg/alternatives
		mount -t tmpfs -o size=4k,mode=755 gfl-hidden '$fleet/hosts'
		[ -d /run/sshd ] || mount -t tmpfs -o mode=755 gfl-run /run
		mkdir -p /run/sshd
		exec '$sshd' -f '$ssh/$h/sshd_config' -E '$ssh/$h/sshd.log'
	"
}

case $cmd in
down)
	down
	exit 0
	;;
restart)
	# Host $3 anew: its processes killed, then its view and sshd started again.
	h=${3:?usage: netns-fleet.sh restart FLEET HOST}
	[[ $h =~ ^h[0-9][0-9]$ && -d $fleet/hosts/$h ]] || { echo "netns-fleet: no host '$h' in $fleet" >&2; exit 2; }
	fleet=$(cd "$fleet" && pwd)
	ns=$(<"$fleet/prefix")-$h
	all=()
	for _ in 1 2; do
		pids=$(ip netns pids "$ns")
		[[ -z $pids ]] || kill -9 $pids 2>/dev/null || true
		all+=($pids)
	done
	wait_gone "${all[@]}"
	start_host "$h"
	exit 0
	;;
exec)
	p=$(<"$fleet/prefix")
	shift 2
	exec ip netns exec "$p-ctl" "$@"
	;;
up) ;;
*) usage ;;
esac

n=${3:-12}
grove=${4:-$src/build/grove}
[[ $n =~ ^[0-9]+$ ]] && ((n >= 1 && n <= 200)) || { echo "netns-fleet: N must be 1 to 200, not '$n'" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "netns-fleet: needs root (network and mount namespaces)" >&2; exit 1; }
[[ -x $grove ]] || { echo "netns-fleet: no grove binary at '$grove' (meson setup build && ninja -C build)" >&2; exit 1; }
for t in ip sshd ssh-keygen unshare ansible-galaxy; do
	command -v "$t" >/dev/null || [[ -x /usr/sbin/$t ]] ||
		{ echo "netns-fleet: '$t' not found (bash scripts/install-deps.sh installs it)" >&2; exit 1; }
done
mkdir -p "$fleet"
fleet=$(cd "$fleet" && pwd)
[[ ! -e $fleet/prefix ]] || { echo "netns-fleet: '$fleet' holds a fleet already (netns-fleet.sh down it first)" >&2; exit 1; }
p=gfl-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
echo "$p" >"$fleet/prefix"
# From here on a failure or an interruption takes down what was made.
trap 'down' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
chmod 755 "$fleet"
ctl=$p-ctl
ssh=$fleet/ssh
mkdir -p "$ssh" "$fleet/hosts" "$fleet/host_vars"
chmod 700 "$ssh"
ssh-keygen -q -t ed25519 -N '' -C "grove fleet $p" -f "$ssh/id_ed25519"
cp "$ssh/id_ed25519.pub" "$ssh/authorized_keys"
: >"$ssh/known_hosts"

ip netns add "$ctl"
ip -n "$ctl" link set lo up
ip -n "$ctl" link add br0 type bridge
ip -n "$ctl" addr add 10.213.0.1/24 dev br0
ip -n "$ctl" link set br0 up

mk() { mkdir -p "$(dirname "$1")" && printf '%s\n' "$2" >"$1"; }
inv=$fleet/inventory.ini
{
	echo "# A fleet made by examples/fleet/netns-fleet.sh: every host a network namespace with its own sshd."
	echo "[fleet]"
} >"$inv"
for i in $(seq 1 "$n"); do
	h=$(printf 'h%02d' "$i")
	addr=10.213.0.$((10 + i))
	ns=$p-$h
	r=$fleet/hosts/$h
	# The host's files: what grove manages there, the same on every host.
	mk "$r/root/dotfiles/bash/dot-bashrc" "# bashrc"
	mk "$r/root/dotfiles/git/dot-gitconfig" "[user] name = me"
	mk "$r/root/dotfiles/vim/dot-vimrc" "set number"
	mk "$r/root/dotfiles/vim/dot-vim/colors/dark.vim" "hi Normal guibg=black"
	for v in 2.12 2.13; do
		mk "$r/usr-local/stow/hello-$v/bin/hello" "#!/bin/sh
echo hello $v"
		chmod +x "$r/usr-local/stow/hello-$v/bin/hello"
		mk "$r/usr-local/stow/hello-$v/share/man/man1/hello.1" ".TH HELLO 1 $v"
	done
	mk "$r/usr-local/lib/editors/vim" "#!/bin/sh
echo vim"
	mk "$r/usr-local/lib/editors/nano" "#!/bin/sh
echo nano"
	chmod +x "$r/usr-local/lib/editors/vim" "$r/usr-local/lib/editors/nano"
	mkdir -p "$r/usr-local/bin" "$r/etc-alternatives" "$r/dpkg-alternatives" "$r/state" \
		"$r/var-lib/upper" "$r/var-lib/work"
	chmod 700 "$r/state" "$r/root"
	[[ " ${FLEET_STATE_TMPFS:-} " != *" $h "* ]] || touch "$r/state-tmpfs"

	mkdir -p "$ssh/$h"
	ssh-keygen -q -t ed25519 -N '' -C "$h" -f "$ssh/$h/host_ed25519"
	echo "$addr $(cut -d' ' -f1,2 "$ssh/$h/host_ed25519.pub")" >>"$ssh/known_hosts"
	cat >"$ssh/$h/sshd_config" <<-CFG
		ListenAddress $addr
		HostKey $ssh/$h/host_ed25519
		AuthorizedKeysFile $ssh/authorized_keys
		PidFile $ssh/$h/sshd.pid
		PermitRootLogin prohibit-password
		PubkeyAuthentication yes
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		UsePAM no
		StrictModes no
		MaxStartups 200
		MaxSessions 200
		Subsystem sftp internal-sftp
		LogLevel ERROR
	CFG

	ip netns add "$ns"
	ip -n "$ns" link set lo up
	ip -n "$ctl" link add "$h" type veth peer name eth0 netns "$ns"
	ip -n "$ctl" link set "$h" master br0 up
	ip -n "$ns" addr add "$addr/24" dev eth0
	ip -n "$ns" link set eth0 up
	start_host "$h"
	echo "$h ansible_host=$addr" >>"$inv"
	echo "netns-fleet: $h up at $addr" >&2
done
cat >>"$inv" <<-INI

	[servers]
	$(for i in $(seq 1 $(((n + 1) / 2))); do printf 'h%02d\n' "$i"; done)

	[fleet:vars]
	ansible_user=root
	ansible_python_interpreter=/usr/bin/python3
	grove_install_method=binary
	grove_install_binary=$grove
	grove_install_deps=false
INI

if [[ ${NETNS_FLEET_NO_COLLECTION:-} != 1 ]]; then
	(cd "$fleet" && ansible-galaxy collection build --force "$src/ansible" >/dev/null &&
		ANSIBLE_COLLECTIONS_PATH="$fleet/collections" ansible-galaxy collection install --force -p "$fleet/collections" grove-farm-*.tar.gz >/dev/null)
fi
cat >"$fleet/ansible.cfg" <<-CFG
	[defaults]
	inventory = $inv
	collections_path = $fleet/collections
	forks = 10
	retry_files_enabled = False
	interpreter_python = /usr/bin/python3
	host_key_checking = True
	private_key_file = $ssh/id_ed25519

	[ssh_connection]
	pipelining = True
	control_path_dir = $fleet/cp
	ssh_args = -o ControlMaster=auto -o ControlPersist=120s -o UserKnownHostsFile=$ssh/known_hosts -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes -o ConnectTimeout=10
CFG
trap - EXIT INT TERM
echo "netns-fleet: $n hosts in $fleet (namespaces $p-*); now: $self exec $fleet env ANSIBLE_CONFIG=$fleet/ansible.cfg ansible-playbook $src/examples/fleet/net-site.yml" >&2
