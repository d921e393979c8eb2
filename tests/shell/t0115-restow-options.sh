#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Changing a package's options in one step (issue 40 item 7; docs/stow.md "Recorded options"):
# `grove restow --no-folding nvim` (or --dotfiles, or dropping either) on a package stowed otherwise
# unstows it as recorded and stows it as given, in one transaction. For folding on and off,
# dotfiles on and off, and both: the tree afterwards is GNU Stow 2.4.1's `stow -D OLD` then `stow
# NEW` on a copy; the log has one transaction more; undo puts the old tree back and the old
# options with it (a restow naming no option then changes nothing); a plain stow with the other
# option keeps its conflict, whose hint names the restow.
source "$(dirname "$0")/lib.sh"
need_stow

# The stow dir and target every case starts from: nvim (the package whose options change) and
# git, stowed with --dotfiles, which shares .config with nvim when nvim has --dotfiles too.
base()
{
	local d=$1
	mk_file "$d/s/nvim/dot-config/nvim/init.lua" "init"
	mk_file "$d/s/nvim/dot-config/nvim/lua/plug.lua" "plug"
	mk_file "$d/s/nvim/dot-bashrc" "bashrc"
	mk_file "$d/s/git/dot-config/git/config" "git"
	mkdir -p "$d/h"
}

ntxn() # committed transactions of the target $1
{
	"$GROVE" log -t "$1" | grep -c committed || true
}

# Stow's own spelling of grove's options: --folding and --no-dotfiles are the defaults, which
# Stow has no word for.
stow_words()
{
	local w out=()
	for w in "$@"; do
		[[ $w == --folding || $w == --no-dotfiles ]] || out+=("$w")
	done
	echo "${out[@]}"
}

# After a restow naming no option: the recorded-options notice names exactly the options of $1
# that are not the defaults, or is not there.
expect_record()
{
	local want
	want=$(stow_words $1)
	if [[ -z $want ]]; then
		! grep -q 'was stowed with' "$ERR" || fail "no recorded option expected: $(cat "$ERR")"
	else
		expect_err_has "grove: nvim was stowed with $want; using "
	fi
}

n_case=0
# restow_case "OLD OPTIONS" "NEW OPTIONS" DESCRIPTION
restow_case()
{
	local old=$1 new=$2 what=$3 g o before
	n_case=$((n_case + 1))
	g=$ROOT/g$n_case o=$ROOT/o$n_case
	base "$g"
	base "$o"

	# GNU Stow: stowed with OLD, then unstowed with OLD and stowed with NEW: two runs.
	# shellcheck disable=SC2046
	stow_ref -d "$o/s" -t "$o/h" --dotfiles git
	# shellcheck disable=SC2086
	stow_ref -d "$o/s" -t "$o/h" $(stow_words $old) nvim
	# shellcheck disable=SC2086
	stow_ref -d "$o/s" -t "$o/h" -D $(stow_words $old) nvim
	# shellcheck disable=SC2086
	stow_ref -d "$o/s" -t "$o/h" $(stow_words $new) nvim

	expect_exit 0 "$GROVE" stow -d "$g/s" -t "$g/h" --dotfiles git
	# shellcheck disable=SC2086
	expect_exit 0 "$GROVE" stow -d "$g/s" -t "$g/h" $old nvim
	before=$(listing "$g/h")
	n=$(ntxn "$g/h")
	# shellcheck disable=SC2086
	expect_exit 0 "$GROVE" restow -d "$g/s" -t "$g/h" $new nvim
	expect_err_has "grove: restowing nvim with "
	expect_err_has "(its links are made anew in one transaction)"
	expect_same_tree "$o/h" "$g/h"
	[[ $(ntxn "$g/h") == $((n + 1)) ]] || fail "$what: expected one transaction more than $n"
	"$GROVE" log -t "$g/h" | head -n 1 | grep -q "committed .* grove restow -d $g/s -t $g/h $new nvim$" ||
		fail "$what: the last transaction is not the restow: $("$GROVE" log -t "$g/h" | head -n 1)"
	check "$what: one transaction, and the tree is GNU Stow's -D $old then $new"

	# The options are recorded: a restow naming none changes nothing (and logs nothing).
	after=$(listing "$g/h")
	expect_exit 0 "$GROVE" restow -d "$g/s" -t "$g/h" nvim
	expect_record "$new"
	[[ $(listing "$g/h") == "$after" ]] || fail "$what: a restow without options changed the tree"
	[[ $(ntxn "$g/h") == $((n + 1)) ]] || fail "$what: a restow that changes nothing was logged"

	# Undo puts the old layout and options back.
	expect_exit 0 "$GROVE" undo -t "$g/h"
	[[ $(listing "$g/h") == "$before" ]] || {
		diff <(echo "$before") <(listing "$g/h") >&2
		fail "$what: undo did not put the old layout back"
	}
	expect_exit 0 "$GROVE" restow -d "$g/s" -t "$g/h" nvim
	expect_record "$old"
	[[ $(listing "$g/h") == "$before" ]] || {
		diff <(echo "$before") <(listing "$g/h") >&2
		fail "$what: after undo, a restow naming no option did not use the old options"
	}
	check "$what: undo puts the old layout back, and the old options ('grove restow nvim' keeps it)"

	# A plain stow with the new options is still a conflict, and its hint names the restow.
	snapshot "$g/h"
	# shellcheck disable=SC2086
	expect_exit 1 "$GROVE" stow -d "$g/s" -t "$g/h" $new nvim
	expect_err_has "WARNING! stowing nvim would cause conflicts:"
	expect_err_has "to change it, restow the package with the new option (grove restow --"
	expect_unchanged "$g/h"
	check "$what: a plain stow with the other option is refused, its hint names the restow"
}

restow_case "" "--no-folding" "folding off"
restow_case "--no-folding" "--folding" "folding on"
restow_case "" "--dotfiles" "dotfiles on"
restow_case "--dotfiles" "--no-dotfiles" "dotfiles off"
restow_case "" "--dotfiles --no-folding" "dotfiles on, folding off"
restow_case "--dotfiles --no-folding" "--no-dotfiles --folding" "dotfiles off, folding on"
