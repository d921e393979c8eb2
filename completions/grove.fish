# SPDX-License-Identifier: GPL-3.0-or-later
# fish completion for grove: commands, options, package names from the stow dir (-d, $STOW_DIR or
# the current folder), alternatives groups, transaction and generation numbers.

# The stow dir the command line names: the last -d/--dir, else $STOW_DIR, else ".".
function __grove_stow_dir
    set -l tokens (commandline -opc)
    set -l dir
    set -l i 2
    while test $i -le (count $tokens)
        set -l w $tokens[$i]
        switch $w
            case -d --dir
                set i (math $i + 1)
                test $i -le (count $tokens); and set dir $tokens[$i]
            case '--dir=*'
                set dir (string replace -- --dir= '' $w)
            case '-d?*'
                set dir (string sub -s 3 -- $w)
        end
        set i (math $i + 1)
    end
    test -n "$dir"; or set dir $STOW_DIR
    test -n "$dir"; or set dir .
    string replace -r '^~(?=/|$)' -- $HOME $dir
end

function __grove_packages
    set -l dir (__grove_stow_dir)
    for d in $dir/*/
        basename -- $d
    end
end

# grove with the --state the command line gave.
function __grove_query
    set -l tokens (commandline -opc)
    set -l state
    set -l i 2
    while test $i -le (count $tokens)
        switch $tokens[$i]
            case --state
                set i (math $i + 1)
                test $i -le (count $tokens); and set state --state $tokens[$i]
            case '--state=*'
                set state $tokens[$i]
        end
        set i (math $i + 1)
    end
    command -q $tokens[1]; or return
    command $tokens[1] $state $argv 2>/dev/null
end


# The values of the given options on the command line, as "--opt value" pairs.
function __grove_pass
    set -l tokens (commandline -opc)
    set -l i 2
    while test $i -le (count $tokens)
        set -l w $tokens[$i]
        for o in $argv
            if test "$w" = $o
                set i (math $i + 1)
                test $i -le (count $tokens); and printf '%s\n' $o $tokens[$i]
            else if string match -q -- "$o=*" $w
                printf '%s\n' $o (string replace -- "$o=" '' $w)
            end
        end
        set i (math $i + 1)
    end
end

function __grove_groups
    __grove_query alt (__grove_pass --altdir --admindir --instdir --root) --get-selections | string replace -r '\s.*' ''
end

function __grove_generations
    __grove_query --json profile (__grove_pass -p --profile) list | string match -ar '"number": *[0-9]+' | string match -r '[0-9]+$'
end

function __grove_transactions
    __grove_query --json log (__grove_pass -t --target -d --dir) | string match -ar '"id": *[0-9]+' | string match -r '[0-9]+$'
end

# The command word: the first token that is neither an option nor a global option's value.
function __grove_command
    set -l tokens (commandline -opc)
    set -l skip 0
    for t in $tokens[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $t
            case --state --wait -d --dir -t --target --ignore --defer --override
                set skip 1
            case '-*'
            case '*'
                echo $t
                return
        end
    end
end

# Whether the command word is one of the arguments (none: GNU Stow's spelling counts as "stow").
function __grove_is
    set -l c (__grove_command)
    test -n "$c"; or set c stow
    contains -- $c $argv
end

set -l __grove_commands stow unstow restow plan switch import log show status verify undo rollback recover alt profile apply help

# No file names unless an option asks for one.
complete -c grove -f

# Global options.
complete -c grove -n __fish_use_subcommand -l state -r -a '(__fish_complete_directories)' -d 'keep the transaction log in DIR'
complete -c grove -n __fish_use_subcommand -l json -d 'machine-readable output'
complete -c grove -n __fish_use_subcommand -s v -l verbose -d 'more verbose'
complete -c grove -n __fish_use_subcommand -s q -l quiet -d 'no progress line'
complete -c grove -n __fish_use_subcommand -s n -l dry-run -d 'change nothing'
complete -c grove -n __fish_use_subcommand -l wait -x -d 'seconds to wait for a locked target'
complete -c grove -n __fish_use_subcommand -l color -x -a 'auto always never' -d 'colour'
complete -c grove -n __fish_use_subcommand -l version -d 'show the version'
complete -c grove -n __fish_use_subcommand -l help -d 'show the help'

# Commands.
complete -c grove -n __fish_use_subcommand -a stow -d 'link packages into the target'
complete -c grove -n __fish_use_subcommand -a unstow -d "remove packages' links"
complete -c grove -n __fish_use_subcommand -a restow -d 'unstow then stow, in one transaction'
complete -c grove -n __fish_use_subcommand -a plan -d 'print what would change'
complete -c grove -n __fish_use_subcommand -a switch -d 'unstow OLD and stow NEW in one transaction'
complete -c grove -n __fish_use_subcommand -a import -d "record the links GNU Stow made as grove's"
complete -c grove -n __fish_use_subcommand -a log -d "the target's transactions"
complete -c grove -n __fish_use_subcommand -a status -d 'packages stowed into the target'
complete -c grove -n __fish_use_subcommand -a verify -d 'the log against the disk'
complete -c grove -n __fish_use_subcommand -a undo -d 'revert the last transaction'
complete -c grove -n __fish_use_subcommand -a rollback -d 'back to the state after transaction N'
complete -c grove -n __fish_use_subcommand -a show -d 'one transaction and its ops'
complete -c grove -n __fish_use_subcommand -a recover -d 'roll back an interrupted transaction'
complete -c grove -n __fish_use_subcommand -a alt -d 'alternatives (update-alternatives)'
complete -c grove -n __fish_use_subcommand -a profile -d 'generations of packages'
complete -c grove -n __fish_use_subcommand -a apply -d 'converge to grove.yaml'
complete -c grove -n __fish_use_subcommand -a help -d "a command's help"

# Packages commands (and GNU Stow's spelling, options first).
set -l pkgcond "__grove_is stow unstow restow plan switch import"
complete -c grove -n "not __fish_use_subcommand; and __grove_is stow unstow restow plan switch import" -a '(__grove_packages)' -d package
complete -c grove -n "__grove_is plan" -a 'stow unstow restow'
complete -c grove -n $pkgcond -s d -l dir -r -a '(__fish_complete_directories)' -d 'the stow dir'
complete -c grove -n $pkgcond -s t -l target -r -a '(__fish_complete_directories)' -d 'the target'
complete -c grove -n $pkgcond -s S -l stow -d 'stow the packages that follow'
complete -c grove -n $pkgcond -s D -l delete -d 'unstow the packages that follow'
complete -c grove -n $pkgcond -s R -l restow -d 'restow the packages that follow'
complete -c grove -n $pkgcond -l ignore -x -d 'ignore paths ending in REGEX'
complete -c grove -n $pkgcond -l defer -x -d 'leave paths starting with REGEX to others'
complete -c grove -n $pkgcond -l override -x -d 'take over paths starting with REGEX'
complete -c grove -n $pkgcond -l adopt -d 'move existing files into the package'
complete -c grove -n $pkgcond -l no-folding -d 'never link a folder'
complete -c grove -n $pkgcond -l dotfiles -d "dot-x is linked as .x"
complete -c grove -n $pkgcond -l folding -d 'the default, given (not --no-folding)'
complete -c grove -n $pkgcond -l no-dotfiles -d 'the default, given (not --dotfiles)'
complete -c grove -n $pkgcond -s p -l compat -d 'legacy unstow'
complete -c grove -n $pkgcond -l no -l simulate -d 'change nothing'
complete -c grove -n $pkgcond -s V -d 'show the version'
complete -c grove -n "test -z (__grove_command); and __fish_seen_argument -s S -s D -s R -s d -l stow -l delete -l restow -l dir" -a '(__grove_packages)' -d package

# Log commands.
complete -c grove -n "__grove_is log show status verify undo rollback recover" -s t -l target -r -a '(__fish_complete_directories)' -d 'the target'
complete -c grove -n "__grove_is log status verify" -l json -d 'JSON output'
complete -c grove -n "__grove_is rollback" -l to -x -a '(__grove_transactions)' -d 'the transaction to go back to'
complete -c grove -n "__grove_is rollback" -l before -x -a '(__grove_transactions)' -d 'the first transaction to revert'
complete -c grove -n "__grove_is show" -x -a '(__grove_transactions)' -d 'transaction'
complete -c grove -n "__grove_is recover" -l force -d 'mark a stuck transaction resolved'

# grove alt.
set -l altgroup "__grove_is alt; and __fish_seen_argument -l remove -l remove-all -l set -l auto -l display -l query -l list -l config"
complete -c grove -n $altgroup -a '(__grove_groups)' -d group
for o in install remove remove-all set auto display query list config all get-selections set-selections slave skip-auto force quiet verbose version
    complete -c grove -n "__grove_is alt" -l $o
end
for o in altdir admindir instdir root
    complete -c grove -n "__grove_is alt" -l $o -r -a '(__fish_complete_directories)'
end
complete -c grove -n "__grove_is alt" -l log -r -F
complete -c grove -n "__grove_is alt; and not __fish_seen_argument -l install -l remove -l remove-all -l set -l auto -l display -l query -l list -l config -l all -l get-selections -l set-selections" -a import -d "take over an admindir's groups"

# grove profile.
set -l profsubs build install remove switch rollback list diff delete gc
complete -c grove -n "__grove_is profile; and not __fish_seen_subcommand_from $profsubs" -a "$profsubs"
complete -c grove -n "__grove_is profile" -s p -l profile -x -d 'the profile'
complete -c grove -n "__grove_is profile; and __fish_seen_subcommand_from build install remove" -a '(__grove_packages)' -d package
complete -c grove -n "__grove_is profile; and __fish_seen_subcommand_from switch diff delete" -a '(__grove_generations)' -d generation

# grove apply.
complete -c grove -n "__grove_is apply" -s f -l file -r -F -d 'the manifest'
complete -c grove -n "__grove_is apply" -l check -d 'exit 1 if something would change'
complete -c grove -n "__grove_is apply" -l diff -d 'print what would change'

# grove help.
complete -c grove -n "__grove_is help" -a "$__grove_commands"
