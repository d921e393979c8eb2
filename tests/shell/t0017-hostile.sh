#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Hostile input (DESIGN.md invariant 8): rows someone else wrote into the journal, a state dir
# others control, a stow dir swapped while a transaction is interrupted, fifos where grove reads a
# file, and costly ignore patterns. Each ends with a clear error and nothing outside the roots (and
# nothing inside them) changed.
set -euo pipefail
# shellcheck source=tests/shell/lib.sh
. "$(dirname "$0")/lib.sh"

command -v sqlite3 >/dev/null || fail "sqlite3 (the command) is needed to craft journal rows"
# LeakSanitizer cannot run under ptrace: traced runs of an ASan build keep it quiet.
TRACED_ASAN=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

S=$ROOT/stow
T=$ROOT/tgt
V=$ROOT/victim
ST=$ROOT/state
mkdir -p "$S" "$T" "$V/ssh"
mk_file "$V/ssh/sshd_config" secret
mk_file "$S/p/f" x
mk_file "$S/q/g" y
cd "$ROOT"
G=("$GROVE" --state "$ST")

"${G[@]}" stow -d "$S" -t "$T" p
DB=$ST/grove.db
TID=$(sqlite3 "$DB" 'select id from targets')
sql()
{
	sqlite3 "$DB" "$1"
}
# hexs STRING: its bytes in hex.
hexs()
{
	printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n'
}
# op_chunk KIND PATH TEXT STOW_PATH PACKAGE: a chunk of that one op (docs/journal.md, "Ops"), as an
# SQL blob literal; STOW_PATH and PACKAGE are quoted ('x') or NULL (absent).
op_chunk()
{
	local kinds=(mkdir link unlink relink rmdir unfold fold adopt) k flags=2 hex
	local stow=${4#\'} pkg=${5#\'}
	stow=${stow%\'}
	pkg=${pkg%\'}
	for k in "${!kinds[@]}"; do
		[[ ${kinds[k]} == "$1" ]] && break
	done
	hex=$(hexs "$2")00$(hexs "$3")00
	if [[ $stow != NULL ]]; then
		flags=$((flags | 4))
		hex+=$(hexs "$stow")00
	fi
	if [[ $pkg != NULL ]]; then
		flags=$((flags | 8))
		hex+=$(hexs "$pkg")00
	fi
	printf "X'%02x%02x%s'" "$k" "$flags" "$hex"
}
# intent_with_op KIND PATH TEXT STOW_PATH PACKAGE [STOW_DIR]: an interrupted transaction of T with
# one op, as a writer of the state dir could add it.
intent_with_op()
{
	local sd=${6:-$S}
	sql "insert into txns(target_id,state,command,stow_dir,started) values($TID,'intent','x','$sd',0);
	     insert into op_chunks(txn_id,first_seq,n,body)
	       values((select max(id) from txns),0,1,$(op_chunk "$1" "$2" "$3" "$4" "$5"));"
}
# Everything but the state dir (whose journal records the refusals).
snap()
{
	snapshot "$T" t
	snapshot "$S" s
	snapshot "$V" v
}
unchanged()
{
	expect_unchanged "$T" t
	expect_unchanged "$S" s
	expect_unchanged "$V" v
}
clear_unfinished()
{
	sql "delete from op_chunks where txn_id in (select id from txns where state in ('intent','stuck'));
	     delete from txns where state in ('intent','stuck');"
}

# ---------------------------------------------------------------- crafted journal rows

snap
intent_with_op adopt sshd_config ../victim/ssh/sshd_config "'ssh/sshd_config'" "'ssh'" "$V"
expect_exit 4 "${G[@]}" recover -t "$T"
expect_err_has "the log does not record which folder the stow dir '$V' was"
unchanged
# The same row with the victim folder's own identity, as a careful forger would write it.
sql "update txns set stow_dev = $(stat -c %d "$V"), stow_ino = $(stat -c %i "$V"), stow_born = 0
     where state in ('intent', 'stuck')"
expect_exit 4 "${G[@]}" recover -t "$T"
expect_err_has "never used by a committed transaction of this target"
unchanged
expect_tree "$V" <<'EOF'
d ssh
f ssh/sshd_config secret
EOF
check "an adopt row naming a stow dir the target never used: STUCK, the file stays where it is"

clear_unfinished
snap
intent_with_op unlink ../victim/ssh/sshd_config ../stow/p/f NULL "'p'"
expect_exit 4 "${G[@]}" recover -t "$T"
expect_err_has "op 0: its path is not a clean relative path beneath the target"
unchanged
check "an op path with '..': STUCK naming the row, nothing touched"

for bad in /etc/passwd "a//b" "./f" "f/" ""; do
	clear_unfinished
	intent_with_op unlink "$bad" ../stow/p/f NULL "'p'"
	expect_exit 4 "${G[@]}" recover -t "$T"
	expect_err_has "not a clean relative path"
	unchanged
done
check "absolute, empty, '.'-component and trailing-slash op paths: STUCK, nothing touched"

clear_unfinished
intent_with_op adopt f ../stow/p/f "'../../victim/ssh/sshd_config'" "'p'"
expect_exit 4 "${G[@]}" recover -t "$T"
expect_err_has "its stow path is not a clean relative path beneath the stow dir"
clear_unfinished
intent_with_op link f ../stow/p/f NULL "'../p'"
expect_exit 4 "${G[@]}" recover -t "$T"
expect_err_has "its package is not a single name"
unchanged
check "stow paths and packages read back are checked too"

# A path through a symlink inside the target: lexically clean, refused by the held-root walk.
clear_unfinished
ln -s ../victim "$T/lnk"
snap
intent_with_op link lnk/ssh/new ../stow/p/f NULL "'p'"
# Nothing is there to roll back beneath the target (the path is not visible through the link).
expect_exit_in "0 4" "${G[@]}" recover -t "$T"
unchanged
[[ ! -e $V/ssh/new ]] || fail "recovery made a link through a symlink, outside the target"
check "an op whose path crosses a symlink: nothing made or removed outside"
rm "$T/lnk"
clear_unfinished

# Committed rows someone added: undo, rollback, status and verify refuse them, touching nothing.
sql "insert into txns(target_id,state,command,stow_dir,started,finished) values($TID,'committed','x','$S',1,1);
     insert into op_chunks(txn_id,first_seq,n,body)
       values((select max(id) from txns),0,1,$(op_chunk link ../victim/ssh/sshd_config ../stow/p/f NULL "'p'"));"
snap
for cmd in undo status verify; do
	expect_exit 78 "${G[@]}" "$cmd" -t "$T"
	expect_err_has "journal '$ST/grove.db'"
	unchanged
done
expect_exit 78 "${G[@]}" rollback -t "$T" --to 1
unchanged
check "a committed row with '..': undo, rollback, status and verify exit 78, nothing touched"
sql "delete from op_chunks where txn_id = (select max(id) from txns); delete from txns where id = (select max(id) from txns);"
expect_exit 0 "${G[@]}" verify -t "$T"
check "with the row gone, the log is usable again"

# ---------------------------------------------------------------- a stow dir swapped mid-transaction

# The adopt is killed just before its link is made: the user's file is in the package then.
kill_adopt()
{
	local rc=0
	(ASAN_OPTIONS=$TRACED_ASAN strace -f -qq -o /dev/null -e trace=symlinkat -e inject=symlinkat:signal=SIGKILL:when=1 -- \
		"${G[@]}" stow --adopt -d "$S" -t "$T" q >/dev/null 2>&1) 2>/dev/null || rc=$?
	((rc == 137)) || fail "the adopt was not killed at its link (exit $rc)"
}
strace -qq -o /dev/null -e trace=getpid -e inject=getpid:error=EIO -- true 2>/dev/null ||
	fail "strace with fault injection is needed here"
mk_file "$T/g" mine
kill_adopt
[[ $(cat "$S/q/g") == mine ]] || fail "the killed adopt did not move the user's file yet"
# The stow dir's owner swaps it for a symlink to another folder holding q/g.
mkdir -p "$ROOT/other/q"
mk_file "$ROOT/other/q/g" rootonly
mv "$S" "$ROOT/stow.real"
ln -s other "$S"
snapshot "$ROOT/other" other
expect_exit 4 "${G[@]}" recover -t "$T"
expect_err_has "is not the folder the interrupted transaction used"
expect_unchanged "$ROOT/other" other
[[ ! -e $T/g ]] || fail "recovery moved a file out of the swapped-in folder"
check "a stow dir swapped for a symlink after a crash: STUCK, nothing moved out of the other folder"
rm "$S"
mv "$ROOT/stow.real" "$S"
expect_exit 0 "${G[@]}" recover -t "$T"
[[ $(cat "$T/g") == mine ]] || fail "recovery did not put the user's file back"
[[ $(cat "$S/q/g") == y ]] || fail "recovery did not put the package's file back"
check "the folder back in place: recovery puts both files back"

# A first transaction of a new target: no committed history vouches for the stow dir.
T2=$ROOT/tgt2
mkdir -p "$T2"
mk_file "$T2/g" mine2
rc=0
(ASAN_OPTIONS=$TRACED_ASAN strace -f -qq -o /dev/null -e trace=symlinkat \
	-e inject=symlinkat:signal=SIGKILL:when=1 -- "${G[@]}" stow --adopt -d "$S" -t "$T2" q >/dev/null 2>&1) 2>/dev/null || rc=$?
((rc == 137)) || fail "the first adopt was not killed (exit $rc)"
(cd "$ROOT/victim" && expect_exit 4 "${G[@]}" recover -t "$T2")
expect_err_has "run the command again with -d '$S'"
expect_exit 0 "${G[@]}" recover -t "$T2" -d "$S"
[[ $(cat "$T2/g") == mine2 && $(cat "$S/q/g") == y ]] || fail "recovery with -d did not restore"
check "recovery trusts a never-committed stow dir only when the user names it with -d"

# ---------------------------------------------------------------- state dirs others control

mkdir -p "$ROOT/st-g" "$ROOT/st-o"
chmod 0770 "$ROOT/st-g"
chmod 0777 "$ROOT/st-o"
for d in st-g st-o; do
	GROVE_STATE_DIR=$ROOT/$d expect_exit 78 "$GROVE" status -t "$T"
	expect_err_has "is writable by"
	[[ ! -e $ROOT/$d/grove.db ]] || fail "grove made a log in $d"
done
check "a group- or world-writable state dir: exit 78, no log made in it"
mkdir -p "$ROOT/st-real"
ln -s st-real "$ROOT/st-link"
GROVE_STATE_DIR=$ROOT/st-link expect_exit 78 "$GROVE" status -t "$T"
expect_err_has "is a symlink: refusing a log"
check "a state dir that is a symlink: exit 78"
mkdir -p "$ROOT/st-dbl"
chmod 0700 "$ROOT/st-dbl"
ln -s "$DB" "$ROOT/st-dbl/grove.db"
GROVE_STATE_DIR=$ROOT/st-dbl expect_exit 78 "$GROVE" status -t "$T"
expect_err_has "is not a regular file (a symlink)"
check "a grove.db that is a symlink: exit 78"
mkdir -p "$ROOT/st-nb"
chmod 0700 "$ROOT/st-nb"
chown 65534:65534 "$ROOT/st-nb"
GROVE_STATE_DIR=$ROOT/st-nb expect_exit 78 "$GROVE" stow -d "$S" -t "$T" q
expect_err_has "is owned by uid 65534, not by the user running grove (uid 0)"
check "a state dir owned by another user: exit 78"
mkdir -p "$ROOT/st-zero"
chmod 0700 "$ROOT/st-zero"
: >"$ROOT/st-zero/grove.db"
GROVE_STATE_DIR=$ROOT/st-zero expect_exit 78 "$GROVE" status -t "$T"
expect_err_has "is empty (0 bytes)"
check "an empty grove.db is a damaged log, not a new one: exit 78"
# A state dir the user names with --state may be root's (read by another user).
mkdir -p "$ROOT/st-named"
chmod 0777 "$ROOT/st-named"
expect_exit 0 "$GROVE" --state "$ROOT/st-named" status -t "$T"
check "a state dir named with --state and owned by root is accepted"

# A read-only state dir: read-only commands still answer.
NB=$ROOT/nb
mkdir -p "$NB/stow/p" "$NB/t"
mk_file "$NB/stow/p/x" x
chown -R 65534:65534 "$NB"
as_nobody()
{
	setpriv --reuid=65534 --regid=65534 --clear-groups env GROVE_STATE_DIR="$NB/state" "$@"
}
as_nobody "$GROVE" stow -d "$NB/stow" -t "$NB/t" p
chmod 0500 "$NB/state"
as_nobody "$GROVE" log -t "$NB/t" >/dev/null || fail "grove log failed on a read-only state dir"
as_nobody "$GROVE" verify -t "$NB/t" >/dev/null || fail "grove verify failed on a read-only state dir"
as_nobody "$GROVE" status -t "$NB/t" >"$OUT" || fail "grove status failed on a read-only state dir"
expect_out_has "p"
check "a read-only state dir: log, status and verify still work"
chmod 0700 "$NB/state"

# ---------------------------------------------------------------- fifos where grove reads a file

# no_hang WHAT CMD…: CMD must finish within 10 s with a non-zero exit and an error naming a file
# that is not regular.
no_hang()
{
	local what=$1 rc=0
	shift
	timeout 10 "$@" >"$OUT" 2>"$ERR" || rc=$?
	((rc != 124)) || fail "$what: grove hung on a fifo"
	((rc != 0)) || fail "$what: grove accepted a fifo"
	grep -q "not a regular file" "$ERR" || fail "$what: unexpected error: $(cat "$ERR")"
}
F=$ROOT/fifo
mkdir -p "$F/stow/p" "$F/stow/r" "$F/t" "$F/cwd" "$F/home/.config/grove"
mk_file "$F/stow/p/a" a
mk_file "$F/stow/r/b" b
mkfifo "$F/the-fifo" "$F/stow/p/.stow-local-ignore" "$F/stow/fifo2"
ln -s ../fifo2 "$F/stow/r/.stow-local-ignore"
# The package's owner is another user, as in a shared stow dir.
chown -R 65534:65534 "$F/stow"
no_hang "fifo .stow-local-ignore" "${G[@]}" plan stow -d "$F/stow" -t "$F/t" p
no_hang "link to a fifo as .stow-local-ignore" "${G[@]}" stow -d "$F/stow" -t "$F/t" r
rm "$F/stow/p/.stow-local-ignore" "$F/stow/r/.stow-local-ignore"
# A package of a second stow dir beneath the target, read through the target when a stow from
# that dir unfolds its folded link.
Z=$F/t2
mkdir -p "$Z/stow/eps/share" "$Z/stow2/zeta/share"
mk_file "$Z/stow/.stow" ""
mk_file "$Z/stow2/.stow" ""
mk_file "$Z/stow/eps/share/rc" rc
mk_file "$Z/stow2/zeta/share/y" y
ln -s stow/eps/share "$Z/share"
mkfifo "$Z/stow/eps/.stow-local-ignore"
no_hang "fifo .stow-local-ignore of a second stow dir's package" \
	"${G[@]}" stow -d "$Z/stow2" -t "$Z" zeta
[[ $(readlink "$Z/share") == stow/eps/share ]] || fail "a refused run unfolded the second stow dir's link"
rm -rf "$Z"
ln -s ../the-fifo "$F/cwd/.stowrc"
(cd "$F/cwd" && no_hang "fifo ./.stowrc" "${G[@]}" stow -d "$F/stow" -t "$F/t" p)
mkfifo "$F/home/.stowrc"
HOME=$F/home no_hang "fifo ~/.stowrc" "${G[@]}" stow -d "$F/stow" -t "$F/t" p
rm "$F/home/.stowrc"
mkfifo "$F/home/.stow-global-ignore"
HOME=$F/home no_hang "fifo ~/.stow-global-ignore" "${G[@]}" stow -d "$F/stow" -t "$F/t" p
rm "$F/home/.stow-global-ignore"
mkfifo "$F/grove.yaml"
no_hang "fifo grove.yaml" "${G[@]}" apply -f "$F/grove.yaml"
mkfifo "$F/home/.config/grove/config.yaml"
printf 'targets:\n  - path: %s\n    dir: %s\n    packages: [p]\n' "$F/t" "$F/stow" >"$F/ok.yaml"
HOME=$F/home XDG_CONFIG_HOME=$F/home/.config no_hang "fifo config.yaml" \
	"${G[@]}" apply -f "$F/ok.yaml"
rm "$F/home/.config/grove/config.yaml"
[[ -z $(ls -A "$F/t") ]] || fail "a refused run changed the target"
check "fifos (and links to them) as ignore files, .stowrc, global ignore, grove.yaml, config.yaml: a clear error, no hang"

# Admin files and the --log of grove alt.
A=$ROOT/alt
mkdir -p "$A/admin" "$A/alts"
mkfifo "$A/admin/ed"
rc=0
timeout 10 "${G[@]}" alt --altdir "$A/alts" --admindir "$A/admin" import >"$OUT" 2>"$ERR" || rc=$?
((rc == 0)) || fail "grove alt import with a fifo as an admin file: exit $rc: $(cat "$ERR")"
expect_out_has "took over 0 link groups"
check "a fifo as an admin file is not read (no hang) and is no group"

# ---------------------------------------------------------------- costly ignore patterns

C=$ROOT/costly
mkdir -p "$C/stow/pkg" "$C/t"
printf '(a|a)*\n' >"$C/stow/pkg/.stow-local-ignore"
long=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
for ((i = 0; i < 10000; i++)); do
	: >"$C/stow/pkg/$long.$i"
done
snapshot "$C" c
expect_exit 1 "${G[@]}" stow --no-folding -d "$C/stow" -t "$C/t" pkg
expect_err_line "ignore list '.*pkg/\\.stow-local-ignore'" "pattern '\\(a\\|a\\)\\*' costs too much on '$long\\.[0-9]+'"
expect_unchanged "$C" c
check "(a|a)* over 10,000 entries: a clear error naming file, pattern and entry, nothing changed"

# The limit is never a silent "not ignored": the file the user asked to ignore is not linked.
rm -rf "$C/stow/pkg"
mkdir -p "$C/stow/pkg/$long"
mk_file "$C/stow/pkg/$long/secret" s
printf '(a|a)*/nomatch\na+/secret\n' >"$C/stow/pkg/.stow-local-ignore"
rc=0
"${G[@]}" stow --no-folding -d "$C/stow" -t "$C/t" pkg 2>"$ERR" || rc=$?
[[ ! -e $C/t/$long/secret ]] || fail "a file the ignore list names was linked"
((rc == 1)) || [[ $rc == 0 ]] || fail "unexpected exit $rc"
check "a pattern over its budget never links the file it should ignore"

# ---------------------------------------------------------------- a commit that is not yet durable

# The last fsync of a stow is the state dir's, after the commit: when it fails, the change is made
# and committed (not refused: exit 1 would say nothing changed), exit 5.
D=$ROOT/durable
mkdir -p "$D/stow/p" "$D/t" "$D/t2"
mk_file "$D/stow/p/f" x
n=$(ASAN_OPTIONS=$TRACED_ASAN strace -f -qq -o /dev/stdout -e trace=fsync -- "${G[@]}" stow -d "$D/stow" -t "$D/t2" p |
	grep -c '^.*fsync(')
((n > 1)) || fail "expected several fsync calls in a stow, saw $n"
ASAN_OPTIONS=$TRACED_ASAN expect_exit 5 strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:error=EIO:when="$n" -- \
	"${G[@]}" stow -d "$D/stow" -t "$D/t" p
expect_err_has "is done and committed, but syncing the log's folder"
expect_tree "$D/t" "l f -> ../stow/p/f"
"${G[@]}" log -t "$D/t" >"$OUT"
grep -q committed "$OUT" || fail "the log does not show the transaction committed: $(cat "$OUT")"
check "the final sync of the log failing: exit 5 (changed, committed, not yet durable), not 1"

# ---------------------------------------------------------------- depth a package owner chooses

# nest DIR N: N folders "a" nested in DIR, a file "leaf" at the bottom (made through fds: the path
# is longer than PATH_MAX).
nest()
{
	"$GROVE_TEST_PY" - "$1" "$2" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
for _ in range(int(sys.argv[2])):
    os.mkdir("a", dir_fd=fd)
    nfd = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = nfd
os.close(os.open("leaf", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
PY
}
N=$ROOT/nest
mkdir -p "$N/stow/deep" "$N/stow/max" "$N/stow/ok" "$N/t"
nest "$N/stow/deep" 8000
nest "$N/stow/max" 1023
nest "$N/stow/ok" 600
snapshot "$N/t" nt
for cmd in "plan stow --no-folding" "stow --no-folding"; do
	# shellcheck disable=SC2086
	expect_exit 1 "${G[@]}" $cmd -d "$N/stow" -t "$N/t" deep
	expect_err_has "more than 1024 folders deep, which grove does not support"
	expect_unchanged "$N/t" nt
done
# Folded, it is one link: grove reads nothing below a folded folder (docs/stow.md, "What grove
# reads below a folded folder"), so there is no depth to refuse; a second package that makes the
# plan unfold it has it read then, and is refused the same way.
expect_exit 0 "${G[@]}" stow -d "$N/stow" -t "$N/t" deep
expect_tree "$N/t" "l a -> ../stow/deep/a"
mk_file "$N/stow/deep2/a/mine" mine
snapshot "$N/t" nt2
expect_exit 1 "${G[@]}" stow -d "$N/stow" -t "$N/t" deep2
expect_err_has "more than 1024 folders deep, which grove does not support"
expect_unchanged "$N/t" nt2
expect_exit 0 "${G[@]}" plan unstow -d "$N/stow" -t "$N/t" deep
expect_exit 0 "${G[@]}" unstow -d "$N/stow" -t "$N/t" deep
rm -r "$N/stow/deep2"
expect_unchanged --rolled-back "$N/t" nt
check "a package 8,000 folders deep: a clear error where grove reads it (no crash), nothing changed; folded, one link"
for opt in --no-folding --adopt; do
	expect_exit_in "0 1" "${G[@]}" stow "$opt" -d "$N/stow" -t "$N/t" max
	if ((RC == 1)); then
		expect_err_has "too long"
	else
		expect_exit 0 "${G[@]}" unstow -d "$N/stow" -t "$N/t" max
	fi
	expect_unchanged --rolled-back "$N/t" nt
done
check "a package 1,023 folders deep (grove's limit) is planned to the end: no crash"
expect_exit 0 "${G[@]}" stow -d "$N/stow" -t "$N/t" ok
expect_tree "$N/t" "l a -> ../stow/ok/a"
# (restow --no-folding would be a conflict: ok was stowed with folding; docs/stow.md "Recorded
# options")
expect_exit 0 "${G[@]}" unstow -d "$N/stow" -t "$N/t" ok
expect_exit 0 "${G[@]}" stow --no-folding -d "$N/stow" -t "$N/t" ok
[[ -L $N/t/$(printf 'a/%.0s' {1..600})leaf ]] || fail "the 600-deep leaf is not linked"
expect_exit 0 "${G[@]}" unstow -d "$N/stow" -t "$N/t" ok
[[ -z $(find "$N/t" -type l) ]] || fail "links are left after unstowing the 600-deep package"
check "a package 600 folders deep stows folded, unfolded and unstows"

# ---------------------------------------------------------------- names shown, never obeyed

E=$ROOT/esc
mkdir -p "$E/stow/p" "$E/t"
forged=$'x\nunlink .ssh (was -> ..)'
esc=$'\e]0;owned\a\e[1Ay'
: >"$E/stow/p/$forged"
: >"$E/stow/p/$esc"
: >"$E/stow/p/café"
expect_exit 0 "${G[@]}" plan stow --no-folding -d "$E/stow" -t "$E/t" p
[[ $(wc -l <"$OUT") == 3 ]] || fail "a name with a newline forged a plan line: $(cat -A "$OUT")"
grep -q $'\e' "$OUT" && fail "an escape sequence reached the plan output: $(cat -A "$OUT")"
expect_out_has 'link   x\x0aunlink .ssh (was -> ..) -> ../stow/p/x\x0aunlink .ssh (was -> ..)'
expect_out_has 'link   \x1b]0;owned\x07\x1b[1Ay -> '
expect_out_has 'link   café -> ../stow/p/café'
: >"$E/t/$esc"
expect_exit 1 "${G[@]}" stow --no-folding -d "$E/stow" -t "$E/t" p
grep -q $'\e' "$ERR" && fail "an escape sequence reached the conflict report: $(cat -A "$ERR")"
expect_err_has 'over existing target \x1b]0;owned\x07\x1b[1Ay since'
rm "$E/t/$esc"
expect_exit 0 "${G[@]}" stow -v --no-folding -d "$E/stow" -t "$E/t" p
grep -q $'\e' "$OUT" "$ERR" && fail "an escape sequence reached -v output"
"${G[@]}" verify -t "$E/t" >"$OUT" 2>&1 || true
rm "$E/t/$forged"
expect_exit 4 "${G[@]}" verify -t "$E/t"
expect_out_has 'x\x0aunlink .ssh (was -> ..) (grove made it a link to '
check "names with newlines and terminal escapes are shown as \\xHH in plans, conflicts, -v and verify"

# ---------------------------------------------------------------- grove alt --root stays inside

R=$ROOT/img
mkdir -p "$R/root/usr/bin" "$R/host"
: >"$R/root/prog"
ln -s ../host "$R/root/var"
snapshot "$R/host" host
# (followed as in a chroot: '..' stays at the root, and the root has no host folder)
expect_exit 2 "${G[@]}" alt --root "$R/root" --log /var/log/alt.log --install /usr/bin/ed ed /prog 10
expect_err_has "open 'var/lib/dpkg/alternatives': a symlink on the way leads to a folder that does not exist"
expect_unchanged "$R/host" host
rm "$R/root/var"
mkdir -p "$R/root/var"
ln -s ../../host "$R/root/var/log"
expect_exit 2 "${G[@]}" alt --root "$R/root" --log /var/log/alt.log --install /usr/bin/ed ed /prog 10
expect_err_has "a symlink is in the way at 'log'"
expect_unchanged "$R/host" host
[[ ! -e $R/root/usr/bin/ed ]] || fail "the alternative was installed although its log could not be opened"
rm "$R/root/var/log"
expect_exit 0 "${G[@]}" alt --root "$R/root" --log /var/log/alt.log --install /usr/bin/ed ed /prog 10
[[ -s $R/root/var/log/alt.log && -d $R/root/var/lib/dpkg/alternatives ]] ||
	fail "the log or the admindir inside the root was not made"
[[ $(readlink "$R/root/usr/bin/ed") == /etc/alternatives/ed ]] || fail "the generic link is not made"
check "grove alt --root: admindir and log opened beneath the root; a symlink out of it is a clear error"

# ---------------------------------------------------------------- records and groups read back

P=$ROOT/prof
mkdir -p "$P/stow/a/bin" "$P/secret/a/bin" "$P/pr"
mk_file "$P/stow/a/bin/x" x
mk_file "$P/secret/a/bin/key" key
expect_exit 0 "${G[@]}" profile -p "$P/pr/p" build -d "$P/stow" a
rec=$P/pr/p.generations/1/.grove-generation
# A record that names another folder, as someone who could write it would.
sed -i "s|^stow .*|stow $P/stow/../secret|" "$rec"
expect_exit 1 "${G[@]}" profile -p "$P/pr/p" install a
expect_err_has "has no readable record"
[[ ! -e $P/pr/p.generations/2 ]] || fail "a generation was built from a record naming another folder"
sed -i "s|^stow .*|stow $P/stow|; s|^package a|package ../secret/a|" "$rec"
expect_exit 1 "${G[@]}" profile -p "$P/pr/p" install a
expect_err_has "has no readable record"
sed -i "s|^package .*|package a|" "$rec"
chmod 0666 "$rec"
expect_exit 1 "${G[@]}" profile -p "$P/pr/p" install a
expect_err_has "has no readable record"
chmod 0644 "$rec"
expect_exit 0 "${G[@]}" profile -p "$P/pr/p" install a
check "a generation record naming a folder with '..', a package path, or writable by others is no record"

# An alternatives group whose link leaves the root, as a writer of the log (and of the admin
# file, which grove alt reads as the truth where it differs from the log) could save it.
AL=$ROOT/altroot
mkdir -p "$AL/root/usr/bin" "$AL/outside"
: >"$AL/root/prog"
expect_exit 0 "${G[@]}" alt --root "$AL/root" --install /usr/bin/ed ed /prog 10
sql "update alt_states set body = replace(body, '/usr/bin/ed', '/../../outside/ed') where name = 'ed'"
sed -i 's|^/usr/bin/ed$|/../../outside/ed|' "$AL/root/var/lib/dpkg/alternatives/ed"
snapshot "$AL/outside" out
expect_exit_in "1 2" "${G[@]}" alt --root "$AL/root" --install /usr/bin/ed ed /prog 20
expect_unchanged "$AL/outside" out
expect_exit_in "0 1 2" "${G[@]}" alt --root "$AL/root" --remove-all ed
expect_unchanged "$AL/outside" out
check "an alternatives group read back with a link leaving the root touches nothing outside it"

# A manifest profile name grove refuses: exit 78 with the position, as every other bad manifest.
printf 'profiles:\n  - name: .grove-1\n    packages: [a]\n    dir: %s\n' "$P/stow" >"$ROOT/badprof.yaml"
expect_exit 78 "${G[@]}" apply -f "$ROOT/badprof.yaml" --check
expect_err_line "badprof\\.yaml:2:5: invalid profile name '\\.grove-1': not allowed"
check "a manifest profile named .grove-1: exit 78 with FILE:LINE:COLUMN"
