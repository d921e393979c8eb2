#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# One grove apply of an alternatives group is one transaction (issue 38, item 6): the group's
# install, install, remove and set are logged as one, `grove undo` gives back the links and the
# admin file as they were before the apply, and a request that fails part-way (the second of the
# group's) leaves the group as it was. The result is what update-alternatives makes of the same
# requests on a twin folder.
source "$(dirname "$0")/lib.sh"
need_ua

# A folder with the programs; the links, altdir and admindir inside it (no alternatives.root: the
# paths are the host's, so this is about transactions alone).
mk_sys()
{
	local r=$1
	mkdir -p "$r/usr/bin" "$r/usr/share/man/man1" "$r/etc/alternatives" "$r/admin"
	for f in ed.a ed.b ed.c ed.d; do
		mk_file "$r/usr/bin/$f" "$f"
		mk_file "$r/usr/share/man/man1/$f.1.gz" "$f man"
	done
}
G=$ROOT/g U=$ROOT/u
mk_sys "$G"
mk_sys "$U"

# The folder's links (their text) and admin files (their text); grove's lock is not one.
state()
{
	(
		cd "$1" || exit 1
		find . \( -type l -printf '%p -> %l\n' \) -o \
			\( -type f -path './admin/*' ! -name '*.dpkg-tmp' -printf '== %p\n' \
			-exec cat {} \; \) | sort
	)
}

# manifest CHOICE...: group ed (link and man page follower) with these choices, each "NAME:PRIO",
# in manual mode on the last one listed with a trailing "*".
manifest()
{
	local c name prio manual=""
	{
		cat <<YAML
alternatives:
  altdir: $G/etc/alternatives
  admindir: $G/admin
  groups:
    - name: ed
      link: $G/usr/bin/ed
      followers:
        - name: ed.1.gz
          link: $G/usr/share/man/man1/ed.1.gz
      choices:
YAML
		for c in "$@"; do
			name=${c%%:*} prio=${c#*:}
			if [[ $prio == *'*' ]]; then
				prio=${prio%\*} manual=$name
			fi
			printf '        - path: %s\n          priority: %s\n' "$G/usr/bin/$name" "$prio"
			printf '          followers:\n            ed.1.gz: %s\n' \
				"$G/usr/share/man/man1/$name.1.gz"
		done
		if [[ -n $manual ]]; then
			printf '      mode: manual\n      choice: %s\n' "$G/usr/bin/$manual"
		fi
	} >"$ROOT/grove.yaml"
}

n_txns()
{
	"$GROVE" --json log -t / >"$ROOT/log.json" || fail "grove log failed"
	"$GROVE_TEST_PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["transactions"]))' \
		"$ROOT/log.json"
}

ua()
{
	expect_exit 0 "$UA" --altdir "$U/etc/alternatives" --admindir "$U/admin" "$@"
}
ua_install()
{
	ua --install "$U/usr/bin/ed" ed "$U/usr/bin/$1" "$2" \
		--slave "$U/usr/share/man/man1/ed.1.gz" ed.1.gz "$U/usr/share/man/man1/$1.1.gz"
}

same()
{
	diff <(state "$U" | sed "s#$U#@#g") <(state "$G" | sed "s#$G#@#g") >&2 ||
		fail "$1: links or admin files differ (- update-alternatives, + grove apply)"
}

# The start: ed.a and ed.b, auto (ed.a, the higher).
manifest ed.a:50 ed.b:40
expect_exit 0 "$GROVE" apply -f "$ROOT/grove.yaml"
ua_install ed.a 50
ua_install ed.b 40
same "the start"
before=$(state "$G")
txns=$(n_txns)

# Four requests on one group: install ed.c and ed.d, remove ed.a (the current one), set ed.d.
manifest ed.b:40 ed.c:30 ed.d:20*
expect_exit 0 "$GROVE" apply -f "$ROOT/grove.yaml"
expect_out_has "alternatives ed: install $G/usr/bin/ed.c"
expect_out_has "alternatives ed: remove $G/usr/bin/ed.a"
expect_out_has "alternatives ed: set $G/usr/bin/ed.d"
ua_install ed.c 30
ua_install ed.d 20
ua --remove ed "$U/usr/bin/ed.a"
ua --set ed "$U/usr/bin/ed.d"
same "install, install, remove, set"
after=$(state "$G")
[[ $(n_txns) == $((txns + 1)) ]] ||
	fail "the group's apply is $(($(n_txns) - txns)) transactions, not one"
check "one apply of a group's four requests is one transaction, as update-alternatives leaves it"

expect_exit 0 "$GROVE" undo -t /
[[ $(state "$G") == "$before" ]] ||
	fail "grove undo did not give back the group: $(diff <(echo "$before") <(state "$G"))"
check "grove undo reverts the whole group's apply: links and admin file"

# Redo, so the failure below starts from a group grove changed in one go.
expect_exit 0 "$GROVE" apply -f "$ROOT/grove.yaml"
[[ $(state "$G") == "$after" ]] || fail "the apply again did not make the same group"
txns=$(n_txns)

# The second request fails: ed.e is no file (update-alternatives' own refusal of an --install);
# the first (ed.a back in) must not stay made. Exit 1: refused, nothing changed.
manifest ed.a:60 ed.b:40 ed.e:10 ed.c:30 ed.d:20*
expect_exit 1 "$GROVE" apply -f "$ROOT/grove.yaml"
expect_err_has "alternative path $G/usr/bin/ed.e doesn't exist"
[[ $(state "$G") == "$after" ]] ||
	fail "a failure at the second request changed the group: $(diff <(echo "$after") <(state "$G"))"
[[ $(n_txns) == "$txns" ]] || fail "a failed apply left a transaction"
check "a failure at the group's second request leaves the group as it was"

# Killed at each link made (symlinkat), exchanged (renameat2) or removed (unlinkat), the admin
# file's rename (renameat) and each sync of the group's four requests, then recovered: the group is
# as before the apply or as after it, never some requests made. (Not under t0071's wrapper, whose
# check before each apply would take the kills.)
if [[ -z ${GROVE_REAL-} ]] && strace -qq -o /dev/null -e trace=getpid -e inject=getpid:error=EIO -- true 2>/dev/null; then
	expect_exit 0 "$GROVE" undo -t /
	[[ $(state "$G") == "$before" ]] || fail "the undo before the kills did not give back the start"
	manifest ed.b:40 ed.c:30 ed.d:20*
	n_before=0 n_after=0 n_kills=0
	for sc in symlinkat renameat2 unlinkat renameat fsync fdatasync; do
		for ((k = 1; k <= 40; k++)); do
			run env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
				strace -f -qq -o /dev/null -e trace=$sc \
				-e inject=$sc:signal=SIGKILL:when=$k -- "$GROVE" apply -f "$ROOT/grove.yaml"
			((RC == 137)) || break # k is past the last call: the run went through
			n_kills=$((n_kills + 1))
			expect_exit 0 "$GROVE" recover -t /
			now=$(state "$G")
			if [[ $now == "$before" ]]; then
				n_before=$((n_before + 1))
			elif [[ $now == "$after" ]]; then
				n_after=$((n_after + 1))
				expect_exit 0 "$GROVE" undo -t /
			else
				fail "killed at $sc #$k and recovered, the group is neither as before nor as after: $(diff <(echo "$after") <(echo "$now"))"
			fi
		done
		((RC == 0)) || fail "$sc: the apply after the kills exited $RC: $(cat "$ERR")"
		[[ $(state "$G") == "$after" ]] || fail "$sc: the apply after the kills did not make the group"
		expect_exit 0 "$GROVE" undo -t /
	done
	((n_before >= 3 && n_after >= 1)) ||
		fail "the kills fell $n_before times before the commit and $n_after times after it"
	check "killed at each of its $n_kills calls and recovered, the group's apply is all or nothing ($n_before before, $n_after after)"
else
	echo "ok - # SKIP recovery: strace fault injection is not available"
fi
