#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# --json: every reporting command prints one document that validates against docs/grove.schema.json
# (the schema docs/json.md describes), with the values the scenario implies.
. "$(dirname "$0")/lib.sh"

SCHEMA=$GROVE_SOURCE_ROOT/docs/grove.schema.json
VALIDATE=$GROVE_SOURCE_ROOT/tests/json/validate.py

"$GROVE_TEST_PY" "$VALIDATE" --self-test "$SCHEMA" || fail "the validator accepts bad documents"
check "the validator rejects documents with a wrong version, missing, unknown or mistyped fields"

# valid COMMAND: stdout validates and is a COMMAND document.
valid()
{
	"$GROVE_TEST_PY" "$VALIDATE" "$SCHEMA" "$OUT" "$1" || fail "$1 --json does not validate: $(cat "$OUT")"
}

# field EXPR: a Python expression over the document d must be true.
field()
{
	"$GROVE_TEST_PY" - "$OUT" "$1" <<-'PY' || fail "expected $1 in: $(cat "$OUT")"
		import json, sys
		d = json.load(open(sys.argv[1]))
		sys.exit(0 if eval(sys.argv[2]) else 1)
	PY
}

S=$ROOT/stow T=$ROOT/target
mk_file "$S/a/bin/x" ax
mk_file "$S/a/share/a.txt" a
mk_file "$S/b/bin/y" by
mk_file "$S/c/bin/x" cx
mkdir -p "$T"
cd "$ROOT"

expect_exit 0 "$GROVE" --json plan stow -d stow -t target a b
valid plan
field 'd["changed"] and {o["op"] for o in d["ops"]} >= {"mkdir", "link"} and d["conflicts"] == []'
field 'd["target"] == "'"$T"'" and d["stow_dir"] == "'"$S"'"'
field 'any(o["op"] == "link" and o["path"] == "bin/x" and o["text"] == "../../stow/a/bin/x" and o["package"] == "a" for o in d["ops"])'
expect_tree "$T" ""
check "plan --json: the ops, valid, nothing changed"

expect_exit 0 "$GROVE" --json stow -d stow -t target a b
valid stow
field 'd["changed"] and d["transaction"] == 1 and len(d["ops"]) > 0'
expect_exit 0 "$GROVE" --json stow -d stow -t target a b
valid stow
field 'not d["changed"] and d["transaction"] == 0 and d["ops"] == []'
check "stow --json: the transaction and its ops; a second run changes nothing and says so"

expect_exit 1 "$GROVE" --json plan stow -d stow -t target c
valid plan
field 'not d["changed"] and len(d["conflicts"]) == 1 and d["conflicts"][0]["package"] == "c"'
field 'd["conflicts"][0]["path"] == "bin/x" and "grove unstow a" in d["conflicts"][0]["hint"]'
check "plan --json with a conflict: exit 1, the conflict with its hint, valid"

expect_exit 0 "$GROVE" --json status -t target
valid status
field 'd["unfinished"] == 0 and sorted((p["package"], p["links"]) for p in d["packages"]) == [("a", 2), ("b", 1)]'
check "status --json: the packages and their links"

expect_exit 0 "$GROVE" unstow -d stow -t target b
expect_exit 0 "$GROVE" --json log -t target
valid log
field '[t["id"] for t in d["transactions"]] == [2, 1] and all(t["state"] == "committed" for t in d["transactions"])'
field 'd["transactions"][0]["command"] == "grove unstow -d stow -t target b"'
check "log --json: the transactions newest first, RFC 3339 times"

expect_exit 0 "$GROVE" --json log -v -t target
valid log
field 'all(len(t["changes"]) == t["ops"] > 0 for t in d["transactions"])'
field '{"op": "link", "path": "bin/y", "text": "../../stow/b/bin/y", "old_text": None, "package": "b"} in d["transactions"][1]["changes"]'
expect_exit 0 "$GROVE" --json show 2 -t target
valid show
field 'd["transaction"]["id"] == 2 and ("unlink", "bin/y") in [(c["op"], c["path"]) for c in d["transaction"]["changes"]]'
check "log -v --json and show --json: the transactions' ops as changes, valid"

expect_exit 0 "$GROVE" --json verify -t target
valid verify
field 'd["issues"] == [] and d["checked"] > 0 and d["missing"] == d["changed"] == d["broken"] == d["foreign"] == 0'
rm "$T/bin" "$T/share"
mk_file "$T/share" "a file now"
expect_exit 4 "$GROVE" --json verify -t target
valid verify
field 'd["missing"] == 1 and d["changed"] == 1'
field 'sorted((i["issue"], i["path"], i["expected"]) for i in d["issues"]) == [("changed", "share", "../stow/a/share"), ("missing", "bin", "../stow/a/bin")]'
check "verify --json: clean, then a missing and a changed link (exit 4), valid both times"

# undo and rollback (issue 19: the fleet's undo module reads the transaction from here).
# Transaction numbers are per state dir, so they are read back rather than assumed.
mkdir -p "$ROOT/t2"
expect_exit 0 "$GROVE" --json stow -d stow -t t2 b
n1=$("$GROVE_TEST_PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["transaction"])' "$OUT")
expect_exit 0 "$GROVE" --json -n undo -t t2
valid undo
field 'd["dry_run"] and d["changed"] and d["transaction"] == 0 and d["reverts"] == ['"$n1"'] and d["ops"]'
expect_exit 0 "$GROVE" --json undo -t t2
valid undo
field 'not d["dry_run"] and d["changed"] and d["transaction"] > '"$n1"' and d["reverts"] == ['"$n1"']'
n2=$("$GROVE_TEST_PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["transaction"])' "$OUT")
expect_exit 0 "$GROVE" --json rollback --to "$n1" -t t2
valid rollback
field 'd["changed"] and d["transaction"] > '"$n2"' and d["reverts"] == ['"$n2"']'
n3=$("$GROVE_TEST_PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["transaction"])' "$OUT")
expect_exit 0 "$GROVE" --json rollback --to "$n3" -t t2
valid rollback
field 'not d["changed"] and d["transaction"] == 0 and d["reverts"] == [] and d["ops"] == []'
mkdir -p "$ROOT/t3"
expect_exit 1 "$GROVE" --json undo -t t3
valid undo
field 'not d["changed"] and d["transaction"] == 0 and d["reverts"] == [] and d["conflicts"] == []'
rm "$ROOT/t2/bin" && mkdir "$ROOT/t2/bin" && mk_file "$ROOT/t2/bin/y" mine
expect_exit 1 "$GROVE" --json undo -t t2
valid undo
field 'not d["changed"] and d["conflicts"] and d["conflicts"][0]["action"] == "revert"'
check "undo and rollback --json: what they revert, the transaction made, conflicts, valid"

# The per-command spelling (after the command) gives the same documents.
expect_exit 0 "$GROVE" log -t target --json
valid log
expect_exit 0 "$GROVE" status -t target --json
valid status
check "--json after the command name gives the same documents"

# grove profile list (issue 5) and grove apply (issue 6) print documents of the same schema.
mk_file "$ROOT/pkgs/ripgrep/bin/rg" rg
mk_file "$ROOT/pkgs/fd/bin/fd" fd
expect_exit 0 "$GROVE" profile -p "$ROOT/prof/main" build --no-link -d pkgs ripgrep
expect_exit 0 "$GROVE" profile -p "$ROOT/prof/main" install --no-link -d pkgs fd
expect_exit 0 "$GROVE" --json profile -p "$ROOT/prof/main" list
valid "profile list"
field 'd["current"] == 2 and [g["number"] for g in d["generations"]] == [1, 2]'
field '[g["packages"] for g in d["generations"]] == [["ripgrep"], ["fd", "ripgrep"]] and [g["current"] for g in d["generations"]] == [False, True]'
check "profile list --json: the generations, valid"

mkdir -p "$ROOT/home"
cat >"$ROOT/grove.yaml" <<-'YAML'
	version: 1
	defaults:
	  dir: stow
	targets:
	  - path: home
	    packages: [b]
YAML
expect_exit 1 "$GROVE" --json apply --check -f grove.yaml
valid apply
field 'd["changed"] and not d["applied"] and d["targets"][0]["stow"] == ["b"] and d["targets"][0]["ops"][0]["op"] == "link"'
expect_exit 0 "$GROVE" --json apply -f grove.yaml
valid apply
field 'd["applied"] and d["targets"][0]["txn"] > 0'
expect_exit 0 "$GROVE" --json apply --check -f grove.yaml
valid apply
field 'not d["changed"] and d["targets"][0]["conflicts"] == []'
check "apply --json: what would change, what was applied, then nothing to do; valid each time"

mkdir -p "$ROOT/home2/bin" && mk_file "$ROOT/home2/bin/y" mine
cat >"$ROOT/grove2.yaml" <<-'YAML'
	defaults:
	  dir: stow
	targets:
	  - path: home2
	    packages: [b]
YAML
expect_exit 1 "$GROVE" --json apply -f grove2.yaml
valid apply
field 'not d["applied"] and d["targets"][0]["txn"] == 0 and d["targets"][0]["conflicts"][0]["path"] == "bin/y"'
expect_exit 6 "$GROVE" --json apply --check -f grove2.yaml
valid apply
field 'd["targets"][0]["conflicts"][0]["package"] == "b"'
check "apply --json with a conflict: the document lists it, exit 1, nothing applied"
