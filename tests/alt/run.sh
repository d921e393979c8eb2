#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs the alternatives differential test (tests/alt/diff.py) against update-alternatives.
set -euo pipefail
: "${GROVE:?GROVE must name the grove binary}"
ua=${UPDATE_ALTERNATIVES:-/usr/bin/update-alternatives}
if [ ! -x "$ua" ]; then
    echo "SKIP: alt-differential: update-alternatives not found at $ua: install dpkg or set UPDATE_ALTERNATIVES (docs/testing.md#oracles)"
    exit 77
fi
start=$SECONDS
status=0
# ALT_DIFF_SEEDS sequences (default 200); with --mixed, ALT_MIXED_SEEDS (default ALT_DIFF_SEEDS).
seeds=${ALT_DIFF_SEEDS:-200}
[[ " $* " == *" --mixed "* ]] && seeds=${ALT_MIXED_SEEDS:-$seeds}
python3 "$(dirname "$0")/diff.py" --seeds "$seeds" "$@" || status=$?
echo "alt-diff: took $((SECONDS - start)) s"
exit "$status"
