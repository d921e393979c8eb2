#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `meson install` into a DESTDIR: the program, the man pages and the completions land where
# Debian expects them beneath DESTDIR, and nothing is written outside it; a real zsh and fish started
# with their default paths (the DESTDIR bind-mounted over the real places in a private mount
# namespace) find the completions.
. "$(dirname "$0")/lib.sh"

: "${MESON:?meson passes its own path}" "${GROVE_PREFIX:?}" "${GROVE_BINDIR:?}" "${GROVE_MANDIR:?}" "${GROVE_DATADIR:?}"
: "${GROVE_ZSH_DIR:?}" "${GROVE_FISH_DIR:?}"
D=$ROOT/destdir
LOG=$GROVE_BUILD_ROOT/meson-logs/install-log.txt

# The prefix itself must not gain files: snapshot what is there (if anything) first.
before=$(ls -la "$GROVE_PREFIX/$GROVE_BINDIR/grove" 2>&1 || true)
expect_exit 0 env -u DESTDIR "$MESON" install -C "$GROVE_BUILD_ROOT" --no-rebuild --destdir "$D"
after=$(ls -la "$GROVE_PREFIX/$GROVE_BINDIR/grove" 2>&1 || true)
[[ $before == "$after" ]] || fail "meson install changed $GROVE_PREFIX/$GROVE_BINDIR/grove outside DESTDIR"

P=$D$GROVE_PREFIX
expected=(
	"$GROVE_BINDIR/grove"
	"$GROVE_MANDIR/man1/grove.1"
	"$GROVE_MANDIR/man1/grove-stow.1"
	"$GROVE_MANDIR/man1/grove-alt.1"
	"$GROVE_MANDIR/man1/grove-profile.1"
	"$GROVE_MANDIR/man5/grove.yaml.5"
	"$GROVE_DATADIR/bash-completion/completions/grove"
	"$GROVE_ZSH_DIR/_grove"
	"$GROVE_FISH_DIR/grove.fish"
)
# In the DESTDIR: a path relative to the prefix, or an absolute one (fish's own vendor dir).
inst()
{
	if [[ $1 == /* ]]; then echo "$D$1"; else echo "$P/$1"; fi
}
for f in "${expected[@]}"; do
	[[ -f $(inst "$f") && -s $(inst "$f") ]] || fail "meson install did not install $f: $(cd "$D" && find . | sort)"
done
check "the program, five man pages and three completions are installed beneath DESTDIR"

# Everything installed is beneath DESTDIR (meson's own record of what it wrote).
[[ -s $LOG ]] || fail "no install log at $LOG"
outside=$(grep -v '^#' "$LOG" | grep -Ev "^$D(/|$)" || true)
[[ -z $outside ]] || fail "installed outside DESTDIR: $outside"
n=$(grep -vc '^#' "$LOG")
((n >= ${#expected[@]})) || fail "the install log lists $n files"
check "meson's install log lists only paths beneath DESTDIR ($n files)"

# The installed files work: the program runs, the man pages are roff, the bash completion loads.
[[ -x $P/$GROVE_BINDIR/grove ]] || fail "the installed grove is not executable"
expect_exit 0 "$P/$GROVE_BINDIR/grove" --version
expect_out_has "grove (GNU Stow compatible) version"
for f in "${expected[@]}"; do
	case $f in *.1 | *.5) head -20 "$(inst "$f")" | grep -c '^\.TH' >/dev/null || fail "$f is not a roff man page" ;; esac
done
bash --norc --noprofile -c ". '$P/$GROVE_DATADIR/bash-completion/completions/grove' && complete -p grove" >/dev/null ||
	fail "the installed bash completion does not load"
check "the installed grove runs, the man pages are roff, the bash completion loads"

# zsh and fish with their default search paths: in a private mount namespace the DESTDIR's prefix
# (and fish's vendor dir, when the completion went there) is bind-mounted over the real one, so the
# shells see the files exactly where `sudo meson install` would put them; nothing is set in the
# environment that points at them (no fpath change, no XDG_DATA_DIRS).
if ! unshare -m true 2>/dev/null; then
	skip "zsh and fish from the install: no private mount namespace (unshare -m needs root)"
fi
for sh in zsh fish; do
	command -v "$sh" >/dev/null || fail "$sh is not installed (scripts/install-deps.sh installs it)"
done
mounts="mount --bind '$P' '$GROVE_PREFIX'"
if [[ $GROVE_FISH_DIR == /* ]]; then
	[[ -d $GROVE_FISH_DIR ]] || fail "fish's vendor dir $GROVE_FISH_DIR does not exist (is fish installed?)"
	mounts+=" && mount --bind '$D$GROVE_FISH_DIR' '$GROVE_FISH_DIR'"
fi
[[ -d $GROVE_PREFIX ]] || fail "the prefix $GROVE_PREFIX does not exist to mount over"
in_ns()
{
	env -u XDG_DATA_DIRS -u FPATH unshare -m sh -c "$mounts && exec \"\$@\"" sh "$@"
}
# zsh: its default fpath (zsh -f reads no startup file) holds the folder with _grove, and compinit
# binds it to grove.
run in_ns zsh -f -c 'autoload -Uz compinit && compinit -u -D && print -r -- "${_comps[grove]}" && print -l -- $^fpath/_grove(N)'
((RC == 0)) || fail "zsh in the namespace: exit $RC: $(cat "$ERR")"
[[ $(head -1 "$OUT") == _grove ]] || fail "zsh's compinit did not find _grove on its default fpath: $(cat "$OUT" "$ERR")"
zfile=$(inst "$GROVE_ZSH_DIR/_grove")
grep -qx "${zfile#"$D"}" "$OUT" || fail "zsh found _grove elsewhere than $GROVE_ZSH_DIR: $(cat "$OUT")"
check "a zsh with its default fpath finds the installed _grove ($GROVE_ZSH_DIR)"

# fish: its default completion path holds grove.fish, and completing "grove " offers the commands.
run in_ns fish -c 'complete -C "grove unst"; for d in $fish_complete_path; test -f $d/grove.fish; and echo $d; end; true'
((RC == 0)) || fail "fish in the namespace: exit $RC: $(cat "$ERR")"
grep -q '^unstow' "$OUT" || fail "fish did not complete 'grove unst' from the installed file: $(cat "$OUT" "$ERR")"
ffile=$(inst "$GROVE_FISH_DIR/grove.fish")
grep -qx "$(dirname "${ffile#"$D"}")" "$OUT" || fail "fish found grove.fish elsewhere than $GROVE_FISH_DIR: $(cat "$OUT")"
check "a fish with its default paths (no XDG_DATA_DIRS) finds the installed grove.fish ($GROVE_FISH_DIR)"
