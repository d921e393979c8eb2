#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove alt --dry-run (issue 19) predicts without changing: nothing is made, locked or logged, and
# the links and group state it prints are what the real run then writes — the links as grove makes
# them, the group's text as the real update-alternatives saves it in its admin file.
source "$(dirname "$0")/lib.sh"
need_ua

G=$ROOT/g U=$ROOT/u
for d in "$G" "$U"; do
	mkdir -p "$d/i/usr/bin"
	for c in a b; do
		mk_file "$d/i/opt/$c" "$c"
		mk_file "$d/i/opt/$c.1" "$c.1"
	done
done
galt=(alt --altdir "$G/i/alt" --admindir "$G/adm" --instdir "$G/i" --log "$G/log")
ua() { "$UA" --altdir "$U/i/alt" --admindir "$U/adm" --instdir "$U/i" --log "$U/log" "${@//@/$U}"; }
tree_now() { find "$ROOT" -printf '%y %p %l %s %T@\n' | sort; }

# predict ARGS…: the dry run (JSON) must make nothing; then the real run; every predicted link must
# be on disk, and the predicted group text must be update-alternatives' admin file after the same
# command (or absent when the prediction says it is removed).
predict()
{
	local before
	before=$(tree_now)
	expect_exit 0 "$GROVE" --json "${galt[@]}" --dry-run "${@//@/$G}"
	[[ $(tree_now) == "$before" ]] || fail "--dry-run $*: made or changed something: $(diff <(echo "$before") <(tree_now))"
	cp "$OUT" "$ROOT/pred.json"
	"$GROVE_TEST_PY" "$GROVE_SOURCE_ROOT/tests/json/validate.py" \
		"$GROVE_SOURCE_ROOT/docs/grove.schema.json" "$ROOT/pred.json" alt ||
		fail "--dry-run $* --json does not validate against docs/grove.schema.json"
	expect_exit 0 "$GROVE" "${galt[@]}" "${@//@/$G}"
	ua "$@" >/dev/null
	"$GROVE_TEST_PY" - "$ROOT/pred.json" "$G" "$U" <<'PY' || fail "--dry-run $*: the prediction was wrong"
import json, os, sys
pred, g, u = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
assert pred["dry_run"] is True and pred["command"] == "alt", pred
for op in pred["ops"]:
    p = os.path.join(g, "i", op["path"])
    if op["op"] in ("link", "relink"):
        assert os.readlink(p) == op["text"], (op, os.readlink(p))
    elif op["op"] == "unlink":
        assert not os.path.lexists(p), op
grp = pred["group"]
if grp is not None:
    f = os.path.join(u, "adm", grp["name"])
    if grp["after"] is None:
        assert not os.path.exists(f), "update-alternatives kept " + f
    else:
        want = open(f).read().replace(u, "@")
        assert grp["after"].replace(g, "@") == want, (grp["after"], want)
PY
}

predict --install @/i/usr/bin/x x @/i/opt/a 10 --slave @/i/usr/bin/x.1 x.1 @/i/opt/a.1
grep -q '"op": "link", "path": "usr/bin/x"' "$ROOT/pred.json" || fail "the first install predicted no link"
check "a first install: the dry run makes nothing and predicts the links and the admin file"
predict --install @/i/usr/bin/x x @/i/opt/b 20 --slave @/i/usr/bin/x.1 x.1 @/i/opt/b.1
predict --set x @/i/opt/a
predict --auto x
predict --remove x @/i/opt/b
check "install of a better choice, set, auto, remove: predictions hold"
predict --remove-all x
grep -q '"after": null' "$ROOT/pred.json" || fail "--remove-all did not predict the group's removal"
check "remove-all predicts the group's removal and its links' removal"

expect_exit 0 "$GROVE" "${galt[@]}" --dry-run --install "$G/i/usr/bin/y" y "$G/i/opt/a" 1
expect_out_has "grove alt: would use $G/i/opt/a to provide $G/i/usr/bin/y (y) in auto mode"
expect_out_has "grove alt: dry run: would change 2 links:"
# (each path whole, as the command names it: the instdir's path and the link's, not relative)
expect_out_has "link   $G/i/usr/bin/y -> $G/i/alt/y"
expect_out_has "grove alt: dry run: would create group y:"
expect_out_has "  choice $G/i/opt/a: added, priority 1"
[[ ! -e $G/i/usr/bin/y ]] || fail "the text dry run made a link"
check "the text form says what would be done: the ops with whole paths, the group's change as a plan"

# --json has a document only for a dry run's prediction (issue 38, item 6): elsewhere it is refused
# (exit 2, update-alternatives' usage status), never ignored with text on stdout.
before=$(tree_now)
for args in "--display y" "--query y" "--list y" "--get-selections" \
	"--install @/i/usr/bin/z z @/i/opt/a 1" "--set y @/i/opt/a"; do
	# shellcheck disable=SC2086 # the words of a command
	expect_exit 2 "$GROVE" --json "${galt[@]}" ${args//@/$G}
	expect_out_empty
	expect_err_has "--json: grove alt prints JSON only for the prediction of a dry run"
done
[[ $(tree_now) == "$before" ]] || fail "a refused --json changed something"
check "--json without a dry run, or with a reading command: refused, stdout empty, nothing changed"
