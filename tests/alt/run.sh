#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs the alternatives differential test (tests/alt/diff.py) against update-alternatives.
set -euo pipefail
: "${GROVE:?GROVE must name the grove binary}"
ua=${UPDATE_ALTERNATIVES:-/usr/bin/update-alternatives}
if [ ! -x "$ua" ]; then
    echo "update-alternatives not found at $ua" >&2
    exit 1
fi
exec python3 "$(dirname "$0")/diff.py" --seeds "${ALT_DIFF_SEEDS:-200}" "$@"
