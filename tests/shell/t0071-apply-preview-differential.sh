#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The apply --check / apply differential (issue 43's "Done when"): the manifest tests run again with
# every real `grove apply` preceded by `grove apply --check --json` (apply-preview.py), and what the
# check reported must be what the apply then did, for every target (its ops applied to the folders'
# listing before give the listing after), profile (the generation made current) and alternatives
# group (the requests, with --json), and the exit status the check promised.
source "$(dirname "$0")/lib.sh"

T=$GROVE_SOURCE_ROOT/tests/shell
LOG=$ROOT/preview.log
: >"$LOG"
cat >"$ROOT/grove" <<WRAP
#!/bin/bash
exec "$GROVE_TEST_PY" "$T/apply-preview.py" "\$@"
WRAP
chmod 755 "$ROOT/grove"
# The manifest tests (apply, its --check, dotfiles, recorded options, profiles and alternatives
# through a manifest, the documented examples) and this one's sibling t0070.
tests=(t0010-apply t0016-apply-dotfiles-drop t0032-apply-check t0062-apply-alt-root
	t0063-apply-alt-one-transaction t0070-apply-check-preview t0011-apply-docs)
for t in "${tests[@]}"; do
	RC=0
	GROVE_REAL=$GROVE GROVE=$ROOT/grove APPLY_PREVIEW_LOG=$LOG bash "$T/$t.sh" >"$ROOT/$t.out" 2>&1 || RC=$?
	((RC == 0)) || fail "$t failed with apply previewed (exit $RC): $(tail -30 "$ROOT/$t.out")"
	check "$t passes with every apply compared with its --check"
done
n=$(grep -c '^compared' "$LOG" || true)
if grep -q '^DIFFERENCE' "$LOG"; then
	fail "apply --check disagrees with what apply then did:
$(grep -v '^compared' "$LOG")"
fi
((n >= 40)) || fail "only $n applies compared: $(cat "$LOG")"
check "$n applies did what their apply --check said (targets, profiles, alternatives, exit status)"
