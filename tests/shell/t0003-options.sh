#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Options end to end: grove and GNU Stow 2.4.1 run on two identical copies must leave the same
# tree (paths, types, link texts, contents) and agree on success; grove-only behaviour (plan,
# -v, -V, -h, exit codes) is checked against the documented contract.
set -euo pipefail
# shellcheck source=tests/shell/lib.sh
. "$(dirname "$0")/lib.sh"

need_stow

# The packages every case starts from, made in the current folder:
#   stow/a: bin/a1, share/a/doc      stow/b: bin/b1, share/b/doc
#   stow/c: dot-bashrc, dot-config/app/conf (for --dotfiles)
#   target/ (empty)
packages()
{
	mk_file stow/a/bin/a1 a1
	mk_file stow/a/share/a/doc "a doc"
	mk_file stow/b/bin/b1 b1
	mk_file stow/b/share/b/doc "b doc"
	mk_file stow/c/dot-bashrc bashrc
	mk_file stow/c/dot-config/app/conf conf
	mkdir -p target
}

# twin NAME [SETUP…]: $W/g and $W/s, identical, built by `packages` and then SETUP (run in $W/g).
twin()
{
	W=$ROOT/$1
	shift
	mkdir -p "$W/g"
	(
		cd "$W/g"
		packages
		if (($#)); then "$@"; fi
	)
	cp -a "$W/g" "$W/s"
}

# both2 DIR GROVE_ARGS… -- STOW_ARGS…: runs grove in $W/g/DIR and Stow in $W/s/DIR, each with
# TWIN set to its own copy (HOME to $TWIN/home when TWIN_HOME=1, STOW_DIR to $TWIN/$TWIN_STOW_DIR
# when that is set); then both must succeed or
# both fail, and the copies must be equal. Leaves grove's run in $OUT/$ERR/$RC.
both2()
{
	local dir=$1 home
	local -a gargs=() sargs=()
	shift
	while [[ $1 != -- ]]; do
		gargs+=("$1")
		shift
	done
	shift
	sargs=("$@")

	home=$HOME
	[[ ${TWIN_HOME:-0} == 1 ]] && home=$W/s/home
	cd "$W/s/$dir"
	if [[ -n ${TWIN_STOW_DIR:-} ]]; then
		TWIN=$W/s HOME=$home STOW_DIR=$W/s/$TWIN_STOW_DIR run stow_ref "${sargs[@]}"
	else
		TWIN=$W/s HOME=$home run stow_ref "${sargs[@]}"
	fi
	S_RC=$RC
	cp "$ERR" "$ROOT/.stow-stderr"

	[[ ${TWIN_HOME:-0} == 1 ]] && home=$W/g/home
	cd "$W/g/$dir"
	if [[ -n ${TWIN_STOW_DIR:-} ]]; then
		TWIN=$W/g HOME=$home STOW_DIR=$W/g/$TWIN_STOW_DIR run "$GROVE" "${gargs[@]}"
	else
		TWIN=$W/g HOME=$home run "$GROVE" "${gargs[@]}"
	fi
	cd "$ROOT"
	if (((RC == 0) != (S_RC == 0))); then
		{
			echo "FAIL: $TEST_NAME: grove exited $RC, GNU Stow exited $S_RC"
			echo "  Stow: $(printf '%q ' "${sargs[@]}")"
			sed 's/^/    | /' "$ROOT/.stow-stderr"
		} >&2
		_lib_show_run
		exit 1
	fi
	if ! diff -u <(listing "$W/s") <(listing "$W/g") >"$ROOT/.treediff"; then
		{
			echo "FAIL: $TEST_NAME: trees differ (- GNU Stow, + grove)"
			tail -n +3 "$ROOT/.treediff" | sed 's/^/    /'
			echo "  Stow: $(printf '%q ' "${sargs[@]}") exit $S_RC"
			sed 's/^/    | /' "$ROOT/.stow-stderr"
		} >&2
		_lib_show_run
		exit 1
	fi
	rm -f "$ROOT/.stow-stderr" "$ROOT/.treediff"
}

# both DIR ARGS…: the same arguments to both (grove in GNU Stow's spelling).
both()
{
	local dir=$1
	shift
	both2 "$dir" "$@" -- "$@"
}

# Invoked as grove, a package keeps the --dotfiles and --no-folding it was stowed with when a later
# command gives neither (docs/stow.md "Recorded options", t0038); invoked as stow, it does not, as
# GNU Stow. The steps that rely on Stow's forgetting run grove as stow.
mkdir -p "$ROOT/as-stow"
ln -s "$GROVE" "$ROOT/as-stow/stow"
as_stow()
{
	GROVE=$ROOT/as-stow/stow "$@"
}

# ---------------------------------------------------------------- tree options

twin nofold
both . -d stow -t target --no-folding -S a b
expect_tree "$W/g/target" <<-EOF
	d bin
	l bin/a1 -> ../../stow/a/bin/a1
	l bin/b1 -> ../../stow/b/bin/b1
	d share
	d share/a
	l share/a/doc -> ../../../stow/a/share/a/doc
	d share/b
	l share/b/doc -> ../../../stow/b/share/b/doc
EOF
both . -d stow -t target --no-folding -D b
check "--no-folding: one link per file, folders made (same as Stow); unstow leaves a's tree"

twin dotfiles
both . -d stow -t target --dotfiles -S c
expect_tree "$W/g/target" <<-EOF
	l .bashrc -> ../stow/c/dot-bashrc
	l .config -> ../stow/c/dot-config
EOF
both . -d stow -t target --dotfiles -D c
expect_tree "$W/g/target" ""
check "--dotfiles: dot-X becomes .X on stow and on unstow (same as Stow)"

twin dotfiles-nofold
both . -d stow -t target --dotfiles --no-folding -S c
as_stow both . -d stow -t target -S c
check "--dotfiles with --no-folding, and without --dotfiles (dot- kept literally), same as Stow"

adopt_setup()
{
	mk_file target/bin/a1 "user's a1"
	mk_file target/share/a/doc "user's doc"
}
twin adopt adopt_setup
both . -d stow -t target -S a
[[ $RC == 1 ]] || fail "stowing over user files without --adopt must exit 1, got $RC"
both . -d stow -t target --adopt -S a
expect_tree "$W/g/stow/a" <<-EOF
	d bin
	f bin/a1 user's a1
	d share
	d share/a
	f share/a/doc user's doc
EOF
check "--adopt: the user's files move into the package and are linked (same as Stow)"

ignore_setup()
{
	mk_file stow/a/bin/a1.orig orig
	mk_file stow/a/bin/a1~ backup
	mkdir -p target/bin
}
twin ignore ignore_setup
both . -d stow -t target --ignore='\.orig$' --ignore='~$' -S a
expect_tree "$W/g/target" <<-EOF
	d bin
	l bin/a1 -> ../../stow/a/bin/a1
	l share -> ../stow/a/share
EOF
both . -d stow -t target --ignore='\.orig$' --ignore='~$' -D a
check "--ignore (twice): matching files are not linked (same as Stow)"

twin ignore-local ignore_setup
printf '%s\n' '\.orig$' >"$W/g/stow/a/.stow-local-ignore"
cp "$W/g/stow/a/.stow-local-ignore" "$W/s/stow/a/"
both . -d stow -t target -S a
check "a package's .stow-local-ignore replaces the built-in list (same as Stow)"

same_file_setup()
{
	mk_file stow/b/bin/a1 "b's a1"
	mk_file stow/b/share/a/doc "b's doc"
}
twin defer same_file_setup
both . -d stow -t target --no-folding -S a
both . -d stow -t target --no-folding --defer=bin --defer=share -S b
expect_tree "$W/g/target" <<-EOF
	d bin
	l bin/a1 -> ../../stow/a/bin/a1
	l bin/b1 -> ../../stow/b/bin/b1
	d share
	d share/a
	l share/a/doc -> ../../../stow/a/share/a/doc
	d share/b
	l share/b/doc -> ../../../stow/b/share/b/doc
EOF
both . -d stow -t target --no-folding -S b
[[ $RC == 1 ]] || fail "without --defer, b's share/a/doc conflicts with a's: exit 1 expected, got $RC"
check "--defer: a path another package owns is skipped (same as Stow); without it, a conflict"

twin override same_file_setup
both . -d stow -t target -S a
both . -d stow -t target --override='bin' --override='share' -S b
both . -d stow -t target --override='^bin/' -D a
check "--override: b takes over a's links (same as Stow), then unstowing a"

twin compat
both . -d stow -t target -S a b
both . -d stow -t target -p -D a
both . -d stow -t target --compat -D b
expect_tree "$W/g/target" ""
check "-p/--compat unstow (same as Stow)"

# ---------------------------------------------------------------- -n, -v

twin simulate
both . -d stow -t target -S a
snapshot "$W/g"
both . -d stow -t target -n -S b
expect_unchanged "$W/g"
expect_err_has "WARNING: in simulation mode so not modifying filesystem."
both . -d stow -t target --simulate -D a
expect_unchanged "$W/g"
both . -d stow -t target --no -R a
expect_unchanged "$W/g"
cd "$W/g"
expect_exit 0 "$GROVE" -n stow -d stow -t target b
expect_unchanged "$W/g"
expect_exit 0 "$GROVE" stow -n -d stow -t target b
expect_unchanged "$W/g"
cd "$ROOT"
check "-n/--no/--simulate (before or after the command word): nothing changes, as Stow"

twin verbose
both . -d stow -t target -v -S a b
expect_out_empty
expect_err_has "bin"
expect_err_has "../stow/a/bin/a1"
expect_err_has "../stow/b/bin/b1"
expect_err_has "share/a -> ../../stow/a/share/a"
both . -d stow -t target --verbose=2 -D a
expect_out_empty
expect_err_has "../stow/a/bin/a1"
both . -d stow -t target -D b
expect_err_empty
expect_out_empty
check "-v/--verbose=N: the ops go to stderr, stdout stays empty; quiet without -v"

# ---------------------------------------------------------------- -R, -D, mixed

twin restow
both . -d stow -t target --no-folding -S a
mk_file "$W/g/stow/a/bin/a2" a2
mk_file "$W/s/stow/a/bin/a2" a2
rm "$W/g/stow/a/share/a/doc" "$W/s/stow/a/share/a/doc"
both . -d stow -t target --no-folding -R a
expect_tree "$W/g/target" <<-EOF
	d bin
	l bin/a1 -> ../../stow/a/bin/a1
	l bin/a2 -> ../../stow/a/bin/a2
	d share
	d share/a
EOF
as_stow both . -d stow -t target -R a
as_stow both . -d stow -t target --restow a b
check "-R/--restow: stale links go, new files are linked (same as Stow)"

twin unstow
both . -d stow -t target -S a b
expect_tree "$W/g/target" <<-EOF
	d bin
	l bin/a1 -> ../../stow/a/bin/a1
	l bin/b1 -> ../../stow/b/bin/b1
	d share
	l share/a -> ../../stow/a/share/a
	l share/b -> ../../stow/b/share/b
EOF
both . -d stow -t target -D a
expect_tree "$W/g/target" <<-EOF
	l bin -> ../stow/b/bin
	l share -> ../stow/b/share
EOF
both . -d stow -t target --delete b
expect_tree "$W/g/target" ""
check "-D/--delete: unfolded folders fold back to the surviving package (same as Stow)"

twin mixed
both . -d stow -t target -S a
both . -d stow -t target -D a -S b
expect_tree "$W/g/target" <<-EOF
	l bin -> ../stow/b/bin
	l share -> ../stow/b/share
EOF
# (as grove, --dotfiles for all three would be a conflict for b, stowed without it)
as_stow both . -d stow -t target -S a -D b --dotfiles -S c
both . -d stow -t target -D a --dotfiles -D c -S b
both . -d stow -t target -R b -S a
check "mixed -D/-S/-R in one command (same as Stow)"

# GNU Stow 2.4.1 dies here ("unstow_contents() called with invalid target: bin") without changing
# anything; grove does what was asked.
twin mixed-restow
cd "$W/g"
expect_exit 0 "$GROVE" -d stow -t target -S a
expect_exit 0 "$GROVE" -d stow -t target -D a -R b
expect_tree "$W/g/target" <<-EOF
	l bin -> ../stow/b/bin
	l share -> ../stow/b/share
EOF
cd "$ROOT"
check "-D a -R b where b was not stowed: a goes, b comes (Stow 2.4.1 dies on this one)"

# ---------------------------------------------------------------- .stowrc, STOW_DIR, defaults

# home/stow, home/target and an empty folder work/ to run in.
home_setup()
{
	mkdir -p home work
	mv stow target home/
}

rc_setup()
{
	home_setup
	# shellcheck disable=SC2016 # expanded by the tools, not here
	printf '%s\n' '--dir=$TWIN/home/stow' '--target=${TWIN}/home/target' '--no-folding' >work/.stowrc
}
twin stowrc-cwd rc_setup
both work -S a
expect_tree "$W/g/home/target" <<-EOF
	d bin
	l bin/a1 -> ../../stow/a/bin/a1
	d share
	d share/a
	l share/a/doc -> ../../../stow/a/share/a/doc
EOF
both work -D a
check ".stowrc in the current folder: --dir/--target with \$VAR and \${VAR} expanded, flags applied"

homerc_setup()
{
	home_setup
	printf '%s\n' '--dir=~/stow' '--target=~/target' '--ignore=share' >home/.stowrc
}
export TWIN_HOME=1
twin stowrc-home homerc_setup
both work -S a
expect_tree "$W/g/home/target" "l bin -> ../stow/a/bin"
both work -D a
# The current folder's .stowrc comes after ~/.stowrc, so its --target wins; the command line wins
# over both.
mkdir -p "$W/g/home/t2" "$W/s/home/t2" "$W/g/home/t3" "$W/s/home/t3"
# shellcheck disable=SC2016
printf '%s\n' '--target=$HOME/t2' >"$W/g/work/.stowrc"
cp "$W/g/work/.stowrc" "$W/s/work/.stowrc"
both work -S b
expect_tree "$W/g/home/t2" "l bin -> ../stow/b/bin"
both2 work -t ../home/t3 -S c -- -t ../home/t3 -S c
expect_tree "$W/g/home/t3" <<-EOF
	l dot-bashrc -> ../stow/c/dot-bashrc
	l dot-config -> ../stow/c/dot-config
EOF
unset TWIN_HOME
# shellcheck disable=SC2088 # a message, not a path
check "~/.stowrc with ~ expanded; ./.stowrc overrides it; the command line overrides both (as Stow)"

twin stowrc-bad rc_setup
# shellcheck disable=SC2016
printf '%s\n' '--target=$GROVE_TEST_UNDEFINED/x' >"$W/g/work/.stowrc"
cp "$W/g/work/.stowrc" "$W/s/work/.stowrc"
both work -S a
cd "$W/g/work"
expect_exit 78 "$GROVE" stow -d "$W/g/home/stow" a
expect_err_line "GROVE_TEST_UNDEFINED"
printf '%s\n' '--bogus' >"$W/g/work/.stowrc"
expect_exit 78 "$GROVE" stow -d "$W/g/home/stow" -t "$W/g/home/target" a
expect_err_line ".stowrc" "bogus"
# A variable that is set but empty leaves an empty target: an error naming it (Stow 2.4.1: "--target
# value '' is not a valid directory", exit 1); grove crashed on it before.
# shellcheck disable=SC2016
printf '%s\n' '--target=$GROVE_TEST_EMPTY' >"$W/g/work/.stowrc"
GROVE_TEST_EMPTY='' expect_exit 1 "$GROVE" stow -d "$W/g/home/stow" a
expect_err_line "''"
cd "$ROOT"
check ".stowrc with an undefined variable or an unknown option: refused, exit 78 (bad config); an empty one: exit 1"

twin stow-dir home_setup
TWIN_STOW_DIR=home/stow both work -S a
expect_tree "$W/g/home" <<-EOF
	l bin -> stow/a/bin
	l share -> stow/a/share
	d stow
	d stow/a
	d stow/a/bin
	f stow/a/bin/a1 a1
	d stow/a/share
	d stow/a/share/a
	f stow/a/share/a/doc a doc
	d stow/b
	d stow/b/bin
	f stow/b/bin/b1 b1
	d stow/b/share
	d stow/b/share/b
	f stow/b/share/b/doc b doc
	d stow/c
	f stow/c/dot-bashrc bashrc
	d stow/c/dot-config
	d stow/c/dot-config/app
	f stow/c/dot-config/app/conf conf
	d target
EOF
check "STOW_DIR names the stow dir; the target defaults to its parent (as Stow)"

twin default-target
both stow -S a
both . -d stow -S b
expect_tree "$W/g" "$(cd "$W/g" && listing . | grep -e '^. stow' -e '^d target'; printf '%s\n' 'd bin' 'l bin/a1 -> ../stow/a/bin/a1' 'l bin/b1 -> ../stow/b/bin/b1' 'd share' 'l share/a -> ../stow/a/share/a' 'l share/b -> ../stow/b/share/b')"
both stow -D a b
check "without -t the target is the stow dir's parent, from -d or the current folder (as Stow)"

# ---------------------------------------------------------------- command words

twin words
both2 stow stow -t ../target a -- -t ../target a
both2 stow stow -t ../target --no-folding b -- -t ../target --no-folding b
both2 stow unstow -t ../target a -- -t ../target -D a
# grove uses the options b and c were stowed with (docs/stow.md "Recorded options"), each its own:
# the trees Stow makes with the options given again.
both2 stow restow -t ../target b -- -t ../target --no-folding -R b
both2 stow stow -t ../target --dotfiles c -- -t ../target --dotfiles -S c
both2 stow unstow -t ../target b c -- -t ../target -D --no-folding --dotfiles b c
expect_tree "$W/g/target" "$(printf '%s\n' 'd bin' 'd share' 'd share/a' 'd share/b')"
check "grove stow|unstow|restow equal stow -S|-D|-R (same trees as Stow)"

# ---------------------------------------------------------------- grove-only: plan, -V, -h, usage

twin plan
cd "$W/g/stow"
snapshot "$W/g"
expect_exit 0 "$GROVE" plan -t ../target a
expect_out_has "bin -> ../stow/a/bin"
expect_out_has "share -> ../stow/a/share"
expect_err_empty
expect_unchanged "$W/g"
expect_exit 0 "$GROVE" plan stow -t ../target --no-folding a b
expect_out_has "bin/a1 -> ../../stow/a/bin/a1"
expect_out_has "bin/b1 -> ../../stow/b/bin/b1"
expect_unchanged "$W/g"
expect_exit 0 "$GROVE" stow -t ../target a b
snapshot "$W/g"
expect_exit 0 "$GROVE" plan unstow -t ../target a
expect_out_has "bin/a1"
expect_unchanged "$W/g"
expect_exit 0 "$GROVE" plan restow -t ../target a b
expect_unchanged "$W/g"
mk_file "$W/g/target/bin/c1" user
mk_file "$W/g/stow/c/bin/c1" c
snapshot "$W/g"
expect_exit 1 "$GROVE" plan stow -t ../target c
expect_err_has "WARNING! stowing c would cause conflicts:"
expect_err_has "bin/c1"
expect_unchanged "$W/g"
cd "$ROOT"
check "grove plan [stow|unstow|restow]: prints the ops on stdout, exit 0 (1 with conflicts), changes nothing"

cd "$ROOT"
for v in --version -V "stow --version" "stow -V"; do
	# shellcheck disable=SC2086 # split on purpose
	expect_exit 0 "$GROVE" $v
	expect_out_has "version"
	expect_err_empty
done
check "-V/--version: a version line on stdout, exit 0"

for h in --help -h "stow --help" "stow -h" "unstow -h"; do
	# shellcheck disable=SC2086
	expect_exit 0 "$GROVE" $h
	for opt in --dir --target --no-folding --adopt --dotfiles --ignore --defer --override \
		--simulate --verbose --restow --delete; do
		expect_out_has "$opt"
	done
	expect_err_empty
done
check "-h/--help: usage with every Stow option on stdout, exit 0"

twin usage
cd "$W/g/stow"
snapshot "$W/g"
expect_exit 2 "$GROVE" stow --bogus -t ../target a
expect_err_line "'--bogus'"
expect_exit 2 "$GROVE" -d . -t ../target --bogus -S a
expect_err_line "bogus"
expect_exit 2 "$GROVE" frobnicate a
expect_err_line "'frobnicate'"
expect_exit 2 "$GROVE"
expect_err_line "command"
expect_unchanged "$W/g"
both . -t ../target --bogus -S a
# Invoked as stow, a bad command line or .stowrc exits as Stow's does (1, its usage()); grove's own
# spelling keeps 2 and 78 (above and "stowrc-bad").
for args in "--bogus -S a" "-S" "--defer=( -S a" "--verbose=x -S a" "--target= -S a"; do
	read -ra words <<<"$args"
	cd "$W/s/stow"
	run stow_ref -t ../target "${words[@]}"
	s_rc=$RC
	cd "$W/g/stow"
	run "$ROOT/as-stow/stow" -t ../target "${words[@]}"
	((RC == s_rc)) || fail "stow $args: grove as stow exited $RC, GNU Stow $s_rc"
done
expect_unchanged "$W/g"
printf '%s\n' '--bogus' >"$W/g/stow/.stowrc"
cp "$W/g/stow/.stowrc" "$W/s/stow/.stowrc"
cd "$W/s/stow"
run stow_ref -t ../target -S a
s_rc=$RC
cd "$W/g/stow"
run "$ROOT/as-stow/stow" -t ../target -S a
((RC == s_rc && RC == 1)) || fail ".stowrc with --bogus: grove as stow exited $RC, GNU Stow $s_rc"
rm "$W/g/stow/.stowrc" "$W/s/stow/.stowrc"
cd "$ROOT"
check "an unknown option or command: exit 2 (usage), one line naming it, nothing changed; as stow, Stow's exit 1"
