#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove import (issue 17): a farm GNU Stow 2.4.1 made (--dotfiles, a folded folder, a folder two
# packages share, unfolded) becomes grove's without a change on disk; status lists the stow dir's
# packages as the disk shows them; verify checks the links; unstow removes them as Stow does; undo
# forgets them and leaves them in place; a second import records nothing; -n changes and writes
# nothing.
set -euo pipefail
# shellcheck source=tests/shell/lib.sh
. "$(dirname "$0")/lib.sh"

need_stow

VALIDATE=$GROVE_SOURCE_ROOT/tests/json/validate.py
SCHEMA=$GROVE_SOURCE_ROOT/docs/grove.schema.json

# valid COMMAND: stdout validates and is a COMMAND document.
valid()
{
	"$GROVE_TEST_PY" "$VALIDATE" "$SCHEMA" "$OUT" "$1" || fail "$1 --json does not validate: $(cat "$OUT")"
}

# The farm, in $ROOT/g (grove's copy) and $ROOT/s (Stow's twin), made by GNU Stow:
#   vim: dot-vimrc, dot-vim/colors/x.vim (.vim folded)   git: dot-gitconfig
#   bin: bin/b1   tools: bin/t1 (bin/ shared: unfolded)   extra: dot-extrarc (not stowed)
#   README.md in vim (Stow's default ignore list: never stowed)
mkdir -p "$ROOT/g/home"
(
	cd "$ROOT/g/home"
	mk_file dotfiles/vim/dot-vimrc vimrc
	mk_file dotfiles/vim/dot-vim/colors/x.vim x
	mk_file dotfiles/vim/README.md readme
	mk_file dotfiles/git/dot-gitconfig gitconfig
	mk_file dotfiles/bin/bin/b1 b1
	mk_file dotfiles/tools/bin/t1 t1
	mk_file dotfiles/extra/dot-extrarc extrarc
	stow_ref -d dotfiles -t . --dotfiles vim git bin tools
)
# Added after stowing: tools is only partly stowed now.
mk_file "$ROOT/g/home/dotfiles/tools/bin/t2" t2
cp -a "$ROOT/g" "$ROOT/s"
cd "$ROOT/g/home"
expect_tree . <<-'EOF'
	l .gitconfig -> dotfiles/git/dot-gitconfig
	l .vim -> dotfiles/vim/dot-vim
	l .vimrc -> dotfiles/vim/dot-vimrc
	d bin
	l bin/b1 -> ../dotfiles/bin/bin/b1
	l bin/t1 -> ../dotfiles/tools/bin/t1
	d dotfiles
	d dotfiles/bin
	d dotfiles/bin/bin
	f dotfiles/bin/bin/b1 b1
	d dotfiles/extra
	f dotfiles/extra/dot-extrarc extrarc
	d dotfiles/git
	f dotfiles/git/dot-gitconfig gitconfig
	d dotfiles/tools
	d dotfiles/tools/bin
	f dotfiles/tools/bin/t1 t1
	f dotfiles/tools/bin/t2 t2
	d dotfiles/vim
	f dotfiles/vim/README.md readme
	d dotfiles/vim/dot-vim
	d dotfiles/vim/dot-vim/colors
	f dotfiles/vim/dot-vim/colors/x.vim x
	f dotfiles/vim/dot-vimrc vimrc
EOF
check "GNU Stow made the farm: dotfiles, a folded .vim, bin/ shared and unfolded"

# ---------------------------------------------------------------- -n: nothing changed or written

snapshot .
expect_exit 0 "$GROVE" import -n -d dotfiles -t . --dotfiles
expect_out_has "link   .vim -> dotfiles/vim/dot-vim (recorded: on disk already)"
expect_out_has "would record 5 links (git, vim, bin, tools)"
expect_unchanged .
[[ ! -e $GROVE_STATE_DIR ]] || fail "import -n made the state dir: $(ls -la "$GROVE_STATE_DIR")"
expect_exit 0 "$GROVE" --json import -n -d dotfiles --dotfiles
valid import
grep -q '"dry_run": true' "$OUT" && grep -q '"transaction": 0' "$OUT" && grep -q '"recorded": true' "$OUT" ||
	fail "import -n --json: $(cat "$OUT")"
[[ ! -e $GROVE_STATE_DIR ]] || fail "import -n --json made the state dir"
check "import -n prints what it would record, changes nothing and writes no log"

# ---------------------------------------------------------------- before: invisible to the log

expect_exit 0 "$GROVE" status -t . -d dotfiles
expect_out_has "(nothing stowed by grove)"
grep -Eq '^  vim +stowed +2/2 files$' "$OUT" || fail "status: vim is not stowed from the disk: $(cat "$OUT")"
grep -Eq '^  tools +partly stowed +1/2 files$' "$OUT" || fail "status: tools: $(cat "$OUT")"
grep -Eq '^  extra +not stowed +0/1 file$' "$OUT" || fail "status: extra: $(cat "$OUT")"
grep -q "in grove's log" "$OUT" && fail "status marks a package as in the log before any import: $(cat "$OUT")"
expect_exit 0 "$GROVE" status -t .
grep -q "packages in" "$OUT" && fail "status without a stow dir lists packages: $(cat "$OUT")"
check "status -d lists every package from the disk (stowed, partly, not), none in the log yet"

# ---------------------------------------------------------------- import

expect_exit 0 "$GROVE" import -d dotfiles -t . --dotfiles
expect_out_has "recorded 5 links (git, vim, bin, tools) as transaction 1"
expect_err_empty
expect_unchanged .
expect_exit 0 "$GROVE" log -t . -v
expect_out_has "grove import -d dotfiles -t . --dotfiles"
expect_out_has "link   bin/t1 -> ../dotfiles/tools/bin/t1 (recorded: on disk already)"
check "import records the 5 Stow links as one transaction; the disk is untouched"

expect_exit 0 "$GROVE" status -t . -d dotfiles
grep -Eq '^ +vim +2 links$' "$OUT" || fail "status does not list vim's 2 links: $(cat "$OUT")"
grep -Eq '^ +tools +1 link$' "$OUT" || fail "status does not list tools: $(cat "$OUT")"
grep -Eq "^  vim +stowed +2/2 files  in grove's log$" "$OUT" || fail "status: vim not in the log: $(cat "$OUT")"
grep -Eq '^  extra +not stowed +0/1 file$' "$OUT" || fail "status: extra: $(cat "$OUT")"
expect_exit 0 "$GROVE" --json status -t . -d dotfiles
valid status
grep -q '"package": "vim", "state": "stowed", "files": 2, "reached": 2, "logged": true' "$OUT" ||
	fail "status --json: $(cat "$OUT")"
expect_exit 0 "$GROVE" verify -t .
expect_out_has "verified 5 entries: 0 missing, 0 changed, 0 broken, 0 foreign"
check "after import, status lists the packages (in the log), verify checks the 5 links"

expect_exit 0 "$GROVE" import -d dotfiles -t . --dotfiles
expect_out_has "nothing to import: the 5 links found are grove's already"
expect_exit 0 "$GROVE" --json log -t .
[[ $(grep -o '"id"' "$OUT" | wc -l) == 1 ]] || fail "a second import logged a transaction: $(cat "$OUT")"
check "a second import records nothing and says so (exit 0)"

# ---------------------------------------------------------------- undo forgets, the disk stays

expect_exit 0 "$GROVE" undo -t .
expect_out_has "reverted transaction 1 as transaction 2: 5 ops (5 links forgotten, left on disk)"
expect_unchanged .
expect_exit 0 "$GROVE" status -t .
expect_out_has "(nothing stowed by grove)"
expect_exit 0 "$GROVE" verify -t .
expect_out_has "verified 0 entries"
check "undo of the import leaves every Stow link in place and the log forgets them"

# ---------------------------------------------------------------- links import leaves out

mk_link .oldrc dotfiles/vim/dot-oldrc
expect_exit 0 "$GROVE" import -d dotfiles --dotfiles vim bin
expect_out_has "recorded 3 links (vim, bin) as transaction 3"
expect_err_has "WARNING: not imported: '.gitconfig' links into package 'git', which is not being imported"
expect_err_has "WARNING: not imported: 'bin/t1' links into package 'tools', which is not being imported"
expect_err_has "WARNING: not imported: '.oldrc' links to 'dotfiles/vim/dot-oldrc', which does not exist"
rm .oldrc
expect_exit 1 "$GROVE" import -d dotfiles vmi
expect_err_has "does not contain package 'vmi'"
check "links into packages not named, or to nothing, are reported and not imported"

expect_exit 0 "$GROVE" import -d dotfiles --dotfiles
expect_out_has "recorded 2 links (git, tools) as transaction 4; 3 more were grove's already"
check "an import of every package records only what the log does not know"

# ---------------------------------------------------------------- unstow as Stow does

# (The import recorded vim as stowed with --dotfiles: unstow without it uses it, and says so.)
expect_exit 0 "$GROVE" unstow -d dotfiles vim
expect_err_has "grove: vim was stowed with --dotfiles; using it again"
(cd "$ROOT/s/home" && stow_ref -d dotfiles -t . --dotfiles -D vim)
expect_same_tree "$ROOT/g" "$ROOT/s"
expect_exit 0 "$GROVE" status -t .
grep -Eq '^ +vim ' "$OUT" && fail "status still lists vim after unstow: $(cat "$OUT")"
expect_exit 0 "$GROVE" verify -t .
expect_out_has "verified 3 entries: 0 missing"
check "grove unstow vim (its --dotfiles recorded by the import) removes vim's Stow links: the same tree as stow -D vim on a twin"

expect_exit 0 "$GROVE" restow -d dotfiles git
expect_exit 0 "$GROVE" --json log -t .
[[ $(grep -o '"id"' "$OUT" | wc -l) == 5 ]] || fail "a no-op restow of an imported package logged something: $(cat "$OUT")"
check "restow of an imported package changes nothing and logs nothing"

expect_exit 0 "$GROVE" rollback --to 0 -t .
expect_exit 0 "$GROVE" status -t .
expect_out_has "(nothing stowed by grove)"
(cd "$ROOT/s/home" && stow_ref -d dotfiles -t . --dotfiles vim)
expect_same_tree "$ROOT/g" "$ROOT/s"
check "rollback --to 0 across imports and the unstow: vim's links back on disk, the log owns nothing"

