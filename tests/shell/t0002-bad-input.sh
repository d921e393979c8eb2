#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Bad input: every refusal is one clear line naming the path or package and the reason, the
# documented exit status, and nothing changed in the stow dir or the target.
set -euo pipefail
# shellcheck source=tests/shell/lib.sh
. "$(dirname "$0")/lib.sh"

# fresh NAME: $C/stow (S) and $C/target (T) with package a (bin/tool, .rc) and package b (doc/b).
fresh()
{
	C=$ROOT/$1
	S=$C/stow
	T=$C/target
	mkdir -p "$S" "$T"
	mk_file "$S/a/bin/tool" tool
	mk_file "$S/a/.rc" rc
	mk_file "$S/b/doc/b" b
}

# refused CODE CMD…: the command exits CODE and $C is exactly as before (after exit 3, "undone
# part-way", folder mtimes may have moved; nothing else may).
refused()
{
	local code=$1
	shift
	snapshot "$C"
	expect_exit "$code" "$@"
	if [[ $code == 3 ]]; then
		expect_unchanged --rolled-back "$C"
	else
		expect_unchanged "$C"
	fi
}

# Runs CMD as user nobody, with a transaction log nobody can write (the test's own is root's).
NOBODY_STATE=$ROOT/nobody-state
nobody()
{
	mkdir -p "$NOBODY_STATE"
	chown 65534:65534 "$NOBODY_STATE"
	GROVE_STATE_DIR=$NOBODY_STATE setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# in_ro_mount DIR CMD…: CMD in a private mount namespace where DIR is a read-only bind mount.
in_ro_mount()
{
	# shellcheck disable=SC2016 # expanded by the inner sh
	unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"' \
		sh "$@"
}

mk_socket()
{
	"$GROVE_TEST_PY" -c 'import os, socket, sys
os.chdir(os.path.dirname(sys.argv[1]))
socket.socket(socket.AF_UNIX).bind(os.path.basename(sys.argv[1]))' "$1"
}

# ---------------------------------------------------------------- package names

fresh names
cd "$S"
expect_exit 0 "$GROVE" stow -t "$T" a/
expect_tree "$T" <<-EOF
	l .rc -> ../stow/a/.rc
	l bin -> ../stow/a/bin
EOF
expect_exit 0 "$GROVE" unstow -t "$T" a//
expect_tree "$T" ""
check "a trailing slash names the package itself, as in Stow ('a/' and 'a//')"

refused 1 "$GROVE" stow -t "$T" a/bin
expect_err_line "invalid package name 'a/bin'" "'/'"
check "a package name with an inner '/' is refused (exit 1), naming it"

refused 1 "$GROVE" stow -t "$T" /a
expect_err_line "'/a'" "'/'"
check "a package name with a leading '/' is refused (exit 1)"

refused 1 "$GROVE" stow -t "$T" ..
expect_err_line "invalid package name '\.\.'"
check "package name '..' is refused (exit 1), naming it"

refused 1 "$GROVE" stow -t "$T" ''
expect_err_line "invalid package name ''" "empty"
check "an empty package name is refused (exit 1)"

mkdir "$S/$(printf 'n\nl')"
refused 1 "$GROVE" stow -t "$T" "$(printf 'n\nl')"
expect_err_line "invalid package name 'n\\\\x0al'" "control character"
check "a package name with a newline is refused in one escaped line (exit 1)"

mkdir "$S/$(printf 'u\xff')"
refused 1 "$GROVE" stow -t "$T" "$(printf 'u\xff')"
expect_err_line "invalid package name 'u\\\\xff'" "UTF-8"
check "a package name with invalid UTF-8 is refused, escaped (exit 1)"

refused 1 "$GROVE" stow -t "$T" nope
expect_err_line "'nope'" "does not contain package"
check "a missing package is refused (exit 1), naming it"

refused 1 "$GROVE" stow -t "$T" a nope
expect_err_line "'nope'"
check "a good package with a missing one: nothing is stowed (exit 1)"

refused 1 "$GROVE" -d "$S" -t "$T" -S a -D b -S ..
expect_err_line "'\.\.'"
refused 1 "$GROVE" unstow -t "$T" a/bin
expect_err_line "'a/bin'"
refused 1 "$GROVE" restow -t "$T" nope
expect_err_line "'nope'"
check "bad names are refused with -S/-D in Stow's spelling and with unstow and restow too"

n255=$(printf 'n%.0s' {1..255})
mk_file "$S/long/$n255" "long file"
mk_file "$S/long/sub/$n255" "long nested"
mkdir "$S/$n255"
mk_file "$S/$n255/x" x
expect_exit 0 "$GROVE" stow -t "$T" --no-folding long "$n255"
expect_tree "$T" <<-EOF
	l $n255 -> ../stow/long/$n255
	d sub
	l sub/$n255 -> ../../stow/long/sub/$n255
	l x -> ../stow/$n255/x
EOF
expect_exit 0 "$GROVE" unstow -t "$T" long "$n255"
expect_tree "$T" "d sub"
rmdir "$T/sub"
check "NAME_MAX: 255-byte file names and a 255-byte package name stow and unstow (as Stow, the folder stays)"

refused 1 "$GROVE" stow -t "$T" "${n255}x"
expect_err_line "invalid package name 'n{100}" "NAME_MAX"
check "a 256-byte package name is refused (exit 1), naming it"

# ---------------------------------------------------------------- roots

fresh roots
cd "$S"
mk_file "$C/file" plain
refused 1 "$GROVE" stow -t "$C/file" a
expect_err_line "target" "'$C/file'" "Not a directory"
check "a target that is a file is refused (exit 1), naming it"

refused 1 "$GROVE" stow -t "$C/missing" a
expect_err_line "target" "'$C/missing'" "No such file or directory"
check "a missing target is refused (exit 1), naming it"

refused 1 "$GROVE" stow -d "$C/nostow" -t "$T" a
expect_err_line "stow directory" "'$C/nostow'" "No such file or directory"
check "a missing stow dir is refused (exit 1), naming it"

refused 1 "$GROVE" stow -d "$C/file" -t "$T" a
expect_err_line "stow directory" "'$C/file'" "Not a directory"
check "a stow dir that is a file is refused (exit 1), naming it"

mk_file "$S/c/sub/x" x
refused 1 "$GROVE" stow -t "$S/c/sub" c
expect_err_line "'$S/c/sub'" "inside the stow directory"
refused 1 "$GROVE" stow -t "$S" a
expect_err_line "'$S'" "stow directory"
check "a target inside the stow dir, or the stow dir itself, is refused (exit 1)"

# Stow's normal layout: the stow dir inside the target.
C=$ROOT/layout
mkdir -p "$C/stow"
mk_file "$C/stow/a/y" y
mk_file "$C/stow/a/stow/evil" evil
mk_file "$C/stow/b/stow" "not a folder"
mk_file "$C/stow/c/bin/c" c
cd "$C/stow"
snapshot "$C/stow"
expect_exit 0 "$GROVE" stow a c
expect_tree "$C" <<-EOF
	l y -> stow/a/y
	l bin -> stow/c/bin
	d stow
	d stow/a
	f stow/a/y y
	d stow/a/stow
	f stow/a/stow/evil evil
	d stow/b
	f stow/b/stow not a folder
	d stow/c
	d stow/c/bin
	f stow/c/bin/c c
EOF
expect_exit 1 "$GROVE" stow b
expect_err_has "WARNING! stowing b would cause conflicts:"
expect_exit 0 "$GROVE" unstow a c
expect_tree "$C" "$(listing "$C" | grep '^. stow')"
expect_unchanged "$C/stow"
check "stow dir inside the target (default target): works, the stow dir itself is never touched"

# ---------------------------------------------------------------- package contents

fresh contents
cd "$S"
mk_link "$S/self/loop" loop
refused 1 "$GROVE" stow -t "$T" self
expect_err_has "WARNING! stowing self would cause conflicts:"
expect_err_has "stow/self/loop"
check "a link that points at itself is refused with a conflict (exit 1), naming it"

mk_link "$S/cyc/x" y
mk_link "$S/cyc/y" x
refused 1 "$GROVE" stow -t "$T" cyc
expect_err_has "stow/cyc/x"
expect_err_has "stow/cyc/y"
check "a two-link cycle is refused with both links named (exit 1)"

mk_link "$S/up/d/up" ..
refused 1 "$GROVE" stow --no-folding -t "$T" up
expect_err_has "stow/up/d/up"
check "a link back up into its own package (a folder cycle) is refused when unfolded (exit 1)"

mk_link "$S/abs/abs" /etc
mk_file "$S/abs/ok" ok
refused 1 "$GROVE" stow -t "$T" abs
expect_err_has "stow/abs/abs"
expect_err_has "absolute"
check "an absolute link in a package is refused with a conflict (exit 1), naming it"

mk_link "$S/esc/out" ../../outside
refused 1 "$GROVE" stow -t "$T" esc
expect_err_has "stow/esc/out"
check "a link escaping the stow dir is refused with a conflict (exit 1), naming it"

mk_link "$S/rel/bin/alias" real
mk_file "$S/rel/bin/real" real
mk_link "$S/rel/dangling" nothere
expect_exit 0 "$GROVE" stow --no-folding -t "$T" rel
expect_tree "$T" <<-EOF
	d bin
	l bin/alias -> ../../stow/rel/bin/alias
	l bin/real -> ../../stow/rel/bin/real
	l dangling -> ../stow/rel/dangling
EOF
expect_exit 0 "$GROVE" unstow -t "$T" rel
expect_tree "$T" "d bin"
rmdir "$T/bin"
check "links that stay inside the package (and a dangling one) are linked like files"

mkdir -p "$S/fifo"
mkfifo "$S/fifo/f"
refused 1 "$GROVE" stow -t "$T" fifo
expect_err_has "WARNING! stowing fifo would cause conflicts:"
expect_err_has "stow/fifo/f"
check "a fifo in a package is refused with a conflict (exit 1), naming it"

mkdir -p "$S/sock"
mk_socket "$S/sock/s"
refused 1 "$GROVE" stow -t "$T" sock
expect_err_has "stow/sock/s"
check "a socket in a package is refused with a conflict (exit 1), naming it"

mkfifo "$S/fifo/g"
mk_file "$S/fifo/ok" ok
refused 1 "$GROVE" stow -t "$T" fifo abs esc
expect_err_has "stow/fifo/f"
expect_err_has "stow/fifo/g"
expect_err_has "stow/abs/abs"
expect_err_has "stow/esc/out"
[[ $(grep -c '^WARNING! stowing' "$ERR") == 3 ]] || fail "expected a conflict header per package"
check "several bad sources in three packages are all reported in one run"

# ---------------------------------------------------------------- conflicts in the target

fresh conflicts
cd "$S"
mk_file "$S/a/bin/y" ay
mk_file "$S/b/etc" b
mk_file "$T/bin/tool" user
mk_file "$T/.rc" user
mk_link "$T/bin/y" /nowhere
mkdir "$T/etc"
refused 1 "$GROVE" stow -t "$T" a b
expect_err_has "WARNING! stowing a would cause conflicts:"
expect_err_has "  * cannot stow ../stow/a/.rc over existing target .rc since neither a link nor a directory and --adopt not specified"
expect_err_has "  * cannot stow ../stow/a/bin/tool over existing target bin/tool since neither a link nor a directory and --adopt not specified"
expect_err_has "  * existing target is not owned by stow: bin/y"
expect_err_has "WARNING! stowing b would cause conflicts:"
expect_err_has "  * cannot stow non-directory ../stow/b/etc over existing directory target etc"
expect_err_has "All operations aborted."
[[ $(grep -c '^  \* ' "$ERR") == 4 ]] || fail "expected exactly 4 conflict lines, got: $(cat "$ERR")"
check "four conflicts in two packages are all reported in one run (exit 1), nothing changed"

if have_stow; then
	cp -a "$C" "$ROOT/conflicts-stow"
	# grove adds "  hint: …" lines after each package's conflicts (docs/stow.md); the rest is Stow's.
	grove_err=$(grep -v '^  hint: ' "$ERR")
	(cd "$ROOT/conflicts-stow/stow" && run stow_ref -t ../target a b)
	[[ $RC == 1 ]] || fail "GNU Stow exited $RC on the conflicts"
	[[ $(cat "$ERR") == "$grove_err" ]] ||
		fail "conflict report differs from GNU Stow's:$(diff <(echo "$grove_err") "$ERR")"
	check "the conflict report is GNU Stow's, word for word"
else
	echo "# skipped: the conflict report against GNU Stow's: $STOW_ORACLE_HINT"
fi

refused 1 "$GROVE" -d "$S" -t "$T" -D b -S a
expect_err_has "WARNING! stowing a would cause conflicts:"
check "conflicts in a mixed -D/-S run also change nothing"

# ---------------------------------------------------------------- permissions (as nobody)

if ! nobody true 2>/dev/null; then
	fail "setpriv cannot switch to uid 65534 here"
fi
# A permission error of a normal user ends with one hint naming root (sudo); the hint is then
# taken out so that the error itself is checked as one line.
hinted_root()
{
	[[ $(tail -n1 "$ERR") == "hint: you (uid 65534) lack the permission"*"needs root: sudo grove"* ]] ||
		fail "no hint about root after a permission error: $(cat "$ERR")"
	sed -i '$d' "$ERR"
}
fresh perm
mk_file "$S/a/sub/x" x
mk_file "$S/a/zz" zz
mkdir "$T/sub"
chmod -R a+rX "$C"
cd "$S"
refused 1 nobody "$GROVE" stow -t "$T" a
hinted_root
expect_err_line "'\.rc'|'bin'|'sub/x'|'zz'" "Permission denied"
check "a target nobody cannot write: exit 1, path and 'Permission denied' named, nothing changed"

chown 65534:65534 "$T"
refused 3 nobody "$GROVE" stow -t "$T" a
hinted_root
expect_err_line "'sub/x'" "Permission denied" "undone"
check "a sub-folder nobody cannot write: fails part-way (exit 3), every change undone"

chown 0:0 "$T"
mkdir "$C/t2"
chown 65534:65534 "$C/t2"
chmod 700 "$S/a/sub"
snapshot "$C"
expect_exit 1 nobody "$GROVE" stow -t "$C/t2" --no-folding a
expect_unchanged "$C"
hinted_root
expect_err_line "Permission denied"
PERM_UNREADABLE_ERR=$(cat "$ERR")
chmod 755 "$S/a/sub"
check "an unreadable package folder: exit 1, nothing changed"

# ---------------------------------------------------------------- read-only target

if in_ro_mount "$ROOT" true 2>/dev/null; then
	fresh ro
	mk_file "$S/a/sub/x" x
	mk_file "$S/a/zz" zz
	mkdir "$T/sub"
	cd "$S"
	refused 1 in_ro_mount "$T" "$GROVE" stow -t "$T" a
	expect_err_line "'\.rc'|'bin'|'sub/x'|'zz'" "Read-only file system"
	check "a read-only target (ro bind mount): exit 1, path and reason named, nothing changed"

	refused 3 in_ro_mount "$T/sub" "$GROVE" stow -t "$T" a
	expect_err_line "'sub/x'" "Read-only file system" "undone"
	check "a read-only sub-folder of the target: fails part-way (exit 3), every change undone"

	snapshot "$S"
	expect_exit 0 in_ro_mount "$S" "$GROVE" stow -t "$T" a
	expect_unchanged "$S"
	expect_exit 0 in_ro_mount "$S" "$GROVE" unstow -t "$T" a
	expect_tree "$T" "d sub"
	check "a read-only stow dir: stow and unstow work (grove never writes there)"
else
	echo "ok - # SKIP read-only target: no mount namespace here (unshare -m failed)"
fi

# ---------------------------------------------------------------- paths past PATH_MAX

fresh deep
cd "$S"
# 22 folders of 200 bytes: the leaf's path is about 4,430 bytes, past PATH_MAX (4096).
"$GROVE_TEST_PY" - "$S/deep" <<-'EOF'
	import os, sys
	os.makedirs(sys.argv[1])
	fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
	for i in range(22):
	    os.mkdir("d" * 200, dir_fd=fd)
	    nfd = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
	    os.close(fd)
	    fd = nfd
	f = os.open("leaf", os.O_CREAT | os.O_WRONLY, dir_fd=fd)
	os.write(f, b"deep")
	os.close(f)
EOF
d200=$(printf 'd%.0s' {1..200})
expect_exit 0 "$GROVE" stow -t "$T" deep
expect_tree "$T" "l $d200 -> ../stow/deep/$d200"
expect_exit 0 "$GROVE" unstow -t "$T" deep
expect_tree "$T" ""
check "a package deeper than PATH_MAX stows and unstows folded (one link)"

# Unfolded, the leaf's link text would pass PATH_MAX: it cannot be made, so grove must refuse
# cleanly (exit 1 before any change, or 3 after undoing) and leave nothing half-done.
snapshot "$C"
run "$GROVE" stow --no-folding -t "$T" deep
if [[ $RC != 1 && $RC != 3 ]] ||
	! diff -q <(_lib_strip_dir_mtime <"$(_lib_snapname "$C")") <(_lib_list "$C" meta | _lib_strip_dir_mtime) >/dev/null; then
	{
		echo "FAIL: $TEST_NAME: an unfolded stow past PATH_MAX must exit 1 or 3 and change nothing"
		echo "  command: grove stow --no-folding -t $T deep (in $S)"
		echo "  exit status: $RC"
		echo "  stderr (each 200-byte folder name shown as <d200>):"
		sed -E 's/d{200}/<d200>/g; s/^/    | /' "$ERR"
		echo "  target now holds $(find "$T" -mindepth 1 | wc -l) entries (expected 0)"
	} >&2
	exit 1
fi
expect_err_has "too long"
expect_err_has "WARNING! stowing deep would cause conflicts:"
check "unfolded past PATH_MAX: refused cleanly (exit $RC), message says why, nothing half-done"

# ---------------------------------------------------------------- bad sources inside a folded folder

# A folded folder exposes everything under it through one link, the way the stow dir itself
# exposes it: grove does not read below a folder it folds (as Stow does not), so what lies there
# is linked as Stow links it. What grove refuses (links leaving the stow dir, loops, special
# files; absolute links) is refused where grove would make a link to it: when a later plan
# unfolds the folder (docs/stow.md, "What grove reads below a folded folder").
fresh nested
cd "$S"
mk_link "$S/nabs/d/abs" /etc
expect_exit 0 "$GROVE" stow -t "$T" nabs
expect_tree "$T" "l d -> ../stow/nabs/d"
expect_exit 0 "$GROVE" unstow -t "$T" nabs
check "an absolute link inside a folder that folds is accepted, as Stow accepts it"

mk_link "$S/nesc/d/out" ../../../outside
expect_exit 0 "$GROVE" stow -t "$T" nesc
expect_tree "$T" "l d -> ../stow/nesc/d"
mk_file "$S/nesc2/d/mine" mine
refused 1 "$GROVE" stow -t "$T" nesc2
expect_err_has "WARNING! stowing nesc would cause conflicts:"
expect_err_has "stow/nesc/d/out"
expect_exit 0 "$GROVE" unstow -t "$T" nesc
check "an escaping link inside a folder that folds: linked through the fold, refused when another package unfolds it (exit 1)"

mkdir -p "$S/nfifo/d"
mkfifo "$S/nfifo/d/f"
expect_exit 0 "$GROVE" stow -t "$T" nfifo
expect_tree "$T" "l d -> ../stow/nfifo/d"
mk_file "$S/nfifo2/d/mine" mine
refused 1 "$GROVE" stow -t "$T" nfifo2
expect_err_has "WARNING! stowing nfifo would cause conflicts:"
expect_err_has "stow/nfifo/d/f"
expect_exit 0 "$GROVE" unstow -t "$T" nfifo
check "a fifo inside a folder that folds: linked through the fold, refused when another package unfolds it (exit 1)"

# ---------------------------------------------------------------- message quality

[[ $PERM_UNREADABLE_ERR == *"a/sub"* ]] ||
	fail "unreadable package folder: the message does not name the package path 'a/sub': $PERM_UNREADABLE_ERR"
check "an unreadable package folder's message names the package path"
