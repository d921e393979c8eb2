# SPDX-License-Identifier: GPL-3.0-or-later
# Shared vocabulary for the shell tests: a throwaway root, exit and stderr checks, tree listings
# compared with hand-written ones, snapshots that prove nothing changed, and GNU Stow as an oracle.
#
# Source it from a test run by bash with GROVE set (meson does), then call checks; each check that
# fails prints what it expected and what it got, and exits non-zero. The last line a passing test
# prints is "# <test>: N checks passed".
#
#   ROOT                 a fresh folder (mode 755 so other users can traverse it), removed on exit
#   mk_file PATH [TEXT]  a file holding exactly TEXT (no newline added), parents made
#   mk_link PATH TEXT    a symlink, parents made
#   run CMD…             runs CMD, stdout to $OUT, stderr to $ERR, exit status in $RC; never fails
#   expect_exit CODE CMD…      run, then fail unless the status is CODE
#   expect_exit_in "1 3" CMD…  run, then fail unless the status is one of the list
#   expect_err_line RE…        stderr is exactly one line, "grove: …", matching every ERE given
#   expect_err_has TEXT        stderr contains TEXT (fixed string)
#   expect_out_has TEXT / expect_out_empty / expect_err_empty
#   listing DIR          type, relative path, link text or file content of every entry, sorted
#   expect_tree DIR <<EOF  (or SPEC as $2) compare listing DIR with the spec, "d a", "l a -> t",
#                          "f a text" (content escaped: \n, \t, \\, \xNN), "p fifo", "s sock"
#   snapshot DIR [NAME]  records listing plus mode, inode and mtime of every entry and DIR itself
#   expect_unchanged [--rolled-back] DIR [NAME]  fails on any difference with the snapshot
#                        (--rolled-back: folder mtimes may differ after a change that was undone)
#   expect_same_tree A B       listings of A and B are equal
#   check DESCRIPTION    prints "ok N - DESCRIPTION" and counts it (call after the checks pass)
#   have_stow / stow_ref CMD…  GNU Stow 2.4.1, from $GROVE_STOW_REF or the oracle .deb
#   need_stow / need_ua  the oracle (GNU Stow 2.4.1, update-alternatives) or skip the test
#   skip REASON          prints "SKIP: <test>: REASON" and exits 77 (meson's "skipped")
set -euo pipefail

: "${GROVE:?GROVE must name the grove binary}"
TEST_NAME=$(basename "$0" .sh)
GROVE_TEST_PY=/usr/bin/python3
[[ -x $GROVE_TEST_PY ]] || GROVE_TEST_PY=$(command -v python3)

ROOT=$(mktemp -d "${TMPDIR:-/tmp}/grove-$TEST_NAME.XXXXXX")
chmod 755 "$ROOT"
_lib_meta=$(mktemp -d "${TMPDIR:-/tmp}/grove-$TEST_NAME-meta.XXXXXX")
OUT=$_lib_meta/stdout
ERR=$_lib_meta/stderr
RC=0
_lib_checks=0
_lib_cleanups=()

# Hermetic: no user config, no shared state dir.
export HOME=$ROOT/.home
mkdir -p "$HOME"
export XDG_CONFIG_HOME=$HOME/.config XDG_STATE_HOME=$HOME/.state
export GROVE_STATE_DIR=$_lib_meta/state
# The system log the reading commands fall back to (root's /var/lib/grove): none, unless a test
# makes one.
export GROVE_SYSTEM_STATE_DIR=$_lib_meta/system-state
unset STOW_DIR NO_COLOR 2>/dev/null || true
export LC_ALL=C.UTF-8

# Registers a command to run on exit, before the folders are removed (e.g. unmounting).
at_exit()
{
	_lib_cleanups+=("$*")
}

_lib_exit()
{
	local rc=$? i
	for ((i = ${#_lib_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_lib_cleanups[i]}" >/dev/null 2>&1 || true
	done
	cd /
	# Packages may hold read-only folders; make everything removable first.
	chmod -R u+rwX "$ROOT" 2>/dev/null || true
	rm -rf "$ROOT" "$_lib_meta"
	if ((rc == 0)); then
		echo "# $TEST_NAME: $_lib_checks checks passed"
	elif ((rc == 77)); then
		echo "# $TEST_NAME: skipped after $_lib_checks checks passed"
	else
		echo "# $TEST_NAME: FAILED after $_lib_checks checks passed" >&2
	fi
	exit "$rc"
}
trap _lib_exit EXIT

# Exit 77 is meson's "skipped" (shell tests use the exitcode protocol); the reason says how to
# provide what is missing (docs/testing.md#oracles).
skip()
{
	echo "SKIP: $TEST_NAME: $*"
	exit 77
}

fail()
{
	echo "FAIL: $TEST_NAME: $*" >&2
	exit 1
}

check()
{
	_lib_checks=$((_lib_checks + 1))
	echo "ok $_lib_checks - $*"
}

mk_file()
{
	mkdir -p "$(dirname "$1")"
	printf '%s' "${2-}" >"$1"
}

mk_link()
{
	mkdir -p "$(dirname "$1")"
	ln -s "$2" "$1"
}

_lib_show_run()
{
	{
		echo "  command: $(printf '%q ' "${_lib_cmd[@]}")(in $PWD)"
		echo "  exit status: $RC"
		echo "  stdout:"
		sed 's/^/    | /' "$OUT"
		echo "  stderr:"
		sed 's/^/    | /' "$ERR"
	} >&2
}

run()
{
	_lib_cmd=("$@")
	RC=0
	"$@" >"$OUT" 2>"$ERR" </dev/null || RC=$?
}

expect_exit()
{
	local want=$1
	shift
	run "$@"
	if [[ $RC != "$want" ]]; then
		echo "FAIL: $TEST_NAME: expected exit status $want" >&2
		_lib_show_run
		exit 1
	fi
}

expect_exit_in()
{
	local want=$1 w
	shift
	run "$@"
	for w in $want; do
		[[ $RC == "$w" ]] && return 0
	done
	echo "FAIL: $TEST_NAME: expected exit status in {$want}" >&2
	_lib_show_run
	exit 1
}

# stderr is one line "grove: …" and matches each extended regex given.
expect_err_line()
{
	local n re
	n=$(wc -l <"$ERR")
	if [[ $n != 1 ]] || ! head -n1 "$ERR" | grep -q '^grove: '; then
		echo "FAIL: $TEST_NAME: expected one line 'grove: …' on stderr, got $n lines" >&2
		_lib_show_run
		exit 1
	fi
	for re in "$@"; do
		if ! grep -Eq -- "$re" "$ERR"; then
			echo "FAIL: $TEST_NAME: stderr does not match /$re/" >&2
			_lib_show_run
			exit 1
		fi
	done
}

expect_err_has()
{
	if ! grep -Fq -- "$1" "$ERR"; then
		echo "FAIL: $TEST_NAME: stderr does not contain '$1'" >&2
		_lib_show_run
		exit 1
	fi
}

expect_err_lacks()
{
	if grep -Fq -- "$1" "$ERR"; then
		echo "FAIL: $TEST_NAME: stderr contains '$1'" >&2
		_lib_show_run
		exit 1
	fi
}

expect_out_has()
{
	if ! grep -Fq -- "$1" "$OUT"; then
		echo "FAIL: $TEST_NAME: stdout does not contain '$1'" >&2
		_lib_show_run
		exit 1
	fi
}

expect_out_empty()
{
	if [[ -s $OUT ]]; then
		echo "FAIL: $TEST_NAME: expected nothing on stdout" >&2
		_lib_show_run
		exit 1
	fi
}

expect_err_empty()
{
	if [[ -s $ERR ]]; then
		echo "FAIL: $TEST_NAME: expected nothing on stderr" >&2
		_lib_show_run
		exit 1
	fi
}

# The listing walks with directory fds, so paths longer than PATH_MAX are listed too.
# MODE "meta" adds mode, inode and mtime of every entry and the root itself.
_lib_list()
{
	"$GROVE_TEST_PY" - "$1" "${2:-plain}" <<'PY'
import os, stat, sys

top, mode = sys.argv[1], sys.argv[2]
meta = mode == "meta"

def esc(b, path=False):
    out = []
    for c in b:
        if c == 0x5C: out.append("\\\\")
        elif c == 0x0A: out.append("\\n")
        elif c == 0x09: out.append("\\t")
        elif path and c == 0x20: out.append("\\x20")
        elif 0x20 <= c < 0x7F: out.append(chr(c))
        else: out.append("\\x%02x" % c)
    return "".join(out)

lines = []
def m(st):
    return " [mode=%o ino=%d mtime=%d]" % (stat.S_IMODE(st.st_mode), st.st_ino, st.st_mtime_ns) if meta else ""

def walk(dfd, rel):
    for name in sorted(os.listdir(dfd)):
        bname = os.fsencode(name)
        p = rel + b"/" + bname if rel else bname
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        fm = st.st_mode
        if stat.S_ISLNK(fm):
            lines.append("l %s -> %s%s" % (esc(p, True), esc(os.fsencode(os.readlink(name, dir_fd=dfd))), m(st)))
        elif stat.S_ISDIR(fm):
            lines.append("d %s%s" % (esc(p, True), m(st)))
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dfd)
            try:
                walk(fd, p)
            finally:
                os.close(fd)
        elif stat.S_ISREG(fm):
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dfd)
            with os.fdopen(fd, "rb") as f:
                data = f.read()
            lines.append("f %s %s%s" % (esc(p, True), esc(data), m(st)))
        elif stat.S_ISFIFO(fm):
            lines.append("p %s%s" % (esc(p, True), m(st)))
        elif stat.S_ISSOCK(fm):
            lines.append("s %s%s" % (esc(p, True), m(st)))
        else:
            lines.append("? %s%s" % (esc(p, True), m(st)))

fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
if meta:
    lines.append(". ." + m(os.fstat(fd)))
walk(fd, b"")
lines.sort()
sys.stdout.write("".join(l + "\n" for l in lines))
PY
}

listing()
{
	_lib_list "$1" plain
}

# expect_tree DIR [SPEC]; without SPEC the spec is read from stdin. Blank lines and leading
# blanks in the spec are ignored.
expect_tree()
{
	local dir=$1 spec want got
	if (($# > 1)); then spec=$2; else spec=$(cat); fi
	want=$(printf '%s\n' "$spec" | sed -e 's/^[[:space:]]*//' -e '/^$/d' | LC_ALL=C sort)
	got=$(listing "$dir" | LC_ALL=C sort)
	if [[ $want != "$got" ]]; then
		echo "FAIL: $TEST_NAME: tree '$dir' differs from the expected one (- expected, + actual):" >&2
		diff -u <(printf '%s\n' "$want") <(printf '%s\n' "$got") | tail -n +3 | sed 's/^/    /' >&2
		exit 1
	fi
}

_lib_snapname()
{
	printf '%s/snap-%s' "$_lib_meta" "$(printf '%s' "${2:-$1}" | md5sum | cut -c1-16)"
}

snapshot()
{
	_lib_list "$1" meta >"$(_lib_snapname "$@")"
}

# expect_unchanged [--rolled-back] DIR [NAME]. With --rolled-back, folder mtimes may differ (a
# change made then undone moves them); types, contents, link texts, modes and inodes may not.
expect_unchanged()
{
	local f strip=cat
	if [[ $1 == --rolled-back ]]; then
		strip=_lib_strip_dir_mtime
		shift
	fi
	f=$(_lib_snapname "$@")
	[[ -f $f ]] || fail "no snapshot of '$1'"
	if ! diff -u <($strip <"$f") <(_lib_list "$1" meta | $strip) >"$_lib_meta/snapdiff"; then
		echo "FAIL: $TEST_NAME: '$1' changed (- before, + after):" >&2
		tail -n +3 "$_lib_meta/snapdiff" | sed 's/^/    /' >&2
		[[ ${_lib_cmd+set} ]] && _lib_show_run
		exit 1
	fi
}

_lib_strip_dir_mtime()
{
	sed -E '/^[d.] /s/ mtime=[0-9]+\]$/]/'
}

expect_same_tree()
{
	if ! diff -u <(listing "$1") <(listing "$2") >"$_lib_meta/treediff"; then
		echo "FAIL: $TEST_NAME: trees differ (- '$1', + '$2'):" >&2
		tail -n +3 "$_lib_meta/treediff" | sed 's/^/    /' >&2
		exit 1
	fi
}

# GNU Stow 2.4.1: $GROVE_STOW_REF (an unpacked .deb), else the oracle .deb: $GROVE_STOW_DEB, else
# stow_2.4.1-2_all.deb in $GROVE_ORACLE_DIR (default: ../shared/oracles beside the clone), unpacked here.
_lib_stow_dir=
have_stow()
{
	local deb
	[[ -n $_lib_stow_dir ]] && return 0
	command -v perl >/dev/null || return 1
	if [[ -n ${GROVE_STOW_REF:-} && -f $GROVE_STOW_REF/usr/bin/stow ]]; then
		_lib_stow_dir=$GROVE_STOW_REF
		return 0
	fi
	deb=${GROVE_STOW_DEB:-${GROVE_ORACLE_DIR:-${GROVE_SOURCE_ROOT:-.}/../shared/oracles}/stow_2.4.1-2_all.deb}
	if [[ -f $deb ]] && command -v dpkg-deb >/dev/null; then
		dpkg-deb -x "$deb" "$_lib_meta/stow-ref"
		_lib_stow_dir=$_lib_meta/stow-ref
		return 0
	fi
	return 1
}

# The one line a test without its oracle prints (docs/testing.md#oracles).
STOW_ORACLE_HINT="GNU Stow 2.4.1 oracle not found: put stow_2.4.1-2_all.deb in ../shared/oracles beside the clone, or set GROVE_ORACLE_DIR, GROVE_STOW_DEB or GROVE_STOW_REF (docs/testing.md#oracles)"

need_stow()
{
	have_stow || skip "$STOW_ORACLE_HINT"
}

UA=${UPDATE_ALTERNATIVES:-/usr/bin/update-alternatives}
UA_ORACLE_HINT="update-alternatives not found at $UA: install dpkg or set UPDATE_ALTERNATIVES (docs/testing.md#oracles)"

need_ua()
{
	[[ -x $UA ]] || skip "$UA_ORACLE_HINT"
}

stow_ref()
{
	PERL5LIB=$_lib_stow_dir/usr/share/perl5 perl "$_lib_stow_dir/usr/bin/stow" "$@"
}
