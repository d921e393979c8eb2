#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove apply with dotfiles: true unstows a dropped package whose links all sit inside a folder it
# shares with another package ("dot-config/nvim" linked at ".config/nvim"), whether it is dropped
# from the list or by host/tag selection, and at any depth (issue 16).
source "$(dirname "$0")/lib.sh"

cd "$ROOT"
S=$ROOT/dotfiles
H=$ROOT/home
M=$ROOT/grove.yaml
mkdir -p "$H"
mk_file "$S/nvim/dot-config/nvim/init.lua" "nvim"
mk_file "$S/git/dot-config/git/config" "git"
mk_file "$S/git/dot-gitconfig" "gc"
mk_file "$S/deep/dot-config/git/dot-hooks/pre-commit" "hook"
mk_file "$S/plain/.config/plain/rc" "plain"

manifest()
{
	printf 'defaults: {dir: dotfiles}\ntargets:\n  - path: home\n    dotfiles: true\n    packages:\n' >"$M"
	local p
	for p in "$@"; do
		printf '      - %s\n' "$p" >>"$M"
	done
}

manifest nvim git
expect_exit 0 "$GROVE" apply
[[ -d $H/.config && ! -L $H/.config && -L $H/.config/nvim && -L $H/.config/git ]] ||
	fail "nvim and git do not share a real .config"
manifest git
expect_exit 1 "$GROVE" apply --check
expect_exit 0 "$GROVE" --json apply
expect_out_has '"unstow": ["nvim"]'
expect_out_has '"changed": true'
# nvim's link goes, and .config, now git's alone, folds back into one link.
[[ ! -e $H/.config/nvim && $(readlink "$H/.config") == ../dotfiles/git/dot-config ]] ||
	fail "the dropped package's link inside the shared folder stayed"
expect_exit 0 "$GROVE" status -t "$H"
if grep -q nvim "$OUT"; then fail "status still lists nvim"; fi
expect_exit 0 "$GROVE" apply --check
check "a dotfiles package dropped from the list is unstowed from a shared folder (--check says so)"

# Dropped by host selection: the same.
manifest nvim git
expect_exit 0 "$GROVE" apply
[[ -L $H/.config/nvim ]] || fail "nvim not stowed again"
manifest git '{name: nvim, hosts: [box]}'
GROVE_HOST=other expect_exit 1 "$GROVE" apply --check
GROVE_HOST=other expect_exit 0 "$GROVE" apply
[[ ! -e $H/.config/nvim && $(readlink "$H/.config") == ../dotfiles/git/dot-config ]] ||
	fail "nvim dropped by host selection stayed"
GROVE_HOST=box expect_exit 0 "$GROVE" apply
[[ -L $H/.config/nvim ]] || fail "nvim not stowed on its host"
manifest git '{name: nvim, tags: [editor]}'
expect_exit 0 "$GROVE" apply
[[ ! -e $H/.config/nvim && $(readlink "$H/.config") == ../dotfiles/git/dot-config ]] ||
	fail "nvim dropped by tag selection stayed"
check "a dotfiles package dropped by host or tag selection is unstowed from a shared folder"

# Deeper: deep's link sits two folders down (".config/git/.hooks"), git's folder unfolded.
manifest git deep
expect_exit 0 "$GROVE" apply
[[ -L $H/.config/git/.hooks && -L $H/.config/git/config ]] || fail "deep not stowed inside git's folder"
manifest git
expect_exit 0 "$GROVE" apply
[[ ! -e $H/.config/git/.hooks && $(readlink "$H/.config") == ../dotfiles/git/dot-config ]] ||
	fail "deep stayed (or git was not folded back)"
expect_exit 0 "$GROVE" apply --check
check "a dropped dotfiles package two folders down is unstowed and the folder folds back"

# Without dotfiles, as before.
printf 'defaults: {dir: dotfiles}\ntargets:\n  - path: home\n    packages: [plain]\n' >"$M"
expect_exit 0 "$GROVE" apply
printf 'defaults: {dir: dotfiles}\ntargets:\n  - path: home\n    packages: []\n' >"$M"
expect_exit 0 "$GROVE" apply
[[ ! -e $H/.config/plain ]] || fail "plain stayed"
check "without dotfiles, a dropped package in a shared folder goes too"
