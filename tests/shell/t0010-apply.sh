#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove apply: round trips against what grove stow/unstow make, one transaction per target that
# undo reverts, idempotence, --check/--json, host and tag selection, config.yaml, and bad
# manifests (exit 78, nothing changed).
source "$(dirname "$0")/lib.sh"

S=$ROOT/dotfiles
H=$ROOT/home
REF=$ROOT/ref
A=$ROOT/sys
M=$ROOT/grove.yaml
mk_file "$S/vim/.vimrc" "set nocp"
mk_file "$S/vim/.vim/colors/dark.vim" "dark"
mk_file "$S/zsh/.zshrc" "zsh"
mk_file "$S/zsh/.config/zsh/env" "env"
mk_file "$S/git/.gitconfig" "git"
mk_file "$S/git/.config/git/ignore" "*.o"
mk_file "$S/tmux/.tmux.conf" "tmux"
mk_file "$S/work/.workrc" "work"
mk_file "$A/usr/bin/vim.basic" "vim"
mk_file "$A/usr/bin/nano" "nano"
mk_file "$A/usr/share/man/man1/vim.1.gz" "vim man"
mkdir -p "$H" "$REF" "$A/etc/alternatives" "$A/admin"

# jcheck EXPR: stdout is an apply document that validates against docs/grove.schema.json, and the
# Python expression EXPR over it (d) is true.
jcheck()
{
	"$GROVE_TEST_PY" "$GROVE_SOURCE_ROOT/tests/json/validate.py" \
		"$GROVE_SOURCE_ROOT/docs/grove.schema.json" "$OUT" apply ||
		fail "apply --json does not validate: $(cat "$OUT")"
	"$GROVE_TEST_PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' \
		"$OUT" "$1" || fail "expected $1 in: $(cat "$OUT")"
}

ntxn() # committed transactions of target $1
{
	"$GROVE" log -t "$1" | grep -c committed || true
}

alt_block()
{
	cat <<YAML
alternatives:
  root: $A
  altdir: /etc/alternatives
  admindir: /admin
  groups:
    - name: editor
      link: /usr/bin/editor
      followers:
        - name: editor.1.gz
          link: /usr/share/man/man1/editor.1.gz
      choices:
        - path: /usr/bin/vim.basic
          priority: 50
          followers:
            editor.1.gz: /usr/share/man/man1/vim.1.gz
        - path: /usr/bin/nano
          priority: 40
YAML
}

# ---- first apply: stow three packages, install the group (auto: vim, the higher priority) ----
{
	cat <<YAML
defaults:
  dir: dotfiles
targets:
  - path: home
    packages: [vim, zsh, tmux]
YAML
	alt_block
} >"$M"
cd "$ROOT"
expect_exit 1 "$GROVE" apply --check
expect_out_has "target $H: +vim +zsh +tmux"
[[ $(ntxn "$H") == 0 ]] || fail "--check made a transaction"
expect_exit 0 "$GROVE" apply
expect_exit 0 "$GROVE" stow -d "$S" -t "$REF" vim zsh tmux
expect_same_tree "$H" "$REF"
[[ $(ntxn "$H") == 1 ]] || fail "the first apply did not make exactly one transaction"
[[ $(readlink "$A/etc/alternatives/editor") == /usr/bin/vim.basic ]] ||
	fail "editor is not vim in auto mode"
[[ $(readlink "$A/usr/bin/editor") == /etc/alternatives/editor ]] || fail "no editor link"
check "apply stows the packages as grove stow does, in one transaction, and installs the group"

# ---- idempotence ----
expect_exit 0 "$GROVE" apply
expect_out_has "nothing to change"
expect_exit 0 "$GROVE" apply --check
expect_exit 0 "$GROVE" --json apply --check
jcheck 'd["changed"] is False and d["applied"] is False and d["manifest"] == "'"$M"'"'
[[ $(ntxn "$H") == 1 ]] || fail "a second apply made a transaction"
check "a second apply changes nothing and says so; --check exits 0"

# ---- change the manifest: drop tmux, add git, vim without folding, editor set to nano ----
listing "$H" >"$ROOT/before-second"
{
	cat <<YAML
defaults:
  dir: dotfiles
targets:
  - path: home
    packages:
      - name: vim
        folding: false
      - zsh
      - git
YAML
	alt_block
	cat <<YAML
      mode: manual
      choice: /usr/bin/nano
YAML
} >"$M"
expect_exit 1 "$GROVE" --json apply --check
jcheck 'd["changed"] is True'
grep -q '"stow": \["git"\], "unstow": \["tmux"\]' "$OUT" || fail "--json lacks the stow/unstow lists"
grep -q '"op": "unlink", "path": ".tmux.conf"' "$OUT" || fail "--json lacks the unlink op"
grep -q '"op": "set", "group": "editor"' "$OUT" || fail "--json lacks the alternatives op"
"$GROVE_TEST_PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["changed"] is True and d["applied"] is False, d
t = d["targets"][0]
ops = {(o["op"], o["path"]) for o in t["ops"]}
assert ("link", ".gitconfig") in ops and ("unlink", ".tmux.conf") in ops, ops
assert d["alternatives"][0]["path"].endswith("/usr/bin/nano"), d["alternatives"]
' "$OUT" || fail "--json is not the expected JSON document"
expect_exit 0 "$GROVE" apply --diff
expect_out_has "- $H/.tmux.conf -> ../dotfiles/tmux/.tmux.conf"
expect_out_has "+ $H/.gitconfig -> ../dotfiles/git/.gitconfig"
expect_exit 0 "$GROVE" unstow -d "$S" -t "$REF" tmux
expect_exit 0 "$GROVE" stow -d "$S" -t "$REF" git
# (vim was stowed with folding: the restow unstows it as it is and stows it with the new option,
# in one transaction, as apply does.)
expect_exit 0 "$GROVE" restow --no-folding -d "$S" -t "$REF" vim
expect_same_tree "$H" "$REF"
[[ -d $H/.vim && ! -L $H/.vim ]] || fail "vim was not restowed without folding"
[[ $(ntxn "$H") == 2 ]] || fail "the second apply did not make exactly one transaction"
[[ $(readlink "$A/etc/alternatives/editor") == /usr/bin/nano ]] || fail "editor is not nano"
check "apply after dropping, adding and re-optioning packages equals unstow/stow/restow; the group switches"

expect_exit 0 "$GROVE" apply --check
expect_exit 0 "$GROVE" apply
expect_out_has "nothing to change"
check "the changed manifest applied twice changes nothing the second time"

# ---- undo reverts the apply's one transaction ----
expect_exit 0 "$GROVE" undo -t "$H"
diff -u "$ROOT/before-second" <(listing "$H") || fail "undo did not restore the target"
expect_exit 1 "$GROVE" apply --check
expect_exit 0 "$GROVE" apply
expect_same_tree "$H" "$REF"
check "grove undo reverts an apply; applying again converges"

# ---- back to auto mode ----
{
	sed -n '1,/^alternatives:/p' "$M" | sed '$d'
	alt_block
} >"$M.new"
mv "$M.new" "$M"
expect_exit 0 "$GROVE" apply
expect_out_has "alternatives editor: auto"
[[ $(readlink "$A/etc/alternatives/editor") == /usr/bin/vim.basic ]] || fail "auto did not pick vim"
expect_exit 0 "$GROVE" apply
expect_out_has "nothing to change"
check "mode auto returns the group to the best choice"

# ---- tags and hosts ----
cat >"$M" <<YAML
defaults:
  dir: dotfiles
targets:
  - path: home
    packages:
      - {name: vim, folding: false}
      - zsh
      - git
      - {name: work, tags: [work]}
      - {name: tmux, hosts: [box]}
YAML
expect_exit 0 "$GROVE" apply
expect_out_has "nothing to change"
expect_exit 1 "$GROVE" apply --check --tag work
expect_out_has "+work"
GROVE_TAGS=work expect_exit 1 "$GROVE" apply --check
expect_out_has "+work"
GROVE_HOST=box expect_exit 1 "$GROVE" apply --check
expect_out_has "+tmux"
mkdir -p "$XDG_CONFIG_HOME/grove"
printf 'host: box\ntags: [work]\nmanifest: %s\n' "$M" >"$XDG_CONFIG_HOME/grove/config.yaml"
cd /
expect_exit 0 "$GROVE" apply
expect_out_has "+work +tmux"
expect_exit 0 "$GROVE" unstow -d "$S" -t "$H" tmux work
GROVE_HOST=other expect_exit 0 "$GROVE" apply
expect_out_has "+work"
[[ ! -e $H/.tmux.conf ]] || fail "GROVE_HOST did not override the config's host"
expect_exit 0 "$GROVE" apply --host box
expect_out_has "+tmux"
rm "$XDG_CONFIG_HOME/grove/config.yaml"
cd "$ROOT"
check "hosts and tags select packages: --tag, GROVE_TAGS, GROVE_HOST, --host and config.yaml"

# ---- a conflict: exit 1, nothing changed ----
mk_file "$S/bash/.bashrc" "bash"
mk_file "$H/.bashrc" "mine"
cat >"$M" <<YAML
defaults: {dir: dotfiles}
targets:
  - path: home
    packages: [bash]
YAML
snapshot "$H"
n=$(ntxn "$H")
expect_exit 1 "$GROVE" apply
expect_err_has "cannot stow ../dotfiles/bash/.bashrc over existing target .bashrc since neither a link nor a directory"
expect_unchanged "$H"
[[ $(ntxn "$H") == "$n" ]] || fail "a refused apply made a transaction"
check "a conflict refuses the whole apply, nothing changed"

# ---- two targets: a conflict in the second changes neither; then each gets its own transaction ----
E=$ROOT/etc
mkdir -p "$E"
mk_file "$S/etcpkg/motd" "motd"
mk_file "$E/motd" "mine"
cat >"$M" <<YAML
defaults: {dir: dotfiles}
targets:
  - path: home
    packages: [vim, zsh]
  - path: etc
    packages: [etcpkg]
YAML
snapshot "$H"
snapshot "$E"
n=$(ntxn "$H")
expect_exit 1 "$GROVE" apply
expect_err_has "cannot stow ../dotfiles/etcpkg/motd over existing target motd"
expect_unchanged "$H"
expect_unchanged "$E"
[[ $(ntxn "$H") == "$n" && $(ntxn "$E") == 0 ]] || fail "a refused apply made a transaction"
check "a conflict in one target refuses the apply of every target"

# adopt: true moves the user's file into the package (the adopt policy), in the same run
sed -i 's/packages: \[etcpkg\]/packages: [{name: etcpkg, adopt: true}]/' "$M"
expect_exit 0 "$GROVE" apply
[[ $(readlink "$E/motd") == ../dotfiles/etcpkg/motd && $(cat "$S/etcpkg/motd") == mine ]] ||
	fail "adopt: true did not adopt etc/motd"
[[ $(ntxn "$H") == $((n + 1)) && $(ntxn "$E") == 1 ]] || fail "not one transaction per target"
expect_exit 0 "$GROVE" apply
expect_out_has "nothing to change"
check "adopt: true adopts; two targets make one transaction each; a second apply changes nothing"

# dotfiles turned on for a package grove stowed without: relinked, nothing left behind
mk_file "$S/dt/dot-dtrc" "dt"
printf 'defaults: {dir: dotfiles}\ntargets:\n  - path: home\n    packages: [dt]\n' >"$M"
expect_exit 0 "$GROVE" apply
[[ -L $H/dot-dtrc ]] || fail "dt not stowed without dotfiles"
printf 'defaults: {dir: dotfiles}\ntargets:\n  - path: home\n    dotfiles: true\n    packages: [dt]\n' >"$M"
expect_exit 0 "$GROVE" apply
[[ -L $H/.dtrc && ! -e $H/dot-dtrc && ! -L $H/dot-dtrc ]] || fail "dotfiles: true did not relink dt"
expect_exit 0 "$GROVE" apply
expect_out_has "nothing to change"
check "turning dotfiles on restows the package under its new names"

# a package whose folder was deleted from the stow dir: its dangling links go, nothing else
mk_file "$S/gone/.gonerc" "gone"
mk_file "$S/gone/.config/gone/conf" "conf"
printf 'defaults: {dir: dotfiles}\ntargets:\n  - path: home\n    dotfiles: true\n    packages: [dt, gone]\n' >"$M"
expect_exit 0 "$GROVE" apply
[[ -L $H/.gonerc && -L $H/.config ]] || fail "gone was not stowed"
rm -rf "$S/gone"
mk_link "$H/.mine" "../elsewhere/.minerc" # dangling too, but not into the stow dir: stays
printf 'defaults: {dir: dotfiles}\ntargets:\n  - path: home\n    dotfiles: true\n    packages: [dt]\n' >"$M"
expect_exit 0 "$GROVE" apply
expect_out_has "-gone"
[[ ! -L $H/.gonerc && ! -L $H/.config && -L $H/.mine && -L $H/.dtrc ]] ||
	fail "the deleted package's links were not removed (or too much was)"
expect_exit 0 "$GROVE" apply
expect_out_has "nothing to change"
rm "$H/.mine"
check "a package deleted from the stow dir and dropped from the manifest: its links go"

# ---- profiles: a generation built when the manifest's packages differ from the current one ----
cat >"$M" <<YAML
defaults: {dir: dotfiles}
targets:
  - path: home
    dotfiles: true
    packages: [dt]
profiles:
  - name: tools
    packages: [vim, git]
YAML
expect_exit 1 "$GROVE" apply --check
expect_out_has "profile tools: would build a new generation"
expect_exit 0 "$GROVE" apply
expect_out_has "profile tools: generation 1 is current"
P=$GROVE_STATE_DIR/profiles/tools
[[ -f $P/.vimrc && -f $P/.gitconfig ]] || fail "the generation does not hold vim and git"
expect_exit 0 "$GROVE" apply
expect_out_has "nothing to change"
expect_exit 0 "$GROVE" --json apply --check
jcheck 'd["profiles"] == {"declared": 1, "changed": False, "list": [{"name": "tools", "changed": False, "number": 1, "packages": ["git", "vim"]}]}'
sed -i 's/packages: \[vim, git\]/packages: [vim]/' "$M"
expect_exit 1 "$GROVE" apply --check
expect_exit 0 "$GROVE" apply
expect_out_has "profile tools: generation 2 is current"
[[ -f $P/.vimrc && ! -e $P/.gitconfig ]] || fail "generation 2 is not vim alone"
expect_exit 0 "$GROVE" profile -p tools list
[[ $(grep -c . "$OUT") == 2 ]] && grep -q '^ *2 .* vim *(current)' "$OUT" ||
	fail "grove profile list does not show generation 2 current"
expect_exit 0 "$GROVE" apply
expect_out_has "nothing to change"
check "profiles: apply builds a generation when the packages change, and only then"

# ---- bad manifests: exit 78, one line naming FILE:LINE:COLUMN, nothing changed ----
bad()
{
	local what=$1 re=$2
	snapshot "$H"
	n=$(ntxn "$H")
	expect_exit 78 timeout 120 "$GROVE" apply -f "$M"   # a guard against a hang, not a speed test
	expect_err_line "$re"
	expect_unchanged "$H"
	[[ $(ntxn "$H") == "$n" ]] || fail "$what: a transaction was made"
	check "bad manifest ($what): exit 78, nothing changed"
}
printf 'targets:\n  - path: home\n   packages: [a\n' >"$M"
bad "syntax error" "grove.yaml:3:4: syntax error"
printf 'targets:\n  - path: home\n    dir: dotfiles\n    packgaes: [vim]\n' >"$M"
bad "unknown key" "grove.yaml:4:5: unknown key 'packgaes' in a target"
printf 'targets:\n  - path: home\n    dir: dotfiles\n    folding: sometimes\n' >"$M"
bad "wrong type" "grove.yaml:4:14: 'folding' must be true or false, not 'sometimes'"
printf 'targets:\n  - path: home\n    dir: dotfiles\n    packages: [vim, nope]\n' >"$M"
bad "missing package" "grove.yaml:4:21: target 'home': the stow directory .* does not contain package 'nope'"
mkdir -p "$H/sub"
printf 'defaults: {dir: dotfiles}\ntargets:\n  - path: home\n    packages: [vim]\n  - path: home/sub\n    packages: [vim]\n' >"$M"
bad "package in two overlapping targets" "grove.yaml:5:5: package 'vim' is in two targets that overlap"
printf 'targets:\n  - path: home\n    dir: dotfiles\n  - path: %s\n    dir: dotfiles\n' "$H" >"$M"
bad "one target twice" "grove.yaml:4:5: target '$H' is the same folder as target 'home'"
truncate -s 50M "$M"
start=$(date +%s%N)
bad "a 50 MB file" "grove.yaml: larger than 1048576 bytes"
(( ($(date +%s%N) - start) / 1000000 < 5000 )) || fail "a 50 MB file was not refused quickly"
head -c 200000 /dev/zero | tr '\0' '[' >"$M"
bad "deep nesting" "grove.yaml:1:33: nested deeper than 32 levels"
{
	echo 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'
	for l in b c d e f g h i; do
		p=$(printf '%s' "$l" | tr 'b-i' 'a-h')
		echo "$l: &$l [*$p,*$p,*$p,*$p,*$p,*$p,*$p,*$p,*$p]"
	done
	echo 'targets: *i'
} >"$M"
bad "exponential aliases" "grove.yaml:2:8: aliases are not supported"
rm -f "$M"
bad "missing file" "grove.yaml: no such file"
mkdir -p "$XDG_CONFIG_HOME/grove"
printf 'defaults:\n  folding: [yes]\n' >"$XDG_CONFIG_HOME/grove/config.yaml"
printf 'targets: []\n' >"$M"
bad "bad config.yaml" "config.yaml:2:12: 'folding' must be true or false, not a list"
rm "$XDG_CONFIG_HOME/grove/config.yaml"
