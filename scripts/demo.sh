#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Sets grove up on a fresh Debian machine (packages, build) and runs its main job on the bundled
# example packages: stows them into a throwaway target, shows the forest, unfolds, folds, unstows.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

bash scripts/install-deps.sh
[ -f build-demo/build.ninja ] || meson setup build-demo --buildtype=release >/dev/null
ninja -C build-demo >/dev/null
grove=$top/build-demo/grove

work=$(mktemp -d /tmp/grove-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -a examples/packages "$work/stow"
mkdir "$work/home"
export GROVE_STATE_DIR=$work/state # the demo's own transaction log
cd "$work"

run() {
    printf '\n$ %s\n' "$*"
    "$@"
}
show() {
    echo "  home/ now holds:"
    (cd home && find . -mindepth 1 | sed 's|^\./||' | sort | while IFS= read -r p; do
        if [ -L "$p" ]; then
            printf '    %-28s -> %s\n' "$p" "$(readlink "$p")"
        elif [ -d "$p" ]; then
            printf '    %s/\n' "$p"
        else
            printf '    %s\n' "$p"
        fi
    done)
    [ -n "$(ls -A home)" ] || echo "    (nothing)"
}

echo "grove demo: stow dir $work/stow (packages: $(ls stow | tr '\n' ' ')), target $work/home"
run "$grove" -d stow -t home --dotfiles -S bash vim git tools
show
echo "  (each package folder is one link: tree folding. dot-X became .X with --dotfiles)"
run "$grove" plan -d stow -t home --dotfiles -S extras
run "$grove" -d stow -t home --dotfiles -S extras
show
echo "  (bin/ and share/ were unfolded into real folders: built aside, swapped in atomically)"
run "$grove" -d stow -t home --dotfiles -D tools
show
echo "  (with tools gone, bin/ and share/ folded back into single links to extras)"
run home/bin/bye
run "$grove" -d stow -t home --dotfiles -D bash vim git extras
show
run "$grove" log -t home
echo "  (every change is a transaction in the log: 'grove undo -t home' would put the last one back)"
echo
echo "demo done: the target is empty again and the packages are untouched."
