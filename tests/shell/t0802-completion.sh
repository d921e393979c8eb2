#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Shell completions: bash (driving _grove through COMP_WORDS), fish (complete -C) and zsh (a real
# interactive zsh under zsh/zpty, pressing Tab) complete commands, options, package names from the
# stow dir (-d, --dir=, $STOW_DIR, the current folder) and transaction numbers from the log.
. "$(dirname "$0")/lib.sh"

COMP=$GROVE_SOURCE_ROOT/completions
for sh in zsh fish; do
	command -v "$sh" >/dev/null || fail "$sh is not installed (scripts/install-deps.sh installs it)"
done

S=$ROOT/stow
mk_file "$S/vim/.vimrc" v
mk_file "$S/zsh/.zshrc" z
mk_file "$S/.hidden/x" h
mk_file "$ROOT/other/emacs/.emacs" e
mk_file "$ROOT/other/nano/.nanorc" n
mkdir -p "$ROOT/target"
cd "$ROOT"

# bash: complete WORD... prints the candidates for the last word, one line, sorted.
bcomp()
{
	bash --norc --noprofile -c '
		. "$1/grove.bash"
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMPREPLY=()
		_grove
		printf "%s\n" "${COMPREPLY[@]}" | LC_ALL=C sort | tr "\n" " "
	' bash "$COMP" "$@"
}

expect_bash()
{
	local want=$1 got
	shift
	got=$(bcomp "$@")
	[[ $got == "$want" ]] || fail "bash: completing '$*' gave '$got', expected '$want'"
}

(cd "$S" && expect_bash "vim zsh " grove stow "")
expect_bash "vim zsh " grove stow -d stow ""
expect_bash "zsh " grove unstow -d stow z
expect_bash "emacs nano " grove restow --dir = other ""
expect_bash "emacs nano " grove --dir=other ""
expect_bash "emacs " grove -d other -S e
STOW_DIR=$ROOT/other expect_bash "nano " grove switch emacs n
expect_bash "recover restow rollback " grove r
expect_bash "--no-folding " grove stow --no-f
expect_bash "always auto never " grove --color = ""
expect_bash "show status stow switch " grove --state /x s
check "bash: commands, options, and package names from the current folder, -d, --dir=, \$STOW_DIR"

"$GROVE" stow -d stow -t target vim >/dev/null
"$GROVE" stow -d stow -t target zsh >/dev/null
expect_bash "1 2 " "$GROVE" rollback -t target --to ""
expect_bash "1 2 " "$GROVE" show -t target ""
"$GROVE" profile -p "$ROOT/prof/main" build --no-link -d stow vim >/dev/null
"$GROVE" profile -p "$ROOT/prof/main" install --no-link -d stow zsh >/dev/null
expect_bash "1 2 " "$GROVE" profile -p "$ROOT/prof/main" switch ""
expect_bash "1 2 old " "$GROVE" profile --profile "$ROOT/prof/main" delete ""
expect_bash "vim zsh " "$GROVE" profile -p "$ROOT/prof/main" install -d stow ""
check "bash: rollback --to and show complete transaction numbers, profile switch/delete generation numbers"

# The file loads in a plain bash and registers the function for grove.
[[ $(bash --norc --noprofile -c ". '$COMP/grove.bash' && complete -p grove") == "complete -F _grove grove" ]] ||
	fail "bash: grove.bash does not register _grove for grove"
check "bash: the completion file loads and registers _grove"

# fish
fcomp()
{
	(cd "${FISH_CWD:-$ROOT}" && fish --no-config -c "source '$COMP/grove.fish'; complete -C '$1'") |
		cut -f1 | LC_ALL=C sort | tr '\n' ' '
}
expect_fish()
{
	local got
	got=$(fcomp "$2")
	[[ $got == "$1" ]] || fail "fish: completing '$2' gave '$got', expected '$1'"
}
FISH_CWD=$S expect_fish "vim zsh " "grove stow "
expect_fish "vim zsh " "grove stow -d stow "
expect_fish "emacs " "grove unstow --dir=other e"
expect_fish "emacs nano " "grove -d other -S "
STOW_DIR=$ROOT/other expect_fish "nano " "grove switch emacs n"
expect_fish "recover restow rollback " "grove r"
expect_fish "--color=always --color=auto --color=never " "grove --color="
expect_fish "1 2 " "$GROVE rollback -t target --to "
expect_fish "1 2 " "$GROVE show -t target "
expect_fish "1 2 " "$GROVE profile -p $ROOT/prof/main switch "
check "fish: commands, options, package names, transaction and generation numbers"

# zsh: an interactive zsh under a pseudo-terminal, with compinit and grove's _grove on fpath.
zcomp()
{
	timeout 30 zsh -f -c '
		zmodload zsh/zpty || exit 3
		zpty z "zsh -f -i"
		zpty -w z "PS1=\"%% \"; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D; setopt autolist nolistbeep; LISTMAX=1000"
		zpty -w z "cd $2; echo RE\"\"ADY"
		zpty -r z line "*READY*" || exit 3
		zpty -n -w z "$3"$'"'"'\t'"'"'
		zpty -r z out "$4" || exit 4
		zpty -d z
	' zsh "$COMP" "$ROOT" "$1" "$2"
}
zcomp "grove stow -d other e" "*emacs*" || fail "zsh: 'grove stow -d other e' did not complete to emacs"
zcomp "grove stow -d stow " "*vim*zsh*" || fail "zsh: 'grove stow -d stow ' did not list vim and zsh"
zcomp "grove unst" "*unstow*" || fail "zsh: 'grove unst' did not complete to unstow"
check "zsh: commands and package names, in an interactive zsh pressing Tab"

# Alternatives groups (grove alt --get-selections, with the command line's --altdir/--admindir/--instdir).
A=$ROOT/alt
mkdir -p "$A/etc/alternatives" "$A/adm" "$A/usr/bin"
mk_file "$A/usr/bin/vim" v
mk_file "$A/usr/bin/less" l
ALT=(--altdir "$A/etc/alternatives" --admindir "$A/adm" --instdir "$A")
"$GROVE" alt "${ALT[@]}" --install "$A/usr/bin/editor" editor "$A/usr/bin/vim" 50 >/dev/null
"$GROVE" alt "${ALT[@]}" --install "$A/usr/bin/pager" pager "$A/usr/bin/less" 10 >/dev/null
expect_bash "editor pager " "$GROVE" alt "${ALT[@]}" --set ""
expect_bash "pager " "$GROVE" alt "${ALT[@]}" --display p
expect_fish "editor pager " "$GROVE alt ${ALT[*]} --query "
check "bash and fish: alternatives group names for --set, --display, --query"

# Profile names after profile -p: the state dir's profiles (--state, else $GROVE_STATE_DIR), not
# their generations' links (NAME-N-link) or folders (NAME.generations).
"$GROVE" profile -p work build --no-link -d stow vim >/dev/null
"$GROVE" profile -p home build --no-link -d stow zsh >/dev/null
"$GROVE" profile -p home install --no-link -d stow vim >/dev/null
[[ -L $GROVE_STATE_DIR/profiles/home-2-link ]] || fail "expected generation links beside the profiles"
expect_bash "home work " "$GROVE" profile -p ""
expect_bash "work " "$GROVE" profile --profile = w
mkdir -p "$ROOT/st2"
"$GROVE" --state "$ROOT/st2" profile -p solo build --no-link -d stow vim >/dev/null
expect_bash "solo " "$GROVE" --state "$ROOT/st2" profile -p ""
expect_fish "home work " "$GROVE profile -p "
expect_fish "solo " "$GROVE --state $ROOT/st2 profile -p "
zcomp "$GROVE --state $ROOT/st2 profile -p s" "*solo*" || fail "zsh: 'profile -p s' did not complete to solo"
check "bash, fish and zsh: profile names after profile -p, from the command line's state dir"

# unstow offers only the packages stowed into the target (grove's status, with -d and -t); stow all.
"$GROVE" unstow -d stow -t target zsh >/dev/null
expect_bash "vim " "$GROVE" unstow -d stow -t target ""
expect_bash "vim zsh " "$GROVE" stow -d stow -t target ""
expect_fish "vim " "$GROVE unstow -d stow -t target "
expect_fish "vim zsh " "$GROVE restow -d stow -t target "
zcomp "$GROVE unstow -d stow -t target " "*vim*" || fail "zsh: unstow did not offer vim"
check "bash, fish and zsh: unstow offers the stowed packages only"

# apply's --tag and --host, and the global options after every command.
expect_bash "--tag " grove apply --ta
expect_bash "--host " grove apply --ho
expect_bash "--state --stow " grove stow --st
expect_bash "--wait " grove log --wa
expect_bash "--json " grove profile install --js
expect_bash "--color " grove verify --co
expect_fish "--tag " "grove apply --ta"
expect_fish "--host " "grove apply --ho"
expect_fish "--state --stow " "grove stow --st"
expect_fish "--wait " "grove log --wa"
zcomp "grove apply --ta" "*--tag*" || fail "zsh: apply --ta did not complete to --tag"
zcomp "grove log --wa" "*--wait*" || fail "zsh: log --wa did not complete to --wait"
check "bash, fish and zsh: apply's --tag and --host, global options after every command"
