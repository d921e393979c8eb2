#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The fleet benchmark (issue 19), run by hand: 8, 32 and 64 local hosts (ansible_connection=local,
# each its own root, made by examples/fleet/make-fleet.sh), the dotfiles shape per host (4 packages,
# dot-files and a folder). Times, at forks 8: a first apply (grove.farm.package), a no-op apply, a
# check run, and ansible.builtin.ping over the same hosts; and grove's own part: the same stow run
# directly on every host, one after the other. Usage: bench/fleet.sh [HOSTS...] (default 8 32 64).
# bench/fleet.sh --netns [HOSTS...] (default 10 25 50): the same over SSH, on fleets of
# examples/fleet/netns-fleet.sh (bench/fleet-netns.py; root).
set -euo pipefail
if [[ ${1:-} == --netns ]]; then
	shift
	exec /usr/bin/python3 "$(dirname "$0")/fleet-netns.py" "$@"
fi
src=$(cd "$(dirname "$0")/.." && pwd)
grove=${GROVE:-$src/build/grove}
[[ -x $grove ]] || { echo "bench/fleet.sh: build grove first (ninja -C build)" >&2; exit 1; }
command -v ansible-playbook >/dev/null || { echo "bench/fleet.sh: needs ansible-core" >&2; exit 1; }
sizes=("$@")
((${#sizes[@]})) || sizes=(8 32 64)
work=$(mktemp -d /tmp/grove-bench-fleet.XXXXXX)
trap 'rm -rf "$work"' EXIT

cat >"$work/dotfiles.yml" <<'YML'
- hosts: fleet
  gather_facts: false
  environment: "{{ {'HOME': fleet_root ~ '/home'} }}"
  tasks:
    - name: dotfiles
      grove.farm.package:
        grove: "{{ fleet_root }}/bin/grove"
        state_dir: "{{ fleet_root }}/state"
        dir: ~/dotfiles
        target: "~"
        packages: [bash, git, vim, tmux]
        dotfiles: true
YML
cat >"$work/ping.yml" <<'YML'
- hosts: fleet
  gather_facts: false
  tasks:
    - name: ping
      ansible.builtin.ping:
YML

# secs CMD...: runs CMD (quietly); prints "WALL/CPU" - its wall time and the CPU time (user + system)
# of it and its children, in seconds. CPU time is the figure to compare on a shared machine: other
# loads stretch the wall time, not it. Fails the bench when CMD fails.
secs()
{
	local t
	t=$( { TIMEFORMAT='%R %U %S'; time "$@" >"$work/out" 2>&1; } 2>&1 ) ||
		{ cat "$work/out" >&2; echo "bench/fleet.sh: failed: $*" >&2; exit 1; }
	python3 -c "import sys; r, u, s = map(float, sys.argv[1:]); print('%.1f/%.1f' % (r, u + s))" $t
}
cpu() { echo "${1#*/}"; }

echo 'each: wall/CPU seconds; no-op/ping is the ratio of CPU times'
printf '%-6s %12s %12s %12s %12s %10s %10s %8s\n' hosts first no-op check ping grove-1st grove-noop no-op/ping
for n in "${sizes[@]}"; do
	f=$work/f$n
	bash "$src/examples/fleet/make-fleet.sh" "$f" "$n" "$grove" >/dev/null 2>&1
	export ANSIBLE_CONFIG=$f/ansible.cfg ANSIBLE_HOME=$work/ah ANSIBLE_LOCAL_TEMP=$work/lt
	export ANSIBLE_REMOTE_TMP=$work/rt ANSIBLE_PIPELINING=1
	ap=(ansible-playbook --forks 8)
	check=$(secs "${ap[@]}" --check "$work/dotfiles.yml")
	first=$(secs "${ap[@]}" "$work/dotfiles.yml")
	grep -q "changed=1" "$work/out" || { echo "bench/fleet.sh: the first apply changed nothing" >&2; exit 1; }
	noop=$(secs "${ap[@]}" "$work/dotfiles.yml")
	grep -q "changed=1" "$work/out" && { echo "bench/fleet.sh: the no-op apply changed something" >&2; exit 1; }
	ping=$(secs "${ap[@]}" "$work/ping.yml")
	# grove's own part: the same stow on every host, directly, one after the other (a second
	# fleet, so the first is a real first stow).
	g=$work/g$n
	MAKE_FLEET_NO_COLLECTION=1 bash "$src/examples/fleet/make-fleet.sh" "$g" "$n" "$grove" >/dev/null 2>&1
	stow_all()
	{
		for r in "$g"/hosts/h*; do
			HOME=$r/home "$grove" --state "$r/state" --json stow -d "$r/home/dotfiles" -t "$r/home" \
				--dotfiles bash git vim tmux >/dev/null
		done
	}
	g1=$(secs stow_all)
	g2=$(secs stow_all)
	printf '%-6s %12s %12s %12s %12s %10s %10s %8s\n' "$n" "$first" "$noop" "$check" "$ping" "$g1" "$g2" \
		"$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$(cpu "$noop")" "$(cpu "$ping")")"
	rm -rf "$f" "$g"
done
echo "(seconds of wall time; forks 8; ansible-core $(ansible --version 2>/dev/null | sed -n '1s/.*core \([0-9.]*\).*/\1/p'); load $(cut -d' ' -f1-3 /proc/loadavg))"
