#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs what grove needs to build and test on Debian 12 (a fresh machine lacks meson, cmocka, scdoc;
# zsh and fish are there to test the completions, debhelper and lintian the Debian package,
# ansible-core, openssh-server and iproute2 the fleet tests);
# as root, or through sudo when run by another user.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
as_root=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: run as root (or install sudo)" >&2; exit 1; }
    as_root=(sudo --preserve-env=DEBIAN_FRONTEND)
fi
pkgs=(build-essential pkg-config meson ninja-build
      libyaml-dev libsqlite3-dev libpcre2-dev libjansson-dev libcmocka-dev scdoc
      python3 perl dpkg util-linux strace clang-format clang-tidy tree sqlite3
      zsh fish dpkg-dev debhelper lintian
      ansible-core openssh-server openssh-client python3-yaml iproute2)
# Waits (up to 10 minutes) for another apt or dpkg holding a lock instead of giving up: dpkg's lock
# through DPkg::Lock::Timeout, and the lists lock of `apt-get update`, which some apt versions do not
# wait for, by trying again.
apt_get()
{
    local deadline=$((SECONDS + 600)) out rc
    while :; do
        rc=0
        out=$("${as_root[@]}" apt-get -o DPkg::Lock::Timeout=600 "$@" 2>&1) || rc=$?
        printf '%s\n' "$out"
        if ((rc != 0)) && ((SECONDS < deadline)) && grep -q 'Could not get lock' <<<"$out"; then
            echo "install-deps: apt is busy (another apt or dpkg holds its lock); waiting" >&3
            sleep 10
            continue
        fi
        return "$rc"
    done
}
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    log=$(mktemp)
    exec 3>&2
    if ! { apt_get update -qq &&
           apt_get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
        cat "$log" >&2
        echo "install-deps: apt-get failed installing: ${missing[*]}" >&2
        exit 1
    fi
    rm -f "$log"
fi
