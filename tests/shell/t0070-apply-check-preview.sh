#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove apply --check is the real apply's plan, changing nothing (issue 43 items 2 and 3): a
# package whose contents changed in a manifest profile is a change (exit 1, "changed": true, the
# generation apply then builds), in a target too; a conflict prints no "nothing to change" line
# and gives the hint grove stow gives for the same conflict; a profile whose packages conflict is
# a conflict for --check (exit 6), as the real build then stops on it.
source "$(dirname "$0")/lib.sh"

py()
{
	"$GROVE_TEST_PY" -c "$@"
}

cd "$ROOT"
mk_file pkgs/hello/bin/hello "hello"
mk_file pkgs/bye/bin/bye "bye"
cat >grove.yaml <<YAML
profiles:
  - name: tools
    dir: pkgs
    packages: [hello, bye]
YAML

# ---- a check writes nothing: no state dir, no log ----
mkdir -p first
cat >first.yaml <<YAML
targets:
  - path: first
    dir: pkgs
    packages: [hello]
profiles:
  - name: tools
    dir: pkgs
    packages: [hello]
YAML
expect_exit 1 "$GROVE" apply -f first.yaml --check
expect_out_has "target $ROOT/first: +hello (1 change)"
[[ ! -e $GROVE_STATE_DIR ]] || fail "apply --check made the state dir: $(ls -R "$GROVE_STATE_DIR")"
check "apply --check before any run makes no state dir (the log is read, never made)"

# ---- a manifest profile: a file added to a package ----
expect_exit 0 "$GROVE" apply
expect_exit 0 "$GROVE" apply --check
expect_out_has "nothing to change"
P=$GROVE_STATE_DIR/profiles/tools
[[ -d $P/bin && ! -L $P/bin ]] || fail "the profile's bin/ is not a folder of links: $(ls -l "$P/" 2>&1)"
mk_file pkgs/hello/bin/hello2 "hello2"
snapshot "$GROVE_STATE_DIR/profiles"
expect_exit 1 "$GROVE" apply --check
expect_out_has "profile tools: would build a new generation"
grep -q "nothing to change" "$OUT" && fail "apply --check says nothing to change: $(cat "$OUT")"
expect_exit 1 "$GROVE" apply --check --json
cp "$OUT" "$ROOT/check.json"
py 'import json,sys; d=json.load(open(sys.argv[1])); p=d["profiles"]["list"][0]
assert d["changed"] and not d["applied"] and d["profiles"]["changed"] and p["changed"] and p["number"] == 2, d' \
	"$ROOT/check.json" || fail "apply --check --json: $(cat "$ROOT/check.json")"
expect_unchanged "$GROVE_STATE_DIR/profiles"
check "a file added to a package of a manifest profile: apply --check says it would build generation 2 (exit 1), changing nothing"

expect_exit 0 "$GROVE" apply --json
py 'import json,sys; c=json.load(open(sys.argv[1])); a=json.load(open(sys.argv[2]))
assert a["applied"] and a["changed"] == c["changed"], (c, a)
assert [(p["name"], p["changed"], p["number"]) for p in a["profiles"]["list"]] == \
       [(p["name"], p["changed"], p["number"]) for p in c["profiles"]["list"]], (c, a)' \
	"$ROOT/check.json" "$OUT" || fail "apply did not do what --check said: $(cat "$OUT")"
[[ $(readlink "$P") == tools-2-link && -L $P/bin/hello2 ]] ||
	fail "generation 2 is not current or lacks bin/hello2: $(ls -lR "$P/" 2>&1)"
expect_exit 0 "$GROVE" apply --check
expect_out_has "nothing to change"
check "apply then builds that generation, holding bin/hello2; --check is quiet again"

# ---- the same in a target ----
mkdir home
cat >grove.yaml <<YAML
targets:
  - path: home
    dir: pkgs
    packages: [hello, bye]
YAML
expect_exit 0 "$GROVE" apply
mk_file pkgs/bye/bin/bye2 "bye2"
expect_exit 1 "$GROVE" apply --check --json
py 'import json,sys; d=json.load(open(sys.argv[1])); t=d["targets"][0]
assert d["changed"] and [(o["op"], o["path"]) for o in t["ops"]] == [("link", "bin/bye2")], d' "$OUT" ||
	fail "apply --check --json in a target: $(cat "$OUT")"
expect_exit 0 "$GROVE" apply
expect_tree home <<'EOF'
d bin
l bin/bye -> ../../pkgs/bye/bin/bye
l bin/bye2 -> ../../pkgs/bye/bin/bye2
l bin/hello -> ../../pkgs/hello/bin/hello
l bin/hello2 -> ../../pkgs/hello/bin/hello2
EOF
check "a file added to a package of a target: apply --check plans its link, apply makes it"

# ---- a conflict: no "nothing to change", and stow's hint ----
mk_file pkgs/rc/.bashrc "theirs"
mk_file home/.bashrc "mine"
cat >grove.yaml <<YAML
targets:
  - path: home
    dir: pkgs
    packages: [hello, bye, rc]
YAML
snapshot home
expect_exit 6 "$GROVE" apply --check
grep -q "nothing to change" "$OUT" && fail "apply --check with a conflict says nothing to change: $(cat "$OUT")"
grep -q "already applied" "$OUT" && fail "apply --check with a conflict says already applied: $(cat "$OUT")"
expect_err_has "grove.yaml:4: stow 'rc': cannot stow ../pkgs/rc/.bashrc over existing target .bashrc"
grep '^  hint: ' "$ERR" >"$ROOT/apply-hints" || fail "apply --check gives no hint: $(cat "$ERR")"
expect_exit 1 "$GROVE" -n stow -d pkgs -t home rc
grep '^  hint: ' "$ERR" >"$ROOT/stow-hints" || fail "grove stow gives no hint: $(cat "$ERR")"
cmp -s "$ROOT/apply-hints" "$ROOT/stow-hints" ||
	fail "apply's hints differ from stow's: $(cat "$ROOT/apply-hints") / $(cat "$ROOT/stow-hints")"
expect_exit 1 "$GROVE" apply
grep -q "nothing to change" "$OUT" && fail "apply with a conflict says nothing to change: $(cat "$OUT")"
expect_err_has "  hint: "
expect_unchanged home
check "a conflict: apply --check exits 6 with the conflict and stow's hint, and no 'nothing to change' line"

# ---- a profile whose packages conflict ----
mk_file pkgs/hello3/bin/hello "another hello"
cat >grove.yaml <<YAML
profiles:
  - name: tools
    dir: pkgs
    packages: [hello, hello3]
YAML
snapshot "$GROVE_STATE_DIR/profiles"
expect_exit 6 "$GROVE" apply --check
expect_err_has "grove: profile 'tools' (grove.yaml:2) has conflicts:"
expect_err_has "bin/hello"
grep -q "nothing to change" "$OUT" && fail "apply --check says nothing to change: $(cat "$OUT")"
expect_exit 6 "$GROVE" apply --check --json
py 'import json,sys; d=json.load(open(sys.argv[1])); assert not d["applied"] and d["profiles"]["list"][0]["changed"], d' "$OUT" ||
	fail "apply --check --json with a profile conflict: $(cat "$OUT")"
expect_unchanged "$GROVE_STATE_DIR/profiles"
expect_exit 1 "$GROVE" apply
expect_err_has "conflicts"
expect_unchanged "$GROVE_STATE_DIR/profiles"
check "a profile whose packages conflict: apply --check exits 6 naming it, and apply builds nothing"
