#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs what grove needs to build and test on Debian 12 (a fresh machine lacks meson, cmocka, scdoc;
# zsh and fish are there to test the completions; ansible-core and openssh-server for the fleet test);
# as root, or through sudo when run by another user.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
as_root=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: run as root (or install sudo)" >&2; exit 1; }
    as_root=(sudo --preserve-env=DEBIAN_FRONTEND)
fi
pkgs=(build-essential pkg-config meson ninja-build
      libyaml-dev libsqlite3-dev libpcre2-dev libcmocka-dev scdoc
      python3 perl dpkg util-linux strace clang-format tree sqlite3
      zsh fish
      ansible-core openssh-server openssh-client python3-yaml)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    log=$(mktemp)
    if ! { "${as_root[@]}" apt-get update -qq &&
           "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
        cat "$log" >&2
        echo "install-deps: apt-get failed installing: ${missing[*]}" >&2
        exit 1
    fi
    rm -f "$log"
fi
