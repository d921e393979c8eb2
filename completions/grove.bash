# SPDX-License-Identifier: GPL-3.0-or-later
# bash completion for grove: commands, options, package names from the stow dir (-d, $STOW_DIR or
# the current folder), alternatives groups, transaction and generation numbers.

# The stow dir the command line names: the last -d/--dir, else $STOW_DIR, else ".".
_grove_stow_dir()
{
	local i w dir=
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-d | --dir)
			if [[ ${COMP_WORDS[i + 1]} == = ]]; then
				dir=${COMP_WORDS[i + 2]}
				((i += 2))
			else
				dir=${COMP_WORDS[i + 1]}
				((i++))
			fi
			;;
		--dir=*) dir=${w#--dir=} ;;
		-d?*) dir=${w#-d} ;;
		esac
	done
	[[ -n $dir ]] || dir=${STOW_DIR:-.}
	[[ $dir == "~" || $dir == "~/"* ]] && dir=$HOME${dir#\~}
	printf '%s\n' "$dir"
}

# The packages: the stow dir's folders (not hidden ones).
_grove_packages()
{
	local dir d
	dir=$(_grove_stow_dir)
	for d in "$dir"/*/; do
		[[ -d $d ]] || continue
		d=${d%/}
		printf '%s\n' "${d##*/}"
	done
}

# grove run with the --state the command line gave (for the log, alternatives and profiles).
_grove_query()
{
	local i state=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--state) state=(--state "${COMP_WORDS[i + 1]}") ;;
		--state=*) state=("${COMP_WORDS[i]}") ;;
		esac
	done
	"${COMP_WORDS[0]}" "${state[@]}" "$@" 2>/dev/null
}


# The values of the given options on the command line, as "--opt value" pairs.
_grove_pass()
{
	local i o w
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		for o in "$@"; do
			if [[ $w == "$o" ]]; then
				[[ ${COMP_WORDS[i + 1]} == = ]] && ((i++))
				printf '%s\n%s\n' "$o" "${COMP_WORDS[i + 1]}"
			elif [[ $w == "$o="* ]]; then
				printf '%s\n%s\n' "$o" "${w#"$o="}"
			fi
		done
	done
}

_grove_groups()
{
	local IFS=$'\n' name rest
	local -a dirs
	dirs=($(_grove_pass --altdir --admindir --instdir --root))
	_grove_query alt "${dirs[@]}" --get-selections | while IFS=$' \t' read -r name rest; do
		printf '%s\n' "$name"
	done
}

_grove_generations()
{
	local IFS=$'\n'
	_grove_query --json profile $(_grove_pass -p --profile) list |
		grep -o '"number": *[0-9]*' | grep -o '[0-9]*$'
}

_grove_transactions()
{
	local IFS=$'\n'
	_grove_query --json log $(_grove_pass -t --target -d --dir) | grep -o '"id": *[0-9]*' | grep -o '[0-9]*$'
}

_grove()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local prev2=${COMP_WORDS[COMP_CWORD - 2]:-} cmd= sub= i w
	local commands="stow unstow restow plan switch import log show status verify undo rollback recover alt profile apply help"
	local global="--state --json --verbose --quiet --dry-run --wait --color --version --help -v -q -n"
	local pkgopts="--dir --target --stow --delete --restow --ignore --defer --override --adopt
		--no-folding --folding --dotfiles --no-dotfiles --compat --no --simulate --verbose --version
		--help -d -t -S -D -R -n -v -p"
	local logopts="--target --dir --json --help -t -d"
	local altcmds="--install --remove --remove-all --set --auto --display --query --list --config
		--all --get-selections --set-selections --slave import"
	local altopts="--altdir --admindir --instdir --root --log --skip-auto --force --quiet --verbose --help --version"
	local profcmds="build install remove switch rollback list diff delete gc"

	# "--opt=value" arrives as "--opt" "=" "value" (COMP_WORDBREAKS holds "=").
	if [[ $cur == = ]]; then
		prev2=$prev
		prev=$prev=
		cur=
	elif [[ $prev == = ]]; then
		prev=$prev2=
	fi

	# The command: the first word that is neither an option nor a global option's value.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--state | --wait | -d | --dir | -t | --target | --ignore | --defer | --override | --link)
			[[ ${COMP_WORDS[i + 1]} == = ]] && ((i++))
			((i++))
			;;
		-p | --profile)
			# grove profile -p PROFILE (elsewhere -p is Stow's --compat, without a value)
			if [[ $cmd == profile ]]; then
				[[ ${COMP_WORDS[i + 1]} == = ]] && ((i++))
				((i++))
			fi
			;;
		--color | --colour)
			[[ ${COMP_WORDS[i + 1]} == = ]] && ((i += 2))
			;;
		-*) ;;
		*)
			if [[ -z $cmd ]]; then
				cmd=$w
			elif [[ -z $sub && ( $cmd == profile || $cmd == plan ) ]]; then
				sub=$w
			fi
			[[ $cmd == profile || $cmd == plan ]] || break
			;;
		esac
	done
	# GNU Stow's spelling (grove -d DIR -S pkg): options first, no command word.
	if [[ -z $cmd ]]; then
		for ((i = 1; i < COMP_CWORD; i++)); do
			case ${COMP_WORDS[i]} in
			-S | -D | -R | --stow | --delete | --restow | -d* | --dir* | -t* | --target*) cmd=stow ;;
			esac
		done
	fi

	case $prev in
	-d | --dir | --dir= | -t | --target | --target= | --state | --state= | --altdir | --admindir | --instdir | --root)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	-f | --file | --file= | --log)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--color= | --colour=)
		COMPREPLY=($(compgen -W "auto always never" -- "$cur"))
		return
		;;
	--to | --to= | --before | --before=)
		COMPREPLY=($(compgen -W "$(_grove_transactions)" -- "$cur"))
		return
		;;
	--wait | --wait= | --ignore | --ignore= | --defer | --defer= | --override | --override=)
		return
		;;
	esac

	case $cmd in
	"")
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$global $pkgopts" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		fi
		;;
	stow | unstow | restow | switch | plan | import)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$pkgopts" -- "$cur"))
		elif [[ $cmd == plan && -z $sub ]]; then
			COMPREPLY=($(compgen -W "stow unstow restow $(_grove_packages)" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_grove_packages)" -- "$cur"))
		fi
		;;
	log | status | verify | undo | recover)
		COMPREPLY=($(compgen -W "$logopts --dry-run --force" -- "$cur"))
		;;
	show)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$logopts" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_grove_transactions)" -- "$cur"))
		fi
		;;
	rollback)
		COMPREPLY=($(compgen -W "$logopts --to --before --dry-run" -- "$cur"))
		;;
	alt)
		case $prev in
		--remove | --remove-all | --set | --auto | --display | --query | --list | --config)
			COMPREPLY=($(compgen -W "$(_grove_groups)" -- "$cur"))
			;;
		*)
			if [[ $cur == -* || -z $cur ]]; then
				COMPREPLY=($(compgen -W "$altcmds $altopts" -- "$cur"))
			else
				COMPREPLY=($(compgen -f -- "$cur"))
			fi
			;;
		esac
		;;
	profile)
		case $sub in
		"")
			if [[ $cur == -* ]]; then
				COMPREPLY=($(compgen -W "--profile -p --help" -- "$cur"))
			else
				COMPREPLY=($(compgen -W "$profcmds" -- "$cur"))
			fi
			;;
		build | install | remove)
			if [[ $cur == -* ]]; then
				COMPREPLY=($(compgen -W "--dir -d --no-folding --dotfiles" -- "$cur"))
			else
				COMPREPLY=($(compgen -W "$(_grove_packages)" -- "$cur"))
			fi
			;;
		switch | diff | delete)
			COMPREPLY=($(compgen -W "$(_grove_generations) $([[ $sub == delete ]] && echo old)" -- "$cur"))
			;;
		esac
		;;
	apply)
		COMPREPLY=($(compgen -W "--file -f --check --diff --json --help" -- "$cur"))
		;;
	help)
		COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		;;
	esac
}

# As "stow", grove takes GNU Stow's command line: options and packages.
_grove_as_stow()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	case $prev in
	-d | --dir | -t | --target)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "--dir --target --stow --delete --restow --ignore --defer --override
			--adopt --no-folding --dotfiles --compat --no --simulate --verbose --version --help" -- "$cur"))
	else
		COMPREPLY=($(compgen -W "$(_grove_packages)" -- "$cur"))
	fi
}

complete -F _grove grove
