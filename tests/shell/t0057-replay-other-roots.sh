#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A replay is a run (DESIGN.md invariant 11, issue 37 item 2), for the roots besides the admindir
# (t0056): the altdir, a profile's folders, the target and the stow dir. Root works on trees
# another user (nobody) owns; that user swaps one of those roots for a symlink to a folder of
# root's with the same layout; root's undo, rollback or recovery may fail but writes nothing
# there, and once the root is put back the replay does its work.
. "$(dirname "$0")/lib.sh"

command -v sqlite3 >/dev/null || fail "sqlite3 (the command) is needed to mark a transaction interrupted"

as_nobody()
{
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# interrupt DB: the last transaction becomes one a crash left unfinished (its intent only).
interrupt()
{
	sqlite3 "$1" "update txns set state = 'intent', finished = null
	              where id = (select max(id) from txns)"
}

# ---------------------------------------------------------------- the altdir

for mode in undo rollback recover; do
	W=$ROOT/alt-$mode
	R=$W/R
	V=$W/victim
	G=("$GROVE" --state "$W/state")
	mkdir -p "$R/usr/bin" "$R/prog" "$R/etc" "$R/var/lib/dpkg" "$V/alternatives"
	mk_file "$R/prog/ed1" one
	mk_file "$V/keep" keep
	chown -R 65534:65534 "$R"
	expect_exit 0 "${G[@]}" alt --root "$R" --install /usr/bin/ed ed /prog/ed1 10
	expect_exit 0 "${G[@]}" alt --root "$R" --remove-all ed
	[[ $mode == recover ]] && interrupt "$W/state/grove.db"
	snapshot "$V" victim
	as_nobody mv "$R/etc/alternatives" "$R/etc/alternatives.old"
	as_nobody ln -s "$V/alternatives" "$R/etc/alternatives"
	case $mode in
	undo) run "${G[@]}" undo -t "$R" ;;
	rollback) run "${G[@]}" rollback --to 1 -t "$R" ;;
	recover) run "${G[@]}" recover -t "$R" ;;
	esac
	((RC != 0)) || fail "$mode went on through an altdir swapped for a symlink"
	expect_unchanged "$V" victim
	[[ ! -e $R/var/lib/dpkg/alternatives/ed ]] ||
		fail "$mode: ed's admin file was written although its links could not be"
	as_nobody rm "$R/etc/alternatives"
	as_nobody mv "$R/etc/alternatives.old" "$R/etc/alternatives"
	case $mode in
	undo) expect_exit 0 "${G[@]}" undo -t "$R" ;;
	rollback) expect_exit 0 "${G[@]}" rollback --to 1 -t "$R" ;;
	recover) expect_exit 0 "${G[@]}" recover -t "$R" ;;
	esac
	[[ $(readlink "$R/etc/alternatives/ed") == /prog/ed1 ]] ||
		fail "$mode: ed's link was not put back once the altdir was"
	check "$mode of a grove alt change: an altdir swapped for a symlink: nothing written there"

	# The altdir replaced by a new folder of nobody's: not the folder the transaction used.
	expect_exit 0 "${G[@]}" alt --root "$R" --remove-all ed
	[[ $mode == recover ]] && interrupt "$W/state/grove.db"
	as_nobody mv "$R/etc/alternatives" "$R/etc/alternatives.old"
	as_nobody mkdir "$R/etc/alternatives"
	case $mode in
	undo) expect_exit 4 "${G[@]}" undo -t "$R" ;;
	rollback) expect_exit 4 "${G[@]}" rollback --to 1 -t "$R" ;;
	recover) expect_exit 4 "${G[@]}" recover -t "$R" ;;
	esac
	expect_err_has "alternatives directory '$R/etc/alternatives' is not the folder the transaction used"
	[[ -z $(ls -A "$R/etc/alternatives") ]] || fail "$mode: something was written into the new altdir"
	[[ ! -e $R/var/lib/dpkg/alternatives/ed ]] || fail "$mode: ed's admin file was written"
	check "$mode of a grove alt change: an altdir replaced by another folder is STUCK, nothing written"
done

# ---------------------------------------------------------------- a profile's folders

W=$ROOT/prof
V=$W/victim
P=$W/home/profiles/p
G=("$GROVE" --state "$W/state")
mkdir -p "$W/stow/a/bin" "$W/stow/b/bin" "$W/home/profiles" "$V/p.generations/1"
mk_file "$W/stow/a/bin/a" a
mk_file "$W/stow/b/bin/b" b
mk_file "$V/keep" keep
chown -R 65534:65534 "$W/home"
expect_exit 0 "${G[@]}" profile -p "$P" build -d "$W/stow" a
expect_exit 0 "${G[@]}" profile -p "$P" build -d "$W/stow" a b
snapshot "$V" victim
# The generations folder swapped for a symlink to root's folder, then the profile folder itself.
as_nobody mv "$P.generations" "$P.generations.old"
as_nobody ln -s "$V/p.generations" "$P.generations"
run "${G[@]}" profile -p "$P" rollback
((RC != 0)) || fail "profile rollback went on through a generations folder swapped for a symlink"
interrupt "$W/state/grove.db"
run "${G[@]}" profile -p "$P" rollback
((RC != 0)) || fail "a profile's recovery went on through a generations folder swapped for a symlink"
expect_unchanged "$V" victim
as_nobody rm "$P.generations"
as_nobody mv "$P.generations.old" "$P.generations"
as_nobody mv "$W/home/profiles" "$W/home/profiles.old"
as_nobody ln -s "$V" "$W/home/profiles"
run "${G[@]}" profile -p "$P" rollback
expect_unchanged "$V" victim
as_nobody rm "$W/home/profiles"
as_nobody mv "$W/home/profiles.old" "$W/home/profiles"
# The interrupted second build is rolled back by the next command's recovery: generation 1 again.
run "${G[@]}" profile -p "$P" rollback
[[ $(readlink "$P") == p-1-link && ! -e $P.generations/2 ]] ||
	fail "the interrupted build was not rolled back once the profile's folders were put back"
check "a profile's rollback and recovery: folders swapped for symlinks: nothing written there"

# ---------------------------------------------------------------- the target and the stow dir

for mode in undo rollback recover; do
	W=$ROOT/stow-$mode
	V=$W/victim
	G=("$GROVE" --state "$W/state")
	mkdir -p "$W/home/stow/p/sub" "$W/home/t" "$V/t" "$V/stow/p/sub"
	mk_file "$W/home/stow/p/sub/f" f
	mk_file "$W/home/t/g" mine
	mk_file "$W/home/stow/p/g" pkg
	mk_file "$V/stow/p/g" root-only
	mk_file "$V/t/keep" keep
	chown -R 65534:65534 "$W/home"
	# An adopt: its undo and recovery move a file between the stow dir and the target.
	expect_exit 0 "${G[@]}" stow --adopt -d "$W/home/stow" -t "$W/home/t" p
	[[ $(cat "$W/home/stow/p/g") == mine ]] || fail "the adopt did not move the user's file"
	[[ $mode == recover ]] && interrupt "$W/state/grove.db"
	snapshot "$V" victim
	for swap in t stow; do
		as_nobody mv "$W/home/$swap" "$W/home/$swap.old"
		as_nobody ln -s "$V/$swap" "$W/home/$swap"
		case $mode in
		undo) run "${G[@]}" undo -d "$W/home/stow" -t "$W/home/t" ;;
		rollback) run "${G[@]}" rollback --to 0 -d "$W/home/stow" -t "$W/home/t" ;;
		recover) run "${G[@]}" recover -d "$W/home/stow" -t "$W/home/t" ;;
		esac
		expect_unchanged "$V" victim
		as_nobody rm "$W/home/$swap"
		as_nobody mv "$W/home/$swap.old" "$W/home/$swap"
	done
	check "$mode of a stow --adopt: a target or stow dir swapped for a symlink: nothing written there"
done
