#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove alt's error paths in update-alternatives 1.21's words, as grove alt and as
# update-alternatives (argv[0]): every case runs in three sandboxes prepared alike (u: the real
# update-alternatives, g: grove alt, h: grove run as update-alternatives); the same exit status,
# stdout and stderr (sandbox paths and the program's name aside), and grove's sandboxes exactly as
# before, and the same --log lines. Where update-alternatives fails half-way (a link it cannot make, leaving its
# "….dpkg-tmp" links behind), grove names the link itself and adds "; nothing was changed" to
# update-alternatives' sentence (docs/alternatives.md, "Messages").
source "$(dirname "$0")/lib.sh"
need_ua

mkdir -p "$ROOT/bin"
ln -s "$GROVE" "$ROOT/bin/update-alternatives"
GUA=$ROOT/bin/update-alternatives

U=$ROOT/u G=$ROOT/g H=$ROOT/h

prog()
{
	case $1 in
	"$U") P=("$UA") ;;
	"$G") P=("$GROVE" alt) ;;
	"$H") P=("$GUA") ;;
	esac
}

# A fresh sandbox s with the group ed (a follower ed.1), then PRE run in it ($S is the sandbox).
prepare()
{
	local s=$1 f
	rm -rf "$s" "$s.log"
	mkdir -p "$s/i/bin" "$s/i/man" "$s/i/alt" "$s/adm"
	for f in ed ed.1 vi other; do mk_file "$s/i/opt/$f" "$f"; done
	prog "$s"
	"${P[@]}" --altdir "$s/i/alt" --admindir "$s/adm" --log "$s.log" --install "$s/i/bin/ed" ed \
		"$s/i/opt/ed" 10 --slave "$s/i/man/ed.1" ed.1 "$s/i/opt/ed.1" >/dev/null 2>&1 ||
		fail "preparing $s failed"
	if [[ -n ${PRE:-} ]]; then
		S=$s
		eval "$PRE"
	fi
}

n_cases=0
# case [--undone] [--ok] DESC ARGS...: "@/" in ARGS stands for the sandbox. With --undone,
# update-alternatives fails half-way: grove's line is its line without ".dpkg-tmp" and with
# "; nothing was changed" at the end. With --ok, update-alternatives may exit 0.
case_()
{
	local undone=false ok=false desc s urc rc
	if [[ $1 == --undone ]]; then
		undone=true
		shift
	fi
	if [[ $1 == --ok ]]; then
		ok=true
		shift
	fi
	desc=$1
	shift
	n_cases=$((n_cases + 1))
	for s in "$U" "$G" "$H"; do
		prepare "$s"
		[[ $s == "$U" ]] || snapshot "$s"
		prog "$s"
		rc=0
		"${P[@]}" --altdir "$s/i/alt" --admindir "$s/adm" --log "$s.log" "${@//@\//$s/}" \
			>"$s.out" 2>"$s.err" </dev/null || rc=$?
		echo "$rc" >"$s.rc"
		sed -i -e "s|$s/|@/|g" -e 's/grove alt/update-alternatives/g' "$s.out" "$s.err"
		touch "$s.log"
		sed -E -e "s|$s/|@/|g" -e "s|$s.log|@.log|g" -e 's/^grove alt/update-alternatives/' \
			-e 's/^(update-alternatives) [0-9-]+ [0-9:]+: /\1: /' "$s.log" >"$s.lognorm"
	done
	if $undone; then
		sed -i -E "/error: /{s/\.dpkg-tmp'/'/; s/$/; nothing was changed/}" "$U.err"
	fi
	urc=$(cat "$U.rc")
	((urc != 0)) || $ok || fail "$desc: update-alternatives exited 0 (the case is wrong)"
	for s in "$G" "$H"; do
		[[ $(cat "$s.rc") == "$urc" ]] ||
			fail "${s##*/}: $desc: exit $(cat "$s.rc"), update-alternatives $urc: $(cat "$s.err")"
		diff "$U.out" "$s.out" >&2 || fail "${s##*/}: $desc: stdout differs (- ua, + grove)"
		diff "$U.err" "$s.err" >&2 || fail "${s##*/}: $desc: stderr differs (- ua, + grove)"
		diff "$U.lognorm" "$s.lognorm" >&2 ||
			fail "${s##*/}: $desc: the --log lines differ (- ua, + grove)"
		expect_unchanged "$s"
	done
	check "$desc"
}

case_ --undone "a follower's folder missing" --install @/i/bin/x x @/i/opt/other 1 \
	--slave @/i/usr/share/man/man1/x.1.gz x.1.gz @/i/opt/ed.1
case_ --undone "the link's folder missing" --install @/i/nodir/x x @/i/opt/other 1
case_ --undone "a follower's folder missing, in a group that exists" --install @/i/bin/ed ed \
	@/i/opt/other 20 --slave @/i/man/ed.1 ed.1 @/i/opt/ed.1 --slave @/i/nodir/ed.5 ed.5 @/i/opt/vi
case_ --undone "a file where the link's folder should be" --install @/i/opt/other/x x @/i/opt/vi 1
case_ --undone "a file on the way to a follower's folder" --install @/i/bin/x x @/i/opt/other 1 \
	--slave @/i/opt/vi/a/b y @/i/opt/ed.1
for a in --display --query --list --auto --remove-all --config; do
	case_ "$a of an empty name" $a ""
done
case_ "--set of an empty name" --set "" @/i/opt/ed
case_ "--remove of an empty name" --remove "" @/i/opt/ed
case_ "--install of an empty name" --install @/i/bin/x "" @/i/opt/other 1
case_ "--install of an empty name and a relative path" --install @/i/bin/x "" opt/other 1
case_ "--install of an empty name and a bad follower name" --install @/i/bin/x "" @/i/opt/other 1 \
	--slave @/i/bin/y "a b" @/i/opt/vi
# A file where the altdir should be: update-alternatives' lstat(2) of ALTDIR/NAME fails, before
# anything is done (readers print what they print before reading the current choice).
export PRE='rm -rf "$S/i/alt"; touch "$S/i/alt"'
for a in "--install @/i/bin/x x @/i/opt/other 1" "--install @/i/bin/ed ed @/i/opt/other 50" \
	"--set ed @/i/opt/ed" "--auto ed" "--remove ed @/i/opt/ed" "--remove-all ed" "--display ed" \
	"--query ed" "--get-selections" "--config ed"; do
	# shellcheck disable=SC2086 # the words of a
	case_ "altdir a file: ${a%% @*}" $a
done
# A file where the admindir should be: update-alternatives cannot read the group's file, or list
# the folder when it reads every group.
export PRE='rm -rf "$S/adm"; touch "$S/adm"'
for a in "--install @/i/bin/x x @/i/opt/other 1" "--set ed @/i/opt/ed" "--auto ed" \
	"--remove ed @/i/opt/ed" "--remove-all ed" "--display ed" "--query ed" "--list ed" \
	"--get-selections" "--config ed" "--all" "--set-selections"; do
	# shellcheck disable=SC2086 # the words of a
	case_ "admindir a file: ${a%% @*}" $a
done
# A folder in the admindir named as the group: update-alternatives fails reading it.
export PRE='mkdir "$S/adm/zz"'
for a in "--install @/i/bin/x zz @/i/opt/other 1" "--set zz @/i/opt/ed" "--auto zz" \
	"--remove zz @/i/opt/ed" "--remove-all zz" "--display zz" "--query zz" "--list zz" \
	"--config zz"; do
	# shellcheck disable=SC2086 # the words of a
	case_ "a folder as the group's admin file: ${a%% @*}" $a
done
unset PRE
# A missing --root: no group in its admindir, no choice's file in it.
for a in "--install /bin/x x /opt/other 1" "--set ed /opt/ed" "--auto ed" "--remove-all ed" \
	"--config ed" "--display ed"; do
	# shellcheck disable=SC2086 # the words of a
	case_ "a missing root: ${a%% /*}" --root @/nonexist $a
done
case_ --ok "a missing root: --remove (nothing to do, exit 0)" --root @/nonexist --verbose \
	--remove ed /opt/ed
echo "# $TEST_NAME: $n_cases error paths, as update-alternatives words them"
