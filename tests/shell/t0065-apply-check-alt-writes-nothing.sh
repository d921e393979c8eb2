#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove apply --check (and grove -n apply) reads a manifest's alternatives groups as grove alt's dry
# run reads them (issue 39 item 1): the admin files taken in, into memory, and nothing written,
# not even the state dir's cache of the admin files' stamps (alt-stamps-N), which a reading run
# writes once the files' change times have settled. 819d51b's check wrote that cache.
source "$(dirname "$0")/lib.sh"
need_ua

R=$ROOT/r S=$ROOT/state
mkdir -p "$R/usr/bin" "$R/etc/alternatives" "$R/var/lib/dpkg/alternatives"
for k in 1 2 3; do mk_file "$R/usr/bin/ed$k" "ed$k"; done
cat >"$ROOT/grove.yaml" <<EOF2
alternatives:
  root: $R
  groups:
    - name: ed
      link: /usr/bin/ed
      choices:
        - path: /usr/bin/ed1
          priority: 10
        - path: /usr/bin/ed2
          priority: 20
EOF2

# Waits until the coarse clock, which stamps files, has passed the admin files' change times
# (src/alt/alt_admin.c's stamp_settled): from then on a reading run would cache their stamps.
settled()
{
	"$GROVE_TEST_PY" - "$R/var/lib/dpkg/alternatives" <<'PY' || fail "the coarse clock did not pass the admin files' change times"
import os, sys, time
d = sys.argv[1]
newest = max(os.lstat(os.path.join(d, f)).st_ctime_ns for f in os.listdir(d))
deadline = time.monotonic() + 10
while time.clock_gettime_ns(5) <= newest:  # 5: CLOCK_REALTIME_COARSE (Linux)
    if time.monotonic() > deadline:
        sys.exit(1)
    time.sleep(0.001)
PY
}

expect_exit 0 "$GROVE" --state "$S" apply -f "$ROOT/grove.yaml"
[[ $(readlink "$R/etc/alternatives/ed") == /usr/bin/ed2 ]] || fail "apply did not make the group"
settled
snapshot "$ROOT"
expect_exit 0 "$GROVE" --state "$S" apply -f "$ROOT/grove.yaml" --check
expect_out_has "nothing to change"
expect_unchanged "$ROOT"
expect_exit 0 "$GROVE" --state "$S" -n apply -f "$ROOT/grove.yaml"
expect_unchanged "$ROOT"
check "apply --check and -n apply of an applied manifest: nothing written (no stamp cache)"

# update-alternatives adds ed3; the check sees it (taken in, into memory) and writes nothing.
"$UA" --root "$R" --install /usr/bin/ed ed /usr/bin/ed3 30 >/dev/null 2>&1 ||
	fail "update-alternatives --install failed"
settled
snapshot "$ROOT"
expect_exit 1 "$GROVE" --state "$S" apply -f "$ROOT/grove.yaml" --check
expect_out_has "alternatives ed: remove /usr/bin/ed3"
expect_unchanged "$ROOT"
expect_exit 0 "$GROVE" --state "$S" apply -f "$ROOT/grove.yaml"
[[ $(readlink "$R/etc/alternatives/ed") == /usr/bin/ed2 ]] || fail "apply did not remove ed3"
check "a choice added by update-alternatives: the check lists its removal, writes nothing; apply does it"
