#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs the alternatives preview differential (tests/alt/preview.py): every step's dry run against
# the real run that follows it.
set -euo pipefail
: "${GROVE:?GROVE must name the grove binary}"
start=$SECONDS
status=0
# A sample of the differential's sequences (ALT_PREVIEW_SEEDS, default 30: about a seventh of the
# 200, within CI's time; the whole 200 with ALT_PREVIEW_SEEDS=200), and the differential's
# sequences that once found a difference.
seeds=${ALT_PREVIEW_SEEDS:-30}
also=100110,100957,101150,101181,101576
python3 "$(dirname "$0")/preview.py" --seeds "$seeds" --also "$also" "$@" || status=$?
echo "alt-preview: took $((SECONDS - start)) s"
exit "$status"
