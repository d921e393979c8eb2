#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A restow that changes a package's options (issue 40 item 7) is one transaction: killed at any
# of its filesystem calls (strace's SIGKILL, at every symlinkat, mkdirat, renameat2 and unlinkat
# it makes in turn), 'grove recover' leaves the target exactly as it was before (the old layout:
# never a moment with the package missing) or, when the kill came after the commit, as after;
# and the recorded options agree with the layout. For folding off and dotfiles on with folding off.
source "$(dirname "$0")/lib.sh"

strace -qq -o /dev/null -e trace=getpid -e inject=getpid:signal=SIGKILL:when=2 -- true 2>/dev/null ||
	fail "strace with syscall fault injection (inject=...:signal=) is needed"
# LeakSanitizer cannot run under ptrace: traced runs of an ASan build keep it quiet.
TRACED_ASAN=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
CALLS=symlinkat,mkdirat,renameat2,unlinkat

S=$ROOT/s
H=$ROOT/h
mk_file "$S/nvim/dot-config/nvim/init.lua" "init"
mk_file "$S/nvim/dot-config/nvim/lua/plug.lua" "plug"
mk_file "$S/nvim/dot-bashrc" "bashrc"
mk_file "$S/git/dot-config/git/config" "git"
mkdir -p "$H"
expect_exit 0 "$GROVE" stow -d "$S" -t "$H" --dotfiles git

# killed_case "NEW OPTIONS": nvim stowed with the defaults, restowed with NEW, killed at each call.
killed_case()
{
	local new=$1 old_tree new_tree n k m sc n_old=0 n_new=0
	expect_exit 0 "$GROVE" stow -d "$S" -t "$H" nvim
	old_tree=$(listing "$H")
	# The full restow once, traced: how many calls, and the tree it makes.
	# shellcheck disable=SC2086
	ASAN_OPTIONS=$TRACED_ASAN strace -f -qq -o "$ROOT/calls" -e trace=$CALLS -- \
		"$GROVE" restow -d "$S" -t "$H" $new nvim >/dev/null 2>&1 || fail "the restow failed"
	new_tree=$(listing "$H")
	[[ $new_tree != "$old_tree" ]] || fail "$new: the restow changed nothing"
	expect_exit 0 "$GROVE" undo -t "$H"
	[[ $(listing "$H") == "$old_tree" ]] || fail "$new: undo did not put the old tree back"
	n=0
	for sc in ${CALLS//,/ }; do
		m=$(grep -cE "^[0-9]+ +$sc\(" "$ROOT/calls" || true)
		for ((k = 1; k <= m; k++)); do
			n=$((n + 1))
			killed_at "$sc" "$k"
		done
	done
	((n >= 6)) || fail "$new: only $n calls traced"
	((n_old > 1)) || fail "$new: no kill fell inside the transaction ($n_old of $n rolled back)"
	expect_exit 0 "$GROVE" unstow -d "$S" -t "$H" nvim
	check "$new: killed at each of its $n calls, recovered to the old layout ($n_old) or the new ($n_new), never between"
}

# killed_at CALL K: the restow killed at the Kth CALL (strace counts each call on its own), then
# recovered; the tree must be the old one or the new one.
killed_at()
{
	local sc=$1 k=$2 rc=0 tree
	# shellcheck disable=SC2086
	(ASAN_OPTIONS=$TRACED_ASAN strace -f -qq -o /dev/null -e trace=$sc \
		-e inject=$sc:signal=SIGKILL:when=$k -- \
		"$GROVE" restow -d "$S" -t "$H" $new nvim >/dev/null 2>&1) 2>/dev/null || rc=$?
	((rc == 137)) || fail "$new: the restow was not killed at $sc number $k (exit $rc)"
	expect_exit_in "0 4" "$GROVE" recover -t "$H"
	tree=$(listing "$H")
	# The record is the options that, given, change none (no "restowing" line).
	if [[ $tree == "$old_tree" ]]; then
		n_old=$((n_old + 1))
		expect_exit 0 "$GROVE" restow -n -d "$S" -t "$H" --no-dotfiles --folding nvim
		! grep -q 'restowing' "$ERR" ||
			fail "$new: killed at $sc number $k, rolled back, but the log records new options"
	elif [[ $tree == "$new_tree" ]]; then
		n_new=$((n_new + 1))
		# shellcheck disable=SC2086
		expect_exit 0 "$GROVE" restow -n -d "$S" -t "$H" $new nvim
		! grep -q 'restowing' "$ERR" ||
			fail "$new: killed at $sc number $k after the commit, but the log records the old options"
		expect_exit 0 "$GROVE" undo -t "$H"
	else
		diff <(echo "$old_tree") <(echo "$tree") >&2 || true
		fail "$new: killed at $sc number $k, recovered to neither the old tree nor the new"
	fi
	expect_exit 0 "$GROVE" verify -t "$H"
}

killed_case "--no-folding"
killed_case "--dotfiles --no-folding"
