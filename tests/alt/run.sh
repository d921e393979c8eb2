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
# And the sequences of later seeds that once found a difference (each --set-selections: a group
# left without a choice, the mode logged before a failing read, one group named twice).
also=100110,100957,101150,101181,101576
if [[ " $* " == *" --mixed "* ]]; then
    seeds=${ALT_MIXED_SEEDS:-$seeds}
    also=200420,200485,200679
fi
python3 "$(dirname "$0")/diff.py" --seeds "$seeds" --also "$also" "$@" || status=$?
echo "alt-diff: took $((SECONDS - start)) s"
exit "$status"
