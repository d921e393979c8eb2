#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# --json on failure (issue 43 item 4): every command given --json prints exactly one document on
# stdout, also when it fails before having one of its own: the error document (docs/json.md,
# "Errors": the command, its exit status, the error's code and message), validated against
# docs/grove.schema.json; the message still goes to stderr. A failure that has its own document
# (a plan with conflicts) prints that one, not the error document.
source "$(dirname "$0")/lib.sh"

SCHEMA=$GROVE_SOURCE_ROOT/docs/grove.schema.json
VALIDATE=$GROVE_SOURCE_ROOT/tests/json/validate.py
S=$ROOT/stow T=$ROOT/t
mk_file "$S/a/fa" a
mk_file "$S/b/fa" b
mkdir -p "$T"

# error_doc EXIT CODE COMMAND MESSAGE-PART: stdout is one error document saying so.
error_doc()
{
	"$GROVE_TEST_PY" "$VALIDATE" "$SCHEMA" "$OUT" || fail "not a valid document: $(cat "$OUT")"
	python3 - "$OUT" "$@" <<'PY' || fail "the error document is not exit $1, $2, $3, '$4': $(cat "$OUT")"
import json, sys
doc = json.loads(open(sys.argv[1]).read())        # one document, nothing else on stdout
want_exit, code, command, part = sys.argv[2:6]
ok = (doc["exit"] == int(want_exit) and doc["error"]["code"] == code and
      doc["command"] == (None if command == "-" else command) and part in doc["error"]["message"])
sys.exit(0 if ok else 1)
PY
}

expect_exit 1 "$GROVE" --json stow -d "$S" -t "$T" nosuch
error_doc 1 no-package stow "does not contain package 'nosuch'"
expect_err_has "does not contain package 'nosuch'"
expect_exit 1 "$GROVE" --json log -t "$ROOT/nonexistent"
error_doc 1 ENOENT log "nonexistent"
expect_exit 1 "$GROVE" log --json -t "$ROOT/nonexistent"
error_doc 1 ENOENT log "nonexistent"
expect_exit 1 "$GROVE" --json status -t "$ROOT/nonexistent"
error_doc 1 ENOENT status "nonexistent"
check "a failure before any document: the error document, the message on stderr too"

expect_exit 2 "$GROVE" --json frobnicate
error_doc 2 usage frobnicate "unknown command 'frobnicate'"
expect_exit 2 "$GROVE" --json --wait x log
error_doc 2 usage - "option '--wait' needs a number of seconds"
expect_exit 2 "$GROVE" --json rollback -t "$T"
error_doc 2 usage rollback "needs one of --to N and --before T"
expect_exit 2 "$GROVE" --json rollback -t "$T" --to 1 --before 2
error_doc 2 usage rollback "options '--to' and '--before' exclude each other"
check "usage errors: the error document with exit 2 (command null when the line cannot be read)"

ln -s "$ROOT/elsewhere" "$ROOT/state-link"
mkdir -p "$ROOT/elsewhere"
expect_exit 78 "$GROVE" --json --state "$ROOT/state-link" stow -d "$S" -t "$T" a
error_doc 78 config stow "state-link"
check "a state dir that is a symlink: the error document with exit 78"

# Success and a plan's own failure keep their own documents.
expect_exit 0 "$GROVE" --json stow -d "$S" -t "$T" a
"$GROVE_TEST_PY" "$VALIDATE" "$SCHEMA" "$OUT" stow || fail "stow's document: $(cat "$OUT")"
expect_exit 1 "$GROVE" --json stow -d "$S" -t "$T" b
"$GROVE_TEST_PY" "$VALIDATE" "$SCHEMA" "$OUT" stow || fail "the conflict's document: $(cat "$OUT")"
python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); sys.exit(0 if d["conflicts"] and "error" not in d else 1)' "$OUT" ||
	fail "a conflict is not the stow document with its conflicts: $(cat "$OUT")"
check "success and a conflict print the command's own document, once"
