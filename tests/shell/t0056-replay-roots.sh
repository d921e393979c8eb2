#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A replay is a run (DESIGN.md invariant 11, issue 37 item 2): undo, rollback and recovery of an
# alternatives change reopen the admindir beneath the installation root the transaction used,
# following no symlink, and check it is the folder the transaction recorded (device, inode, birth
# time). Root runs `grove alt --root R` on a tree another user (nobody) owns; that user swaps the
# admindir (or a folder above it) for a symlink to a folder of root's, or for a new folder of
# their own; root's next undo, rollback or recovery must stop (exit 4, "nothing was written")
# and write nothing anywhere.
. "$(dirname "$0")/lib.sh"

command -v sqlite3 >/dev/null || fail "sqlite3 (the command) is needed to mark a transaction interrupted"

as_nobody()
{
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# scenario NAME: W (its folder), R (the installation root, nobody's), V (a folder of root's with
# the layout of R/var, so that a writer following the symlink finds folders to write into), S
# (its own state dir) and G (grove with it). Two transactions: ed installed (1), then removed (2):
# undoing 2 puts ed's admin file back.
scenario()
{
	W=$ROOT/$1
	R=$W/R
	V=$W/victim
	S=$W/state
	G=("$GROVE" --state "$S")
	mkdir -p "$R/usr/bin" "$R/prog" "$R/var/lib/dpkg" "$V/lib/dpkg/alternatives" "$V/etc"
	mk_file "$R/prog/ed1" one
	mk_file "$V/etc/keep" keep
	chown -R 65534:65534 "$R"
	expect_exit 0 "${G[@]}" alt --root "$R" --install /usr/bin/ed ed /prog/ed1 10
	[[ -f $R/var/lib/dpkg/alternatives/ed ]] || fail "$1: the admin file was not written"
	expect_exit 0 "${G[@]}" alt --root "$R" --remove-all ed
	[[ ! -e $R/var/lib/dpkg/alternatives/ed ]] || fail "$1: the admin file was not removed"
	snapshot "$V" victim
}

# interrupt: the last transaction becomes one a crash left unfinished (its intent only).
interrupt()
{
	sqlite3 "$S/grove.db" "update txns set state = 'intent', finished = null
	                       where id = (select max(id) from txns)"
}

# replay MODE: undo, rollback (to transaction 1) or recovery (of transaction 2, interrupted).
replay()
{
	case $1 in
	undo) expect_exit 4 "${G[@]}" undo -t "$R" ;;
	rollback) expect_exit 4 "${G[@]}" rollback --to 1 -t "$R" ;;
	recover) expect_exit 4 "${G[@]}" recover -t "$R" ;;
	esac
}

ADM=var/lib/dpkg/alternatives

for mode in undo rollback recover; do
	# The admindir itself swapped for a symlink to a folder of root's.
	scenario "adm-link-$mode"
	[[ $mode == recover ]] && interrupt
	as_nobody mv "$R/$ADM" "$R/$ADM.old"
	as_nobody ln -s "$V/lib/dpkg/alternatives" "$R/$ADM"
	replay "$mode"
	expect_err_has "administrative directory '$R/$ADM'"
	expect_err_has "nothing was written"
	expect_unchanged "$V" victim
	[[ ! -e $R/$ADM.old/ed ]] || fail "$mode: the admin file was written into the moved folder"
	if [[ $mode == recover ]]; then
		[[ $(sqlite3 "$S/grove.db" 'select state from txns order by id desc limit 1') == stuck ]] ||
			fail "recover: the interrupted transaction is not STUCK"
	fi
	# Put back, the same replay does its work.
	as_nobody rm "$R/$ADM"
	as_nobody mv "$R/$ADM.old" "$R/$ADM"
	case $mode in
	undo) expect_exit 0 "${G[@]}" undo -t "$R" ;;
	rollback) expect_exit 0 "${G[@]}" rollback --to 1 -t "$R" ;;
	recover) expect_exit 0 "${G[@]}" recover -t "$R" ;;
	esac
	[[ -f $R/$ADM/ed ]] || fail "$mode: ed's admin file was not put back once the admindir was"
	check "$mode of a grove alt change: an admindir swapped for a symlink is STUCK, nothing written"

	# A folder above it (R/var) swapped for a symlink to a folder of root's with the same layout.
	scenario "var-link-$mode"
	[[ $mode == recover ]] && interrupt
	as_nobody mv "$R/var" "$R/var.old"
	as_nobody ln -s "$V" "$R/var"
	replay "$mode"
	expect_err_has "nothing was written"
	expect_unchanged "$V" victim
	check "$mode of a grove alt change: a folder above the admindir swapped for a symlink: nothing written"

	# The admindir replaced by a new folder of nobody's: not the folder the transaction used.
	scenario "adm-new-$mode"
	[[ $mode == recover ]] && interrupt
	as_nobody mv "$R/$ADM" "$R/$ADM.old"
	as_nobody mkdir "$R/$ADM"
	replay "$mode"
	expect_err_has "is not the folder the transaction used"
	expect_err_has "nothing was written"
	[[ -z $(ls -A "$R/$ADM") ]] || fail "$mode: something was written into the new admindir"
	[[ ! -e $R/$ADM.old/ed ]] || fail "$mode: the admin file was written into the moved folder"
	check "$mode of a grove alt change: an admindir replaced by another folder is STUCK, nothing written"
done

# The recovery that starts any later command: grove alt (update-alternatives' exit 2: its own
# admindir is opened following no symlink first) and stow (exit 4) stop, and write nothing.
scenario later
interrupt
as_nobody mv "$R/$ADM" "$R/$ADM.old"
as_nobody ln -s "$V/lib/dpkg/alternatives" "$R/$ADM"
mk_file "$R/prog/vi1" vi
expect_exit 2 "${G[@]}" alt --root "$R" --install /usr/bin/vi vi /prog/vi1 10
mkdir -p "$W/stow/p"
mk_file "$W/stow/p/f" f
expect_exit 4 "${G[@]}" stow -d "$W/stow" -t "$R" p
expect_err_has "nothing was written"
expect_unchanged "$V" victim
[[ ! -e $R/usr/bin/vi && ! -e $R/f ]] || fail "a command ran on after its recovery was stuck"
check "the recovery starting grove alt or stow on the root stops on a swapped admindir, nothing written"

# A transaction logged before the log recorded roots (schema 12): no identity to check, but the
# admindir is still reopened beneath the root following no symlink.
scenario old
sqlite3 "$S/grove.db" 'delete from txn_roots'
as_nobody mv "$R/$ADM" "$R/$ADM.old"
as_nobody ln -s "$V/lib/dpkg/alternatives" "$R/$ADM"
expect_exit 4 "${G[@]}" undo -t "$R"
expect_err_has "a symlink is in the way"
expect_unchanged "$V" victim
check "an alternatives change logged without its roots: undo follows no symlink to the admindir"
