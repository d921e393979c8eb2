#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove targets (issue 40 item 8): every target the log knows, the most recently changed first,
# with its transactions, stow dirs and stowed packages; nothing made when there is no log yet. And
# log, status and verify without -t, which read the stow dir's parent: when the log has nothing of
# it they say so and point to grove targets (-q hides it); with -t they say nothing more.
source "$(dirname "$0")/lib.sh"

S=$ROOT/dots T=$ROOT/home U=$ROOT/srv
mk_file "$S/vim/.vimrc" v
mk_file "$S/vim/.vim/colors/x.vim" x
mk_file "$S/git/.gitconfig" g
mk_file "$S/zsh/.zshrc" z
mkdir -p "$T" "$U"

expect_exit 0 "$GROVE" targets
expect_out_has "no target in the log"
[[ ! -e $GROVE_STATE_DIR ]] || fail "grove targets made the state dir $GROVE_STATE_DIR"
expect_exit 0 "$GROVE" --json targets
python3 - "$OUT" <<'PY' || fail "an empty log's targets: $(cat "$OUT")"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["command"] == "targets" and d["targets"] == [] else 1)
PY
check "with no log yet: no target, nothing made"

expect_exit 0 "$GROVE" stow -d "$S" -t "$T" vim git
expect_exit 0 "$GROVE" stow -d "$S" -t "$U" zsh
expect_exit 0 "$GROVE" unstow -d "$S" -t "$T" git
expect_exit 0 "$GROVE" --json targets
python3 - "$OUT" "$T" "$U" "$S" <<'PY' || fail "the targets: $(cat "$OUT")"
import json, sys
d = json.load(open(sys.argv[1]))
home, srv, dots = sys.argv[2:5]
ts = d["targets"]
assert [t["target"] for t in ts] == [home, srv], ts           # home changed last (the unstow)
assert [t["transactions"] for t in ts] == [2, 1], ts
assert all([s["dir"] for s in t["stow_dirs"]] == [dots] for t in ts), ts
assert ts[0]["packages"] == [{"package": "vim", "links": 2}], ts[0]  # .vimrc and .vim
assert ts[1]["packages"] == [{"package": "zsh", "links": 1}], ts[1]
assert ts[0]["last_change"] >= ts[1]["last_change"]
PY
expect_exit 0 "$GROVE" targets
expect_out_has "$T"
expect_out_has "stow dir $S"
expect_out_has "stowed: vim (2)"
check "targets lists each target, newest first, with its transactions, stow dirs and packages"

# Without -t the target is the stow dir's parent ($ROOT here), which the log does not know.
cd "$S"
for cmd in log status verify; do
	expect_exit 0 "$GROVE" "$cmd"
	expect_err_has "the log has nothing of '$ROOT', the stow dir's parent"
	expect_err_has "'grove targets' lists those it knows"
	expect_exit 0 "$GROVE" -q "$cmd"
	expect_err_empty
	expect_exit 0 "$GROVE" "$cmd" -t "$T"
	expect_err_empty
done
check "log, status and verify without -t point to grove targets when the log has nothing there"

# A stow dir whose parent is the target: log names it once (status prints it on stdout anyway).
P=$ROOT/p
mk_file "$P/stow/tool/bin/tool" t
cd "$P/stow"
expect_exit 0 "$GROVE" stow tool
expect_exit 0 "$GROVE" log
expect_err_has "target '$P', the stow dir's parent (-t names another)"
expect_exit 0 "$GROVE" status
expect_err_empty
expect_out_has "$P"
check "log without -t names the target it read"

# status -d: the columns line up whatever the names' and counts' widths (issue 40 item 9).
A=$ROOT/al
mk_file "$A/stow/a-package-name-longer-than-24/f" x
for i in $(seq 1 12); do mk_file "$A/stow/b/f$i" "$i"; done
mk_file "$A/stow/c/only" c
mkdir -p "$A/t"
expect_exit 0 "$GROVE" stow -d "$A/stow" -t "$A/t" a-package-name-longer-than-24 b c
rm "$A/t/f3"
mk_file "$A/stow/c/more" m
expect_exit 0 "$GROVE" status -d "$A/stow" -t "$A/t"
python3 - "$OUT" <<'PY' || fail "status -d's columns do not line up: $(cat "$OUT")"
import sys
rows = open(sys.argv[1]).read().split("packages in ", 1)[1].splitlines()[1:]
assert len(rows) == 3, rows
# The state column and the "in grove's log" column start at the same place on every row.
state = {min(r.index(w) for w in ("partly stowed", "not stowed", "stowed") if w in r) for r in rows}
log = {r.index("in grove's log") for r in rows}
assert len(state) == 1 and len(log) == 1, (state, log)
PY
check "status -d lines up its columns (a name longer than 24, counts of 1 and 2 digits)"
