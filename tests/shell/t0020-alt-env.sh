#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# $DPKG_ROOT, $DPKG_ADMINDIR, --root, --admindir and --altdir combine as in update-alternatives
# 1.21.22, and --debug prints its DEBUG: lines. Differential: every case runs the real
# update-alternatives and grove alt in twin sandboxes (@ stands for the sandbox) and compares exit
# status, stdout, stderr (the program's name aside), the folders and links made (admin files and
# grove's state dir aside) and a --query afterwards (which finds the group only in the same admindir).
source "$(dirname "$0")/lib.sh"
need_ua

n=0
# case ENV-WORDS -- OPTION-WORDS: @ in either is replaced by the sandbox's path.
case_run()
{
	local envs=() opts=() d g u
	while [[ $1 != -- ]]; do
		envs+=("$1")
		shift
	done
	shift
	opts=("$@")
	n=$((n + 1))
	g=$ROOT/g$n u=$ROOT/u$n
	for d in "$g" "$u"; do
		for r in R R2; do
			mkdir -p "$d/$r/usr/bin" "$d/$r/etc/alternatives"
			mk_file "$d/$r/opt/a" a
		done
		mkdir -p "$d/usr/bin" "$d/etc/alternatives"
	done
	one()
	{
		local d=$1 prog=$2
		shift 2
		run env "${envs[@]//@/$d}" "$prog" "$@" "${opts[@]//@/$d}" --debug --install \
			/usr/bin/x x /opt/a 5
		echo "$RC" >"$d.install"
		sed "s|$d|@|g; s|^[a-z -]*: |P: |" "$OUT" "$ERR" >>"$d.install"
		run env "${envs[@]//@/$d}" "$prog" "$@" "${opts[@]//@/$d}" --query x
		echo "$RC" >"$d.query"
		sed "s|$d|@|g; s|^[a-z -]*: |P: |" "$OUT" "$ERR" >>"$d.query"
		# The folders and links made; the admin files, grove's state dir and the default
		# log's folder (grove writes no default log: docs/alternatives.md) aside.
		(cd "$d" && find . \( -type d -o -type l \) -printf '%y %p %l\n' | sort) \
			| sed "s|$d|@|g" | grep -v '/var\(/log\)\? *$' >"$d.tree"
	}
	GROVE_STATE_DIR=$ROOT/state$n one "$g" "$GROVE" alt
	one "$u" "$UA"
	local what
	for what in install query tree; do
		diff "$u.$what" "$g.$what" >&2 ||
			fail "case $n (${envs[*]} -- ${opts[*]}): $what differs (- update-alternatives, + grove)"
	done
	grep -q '^Value: /opt/a' "$g.query" ||
		fail "case $n (${envs[*]} -- ${opts[*]}): the group was not installed"
}

case_run DPKG_ROOT=@/R --
case_run DPKG_ROOT=@/R DPKG_ADMINDIR=@/A --
case_run DPKG_ROOT=@/R DPKG_ADMINDIR=@/R/A --
check "\$DPKG_ROOT, with and without \$DPKG_ADMINDIR (outside and inside the root)"

case_run -- --root @/R
case_run DPKG_ADMINDIR=@/A -- --root @/R
case_run DPKG_ROOT=@/R2 -- --root @/R
case_run DPKG_ROOT=@/R2 DPKG_ADMINDIR=@/A -- --root @/R
check "--root resets the admindir to its own, whatever the environment"

case_run -- --root @/R --admindir @/ad
case_run -- --admindir @/ad --root @/R
case_run DPKG_ROOT=@/R -- --admindir @/R/ad
case_run DPKG_ROOT=@/R DPKG_ADMINDIR=@/A -- --admindir @/ad
check "--admindir after --root wins, before it is reset; --admindir beats the environment"

case_run -- --root @/R --altdir @/R/alt2
case_run DPKG_ROOT=@/R -- --altdir @/R/etc/alt3
case_run -- --altdir @/R/alt4 --root @/R
check "--altdir inside the root loses the root's prefix; --root resets an earlier --altdir"

# No root: only the DEBUG line (an install would write into the real /usr/bin).
for env in "X=1" "DPKG_ADMINDIR=$ROOT/A" "DPKG_ADMINDIR=" "DPKG_ROOT=" "DPKG_ROOT= DPKG_ADMINDIR=$ROOT/A"; do
	for opts in "" "--admindir $ROOT/ad" "--root ''" "--altdir $ROOT/alt"; do
		a=$(eval "env $env $GROVE alt --debug $opts --admindir $ROOT/none --get-selections" 2>&1)
		b=$(eval "env $env $UA --debug $opts --admindir $ROOT/none --get-selections" 2>&1)
		[[ $a == "$b" && $a == DEBUG:* ]] || fail "$env $opts: '$a' vs '$b'"
		a=$(eval "env $env $GROVE alt --debug $opts --get-selections" 2>&1 | grep DEBUG)
		b=$(eval "env $env $UA --debug $opts --get-selections" 2>&1 | grep DEBUG)
		[[ $a == "$b" && $a == DEBUG:* ]] || fail "$env $opts: '$a' vs '$b'"
	done
done
check "without a root: the same root, admindir and altdir in the DEBUG line"

# --debug's lines of a command: prepare_install, 'modified and will be saved', set_selection.
W=$ROOT/dbg
for d in "$W/g" "$W/u"; do
	mkdir -p "$d/i/usr/bin" "$d/i/alt"
	mk_file "$d/i/opt/a" a
	mk_file "$d/i/opt/b" b
done
dbg()
{
	local input=$1 gerr
	shift
	run "$GROVE" alt --debug --altdir "$W/g/i/alt" --admindir "$W/g/adm" --instdir "$W/g/i" \
		"${@//@/$W/g}" <<<"$input"
	gerr=$(sed "s|$W/g|@|g; s|^grove alt:|P:|" "$ERR")
	local grc=$RC
	run "$UA" --debug --altdir "$W/u/i/alt" --admindir "$W/u/adm" --instdir "$W/u/i" \
		"${@//@/$W/u}" <<<"$input"
	[[ $grc == "$RC" ]] || fail "--debug $*: exit $grc, update-alternatives $RC"
	diff <(sed "s|$W/u|@|g; s|^update-alternatives:|P:|" "$ERR") <(echo "$gerr") >&2 ||
		fail "--debug $*: stderr differs (- update-alternatives, + grove)"
	grep -q '^DEBUG: root= admdir=@/adm altdir=@/i/alt$' <<<"$gerr" ||
		fail "--debug $*: no DEBUG line with the dirs"
}
dbg "" --install @/i/usr/bin/x x @/i/opt/a 10
grep -q "^DEBUG: prepare_install(@/i/opt/a)$" <<<"$(sed "s|$W/u|@|g" "$ERR")" ||
	fail "--install printed no prepare_install line"
dbg "" --install @/i/usr/bin/x x @/i/opt/b 20
dbg "" --set x @/i/opt/a
dbg "" --auto x
dbg "" --query x
dbg "x manual @/i/opt/a" --set-selections
dbg "" --remove x @/i/opt/a
dbg "" --remove-all x
check "--debug prints update-alternatives' DEBUG lines for install, set, auto, query, set-selections, remove"
