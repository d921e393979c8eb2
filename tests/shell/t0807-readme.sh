#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# README.md's quick starts run as printed: each ```sh block of the "Quick start" section is taken
# from README.md and run by bash -e in a scratch home. The blocks without sudo run as an
# unprivileged user (nobody); the one with sudo runs as root through a sudo that only runs its
# command, with /usr/local rewritten to a scratch copy of Debian's empty /usr/local, which is
# never touched. Then what each block promises is checked.
. "$(dirname "$0")/lib.sh"

README=$GROVE_SOURCE_ROOT/README.md
command -v setpriv >/dev/null || fail "setpriv is not installed (util-linux)"
((EUID == 0)) || skip "runs as root (it runs blocks as nobody and a scratch /usr/local through a sudo stand-in)"

# The blocks, one file each: "```sh" … "```" between "## Quick start" and the next "## ".
mkdir -p "$ROOT/blocks"
awk -v dir="$ROOT/blocks" '
	/^## / { inqs = ($0 == "## Quick start") }
	inqs && /^```sh$/ { n++; f = sprintf("%s/%d.sh", dir, n); inblock = 1; next }
	inblock && /^```$/ { inblock = 0; close(f); next }
	inblock { print > f }
' "$README"
blocks=("$ROOT"/blocks/*.sh)
((${#blocks[@]} == 4)) || fail "expected 4 quick-start blocks in README.md, found ${#blocks[@]}"
grep -q 'grove stow --dotfiles' "$ROOT/blocks/1.sh" || fail "block 1 is not the dotfiles quick start"
grep -q 'grove switch' "$ROOT/blocks/2.sh" || fail "block 2 is not the /usr/local/stow quick start"
grep -q 'grove alt' "$ROOT/blocks/3.sh" || fail "block 3 is not the alternatives quick start"
grep -q 'grove profile' "$ROOT/blocks/4.sh" || fail "block 4 is not the profile quick start"
for b in 1 3 4; do
	! grep -qw sudo "$ROOT/blocks/$b.sh" || fail "quick start $b uses sudo: $(cat "$ROOT/blocks/$b.sh")"
done

# grove and a sudo that runs its command (the test runs as root) on PATH, readable by nobody.
BIN=$ROOT/bin
mkdir -p "$BIN"
cp "$GROVE" "$BIN/grove"
printf '#!/bin/sh\nexec "$@"\n' >"$BIN/sudo"
chmod 755 "$BIN/grove" "$BIN/sudo"

# run_block N USER: bash -e runs block N in a fresh home; output in $ROOT/out.N.
run_block()
{
	local n=$1 user=$2 home=$ROOT/home$1 rc=0
	mkdir -p "$home"
	local envs=(HOME="$home" XDG_CONFIG_HOME="$home/.config" XDG_STATE_HOME="$home/.local/state"
		PATH="$BIN:$ROOT/usr/local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
		LC_ALL=C.UTF-8)
	if [[ $user == root ]]; then
		(cd "$home" && env -i "${envs[@]}" GROVE_STATE_DIR="$GROVE_STATE_DIR" \
			bash -e -o pipefail "$ROOT/blocks/$n.sh") >"$ROOT/out.$n" 2>&1 || rc=$?
	else
		chown -R nobody:nogroup "$home"
		(cd "$home" && env -i "${envs[@]}" setpriv --reuid=nobody --regid=nogroup --clear-groups \
			bash -e -o pipefail "$ROOT/blocks/$n.sh") >"$ROOT/out.$n" 2>&1 || rc=$?
	fi
	[[ -z ${T0807_SHOW:-} ]] || cat "$ROOT/out.$n" >&2
	((rc == 0)) || fail "quick start $n exited $rc:$(printf '\n%s' "$(cat "$ROOT/out.$n")")"
}

# ---- dotfiles, as nobody ----
run_block 1 nobody
H=$ROOT/home1
[[ $(readlink "$H/.vimrc") == dotfiles/vim/dot-vimrc ]] || fail "~/.vimrc is not the link the README shows: $(ls -la "$H")"
[[ $(readlink "$H/.gitconfig") == dotfiles/git/dot-gitconfig ]] || fail "~/.gitconfig is not a link into the package"
grep -q 'vim' "$ROOT/out.1" && grep -q 'git' "$ROOT/out.1" || fail "grove status did not list vim and git: $(cat "$ROOT/out.1")"
check "quick start 1 (dotfiles) runs as printed, as an unprivileged user: ~/.vimrc and ~/.gitconfig linked"

# ---- /usr/local/stow, as root through sudo, /usr/local rewritten to a scratch copy ----
grep -q '/usr/local' "$ROOT/blocks/2.sh" || fail "quick start 2 does not use /usr/local"
local_before=$(find /usr/local -printf '%y %p %l %s %T@\n' 2>/dev/null | LC_ALL=C sort)
mkdir -p "$ROOT"/usr/local/{bin,etc,games,include,lib,man,sbin,share,src}
sed -i "s|/usr/local|$ROOT/usr/local|g" "$ROOT/blocks/2.sh"
run_block 2 root
local_after=$(find /usr/local -printf '%y %p %l %s %T@\n' 2>/dev/null | LC_ALL=C sort)
[[ $local_before == "$local_after" ]] || fail "quick start 2 touched the real /usr/local"
grep -x 'Hello, world! (hello [0-9.]*)' "$ROOT/out.2" >"$ROOT/hellos"
printf 'Hello, world! (hello %s)\n' 2.12 2.13 2.12 | diff - "$ROOT/hellos" ||
	fail "hello did not print 2.12, 2.13, 2.12 in turn:$(printf '\n%s' "$(cat "$ROOT/out.2")")"
[[ $(readlink "$ROOT/usr/local/bin/hello") == ../stow/hello-2.12/bin/hello ]] ||
	fail "after undo, bin/hello is not the link to hello-2.12 the README shows"
check "quick start 2 (/usr/local/stow) runs as printed: hello 2.12, switched to 2.13, undone to 2.12"

# ---- alternatives, as nobody ----
run_block 3 nobody
H=$ROOT/home3
grep -q 'my-pager - manual mode' "$ROOT/out.3" || fail "--display does not say manual mode: $(cat "$ROOT/out.3")"
grep -q 'link currently points to /usr/bin/cat' "$ROOT/out.3" || fail "--display does not show cat: $(cat "$ROOT/out.3")"
[[ $(readlink -f "$H/alt/bin/my-pager") == /usr/bin/cat ]] || fail "~/alt/bin/my-pager does not lead to /usr/bin/cat"
check "quick start 3 (alternatives) runs as printed, as an unprivileged user: my-pager set to cat"

# ---- profile, as nobody ----
run_block 4 nobody
H=$ROOT/home4
grep -qx hello "$ROOT/out.4" && grep -qx bye "$ROOT/out.4" || fail "hello and bye did not run: $(cat "$ROOT/out.4")"
[[ $(tail -1 "$ROOT/out.4") == hello ]] || fail "after rollback, the profile's bin is not just hello: $(cat "$ROOT/out.4")"
[[ -L $H/.grove-profile ]] || fail "no ~/.grove-profile link"
check "quick start 4 (profile) runs as printed, as an unprivileged user: generation 2, rolled back to 1"
