#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Race test (DESIGN.md invariant 2): while an attacker swaps a folder of the target or of a
# package for a symlink to a victim folder as fast as it can, grove may fail but must not
# create, change or delete anything outside its roots.
#
# Environment: GROVE (the binary under test), RACE_SWAPPER (tests/race/swapper.c built).
# Optional: RACE_ROUNDS (rounds per attack mode, default 25: 3 modes x 4 runs x 25 = 300
# stow runs, and 25 x 6 grove alt runs on a merged-/usr root whose bin is swapped),
# RACE_REPLAY_ROUNDS (rounds of the replay mode, default 40: 5 runs each = 200 runs),
# RACE_SELFTEST_ROUNDS (default 10), RACE_KEEP=1 to keep the work folder.
#
# The replay mode (DESIGN.md invariant 11): the admindir and the altdir of a `grove alt --root`
# tree and a profile's generations folder are swapped for symlinks to the victim, all three at
# once, while grove undoes, rolls back and recovers alternatives and profile changes there.
#
# Before testing grove, the harness proves it can fail: it runs the same attack against a
# deliberately unsafe stand-in (a shell script that links by path) and must see an escape.

set -u

ROUNDS=${RACE_ROUNDS:-25}
REPLAY_ROUNDS=${RACE_REPLAY_ROUNDS:-40}
SELFTEST_ROUNDS=${RACE_SELFTEST_ROUNDS:-10}
RUN_TIMEOUT=60
START=$SECONDS

die() {
    echo "race: $*" >&2
    exit 1
}

[ -n "${GROVE:-}" ] || die "GROVE is not set (path to the grove binary under test)"
[ -x "$GROVE" ] || die "GROVE='$GROVE' is not an executable file"
if [ -z "${RACE_SWAPPER:-}" ] || [ ! -x "$RACE_SWAPPER" ]; then
    die "RACE_SWAPPER='${RACE_SWAPPER:-}' is not an executable file"
fi

TOP=$(mktemp -d "${TMPDIR:-/tmp}/grove-race.XXXXXX") || die "mktemp failed"
# grove's transaction log: the test's own, never /var/lib/grove (tests run as root).
export GROVE_STATE_DIR=$TOP/state
SWAPPER_PID=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    if [ -n "$SWAPPER_PID" ]; then
        kill -TERM "$SWAPPER_PID" 2>/dev/null
        wait "$SWAPPER_PID" 2>/dev/null
    fi
    [ "${RACE_KEEP:-0}" = 1 ] || rm -rf "$TOP"
}
trap cleanup EXIT

# A file with known content, made by path (test setup, not the tool under test).
put() {
    mkdir -p "$(dirname "$1")" && printf '%s\n' "$2" >"$1"
}

# The world outside the roots: a victim folder whose layout mirrors the packages' (so a
# tool that follows the symlink finds folders to write into), and a neighbour folder.
make_outside() {
    local w=$1
    put "$w/victim/doc/victim.txt" "victim doc"
    put "$w/victim/man/man1/victim.1" "victim man"
    put "$w/victim/info/victim.info" "victim info"
    put "$w/victim/secret" "do not touch"
    mkdir -p "$w/victim/empty"
    ln -s ../secret "$w/victim/doc/link-to-secret"
    put "$w/outside/keep" "neighbour"
}

# The roots: three packages whose folders overlap, so stowing unfolds and unstowing folds.
make_roots() {
    local w=$1
    rm -rf "$w/stow" "$w/target" "$w/attack"
    mkdir -p "$w/stow" "$w/target" "$w/attack"
    for p in a b c; do
        put "$w/stow/$p/share/doc/$p.txt" "$p doc"
        put "$w/stow/$p/share/doc/$p/README" "$p readme"
    done
    put "$w/stow/a/share/man/man1/a.1" "a man"
    put "$w/stow/b/share/man/man1/b.1" "b man"
    put "$w/stow/c/share/info/c.info" "c info"
    put "$w/stow/a/bin/a" "a bin"
    put "$w/stow/b/bin/b" "b bin"
    put "$w/stow/c/lib/c.so" "c lib"
    # A second stow dir inside the target (issue 16): grove reads it through the target.
    put "$w/target/stow2/.stow" ""
    put "$w/target/stow2/z/share/doc/z.txt" "z doc"
    put "$w/target/stow2/z/share/man/man1/z.1" "z man"
    # Its own ignore list, which grove reads through the target when it unfolds z's folders.
    put "$w/target/stow2/z/.stow-local-ignore" '\.orig$'
    ln -s "$w/victim" "$w/attack/S"
    ln -s ../victim "$w/attack/B"
    # A merged-/usr root for grove alt (issue 38): bin is the link usr/bin, as on Debian 12.
    rm -rf "$w/altroot"
    mkdir -p "$w/altroot/usr/bin" "$w/altroot/etc/alternatives" \
        "$w/altroot/var/lib/dpkg/alternatives"
    ln -s usr/bin "$w/altroot/bin"
    for f in p1 p2 s1 s2; do put "$w/altroot/usr/bin/$f" "$f"; done
}

# Everything outside the roots, byte for byte: types, modes, sizes, times, link texts and
# content hashes of the victim and the neighbour, and the names next to the roots.
snapshot() {
    local w=$1
    (
        cd "$w" || exit 1
        find victim outside -printf '%y %p -> %l mode=%m size=%s mtime=%T@ ctime=%C@\n' |
            LC_ALL=C sort
        find victim outside -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
        LC_ALL=C ls -A
    )
}

# A deliberately unsafe stand-in with Stow's command line: it links by path, so it writes
# through whatever symlink the attacker put on the way.
make_unsafe_tool() {
    cat >"$1" <<'EOF'
#!/bin/bash
d=. t=.. mode=S
while [ $# -gt 0 ]; do
    case $1 in
    -d) d=$2; shift 2 ;;
    -t) t=$2; shift 2 ;;
    -S | -D | -R) mode=${1#-}; shift ;;
    *)
        p=$1; shift
        (cd "$d/$p" && find . -type f) | while read -r f; do
            f=${f#./}
            if [ "$mode" != D ]; then
                mkdir -p "$t/$(dirname "$f")" 2>/dev/null
                ln -sfn "$(realpath "$d")/$p/$f" "$t/$f" 2>/dev/null
            else
                rm -f "$t/$f" 2>/dev/null
            fi
        done
        ;;
    esac
done
exit 0
EOF
    chmod +x "$1"
}

# Counters for the summary line.
RUNS=0 RUN_OK=0 RUN_REFUSED=0 RUN_FAILED=0 SWAPS=0 ESCAPES=0 ROUNDS_DONE=0 ALT_ROUNDS=0 ALT_RUNS=0 ALT_OK=0

# run_counted W CMD...: one run under attack, its exit status counted (ok, refused, failed).
run_counted() {
    local w=$1 rc
    shift
    timeout -k 5 "$RUN_TIMEOUT" "$@" >/dev/null 2>>"$w.meta/tool.log"
    rc=$?
    RUNS=$((RUNS + 1))
    case $rc in
    0) RUN_OK=$((RUN_OK + 1)) ;;
    1) RUN_REFUSED=$((RUN_REFUSED + 1)) ;;
    124 | 137) die "'$*' timed out under attack (work folder: $w)" ;;
    *) RUN_FAILED=$((RUN_FAILED + 1)) ;;
    esac
}

# run_tool TOOL W ARGS...: a Stow-like tool on W's stow dir and target.
run_tool() {
    local tool=$1 w=$2
    shift 2
    run_counted "$w" "$tool" -d "$w/stow" -t "$w/target" "$@"
}

# run_grove W ARGS...: one grove run under attack.
run_grove() {
    local w=$1
    shift
    run_counted "$w" "$GROVE" "$@"
}

# interrupt DB: the log's last transaction becomes one a crash left unfinished (its intent only),
# for the next command's recovery.
interrupt() {
    sqlite3 "$1" "update txns set state = 'intent', finished = null
                  where id = (select max(id) from txns)" || die "sqlite3 failed on $1"
}

start_swapper() {
    local w=$1 folder=$2 link=${3:-$1/attack/S}
    rm -f "$w.meta/ready"
    mkfifo "$w.meta/ready" || die "mkfifo failed"
    "$RACE_SWAPPER" "$folder" "$link" >"$w.meta/ready" 2>"$w.meta/swapper.log" &
    SWAPPER_PID=$!
    # Blocks (no sleep) until the swapper has made its first exchange.
    read -r _ <"$w.meta/ready" || die "swapper did not start"
}

stop_swapper() {
    local w=$1 n
    kill -TERM "$SWAPPER_PID" 2>/dev/null
    wait "$SWAPPER_PID" 2>/dev/null
    SWAPPER_PID=
    n=$(sed -n 's/^swaps=\([0-9]*\).*/\1/p' "$w.meta/swapper.log")
    SWAPS=$((SWAPS + ${n:-0}))
}

# One alternatives command on the merged-/usr root: grove alt with --root (as in a chroot) or
# with --instdir (links named by their real paths), or update-alternatives itself (the harness's
# unsafe tool for this mode: it follows whatever bin has become).
run_alt() {
    local tool=$1 w=$2 how=$3 rc R=$2/altroot
    shift 3
    local argv=() a
    if [ "$how" = root ]; then
        for a in "$@"; do argv+=("${a//@/}"); done
        set -- --root "$R" "${argv[@]}"
    else
        for a in "$@"; do argv+=("${a//@/$R}"); done
        set -- --instdir "$R" --altdir "$R/etc/alternatives" \
            --admindir "$R/var/lib/dpkg/alternatives" "${argv[@]}"
    fi
    if [ "$tool" = ua ]; then
        timeout -k 5 "$RUN_TIMEOUT" "$UA" "$@" >/dev/null 2>>"$w.meta/tool.log"
    else
        timeout -k 5 "$RUN_TIMEOUT" "$tool" alt "$@" >/dev/null 2>>"$w.meta/tool.log"
    fi
    rc=$?
    RUNS=$((RUNS + 1))
    ALT_RUNS=$((ALT_RUNS + 1))
    case $rc in
    0) RUN_OK=$((RUN_OK + 1)) ALT_OK=$((ALT_OK + 1)) ;;
    124 | 137) die "'$tool alt $*' timed out under attack (work folder: $w)" ;;
    *) RUN_FAILED=$((RUN_FAILED + 1)) ;;
    esac
}

# mode "alt": the attacker swaps the root's bin (the merged-/usr link usr/bin) for a link to the
# victim, absolute in one round and relative (../victim) in the next, while grove alt installs,
# switches and removes a group whose links live under /bin; --root and --instdir take turns.
round_alt() {
    local tool=$1 w=$2 how link
    make_roots "$w"
    rm -rf "$w.meta/state"
    export GROVE_STATE_DIR=$w.meta/state
    if [ $((ALT_ROUNDS % 2)) = 0 ]; then link=$w/attack/S; else link=$w/attack/B; fi
    if [ $(((ALT_ROUNDS / 2) % 2)) = 0 ]; then how=root; else how=instdir; fi
    ALT_ROUNDS=$((ALT_ROUNDS + 1))
    # Undisturbed first: the merged-/usr root is one the tool handles.
    local before_runs=$RUN_OK
    run_alt "$tool" "$w" "$how" --install @/bin/zz zz @/usr/bin/p1 10 --slave @/bin/zzs zzs @/usr/bin/s1
    [ "$RUN_OK" -gt "$before_runs" ] ||
        die "setup: '$tool' alt --install on the merged-/usr root ($how) failed without any attacker (see $w.meta/tool.log)"
    start_swapper "$w" "$w/altroot/bin" "$link"
    run_alt "$tool" "$w" "$how" --remove-all zz
    run_alt "$tool" "$w" "$how" --install @/bin/zz zz @/usr/bin/p1 10 --slave @/bin/zzs zzs @/usr/bin/s1
    run_alt "$tool" "$w" "$how" --install @/bin/zz zz @/usr/bin/p2 20 --slave @/bin/zzs zzs @/usr/bin/s2
    run_alt "$tool" "$w" "$how" --set zz @/usr/bin/p1
    run_alt "$tool" "$w" "$how" --auto zz
    run_alt "$tool" "$w" "$how" --remove zz @/usr/bin/p2
    run_alt "$tool" "$w" "$how" --remove-all zz
    stop_swapper "$w"
    ROUNDS_DONE=$((ROUNDS_DONE + 1))
    snapshot "$w" >"$w.meta/after"
    if ! cmp -s "$w.meta/before" "$w.meta/after"; then
        ESCAPES=$((ESCAPES + 1))
        echo "race: ESCAPE in round $ROUNDS_DONE (alt mode, $how, tool $tool):" >&2
        diff "$w.meta/before" "$w.meta/after" | head -20 >&2
        cp "$w.meta/after" "$w.meta/before"
        return 1
    fi
    return 0
}

# One round: set up the roots, stow a and b undisturbed, then attack while the tool stows,
# unstows and restows, then compare the outside with its snapshot.
# mode "target": the attacker swaps target/share (a real folder after unfolding);
# mode "package": it swaps stow/c/share (a folder inside a package);
# mode "stow2": it swaps target/stow2/z/share, a package folder of a second stow dir inside the
# target, which stowing a unfolds (reading it) and unstowing a folds back.
round() {
    local tool=$1 w=$2 mode=$3 folder
    make_roots "$w"
    # A fresh transaction log per round: a run the attacker made fail part-way may leave its
    # transaction stuck (that is allowed; escaping is not), and the recreated target may reuse
    # the old one's inode on a filesystem without birth times.
    rm -rf "$w.meta/state"
    export GROVE_STATE_DIR=$w.meta/state
    if [ "$mode" = stow2 ]; then
        "$tool" -d "$w/target/stow2" -t "$w/target" -S z >/dev/null 2>>"$w.meta/tool.log" ||
            die "setup: '$tool -S z' failed without any attacker (see $w.meta/tool.log)"
    else
        "$tool" -d "$w/stow" -t "$w/target" -S a b >/dev/null 2>>"$w.meta/tool.log" ||
            die "setup: '$tool -S a b' failed without any attacker (see $w.meta/tool.log)"
    fi
    if [ "$mode" = stow2 ]; then
        folder=$w/target/stow2/z/share
    elif [ "$mode" = target ]; then
        if [ ! -d "$w/target/share" ] || [ -L "$w/target/share" ]; then
            die "setup: target/share is not an unfolded folder"
        fi
        folder=$w/target/share
    else
        folder=$w/stow/c/share
    fi
    start_swapper "$w" "$folder"
    if [ "$mode" = stow2 ]; then
        run_tool "$tool" "$w" -S a
        run_tool "$tool" "$w" -D a
        run_tool "$tool" "$w" -S a b
        run_tool "$tool" "$w" -D a b
    elif [ "$mode" = target ]; then
        run_tool "$tool" "$w" -S c
        run_tool "$tool" "$w" -D b
        run_tool "$tool" "$w" -R a
        run_tool "$tool" "$w" -D a c
    else
        run_tool "$tool" "$w" -S c
        run_tool "$tool" "$w" -R c
        run_tool "$tool" "$w" -D c
        run_tool "$tool" "$w" -S c
    fi
    stop_swapper "$w"
    ROUNDS_DONE=$((ROUNDS_DONE + 1))
    snapshot "$w" >"$w.meta/after"
    if ! cmp -s "$w.meta/before" "$w.meta/after"; then
        ESCAPES=$((ESCAPES + 1))
        echo "race: ESCAPE in round $ROUNDS_DONE ($mode mode, tool $tool):" >&2
        diff "$w.meta/before" "$w.meta/after" | head -20 >&2
        cp "$w.meta/after" "$w.meta/before" # re-baseline so later rounds count only new escapes
        return 1
    fi
    return 0
}

# One round of the replay mode: an installation root with ed installed twice and removed, and a
# profile built twice, inside the target (so that the names next to the roots stay fixed); then,
# with the admindir, the altdir and the generations folder each swapped by its own attacker, undo,
# rollback and recovery of the alternatives changes and rollback and recovery of the profile.
replay_round() {
    local w=$1 R P k pids=() n
    make_roots "$w"
    R=$w/target/R
    P=$w/target/prof/p
    rm -rf "$w.meta/state" "$w.meta/pstate"
    mkdir -p "$R/usr/bin" "$R/prog" "$R/etc" "$R/var/lib/dpkg" "$w/target/prof"
    put "$R/prog/ed1" "ed one"
    put "$R/prog/ed2" "ed two"
    local A=("$GROVE" --state "$w.meta/state") F=("$GROVE" --state "$w.meta/pstate")
    { "${A[@]}" alt --root "$R" --install /usr/bin/ed ed /prog/ed1 10 &&
        "${A[@]}" alt --root "$R" --install /usr/bin/ed ed /prog/ed2 20 &&
        "${A[@]}" alt --root "$R" --remove-all ed &&
        "${F[@]}" profile -p "$P" build -d "$w/stow" a &&
        "${F[@]}" profile -p "$P" build -d "$w/stow" a b; } >/dev/null 2>>"$w.meta/tool.log" ||
        die "setup: grove alt or profile failed without any attacker (see $w.meta/tool.log)"
    k=0
    for folder in "$R/var/lib/dpkg/alternatives" "$R/etc/alternatives" "$P.generations"; do
        k=$((k + 1))
        ln -s "$w/victim" "$w/attack/R$k"
        rm -f "$w.meta/ready$k"
        mkfifo "$w.meta/ready$k" || die "mkfifo failed"
        "$RACE_SWAPPER" "$folder" "$w/attack/R$k" >"$w.meta/ready$k" 2>"$w.meta/swapper$k.log" &
        pids+=($!)
        read -r _ <"$w.meta/ready$k" || die "swapper $k did not start"
    done
    run_grove "$w" --state "$w.meta/state" undo -t "$R"
    run_grove "$w" --state "$w.meta/state" rollback --to 1 -t "$R"
    interrupt "$w.meta/state/grove.db"
    run_grove "$w" --state "$w.meta/state" recover -t "$R"
    run_grove "$w" --state "$w.meta/pstate" profile -p "$P" rollback
    interrupt "$w.meta/pstate/grove.db"
    run_grove "$w" --state "$w.meta/pstate" profile -p "$P" switch 1
    for k in 1 2 3; do
        kill -TERM "${pids[k - 1]}" 2>/dev/null
        wait "${pids[k - 1]}" 2>/dev/null
        n=$(sed -n 's/^swaps=\([0-9]*\).*/\1/p' "$w.meta/swapper$k.log")
        SWAPS=$((SWAPS + ${n:-0}))
    done
    ROUNDS_DONE=$((ROUNDS_DONE + 1))
    snapshot "$w" >"$w.meta/after"
    if ! cmp -s "$w.meta/before" "$w.meta/after"; then
        ESCAPES=$((ESCAPES + 1))
        echo "race: ESCAPE in round $ROUNDS_DONE (replay mode):" >&2
        diff "$w.meta/before" "$w.meta/after" | head -20 >&2
        cp "$w.meta/after" "$w.meta/before"
        return 1
    fi
    return 0
}

new_world() {
    local w=$1
    # Harness files live in $w.meta, so the listing next to the roots stays fixed.
    mkdir -p "$w" "$w.meta" || die "mkdir $w failed"
    make_outside "$w"
    make_roots "$w"
    snapshot "$w" >"$w.meta/before"
}

# ---- 1. the harness must catch an unsafe tool ----
W=$TOP/selftest
new_world "$W"
make_unsafe_tool "$TOP/unsafe-stow"
caught=0
for ((i = 0; i < SELFTEST_ROUNDS; i++)); do
    if ! round "$TOP/unsafe-stow" "$W" target 2>/dev/null; then
        caught=1
        break
    fi
done
[ "$caught" = 1 ] ||
    die "self-test failed: the unsafe stand-in wrote through the symlink undetected in $SELFTEST_ROUNDS rounds"
echo "race: self-test ok: the unsafe stand-in escaped in round $((i + 1)) and was caught"
# And for the alternatives mode: update-alternatives itself writes through the swapped bin.
UA=${UPDATE_ALTERNATIVES:-/usr/bin/update-alternatives}
if [ -x "$UA" ]; then
    W=$TOP/selftest-alt
    new_world "$W"
    caught=0
    ALT_ROUNDS=0
    # (the choices are named through usr/bin, so update-alternatives finds them whatever bin
    # is, and writes the links through it; more rounds than for the stand-in all the same)
    for ((i = 0; i < 3 * SELFTEST_ROUNDS; i++)); do
        if ! round_alt ua "$W" 2>/dev/null; then
            caught=1
            break
        fi
    done
    [ "$caught" = 1 ] ||
        die "self-test failed: update-alternatives wrote through the swapped bin undetected in $((3 * SELFTEST_ROUNDS)) rounds"
    echo "race: self-test ok: update-alternatives escaped through the swapped bin in round $((i + 1)) and was caught"
else
    echo "race: no update-alternatives at $UA: the alt mode's self-test is not run"
fi

# ---- 2. grove under attack ----
RUNS=0 RUN_OK=0 RUN_REFUSED=0 RUN_FAILED=0 SWAPS=0 ESCAPES=0 ROUNDS_DONE=0 ALT_ROUNDS=0 ALT_RUNS=0 ALT_OK=0
W=$TOP/grove
new_world "$W"
for ((i = 0; i < ROUNDS; i++)); do
    for mode in target package stow2; do
        round "$GROVE" "$W" "$mode"
    done
    round_alt "$GROVE" "$W"
done

echo "race: $ROUNDS_DONE rounds, $RUNS grove runs (ok $RUN_OK, refused $RUN_REFUSED," \
    "failed $RUN_FAILED; of them grove alt $ALT_RUNS, ok $ALT_OK), $SWAPS swaps, $ESCAPES escapes" \
    "($((SECONDS - START)) s)"
[ "$SWAPS" -gt 0 ] || die "the swapper never swapped: the test proved nothing"
[ "$ESCAPES" -eq 0 ] || die "grove changed something outside its roots ($ESCAPES rounds)"

# ---- 3. undo, rollback and recovery under attack (the replay mode) ----
command -v sqlite3 >/dev/null || die "sqlite3 (the command) is needed to interrupt a transaction"
RUNS=0 RUN_OK=0 RUN_REFUSED=0 RUN_FAILED=0 SWAPS=0 ESCAPES=0 ROUNDS_DONE=0
REPLAY_START=$SECONDS
for ((i = 0; i < REPLAY_ROUNDS; i++)); do
    replay_round "$W"
done
echo "race: replay mode: $ROUNDS_DONE rounds, $RUNS grove runs (ok $RUN_OK, refused" \
    "$RUN_REFUSED, failed $RUN_FAILED), $SWAPS swaps, $ESCAPES escapes" \
    "($((SECONDS - REPLAY_START)) s)"
[ "$SWAPS" -gt 0 ] || die "the replay mode's swappers never swapped: the test proved nothing"
[ "$ESCAPES" -eq 0 ] || die "grove changed something outside its roots in the replay mode ($ESCAPES rounds)"
exit 0
