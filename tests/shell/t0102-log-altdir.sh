#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove log of an altdir or admindir (issue 40 item 8): the alternatives changes made under that
# very folder, newest first, and nothing else of the target they belong to (a stow into the same
# target is not listed); two altdirs each list only their own; -n N limits; --json says so.
source "$(dirname "$0")/lib.sh"

I=$ROOT/inst S=$ROOT/dots
mkdir -p "$I/alt1" "$I/adm1" "$I/alt2" "$I/adm2" "$I/bin" "$I/home"
mk_file "$I/bin/ed1" 1
mk_file "$I/bin/ed2" 2
mk_file "$I/bin/vi1" v
mk_file "$S/vim/.vimrc" x
a1=(--altdir "$I/alt1" --admindir "$I/adm1" --log /dev/null)
a2=(--altdir "$I/alt2" --admindir "$I/adm2" --log /dev/null)

# The log's transaction ids, newest first, of `grove log ARGS` (from --json).
ids() {
	"$GROVE" --json log "$@" >"$ROOT/ids.json" || fail "grove --json log $*"
	python3 -c 'import json,sys; print(" ".join(str(t["id"]) for t in json.load(open(sys.argv[1]))["transactions"]))' "$ROOT/ids.json"
}

expect_exit 0 "$GROVE" alt "${a1[@]}" --install "$I/bin/ed" ed "$I/bin/ed1" 10   # 1
expect_exit 0 "$GROVE" stow -d "$S" -t "$I/home" vim                           # 2: another target
expect_exit 0 "$GROVE" alt "${a2[@]}" --install "$I/bin/vi" vi "$I/bin/vi1" 5    # 3
expect_exit 0 "$GROVE" alt "${a1[@]}" --install "$I/bin/ed" ed "$I/bin/ed2" 20   # 4
expect_exit 0 "$GROVE" alt "${a1[@]}" --set ed "$I/bin/ed1"                      # 5

# Which transactions each alternatives command made, from the target's own log (the root the
# links are under: "/" here, as for update-alternatives without --root).
all=$(ids -t /)
[[ $all == "5 4 3 1" ]] || fail "the target / lists '$all', expected the four alternatives changes"

got=$(ids -t "$I/alt1")
[[ $got == "5 4 1" ]] || fail "log -t alt1 lists '$got', expected 5 4 1"
got=$(ids -t "$I/adm1")
[[ $got == "5 4 1" ]] || fail "log -t adm1 lists '$got', expected 5 4 1"
got=$(ids -t "$I/alt2")
[[ $got == "3" ]] || fail "log -t alt2 lists '$got', expected 3"
got=$(ids -t "$I/alt1" -n 2)
[[ $got == "5 4" ]] || fail "log -t alt1 -n 2 lists '$got', expected 5 4"
check "an altdir's and an admindir's log: their own alternatives changes, newest first"

"$GROVE_TEST_PY" "$GROVE_SOURCE_ROOT/tests/json/validate.py" "$GROVE_SOURCE_ROOT/docs/grove.schema.json" \
	"$ROOT/ids.json" log || fail "not a valid log document: $(cat "$ROOT/ids.json")"
python3 - "$ROOT/ids.json" <<'PY' || fail "the document: $(cat "$ROOT/ids.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["alternatives"] is True and d["target"].endswith("/alt1"), d
PY
"$GROVE" --json log -t "$I/home" >"$ROOT/home.json" || fail "log -t home"
python3 - "$ROOT/home.json" <<'PY' || fail "the stow target's document: $(cat "$ROOT/home.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["alternatives"] is False and [t["id"] for t in d["transactions"]] == [2], d
PY
expect_exit 0 "$GROVE" log -t "$I/alt2"
expect_out_has "(alternatives changes under $I/alt2)"
expect_out_has "--install $I/bin/vi vi $I/bin/vi1 5"
check "--json says the listing is an alternatives one; the text says under which folder"

# A folder that is neither a target nor an alternatives root lists nothing.
expect_exit 0 "$GROVE" log -t "$I/bin"
expect_out_empty
check "a folder the log does not know lists nothing"
