#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `meson install` into a DESTDIR: the program, the man pages and the completions land where
# Debian expects them beneath DESTDIR, and nothing is written outside it.
. "$(dirname "$0")/lib.sh"

: "${MESON:?meson passes its own path}" "${GROVE_PREFIX:?}" "${GROVE_BINDIR:?}" "${GROVE_MANDIR:?}" "${GROVE_DATADIR:?}"
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
	"$GROVE_DATADIR/zsh/vendor-completions/_grove"
	"$GROVE_DATADIR/fish/vendor_completions.d/grove.fish"
)
for f in "${expected[@]}"; do
	[[ -f $P/$f && -s $P/$f ]] || fail "meson install did not install $GROVE_PREFIX/$f: $(cd "$D" && find . | sort)"
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
	case $f in *.1 | *.5) head -20 "$P/$f" | grep -q '^\.TH' || fail "$f is not a roff man page" ;; esac
done
bash --norc --noprofile -c ". '$P/$GROVE_DATADIR/bash-completion/completions/grove' && complete -p grove" >/dev/null ||
	fail "the installed bash completion does not load"
check "the installed grove runs, the man pages are roff, the bash completion loads"
