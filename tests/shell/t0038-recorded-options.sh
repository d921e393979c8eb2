#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Recorded options (issue 17, item 4; docs/stow.md "Recorded options"): a package grove stowed with
# --dotfiles or --no-folding is unstowed and restowed with them when none is given, saying so in
# one line; a given option that differs is a conflict (exit 1, nothing changed, a hint); an equal
# one is silent; undo puts the record back with the links; a log from before the record behaves as
# before; grove apply declares options and converges; and invoked as "stow" everything is GNU
# Stow's (no record used, no new message, no new option), checked against GNU Stow 2.4.1 when the
# oracle is there.
source "$(dirname "$0")/lib.sh"

S=$ROOT/dotfiles
H=$ROOT/home
mk_file "$S/vim/dot-vimrc" "set nocp"
mk_file "$S/vim/dot-vim/colors/dark.vim" "dark"
mk_file "$S/git/dot-gitconfig" "git"
mk_file "$S/tools/bin/tool" "tool"
mkdir -p "$H"

ntxn() # committed transactions of the target $1
{
	"$GROVE" log -t "$1" | grep -c committed || true
}

# The notice is printed once per package and options (t0119); this test checks which options
# each command uses, by the notice: the log forgets it was shown.
forget_told()
{
	sqlite3 "$GROVE_STATE_DIR/grove.db" "DELETE FROM pkg_told" || fail "cannot edit the log"
}

# One line of stderr names the recorded options used.
expect_notice()
{
	local n
	n=$(grep -c 'was stowed with' "$ERR" || true)
	[[ $n == 1 ]] || { _lib_show_run; fail "expected the notice once on stderr, got it $n times"; }
	expect_err_has "$1"
	expect_err_has "(see 'Recorded options' in grove(1))"
}

# ---- --dotfiles: unstow and restow without it ----
expect_exit 0 "$GROVE" stow -d "$S" -t "$H" --dotfiles vim git
expect_err_empty
expect_exit 0 "$GROVE" unstow -d "$S" -t "$H" vim
expect_err_line "^grove: vim was stowed with --dotfiles; using it again \(see 'Recorded options' in grove\(1\)\)$"
expect_tree "$H" <<'SPEC'
l .gitconfig -> ../dotfiles/git/dot-gitconfig
SPEC
check "stowed with --dotfiles, 'grove unstow vim' removes its links and says why, in one line"

forget_told
expect_exit 0 "$GROVE" restow -d "$S" -t "$H" git
expect_err_line "^grove: git was stowed with --dotfiles; using it again"
expect_tree "$H" <<'SPEC'
l .gitconfig -> ../dotfiles/git/dot-gitconfig
SPEC
forget_told
expect_exit 0 "$GROVE" -v restow -d "$S" -t "$H" git
expect_notice "grove: git was stowed with --dotfiles; using it again"
expect_exit 0 "$GROVE" restow -d "$S" -t "$H" --dotfiles git
expect_err_empty
check "'grove restow git' makes no dot-gitconfig beside .gitconfig; the notice once with -v; an equal option is silent"

# ---- a given option that differs, to stow: a conflict, nothing changed (a restow changes the
# options in one step: t0115) ----
n=$(ntxn "$H")
snapshot "$H"
expect_exit 1 "$GROVE" stow -d "$S" -t "$H" --no-dotfiles git
expect_err_has "WARNING! stowing git would cause conflicts:"
expect_err_has "  * git was stowed with --dotfiles; this command gives --no-dotfiles"
expect_err_has "  hint: leave the option out to use the one 'git' was stowed with; to change it, restow the package with the new option (grove restow --no-dotfiles git): its links are made anew in one transaction"
expect_err_has "All operations aborted."
expect_err_lacks "using it again"
expect_unchanged "$H"
expect_exit 1 "$GROVE" stow -d "$S" -t "$H" --no-folding git
expect_err_has "WARNING! stowing git would cause conflicts:"
expect_err_has "  * git was stowed with folding (no --no-folding); this command gives --no-folding"
expect_unchanged "$H"
expect_exit 1 "$GROVE" plan stow -d "$S" -t "$H" --no-dotfiles git
expect_err_has "git was stowed with --dotfiles; this command gives --no-dotfiles"
expect_exit 1 "$GROVE" --json stow -d "$S" -t "$H" --no-dotfiles git
"$GROVE_TEST_PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = d["conflicts"]
assert d["changed"] is False and len(c) == 1, d
assert c[0]["package"] == "git" and c[0]["path"] is None and "--no-dotfiles" in c[0]["message"], c
assert c[0]["hint"].startswith("leave the option out"), c
' "$OUT" || fail "the --json conflict is not as expected: $(cat "$OUT")"
expect_unchanged "$H"
[[ $(ntxn "$H") == "$n" ]] || fail "a refused command made a transaction"
check "stow with a given option that differs from the recorded one: conflict, exit 1, hint, nothing changed (also plan, --json)"

# ---- --no-folding, and packages with different options in one command ----
expect_exit 0 "$GROVE" stow -d "$S" -t "$H" --no-folding tools
forget_told
expect_exit 0 "$GROVE" restow -d "$S" -t "$H" git tools
expect_err_line "^grove: git was stowed with --dotfiles, tools with --no-folding; using them again"
expect_tree "$H" <<'SPEC'
l .gitconfig -> ../dotfiles/git/dot-gitconfig
d bin
l bin/tool -> ../../dotfiles/tools/bin/tool
SPEC
forget_told
expect_exit 0 "$GROVE" plan unstow -d "$S" -t "$H" tools git
expect_out_has "unlink .gitconfig"
expect_out_has "unlink bin/tool"
expect_err_line "^grove: tools was stowed with --no-folding, git with --dotfiles; using them again"
check "--no-folding is kept too; packages stowed with different options are planned each with its own, in one plan"

# ---- undo puts the record back with the links ----
expect_exit 0 "$GROVE" unstow -d "$S" -t "$H" git
expect_exit 0 "$GROVE" undo -t "$H"
[[ $(readlink "$H/.gitconfig") == ../dotfiles/git/dot-gitconfig ]] || fail "undo did not bring .gitconfig back"
forget_told
expect_exit 0 "$GROVE" unstow -d "$S" -t "$H" git
expect_err_line "^grove: git was stowed with --dotfiles; using it again"
[[ ! -e $H/.gitconfig && ! -L $H/.gitconfig ]] || fail "git's link is still there after the undo and unstow"
expect_exit 0 "$GROVE" stow -d "$S" -t "$H" --dotfiles git
expect_exit 0 "$GROVE" unstow -d "$S" -t "$H" git
expect_exit 0 "$GROVE" stow -d "$S" -t "$H" git
# No recorded option (it was unstowed): no notice; the dot- names linked as they are bring the
# --dotfiles hint instead (issue 40 item 9).
expect_err_lacks "was stowed with"
expect_err_has "hint: 'git' has dot- names"
expect_exit 0 "$GROVE" undo -t "$H"
expect_exit 0 "$GROVE" undo -t "$H"
[[ $(readlink "$H/.gitconfig") == ../dotfiles/git/dot-gitconfig ]] || fail "two undos did not bring .gitconfig back"
forget_told
expect_exit 0 "$GROVE" restow -d "$S" -t "$H" git
expect_err_line "^grove: git was stowed with --dotfiles"
[[ ! -L $H/dot-gitconfig ]] || fail "restow after two undos made dot-gitconfig"
check "undo puts back the options with the links: unstow and restow afterwards use them"

# ---- a log from before the record (schema 6): as before ----
expect_exit 0 "$GROVE" unstow -d "$S" -t "$H" git tools
rmdir "$H/bin" # left empty, as GNU Stow leaves a --no-folding package's folders
expect_exit 0 "$GROVE" stow -d "$S" -t "$H" --dotfiles git
sqlite3 "$GROVE_STATE_DIR/grove.db" "DELETE FROM txn_pkgs; DELETE FROM pkg_state" || fail "cannot edit the log"
snapshot "$H"
expect_exit 0 "$GROVE" unstow -d "$S" -t "$H" git
expect_err_empty
expect_unchanged "$H"
expect_exit 0 "$GROVE" unstow -d "$S" -t "$H" --dotfiles git
expect_tree "$H" ""
check "a package whose record predates the log's packages table: no recorded options, as before"

# ---- a forged record is a corrupt log: exit 78, one line, nothing changed ----
expect_exit 0 "$GROVE" stow -d "$S" -t "$H" --dotfiles git
# The state's chunk holding git with a name that is not one ("../x"); then the transaction's row.
sqlite3 "$GROVE_STATE_DIR/grove.db" "UPDATE pkg_state SET n = 1, body = X'01012E2E2F7800'" ||
	fail "cannot edit the log"
snapshot "$H"
expect_exit 78 "$GROVE" unstow -d "$S" -t "$H" git
expect_err_line "journal '.*grove\.db': the packages recorded for target [0-9]+: a package that is not a single name"
expect_unchanged "$H"
sqlite3 "$GROVE_STATE_DIR/grove.db" "DELETE FROM pkg_state;
	UPDATE txn_pkgs SET body = X'0962697400' WHERE txn_id = (SELECT max(txn_id) FROM txn_pkgs)" ||
	fail "cannot edit the log"
expect_exit 78 "$GROVE" undo -t "$H"
expect_err_line "journal '.*grove\.db': transaction [0-9]+, its packages: a package with unknown flags"
expect_unchanged "$H"
sqlite3 "$GROVE_STATE_DIR/grove.db" "UPDATE txn_pkgs SET body = X'0367697400'
	WHERE txn_id = (SELECT max(txn_id) FROM txn_pkgs)" || fail "cannot edit the log"
expect_exit 0 "$GROVE" unstow -d "$S" -t "$H" --dotfiles git
expect_tree "$H" ""
check "a forged package record (the state's or a transaction's): exit 78 naming the journal, nothing changed"

# ---- grove apply: the manifest's options are given options; a change is a restow ----
M=$ROOT/grove.yaml
expect_exit 0 "$GROVE" stow -d "$S" -t "$H" --dotfiles vim
cat >"$M" <<YAML
targets:
  - path: $H
    dir: $S
    packages:
      - name: vim
        dotfiles: false
YAML
expect_exit 0 "$GROVE" apply -f "$M"
expect_err_lacks "conflict"
expect_tree "$H" <<'SPEC'
l dot-vim -> ../dotfiles/vim/dot-vim
l dot-vimrc -> ../dotfiles/vim/dot-vimrc
SPEC
expect_exit 0 "$GROVE" apply -f "$M"
expect_out_has "nothing to change"
expect_exit 0 "$GROVE" restow -d "$S" -t "$H" vim
expect_err_empty
expect_tree "$H" <<'SPEC'
l dot-vim -> ../dotfiles/vim/dot-vim
l dot-vimrc -> ../dotfiles/vim/dot-vimrc
SPEC
sed -i 's/dotfiles: false/dotfiles: true/' "$M"
expect_exit 0 "$GROVE" apply -f "$M"
expect_exit 0 "$GROVE" apply -f "$M"
expect_out_has "nothing to change"
forget_told
expect_exit 0 "$GROVE" unstow -d "$S" -t "$H" vim
expect_err_line "^grove: vim was stowed with --dotfiles"
expect_tree "$H" ""
check "apply converges to the manifest's options over recorded ones (no conflict), and records them"

# ---- invoked as "stow": GNU Stow's behaviour, whatever the log recorded ----
mkdir -p "$ROOT/bin"
ln -s "$GROVE" "$ROOT/bin/stow"
STOW_AS=$ROOT/bin/stow
# stow_steps DIR CMD: the same steps with CMD (grove as stow, or GNU Stow) in DIR's copy.
stow_steps()
{
	local d=$1
	shift
	mkdir -p "$d/home"
	cp -a "$S" "$d/dotfiles"
	cd "$d/dotfiles"
	run "$@" -t ../home --dotfiles vim git
	echo "stow --dotfiles: $RC $(wc -l <"$ERR")" >>"$d/results"
	run "$@" -t ../home -D vim
	echo "stow -D vim: $RC $(cat "$ERR")" >>"$d/results"
	run "$@" -t ../home -R git
	echo "stow -R git: $RC $(cat "$ERR")" >>"$d/results"
	run "$@" -t ../home -R --no-dotfiles git
	echo "stow --no-dotfiles: $((RC != 0))" >>"$d/results"
	run "$@" -n -v -t ../home -D vim
	grep -q 'was stowed' "$ERR" && fail "invoked as stow, -n printed the notice: $(cat "$ERR")"
	cd "$ROOT"
}
stow_steps "$ROOT/as-stow" "$STOW_AS"
expect_tree "$ROOT/as-stow/home" <<'SPEC'
l .gitconfig -> ../dotfiles/git/dot-gitconfig
l .vim -> ../dotfiles/vim/dot-vim
l .vimrc -> ../dotfiles/vim/dot-vimrc
l dot-gitconfig -> ../dotfiles/git/dot-gitconfig
SPEC
grep -q 'was stowed' "$ROOT/as-stow/results" && fail "invoked as stow, grove printed the notice"
cat >"$ROOT/as-stow.want" <<'EOF'
stow --dotfiles: 0 0
stow -D vim: 0 
stow -R git: 0 
stow --no-dotfiles: 1
EOF
diff -u "$ROOT/as-stow.want" "$ROOT/as-stow/results" >&2 || fail "invoked as stow, the exit codes or messages differ"
check "invoked as stow: no recorded options used, no notice, no --no-dotfiles (GNU Stow's behaviour)"

if have_stow; then
	stow_steps "$ROOT/gnu" stow_ref
	expect_same_tree "$ROOT/gnu/home" "$ROOT/as-stow/home"
	diff -u "$ROOT/gnu/results" "$ROOT/as-stow/results" >&2 ||
		fail "invoked as stow, grove's exit codes or messages differ from GNU Stow's"
	check "invoked as stow: the same trees, exit codes and messages as GNU Stow 2.4.1"
else
	echo "# $STOW_ORACLE_HINT: the comparison with GNU Stow is skipped"
fi

echo "# $TEST_NAME: $_lib_checks checks passed"
