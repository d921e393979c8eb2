#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Makes a test fleet on this machine: N hosts, each its own root (home with dotfiles, /usr/local/stow
# with two versions of a package, files for an alternative, packages for a profile, a state dir),
# all reached with ansible_connection=local, and FLEET/inventory.ini listing them.
#   make-fleet.sh FLEET [N] [GROVE]   (N default 8; GROVE: the grove binary the hosts get, default
#                                      build/grove of this source tree)
set -euo pipefail
fleet=${1:?usage: make-fleet.sh FLEET [N] [GROVE]}
n=${2:-8}
src=$(cd "$(dirname "$0")/../.." && pwd)
grove=${3:-$src/build/grove}
[[ -x $grove ]] || { echo "make-fleet: no grove binary at $grove (build it: meson setup build && ninja -C build)" >&2; exit 1; }
mkdir -p "$fleet/hosts"
fleet=$(cd "$fleet" && pwd)

mk() { mkdir -p "$(dirname "$1")" && printf '%s\n' "$2" >"$1"; }

inv=$fleet/inventory.ini
{
	echo "# A fleet made by examples/fleet/make-fleet.sh: every host is a folder of this machine."
	echo "[fleet]"
} >"$inv"
for i in $(seq 1 "$n"); do
	h=$(printf 'h%02d' "$i")
	r=$fleet/hosts/$h
	mk "$r/home/dotfiles/bash/dot-bashrc" "# bashrc of $h"
	mk "$r/home/dotfiles/git/dot-gitconfig" "[user] name = me"
	mk "$r/home/dotfiles/vim/dot-vimrc" "set number"
	mk "$r/home/dotfiles/vim/dot-vim/colors/dark.vim" "hi Normal guibg=black"
	mk "$r/home/dotfiles/tmux/dot-tmux.conf" "set -g mouse on"
	for v in 2.12 2.13; do
		mk "$r/usr/local/stow/hello-$v/bin/hello" "#!/bin/sh
echo hello $v"
		chmod +x "$r/usr/local/stow/hello-$v/bin/hello"
		mk "$r/usr/local/stow/hello-$v/share/man/man1/hello.1" ".TH HELLO 1 $v"
	done
	mk "$r/usr/bin/vim.basic" "vim"
	mk "$r/bin/nano" "nano"
	mk "$r/usr/share/man/man1/vim.1.gz" "vim.1"
	mk "$r/usr/share/man/man1/nano.1.gz" "nano.1"
	mkdir -p "$r/etc/alternatives"
	mk "$r/home/pkgs/ripgrep/bin/rg" "rg"
	mk "$r/home/pkgs/fd/bin/fd" "fd"
	mkdir -p "$r/state" "$r/bin" && chmod 700 "$r/state"
	# Provisioned with grove already (site.yml's install play then finds it in place).
	cp "$grove" "$r/bin/grove"
	echo "$h fleet_root=$r" >>"$inv"
done
cat >>"$inv" <<-INI

	[servers]
	$(for i in $(seq 1 $(( (n + 1) / 2 ))); do printf 'h%02d\n' "$i"; done)

	[fleet:vars]
	ansible_connection=local
	ansible_python_interpreter=/usr/bin/python3
	grove_install_method=binary
	grove_install_binary=$grove
	grove_install_deps=false
INI


# The collection, built and installed the way a user installs it, and a config using both.
if [[ ${MAKE_FLEET_NO_COLLECTION:-} != 1 ]]; then
	(cd "$fleet" && ansible-galaxy collection build --force "$src/ansible" >/dev/null &&
		ansible-galaxy collection install --force -p "$fleet/collections" grove-farm-*.tar.gz >/dev/null)
fi
cat >"$fleet/ansible.cfg" <<-CFG
	[defaults]
	inventory = $inv
	collections_path = $fleet/collections
	forks = 8
	host_key_checking = False
	retry_files_enabled = False
	interpreter_python = /usr/bin/python3
CFG
echo "fleet of $n hosts in $fleet; now: ANSIBLE_CONFIG=$fleet/ansible.cfg ansible-playbook $src/examples/fleet/site.yml --check --diff" >&2
