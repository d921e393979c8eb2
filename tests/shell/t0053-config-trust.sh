#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Nothing another user can write is trusted (DESIGN invariant 8, issue 37 item 6): ./.stowrc,
# ~/.stowrc, ~/.stow-global-ignore, config.yaml and grove.yaml owned by a user who is neither the
# caller nor root, writable by group or others, or reached through another user's symlink, are
# refused with one line naming the file, its owner (or mode) and the way out, and nothing changes;
# as grove and invoked as stow. The caller's own files and root's are read as before.
source "$(dirname "$0")/lib.sh"

NOBODY=65534
as_nobody()
{
	setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$@"
}

S=$ROOT/stow
T=$ROOT/target
EVIL=$ROOT/evil
mk_file "$S/pkg/bin/tool" "tool"
mkdir -p "$T" "$EVIL"
# The shared folder root works in (as /tmp): anyone may create files there.
chmod 1777 "$S"
mkdir -p "$ROOT/bin"
ln -s "$GROVE" "$ROOT/bin/stow"

# A file another user made, with the words they chose (the shell writes it as nobody).
as_nobody_write() # PATH TEXT
{
	as_nobody sh -c 'printf "%s\n" "$2" >"$1"' sh "$1" "$2"
}

cd "$S"
snapshot "$T" t
snapshot "$EVIL" evil

# ./.stowrc of another user: --target sends root's links elsewhere; refused, nothing made.
as_nobody_write "$S/.stowrc" "--target=$EVIL"
[[ $(stat -c %u "$S/.stowrc") == "$NOBODY" ]] || fail "setup: .stowrc not nobody's"
expect_exit 78 "$GROVE" stow pkg
expect_err_line "'\.stowrc' is owned by user 'nobody' \(uid $NOBODY\), not by you or root" "chown"
expect_unchanged "$T" t
expect_unchanged "$EVIL" evil
expect_exit 78 "$GROVE" plan stow pkg
expect_unchanged "$EVIL" evil
check "./.stowrc owned by another user is refused, naming it and its owner; nothing changed"

# Invoked as stow: the same refusal (Stow's exit status for a bad .stowrc), nothing changed.
expect_exit 1 "$ROOT/bin/stow" pkg
expect_err_has "'.stowrc' is owned by user 'nobody'"
expect_unchanged "$T" t
expect_unchanged "$EVIL" evil
check "invoked as stow, another user's ./.stowrc is refused too"

# --adopt and --override from another user's rc: refused before any conflict is resolved.
rm -f "$S/.stowrc"
as_nobody_write "$S/.stowrc" "--adopt --override=.*"
mk_file "$T/bin/tool" "root's own file"
snapshot "$T" t2
expect_exit 78 "$GROVE" stow pkg
expect_err_has "not by you or root"
expect_unchanged "$T" t2
[[ $(cat "$S/pkg/bin/tool") == tool ]] || fail "the package's file was replaced (adopted)"
rm "$T/bin/tool"
rmdir "$T/bin"
snapshot "$T" t
check "--adopt and --override from another user's .stowrc are not obeyed"

# root's own ./.stowrc, writable by group or others: refused, with the chmod that fixes it.
rm -f "$S/.stowrc"
printf -- '--target=%s\n' "$EVIL" >"$S/.stowrc"
chmod 0666 "$S/.stowrc"
expect_exit 78 "$GROVE" stow pkg
expect_err_line "'\.stowrc' can be written by its group or others \(mode 0666\)" "chmod go-w"
chmod 0620 "$S/.stowrc"
expect_exit 78 "$GROVE" stow pkg
expect_err_has "(mode 0620)"
expect_unchanged "$EVIL" evil
check "an rc file writable by group or others is refused, with the chmod to make it safe"

# A symlink another user planted at ./.stowrc, to a file root owns: the link is refused.
rm -f "$S/.stowrc"
printf -- '--target=%s\n' "$EVIL" >"$ROOT/roots-rc"
as_nobody ln -s "$ROOT/roots-rc" "$S/.stowrc"
expect_exit 78 "$GROVE" stow pkg
expect_err_line "'\.stowrc' is a symlink owned by user 'nobody'" "remove it"
expect_unchanged "$EVIL" evil
check "a symlink at ./.stowrc another user made is refused"

# root's own link and file (dotfiles are often stowed): obeyed, as before.
rm -f "$S/.stowrc"
ln -s "$ROOT/roots-rc" "$S/.stowrc"
expect_exit 0 "$GROVE" stow pkg
expect_tree "$EVIL" <<'SPEC'
l bin -> ../stow/pkg/bin
SPEC
expect_exit 0 "$GROVE" unstow pkg
rm -f "$S/.stowrc"
snapshot "$EVIL" evil
check "root's own .stowrc, through root's own symlink, is obeyed"

# ~/.stowrc and ~/.stow-global-ignore of another user (HOME pointing at their folder).
cd "$ROOT"
chown $NOBODY "$HOME"
as_nobody_write "$HOME/.stowrc" "--target=$EVIL"
expect_exit 78 "$GROVE" stow -d "$S" -t "$T" pkg
expect_err_line "/\.home/\.stowrc' is owned by user 'nobody'"
rm -f "$HOME/.stowrc"
as_nobody_write "$HOME/.stow-global-ignore" ".*"
expect_exit 78 "$GROVE" stow -d "$S" -t "$T" pkg
expect_err_line "/\.home/\.stow-global-ignore' is owned by user 'nobody'"
expect_unchanged "$T" t
expect_unchanged "$EVIL" evil
rm -f "$HOME/.stow-global-ignore"
check "~/.stowrc and ~/.stow-global-ignore of another user are refused"

# config.yaml and grove.yaml of another user: apply refuses them (exit 78), nothing changed.
mkdir -p "$XDG_CONFIG_HOME/grove"
chown $NOBODY "$XDG_CONFIG_HOME/grove"
cat >"$ROOT/grove.yaml" <<YAML
targets:
  - path: $T
    dir: $S
    packages: [pkg]
YAML
as_nobody_write "$XDG_CONFIG_HOME/grove/config.yaml" "manifest: $ROOT/evil.yaml"
expect_exit 78 "$GROVE" apply -f "$ROOT/grove.yaml"
expect_err_has "config.yaml' is owned by user 'nobody'"
rm -f "$XDG_CONFIG_HOME/grove/config.yaml"
SHARED=$ROOT/shared
mkdir -p "$SHARED"
chmod 1777 "$SHARED"
as_nobody_write "$SHARED/grove.yaml" "targets: [{path: $EVIL, dir: $S, packages: [pkg]}]"
expect_exit 78 "$GROVE" apply -f "$SHARED/grove.yaml"
expect_err_has "grove.yaml' is owned by user 'nobody'"
cd "$SHARED"
expect_exit 78 "$GROVE" apply
expect_err_has "grove.yaml' is owned by user 'nobody'"
cd "$ROOT"
expect_unchanged "$T" t
expect_unchanged "$EVIL" evil
expect_exit 0 "$GROVE" apply -f "$ROOT/grove.yaml"
[[ -L $T/bin ]] || fail "root's own grove.yaml was not applied"
expect_exit 0 "$GROVE" unstow -d "$S" -t "$T" pkg
check "config.yaml and grove.yaml of another user are refused; root's own is applied"

# Another user running grove: their own rc and root's are read; a third user's is not.
chown -R $NOBODY "$ROOT/target"
NBSTATE=$ROOT/nbstate
mkdir -p "$NBSTATE"
chown $NOBODY "$NBSTATE"
chown root "$HOME"
printf -- '--dotfiles\n' >"$HOME/.stowrc"
rm -f "$S/.stowrc"
as_nobody_write "$S/.stowrc" "--no-folding"
cd "$S"
expect_exit 0 as_nobody env GROVE_STATE_DIR="$NBSTATE" "$GROVE" plan stow -t "$T" pkg
expect_out_has "bin/tool"
expect_out_has "mkdir"
chown 1 "$S/.stowrc"
expect_exit 78 as_nobody env GROVE_STATE_DIR="$NBSTATE" "$GROVE" plan stow -t "$T" pkg
expect_err_has "'.stowrc' is owned by user 'daemon' (uid 1)"
rm -f "$S/.stowrc" "$HOME/.stowrc"
check "a user's own rc file and root's are read; a third user's is refused"
