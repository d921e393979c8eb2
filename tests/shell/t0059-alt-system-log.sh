#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The system's alternatives log (issue 38, item 4): invoked as update-alternatives, grove appends to
# /var/log/alternatives.log (inside --root) what update-alternatives appends there, whatever the
# admindir; as grove alt it does so for the system's own admindir only; --log names another file
# instead; a dry run and a read-only command write none. The real update-alternatives, on a twin
# root, is the oracle for the lines. The cases without --root run in a private mount namespace
# with /var/log, /etc/alternatives and /var/lib/dpkg/alternatives on tmpfs, so the machine's own
# files are never touched.
source "$(dirname "$0")/lib.sh"
need_ua

GUA=$ROOT/bin/update-alternatives # grove under update-alternatives' name
mkdir -p "$ROOT/bin"
ln -s "$GROVE" "$GUA"

mkroot()
{
	mkdir -p "$1/usr/bin" "$1/etc/alternatives" "$1/var/lib/dpkg/alternatives"
	mk_file "$1/usr/bin/ed1" '#!/bin/sh'
	mk_file "$1/usr/bin/ed2" '#!/bin/sh'
	chmod 755 "$1/usr/bin/ed1" "$1/usr/bin/ed2"
}

# The log's lines without the program name and time stamp, the root's path as @.
lines()
{
	sed -E "s/^[a-z -]+ [0-9-]+ [0-9:]+: //; s|$2|@|g" "$1"
}

G=$ROOT/g
U=$ROOT/u
mkroot "$G"
mkroot "$U"
steps=("--install /usr/bin/ed ed /usr/bin/ed1 10" "--install /usr/bin/ed ed /usr/bin/ed2 20"
	"--display ed" "--query ed" "--set ed /usr/bin/ed1" "--auto ed"
	"--remove ed /usr/bin/ed2" "--remove-all ed")
for s in "${steps[@]}"; do
	# shellcheck disable=SC2086 # each step is words
	expect_exit 0 "$GUA" --root "$G" $s
	# shellcheck disable=SC2086
	expect_exit 0 "$UA" --root "$U" $s
done
[[ -f $G/var/log/alternatives.log ]] || fail "no var/log/alternatives.log inside --root"
[[ $(stat -c %a "$G/var/log" "$G/var/log/alternatives.log") == "$(stat -c %a "$U/var/log" \
	"$U/var/log/alternatives.log")" ]] || fail "the log's folder or file mode differs"
diff <(lines "$G/var/log/alternatives.log" "$G") <(lines "$U/var/log/alternatives.log" "$U") ||
	fail "the lines of var/log/alternatives.log differ (time stamps aside)"
grep -q '^update-alternatives [0-9-]* [0-9:]*: link group ed fully removed$' \
	"$G/var/log/alternatives.log" || fail "the lines are not update-alternatives' own"
check "as update-alternatives --root R: R/var/log/alternatives.log (folder made) as update-alternatives writes it"

# grove alt on the root's own admindir logs there too, under its own name; on another admindir
# (inside the root) it does not; --log FILE goes to FILE only.
G2=$ROOT/g2
mkroot "$G2"
expect_exit 0 "$GROVE" alt --root "$G2" --install /usr/bin/ed ed /usr/bin/ed1 10
grep -q '^grove alt [0-9-]* [0-9:]*: link group ed updated to point to /usr/bin/ed1$' \
	"$G2/var/log/alternatives.log" || fail "grove alt on the system admindir did not log"
G3=$ROOT/g3
mkroot "$G3"
mkdir -p "$G3/var/lib/other"
expect_exit 0 "$GROVE" alt --root "$G3" --admindir "$G3/var/lib/other" \
	--install /usr/bin/ed ed /usr/bin/ed1 10
[[ ! -e $G3/var/log ]] || fail "grove alt on another admindir wrote the system log"
expect_exit 0 "$GUA" --root "$G3" --admindir "$G3/var/lib/other" --log /var/log/mine.log \
	--set ed /usr/bin/ed1
[[ -f $G3/var/log/mine.log && ! -e $G3/var/log/alternatives.log ]] ||
	fail "--log did not replace the system log"
check "grove alt: the system log for the system's admindir only; --log replaces it"

# Read-only commands and dry runs log nothing.
G4=$ROOT/g4
mkroot "$G4"
expect_exit 0 "$GUA" --root "$G4" --dry-run --install /usr/bin/ed ed /usr/bin/ed1 10
expect_exit 2 "$GUA" --root "$G4" --display ed
expect_exit 0 "$GUA" --root "$G4" --get-selections
[[ ! -e $G4/var/log ]] || fail "a dry run or a read-only command wrote the log"
check "a dry run and the read-only commands write no log"

# Without --root: /var/log/alternatives.log itself, whatever --admindir says (as
# update-alternatives), in a private mount namespace.
command -v unshare >/dev/null || fail "unshare is missing (util-linux)"
cat >"$ROOT/ns.sh" <<'EOF'
set -eu
for d in /var/log /etc/alternatives /var/lib/dpkg/alternatives; do mount -t tmpfs grove-test "$d"; done
mkdir -p "$W/bin" "$W/adm" "$W/alt"
printf '#!/bin/sh\n' >"$W/bin/ed1"; chmod 755 "$W/bin/ed1"
"$GUA" --altdir "$W/alt" --admindir "$W/adm" --install "$W/ed" ed "$W/bin/ed1" 10 >/dev/null
test -f /var/log/alternatives.log || { echo "as update-alternatives: no system log"; exit 1; }
: >/var/log/alternatives.log
"$GROVE" alt --altdir "$W/alt" --admindir "$W/adm" --set ed "$W/bin/ed1" >/dev/null
test ! -s /var/log/alternatives.log || { echo "grove alt on another admindir logged"; exit 1; }
"$GROVE" alt --install "$W/ed2" grove-test-ed "$W/bin/ed1" 10 >/dev/null
grep -q "link group grove-test-ed updated" /var/log/alternatives.log ||
	{ echo "grove alt on the system admindir did not log"; exit 1; }
EOF
W=$ROOT/ns GUA=$GUA GROVE=$GROVE unshare --mount --propagation private bash "$ROOT/ns.sh" ||
	fail "the system log without --root (private mount namespace)"
check "without --root: /var/log/alternatives.log, as update-alternatives (whatever the admindir) and for the system admindir"

echo "# $TEST_NAME: $_lib_checks checks passed"
