#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove's global options go before or after the command; Stow's options may come before it; GNU
# Stow's spelling (-S/-D/-R, or "-d DIR -t DIR PKG…" with no command) keeps working; a package
# named like a command is reached with "--", -S or a trailing slash (grove(1), COMMAND LINE).
source "$(dirname "$0")/lib.sh"

S=$ROOT/stow
T=$ROOT/target
mk_file "$S/big/bin/big" "big"
mk_file "$S/git/dot-gitconfig" "git"
mk_file "$S/stow/share/stow.txt" "a package named stow"
mk_file "$S/log/log.txt" "a package named log"
mkdir -p "$T"
cd "$S"

expect_exit 0 "$GROVE" -t ../target plan stow --no-folding big
[[ $(cat "$OUT") == $'mkdir  bin\nlink   bin/big -> ../../stow/big/bin/big' ]] ||
	fail "plan with -t in front of it: $(cat "$OUT")"
expect_tree "$T" ""
check "Stow's options in front of 'plan stow' are the plan's, not packages"

expect_exit 0 "$GROVE" --verbose=2 restow --dotfiles -t ../target git
expect_tree "$T" <<'SPEC'
l .gitconfig -> ../stow/git/dot-gitconfig
SPEC
expect_err_has "link   .gitconfig -> ../stow/git/dot-gitconfig"
check "--verbose=N in front of the command"

expect_exit 0 "$GROVE" unstow --wait 30 --dotfiles -t ../target git
expect_tree "$T" ""
check "--wait after the command"

expect_exit 0 "$GROVE" -vv stow -t ../target big
expect_err_has "link   bin -> ../stow/big/bin"
expect_tree "$T" <<'SPEC'
l bin -> ../stow/big/bin
SPEC
check "-vv in front of the command"

expect_exit 0 "$GROVE" log -t ../target --json
expect_out_has '"command": "log"'
expect_exit 0 "$GROVE" -t ../target --json log
expect_out_has '"command": "log"'
expect_exit 0 "$GROVE" stow -t ../target --json -n git
expect_out_has '"command": "plan"'
expect_tree "$T" <<'SPEC'
l bin -> ../stow/big/bin
SPEC
check "--json and -n before or after the command"

# The value of an option is never taken for a global option or a command.
expect_exit 0 "$GROVE" stow -t ../target --ignore --json -n git
expect_err_has "in simulation mode"
expect_exit 0 "$GROVE" -n --ignore=x -t ../target stow git
expect_err_has "in simulation mode"
check "option values are not options"

# GNU Stow's spelling: -S/-D/-R, and -d/-t then packages with no command.
expect_exit 0 "$GROVE" -d . -t ../target -D big -S git
expect_tree "$T" <<'SPEC'
l dot-gitconfig -> ../stow/git/dot-gitconfig
SPEC
expect_exit 0 "$GROVE" -d . -t ../target -D git
expect_exit 0 "$GROVE" -d . -t ../target big
expect_tree "$T" <<'SPEC'
l bin -> ../stow/big/bin
SPEC
check "Stow's spelling, with and without -S"

# A package named like a command: the word is the command, unless -S/-D/-R, "--" or a trailing
# slash says it is a package.
expect_exit 2 "$GROVE" -d . -t ../target stow
expect_err_has "no packages to stow"
expect_exit 0 "$GROVE" -d . -t ../target -- stow
expect_exit 0 "$GROVE" -d . -t ../target -S log/
expect_exit 0 "$GROVE" stow -t ../target -- log
expect_tree "$T" <<'SPEC'
l bin -> ../stow/big/bin
l log.txt -> ../stow/log/log.txt
l share -> ../stow/stow/share
SPEC
expect_exit 0 "$GROVE" -d . -t ../target log
expect_out_has "grove -d . -t ../target -S log/"
check "a package named like a command"

# "--" ends global options too.
expect_exit 1 "$GROVE" stow -t ../target -- --json
expect_err_has "--json"
expect_exit 2 "$GROVE" -q
expect_err_has "no command given"
check "'--' ends options; global options alone are no command"
