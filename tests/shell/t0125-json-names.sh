#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Every --json document is UTF-8 and loses no name (issue 43 items 1 and 4): files named with every
# byte value 0x01-0xff but '/', names that are not UTF-8 (a Latin-1 n\xe9e, a surrogate, an
# overlong form, a cut sequence), UTF-8 names holding backslashes and a literal "\xe9", and a stow
# dir, a target, a profile and an alternative whose names are not UTF-8 (grove refuses a package
# name that is not UTF-8: the package café holds a folder bin\xff) -- through every command's
# document, success and failure. Each document is read as a strict program would (UTF-8 decoded
# strictly, json.loads), validated against docs/grove.schema.json, its KEY_hex fields checked
# against their shown forms (tests/json/names.py, from docs/json.md's rule), and the exact bytes
# of the names compared with the ones this test made.
source "$(dirname "$0")/lib.sh"

SCHEMA=$GROVE_SOURCE_ROOT/docs/grove.schema.json
NAMES=$GROVE_SOURCE_ROOT/tests/json/names.py
export NAMES_FILE=$ROOT/names.hex
E=$'\xe9'
S=$ROOT/stow$'\xfe' # the stow dir's and the target's own names are not UTF-8
T=$ROOT/t$E
Q=café
mkdir -p "$S" "$T"

# The package p: one file per byte value (n<byte>e), two with every byte, and the hard cases.
"$GROVE_TEST_PY" - "$S/p" "$ROOT/plain/p" "$NAMES_FILE" <<'PY'
import os, sys
d, plain = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
os.makedirs(d)
os.makedirs(plain)
names = [b"n" + bytes([b]) + b"e" for b in range(1, 256) if b != 0x2F]
names += [b"lo" + bytes(b for b in range(1, 128) if b != 0x2F) + b"e",
          b"hi" + bytes(range(128, 256)) + b"e",
          b"a\\b", b"lit\\xe9", b"\\\xe9", b"\xc3\xa9t\xc3\xa9", b"\xed\xa0\x80s", b"\xc0\xafo",
          b"\xf0\x9f\x98\x80", b"tr\xe2\x82", b"\xe2\x82"]
for n in names:
    open(os.path.join(d, n), "wb").close()
    open(os.path.join(plain, n), "wb").close()
with open(sys.argv[3], "w") as f:
    f.write("".join(n.hex() + "\n" for n in names))
PY
mk_file "$S/$Q/bin"$'\xff'/x x

# j COMMAND EXPR: $OUT is a strict, valid, lossless document of COMMAND and EXPR holds of it.
j()
{
	"$GROVE_TEST_PY" "$NAMES" "$SCHEMA" "$OUT" "$1" "$2" || fail "$1 --json: not so: $2"
}
# The expressions name the test's paths as P('VAR'): the variable's bytes, from the environment.
export S T
tb="P('T')"
sb="P('S')"

P_OPS='{B(o, "path") for o in d["ops"] if B(o, "package") == b"p"}'
P_TEXTS='all(B(o, "text") == b"../stow\xfe/p/" + B(o, "path") for o in d["ops"] if B(o, "package") == b"p")'
CAF_OP='[(B(o, "path"), B(o, "text")) for o in d["ops"] if B(o, "package") == b"caf\xc3\xa9"] == [(b"bin\xff", b"../stow\xfe/caf\xc3\xa9/bin\xff")]'

expect_exit 0 "$GROVE" --json -n stow -d "$S" -t "$T" p "$Q"
j plan "$P_OPS == want and $P_TEXTS and $CAF_OP and B(d, 'target') == $tb and B(d, 'stow_dir') == $sb"
expect_exit 0 "$GROVE" --json plan -d "$S" -t "$T" p "$Q"
j plan "$P_OPS == want and $P_TEXTS and $CAF_OP"
expect_exit 0 "$GROVE" --json stow -d "$S" -t "$T" p "$Q"
j stow "$P_OPS == want and $P_TEXTS and $CAF_OP and d['transaction'] > 0"
check "plan, -n stow, stow: every name of every byte comes back exact, target and package too"

expect_exit 0 "$GROVE" --json status -t "$T" -d "$S"
j status "{B(o, 'package') for o in d['packages']} == {b'p', b'caf\xc3\xa9'} and
	{B(o, 'package'): o['state'] for o in d['stow_packages']} == {b'p': 'stowed', b'caf\xc3\xa9': 'stowed'} and
	B(d, 'target') == $tb"
# Drift on two names that are not UTF-8: one link gone, one changed.
"$GROVE_TEST_PY" - "$T" <<'PY'
import os, sys
t = os.fsencode(sys.argv[1])
os.unlink(t + b"/n\xffe")
os.unlink(t + b"/\xed\xa0\x80s")
os.symlink(b"elsewhere\xfe", t + b"/\xed\xa0\x80s")
PY
expect_exit 4 "$GROVE" --json verify -t "$T"
j verify "sorted((B(o, 'path'), o['issue'], B(o, 'expected')) for o in d['issues']) ==
	[(b'n\xffe', 'missing', b'../stow\xfe/p/n\xffe'), (b'\xed\xa0\x80s', 'changed', b'../stow\xfe/p/\xed\xa0\x80s')]"
"$GROVE_TEST_PY" - "$T" <<'PY'
import os, sys
t = os.fsencode(sys.argv[1])
os.unlink(t + b"/\xed\xa0\x80s")
os.symlink(b"../stow\xfe/p/\xed\xa0\x80s", t + b"/\xed\xa0\x80s")
os.symlink(b"../stow\xfe/p/n\xffe", t + b"/n\xffe")
PY
expect_exit 0 "$GROVE" --json verify -t "$T"
j verify "d['issues'] == [] and d['checked'] == len(want) + 1"
check "status and verify: packages, issues and expected link texts exact"

expect_exit 0 "$GROVE" --json log -v -t "$T"
j log "len(d['transactions']) == 1 and {B(o, 'path') for o in d['transactions'][0]['changes']} == want | {b'bin\xff'} and
	P('T') in B(d['transactions'][0], 'command') and b'caf\xc3\xa9' in B(d['transactions'][0], 'command') and B(d, 'target') == $tb"
expect_exit 0 "$GROVE" --json show 1 -t "$T"
j show "{B(o, 'path') for o in d['transaction']['changes']} == want | {b'bin\xff'}"
expect_exit 0 "$GROVE" --json targets
j targets "[B(t, 'target') for t in d['targets']] == [$tb] and
	{B(p, 'package') for p in d['targets'][0]['packages']} == {b'p', b'caf\xc3\xa9'}"
check "log -v, show, targets: ops, command lines and targets exact"

expect_exit 0 "$GROVE" --json restow -d "$S" -t "$T" p
j stow "True"
expect_exit 0 "$GROVE" --json unstow -d "$S" -t "$T" "$Q"
j stow "[(o['op'], B(o, 'path'), B(o, 'old_text'), B(o, 'package')) for o in d['ops']] ==
	[('unlink', b'bin\xff', b'../stow\xfe/caf\xc3\xa9/bin\xff', b'caf\xc3\xa9')]"
expect_exit 0 "$GROVE" --json -n undo -t "$T"
j undo "d['dry_run'] and [(o['op'], B(o, 'path'), B(o, 'text')) for o in d['ops']] == [('link', b'bin\xff', b'../stow\xfe/caf\xc3\xa9/bin\xff')]"
expect_exit 0 "$GROVE" --json undo -t "$T"
j undo "d['transaction'] > 0 and [B(o, 'path') for o in d['ops']] == [b'bin\xff']"
expect_exit 0 "$GROVE" --json -n rollback -t "$T" --to 1
j rollback "d['dry_run'] and d['ops'] == [] and B(d, 'target') == $tb"
expect_exit 0 "$GROVE" --json unstow -d "$S" -t "$T" p
j stow "$P_OPS == want and all(o['op'] == 'unlink' for o in d['ops'])"
expect_exit 0 "$GROVE" --json rollback -t "$T" --to 1
j rollback "$P_OPS == want and $P_TEXTS and d['transaction'] > 0"
check "restow, unstow, undo and rollback (-n and real): ops exact"

# import: links GNU Stow would have made, by hand, in a target named with a byte 0xff.
export U=$ROOT/u$'\xff'
"$GROVE_TEST_PY" - "$U" "$NAMES_FILE" <<'PY'
import os, sys
u = os.fsencode(sys.argv[1])
os.makedirs(u)
for line in open(sys.argv[2]):
    n = bytes.fromhex(line)
    os.symlink(b"../stow\xfe/p/" + n, u + b"/" + n)
PY
expect_exit 0 "$GROVE" --json -n import -d "$S" -t "$U" p
j import "d['dry_run'] and $P_OPS == want and $P_TEXTS and all(o.get('recorded') for o in d['ops']) and
	B(d, 'target') == P('U')"
expect_exit 0 "$GROVE" --json import -d "$S" -t "$U" p
j import "not d['dry_run'] and d['transaction'] > 0 and $P_OPS == want"
check "import (-n and real) of links named with every byte: recorded ops exact"

# apply: a manifest (UTF-8, as YAML is) whose package holds the names.
H=$ROOT/home
mkdir -p "$H"
M=$ROOT/grove.yaml
cat >"$M" <<YAML
targets:
  - path: $H
    dir: $ROOT/plain
    packages: [p]
YAML
expect_exit 1 "$GROVE" --json apply -f "$M" --check
A_OPS='{B(o, "path") for o in d["targets"][0]["ops"]}'
j apply "not d['applied'] and d['changed'] and $A_OPS == want"
expect_exit 0 "$GROVE" --json apply -f "$M"
j apply "d['applied'] and $A_OPS == want and
	all(B(o, 'text') == b'../plain/p/' + B(o, 'path') for o in d['targets'][0]['ops'])"
check "apply --check and apply: the manifest's package's ops exact"

# profiles: a profile whose link is not UTF-8, packages p and café.
export PR=$ROOT/prof$E ROOT
expect_exit 0 "$GROVE" --json -n profile -p "$PR" build -d "$S" --no-link p
j "profile build" "d['dry_run'] and d['changed'] and B(d, 'profile') == P('PR')"
expect_exit 0 "$GROVE" --json profile -p "$PR" build -d "$S" --no-link p
j "profile build" "d['generation'] == 1 and BL(d, 'packages') == [b'p']"
expect_exit 0 "$GROVE" --json profile -p "$PR" install -d "$S" --no-link "$Q"
j "profile install" "d['generation'] == 2 and set(BL(d, 'packages')) == {b'p', b'caf\xc3\xa9'}"
expect_exit 0 "$GROVE" --json profile -p "$PR" list
j "profile list" "[set(BL(g, 'packages')) for g in d['generations']] == [{b'p'}, {b'p', b'caf\xc3\xa9'}] and
	all(B(g, 'stow_dir') == $sb for g in d['generations'])"
expect_exit 0 "$GROVE" --json profile -p "$PR" diff 1 2
j "profile diff" "BL(d, 'added') == [b'caf\xc3\xa9'] and BL(d, 'removed') == []"
expect_exit 0 "$GROVE" --json profile -p "$PR" diff 2 1
j "profile diff" "BL(d, 'removed') == [b'caf\xc3\xa9'] and BL(d, 'added') == []"
expect_exit 0 "$GROVE" --json -n profile -p "$PR" switch 1
j "profile switch" "d['dry_run'] and d['generation'] == 1"
expect_exit 0 "$GROVE" --json -n profile -p "$PR" remove "$Q"
j "profile remove" "d['dry_run'] and BL(d, 'packages') == [b'p']"
expect_exit 0 "$GROVE" --json -n profile -p "$PR" delete 1
j "profile delete" "d['deleted'] == [1] and B(d, 'profile') == P('PR')"
expect_exit 0 "$GROVE" --json -n profile -p "$PR" gc
j "profile gc" "B(d, 'profile') == P('PR')"
expect_exit 1 "$GROVE" --json profile -p "$PR" diff 1 9
j profile "d['error']['code'] == 'bad-input' and B(d['error'], 'path') == P('PR')"
check "profile build, install, list, diff, switch, remove, delete, gc: packages and paths exact"

# alt --dry-run: an alternative whose path is not UTF-8.
A=$ROOT/alt
mkdir -p "$A/i/usr/bin" "$A/i/alt" "$A/adm"
mk_file "$A/i/opt/ed$E" ed
expect_exit 0 "$GROVE" --json alt --altdir "$A/i/alt" --admindir "$A/adm" --instdir "$A/i" --log "$A/log" \
	--dry-run --install "$A/i/usr/bin/ed" ed "$A/i/opt/ed$E" 10
export ED=$A/i/opt/ed$E
j alt "d['changed'] and any(B(o, 'text') == P('ED') for o in d['ops']) and
	P('ED') in B(d['group'], 'after')"
check "alt --dry-run: the op's link text and the group's admin text exact"

# Failures: the error document (and a plan's own), names and paths exact.
expect_exit 1 "$GROVE" --json stow -d "$S" -t "$T" "nosuch$Q"
j stow "d['error']['code'] == 'no-package' and B(d['error'], 'path') == $sb + b'/nosuchcaf\xc3\xa9' and
	b\"stow\xfe' does not contain package 'nosuchcaf\xc3\xa9'\" in B(d['error'], 'message')"
expect_exit 1 "$GROVE" --json log -t "$ROOT/gone$E"
j log "d['error']['code'] == 'ENOENT' and B(d['error'], 'path') == P('ROOT') + b'/gone\xe9'"
expect_exit 1 "$GROVE" --json stow -d "$ROOT/nodir$E" -t "$T" p
j stow "d['error']['code'] == 'ENOENT' and B(d['error'], 'path') == P('ROOT') + b'/nodir\xe9'"
expect_exit 1 "$GROVE" --json status -t "$S/p/n"$'\x01'e
j status "d['error']['code'] == 'ENOTDIR' and B(d['error'], 'path') == $sb + b'/p/n\x01e'"
printf 'targets: [\n' >"$ROOT/bad$E.yaml"
expect_exit 78 "$GROVE" --json apply -f "$ROOT/bad$E.yaml"
j apply "d['exit'] == 78 and d['error']['code'] == 'config' and B(d['error'], 'path') == P('ROOT') + b'/bad\xe9.yaml'"
expect_exit 2 "$GROVE" --json "frob$E"
j - "d['exit'] == 2 and B(d, 'command') == b'frob\xe9' and b'frob\xe9' in B(d['error'], 'message') and d['error']['path'] is None"
# A conflict: a file where a link would go, named with a byte that is not UTF-8.
C=$ROOT/c$E
mkdir -p "$C"
: >"$C/n${E}e"
expect_exit 1 "$GROVE" --json stow -d "$S" -t "$C" p
j stow "[(B(c, 'path'), B(c, 'package')) for c in d['conflicts']] == [(b'n\xe9e', b'p')] and
	b'n\xe9e' in B(d['conflicts'][0], 'message') and d['changed'] is False"
# An op that fails (as nobody, in a target it cannot write): the entry that failed, whole.
export W=$ROOT/w$E
mkdir -p "$W" "$ROOT/nobody-state"
chown nobody "$ROOT/nobody-state"
expect_exit 1 setpriv --reuid=nobody --regid=nogroup --clear-groups \
	env GROVE_STATE_DIR="$ROOT/nobody-state" "$GROVE" --json stow -d "$S" -t "$W" "$Q"
j stow "d['error']['code'] == 'EACCES' and B(d['error'], 'path') == P('W') + b'/bin\xff'"
check "failures: the error document's message and path (a failed op's entry too), a usage error's command, a conflict's path exact"
