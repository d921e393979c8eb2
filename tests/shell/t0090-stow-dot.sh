#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `stow .` (issue 40 item 1; docs/stow.md): the whole dotfiles repository as one package, the
# layout most dotfiles tutorials use (`cd ~/dotfiles && stow .` with --target=~ in .stowrc).
# Package '.' is the stow dir itself. Every tree and exit status grove-as-stow leaves is compared
# with the ones GNU Stow 2.4.1 leaves on a twin copy (stow, unstow, restow, --dotfiles, -n,
# .stow-local-ignore, -d from another folder); then, invoked as grove: status, verify, log,
# undo, import of Stow's farm, and a manifest listing the package '.'.
source "$(dirname "$0")/lib.sh"
need_stow

A=$ROOT/a/home # Stow's copy
B=$ROOT/b/home # grove's copy
mkdir -p "$ROOT/bin"
ln -s "$(realpath "$GROVE")" "$ROOT/bin/stow"
GSTOW=$ROOT/bin/stow

# A dotfiles repository as people keep it: dotfiles at the top, a .git folder, a README, a
# LICENSE, a .gitignore, a folder of scripts, and the .stowrc that names the target.
mkrepo() # HOME
{
	local d=$1/dotfiles
	mk_file "$d/.zshrc" "zsh"
	mk_file "$d/.config/nvim/init.lua" "nvim"
	mk_file "$d/.config/kitty/kitty.conf" "kitty"
	mk_file "$d/.git/HEAD" "ref: refs/heads/main"
	mk_file "$d/.git/objects/ab/cdef" "blob"
	mk_file "$d/README.md" "readme"
	mk_file "$d/LICENSE" "gpl"
	mk_file "$d/.gitignore" "*.swp"
	mk_file "$d/bin/hello" "echo hello"
	mk_file "$d/.stowrc" "--target=~"
}

# both "what" CMD…: runs CMD in Stow's copy (HOME=$A, stow_ref) and in grove's (HOME=$B, grove
# invoked as stow), from the same folder of each copy ($WHERE, relative to the home); the exit
# statuses and the whole trees must agree.
WHERE=dotfiles
both()
{
	local what=$1 src grc
	shift
	(cd "$A/$WHERE" && HOME=$A stow_ref "$@") >"$ROOT/a.out" 2>"$ROOT/a.err" && src=0 || src=$?
	(cd "$B/$WHERE" && HOME=$B "$GSTOW" "$@") >"$ROOT/b.out" 2>"$ROOT/b.err" && grc=0 || grc=$?
	if [[ $src != "$grc" ]]; then
		echo "stow said:" >&2
		cat "$ROOT/a.err" >&2
		echo "grove said:" >&2
		cat "$ROOT/b.err" >&2
		fail "$what: exit status: GNU Stow $src, grove $grc"
	fi
	expect_same_tree "$A" "$B"
}

fresh()
{
	rm -rf "$ROOT/a" "$ROOT/b" "$GROVE_STATE_DIR"
	mkrepo "$A"
	mkrepo "$B"
}

# ---- stow . from inside the repository, the target from .stowrc ----
fresh
both "stow ." .
expect_tree "$B" <<'SPEC'
	l .config -> dotfiles/.config
	l .stowrc -> dotfiles/.stowrc
	l .zshrc -> dotfiles/.zshrc
	l bin -> dotfiles/bin
	d dotfiles
	d dotfiles/.config
	d dotfiles/.config/kitty
	f dotfiles/.config/kitty/kitty.conf kitty
	d dotfiles/.config/nvim
	f dotfiles/.config/nvim/init.lua nvim
	d dotfiles/.git
	f dotfiles/.git/HEAD ref: refs/heads/main
	d dotfiles/.git/objects
	d dotfiles/.git/objects/ab
	f dotfiles/.git/objects/ab/cdef blob
	f dotfiles/.gitignore *.swp
	f dotfiles/LICENSE gpl
	f dotfiles/README.md readme
	d dotfiles/bin
	f dotfiles/bin/hello echo hello
	f dotfiles/.stowrc --target=~
	f dotfiles/.zshrc zsh
SPEC
check "stow . links the repository's entries into the target, as GNU Stow 2.4.1 (.git, README, LICENSE, .gitignore skipped)"

both "stow . again" .
both "stow -R ." -R .
both "stow -n -D ." -n -D .
both "stow -D ." -D .
[[ -z $(find "$B" -maxdepth 1 -type l) ]] || fail "stow -D . left links"
check "stow . twice, -R ., -n -D . and -D . as GNU Stow: the last leaves no link"

# ---- an existing folder in the target: . unfolds into it, as Stow ----
fresh
mk_file "$A/.config/other/x" "x"
mk_file "$B/.config/other/x" "x"
mk_file "$A/bin/mine" "m"
mk_file "$B/bin/mine" "m"
both "stow . over real folders" .
[[ -L $B/.config/nvim && -f $B/.config/other/x && -L $B/bin/hello ]] ||
	fail "stow . did not link inside the existing folders"
both "stow -D . over real folders" -D .
mk_file "$A/.zshrc" "mine"
mk_file "$B/.zshrc" "mine"
both "stow . over a file in the way (a conflict)" .
grep -q 'cannot stow dotfiles/.zshrc over existing target .zshrc' "$ROOT/b.err" ||
	fail "the conflict over .zshrc is not Stow's: $(cat "$ROOT/b.err")"
check "stow . and -D . into existing folders of the target, and over a file in the way, as GNU Stow"

# ---- from another folder: -d names the stow dir, . is that folder ----
fresh
WHERE=.
both "stow -d dotfiles -t . ." -d dotfiles -t . .
[[ -L $B/.zshrc ]] || fail "stow -d dotfiles -t . . made no link"
both "stow -d dotfiles -t . -D ." -d dotfiles -t . -D .
both "stow --dir=dotfiles --target=. -R ." --dir=dotfiles --target=. -R .
WHERE=dotfiles
check "-d DIR -t TARGET . from another folder: the stow dir is the package, as GNU Stow"

# ---- --dotfiles . ----
fresh
for h in "$A" "$B"; do
	mv "$h/dotfiles/.zshrc" "$h/dotfiles/dot-zshrc"
	mv "$h/dotfiles/.config" "$h/dotfiles/dot-config"
done
both "stow --dotfiles ." --dotfiles .
[[ -L $B/.zshrc && -L $B/.config ]] || fail "stow --dotfiles . did not link .zshrc and .config"
both "stow --dotfiles -R ." --dotfiles -R .
both "stow --dotfiles -D ." --dotfiles -D .
both "stow --dotfiles --no-folding ." --dotfiles --no-folding .
[[ -d $B/.config && ! -L $B/.config && -L $B/.config/nvim/init.lua ]] ||
	fail "stow --dotfiles --no-folding . did not make .config a folder of links"
both "stow --dotfiles --no-folding -D ." --dotfiles --no-folding -D .
check "--dotfiles . (stow, restow, unstow, --no-folding) as GNU Stow"

# ---- '.' and one of its folders as packages in one command ----
fresh
both "stow . bin" . bin
[[ -L $B/hello && -L $B/bin ]] || fail "stow . bin did not link both hello and bin"
both "stow -R bin ." -R bin .
both "stow -D . bin" -D . bin
check "'.' with one of its folders as another package in one command (stow, restow, unstow), as GNU Stow"

# ---- .stow-local-ignore at the top of the repository replaces the default list ----
fresh
for h in "$A" "$B"; do
	printf '%s\n' '^/README.*' 'install\.sh' '\.git$' >"$h/dotfiles/.stow-local-ignore"
	mk_file "$h/dotfiles/install.sh" "#!/bin/sh"
done
both "stow . with .stow-local-ignore" .
[[ ! -e $B/install.sh && ! -e $B/.stow-local-ignore && ! -e $B/.git && -L $B/LICENSE ]] ||
	fail "the repository's .stow-local-ignore was not used instead of the default list"
both "stow -D . with .stow-local-ignore" -D .
check ".stow-local-ignore of the repository replaces Stow's default list, as GNU Stow"

# ---- as grove: status, verify, log, undo, import, the manifest ----
fresh
WHERE=dotfiles
cd "$B/dotfiles"
expect_exit 0 env HOME="$B" "$GROVE" stow .
[[ -L $B/.zshrc && -L $B/.config ]] || fail "grove stow . made no link"
expect_exit 0 "$GROVE" status -t "$B"
grep -Eq '^  \.  +4 links$' "$OUT" || fail "status does not list the package '.' with its 4 links: $(cat "$OUT")"
expect_exit 0 "$GROVE" verify -t "$B"
expect_exit 0 "$GROVE" log -t "$B" -v
expect_out_has "grove stow ."
rm "$B/.zshrc"
expect_exit 4 "$GROVE" verify -t "$B"
expect_out_has ".zshrc"
ln -s dotfiles/.zshrc "$B/.zshrc"
check "grove stow . (target from .stowrc): status lists its links, verify checks them, log shows the command"

expect_exit 0 "$GROVE" unstow -t "$B" .
[[ -z $(find "$B" -maxdepth 1 -type l) ]] || fail "grove unstow . left links"
expect_exit 0 "$GROVE" undo -t "$B"
[[ -L $B/.zshrc && -L $B/bin ]] || fail "undo of the unstow did not bring the links back"
cd /
expect_exit 0 "$GROVE" unstow -d "$B/dotfiles" -t "$B" .
[[ -z $(find "$B" -maxdepth 1 -type l) ]] || fail "grove unstow -d DIR . from / left links"
check "grove unstow . and undo of it; grove unstow -d DIR . from another folder"

# The log stores the package as '.': grove's recorded options come back for it.
expect_exit 0 "$GROVE" stow -d "$B/dotfiles" -t "$B" --no-folding .
[[ -d $B/.config && ! -L $B/.config ]] || fail "--no-folding . made a folded .config"
expect_exit 0 "$GROVE" restow -d "$B/dotfiles" -t "$B" .
expect_err_has ". was stowed with --no-folding; using it again"
[[ -d $B/.config && ! -L $B/.config ]] || fail "restow . without --no-folding folded .config"
expect_exit 0 "$GROVE" unstow -d "$B/dotfiles" -t "$B" .
check "the log records '.' with its options: restow . uses the recorded --no-folding"

# grove import of the farm GNU Stow made with `stow .`.
fresh
(cd "$A/dotfiles" && HOME=$A stow_ref .)
expect_exit 0 "$GROVE" import -d "$A/dotfiles" -t "$A" .
expect_out_has "recorded 4 links (.)"
expect_exit 0 "$GROVE" status -t "$A"
grep -Eq '^  \.  +4 links$' "$OUT" || fail "status does not list the package '.' with its 4 links: $(cat "$OUT")"
expect_exit 0 "$GROVE" status -t "$A" -d "$A/dotfiles"
grep -Eq '^  \.  +stowed +5/5 files  in grove.s log$' "$OUT" ||
	fail "status -d does not list the package '.' as stowed: $(cat "$OUT")"
expect_exit 0 "$GROVE" verify -t "$A"
expect_exit 0 "$GROVE" unstow -d "$A/dotfiles" -t "$A" .
[[ -z $(find "$A" -maxdepth 1 -type l) ]] || fail "grove unstow . after import left links"
check "grove import . of Stow's 'stow .' farm records its 4 links; unstow . then removes them"

# A manifest listing the package '.'.
fresh
cat >"$ROOT/grove.yaml" <<EOF
version: 1
targets:
  - path: $B
    dir: $B/dotfiles
    packages: ['.']
EOF
expect_exit 0 "$GROVE" apply -f "$ROOT/grove.yaml"
[[ -L $B/.zshrc && -L $B/.config ]] || fail "apply of packages: ['.'] made no link"
expect_exit 0 "$GROVE" apply -f "$ROOT/grove.yaml" --check
(cd "$A/dotfiles" && HOME=$A stow_ref .)
expect_same_tree "$A" "$B"
cat >"$ROOT/grove.yaml" <<EOF
version: 1
targets:
  - path: $B
    dir: $B/dotfiles
    packages: []
EOF
expect_exit 0 "$GROVE" apply -f "$ROOT/grove.yaml"
[[ -z $(find "$B" -maxdepth 1 -type l) ]] || fail "apply without '.' left its links"
check "a manifest with packages: ['.'] applies as stow . does, converges, and drops it again"
