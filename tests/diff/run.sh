#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Differential test: run stowdiff.py's random scenarios on GNU Stow 2.4.1 (the oracle .deb) and on grove.
set -euo pipefail

: "${GROVE:?GROVE must name the grove binary}"
: "${GROVE_SOURCE_ROOT:?GROVE_SOURCE_ROOT must name the repository root}"
deb=${GROVE_STOW_DEB:-${GROVE_ORACLE_DIR:-$GROVE_SOURCE_ROOT/../shared/oracles}/stow_2.4.1-2_all.deb}
# Without the oracle the test is skipped (exit 77), saying how to provide it (docs/testing.md#oracles).
if [[ ! -f $deb ]]; then
	echo "SKIP: stow-differential: GNU Stow 2.4.1 oracle not found at '$deb': put stow_2.4.1-2_all.deb in ../shared/oracles beside the clone, or set GROVE_ORACLE_DIR or GROVE_STOW_DEB (docs/testing.md#oracles)"
	exit 77
fi
command -v dpkg-deb >/dev/null || { echo "stow-differential: FAIL: dpkg-deb not found" >&2; exit 1; }
command -v perl >/dev/null || { echo "stow-differential: FAIL: perl not found" >&2; exit 1; }
start=$SECONDS

oracle=$(mktemp -d "${TMPDIR:-/tmp}/grove-stow-oracle.XXXXXX")
trap 'rm -rf "$oracle"' EXIT
dpkg-deb -x "$deb" "$oracle"
if [[ ! -f $oracle/usr/bin/stow ]]; then
	echo "stow-differential: FAIL: '$deb' holds no usr/bin/stow" >&2
	exit 1
fi

# grove runs as the drop-in it is compared with: invoked as "stow" (a link of that name), it is GNU
# Stow exactly. Invoked as grove, Stow's spelling differs on purpose where the log recorded the
# options a package was stowed with (docs/stow.md "Recorded options"; tests/shell/t0038).
mkdir "$oracle/bin"
ln -s "$(realpath "$GROVE")" "$oracle/bin/stow"

# The preview differential: in every third scenario (GROVE_DIFF_PREVIEW_EVERY; 0: none) a third copy
# runs each op as grove, first with -n --json, then for real, and the preview's exit status and ops
# must be what the real run then did to the tree.
status=0
/usr/bin/python3 "$GROVE_SOURCE_ROOT/tests/diff/stowdiff.py" \
	--stow-cmd "env PERL5LIB=$(printf %q "$oracle/usr/share/perl5") perl $(printf %q "$oracle/usr/bin/stow")" \
	--grove "$oracle/bin/stow" \
	--seed "${GROVE_DIFF_SEED:-1}" --count "${GROVE_DIFF_COUNT:-300}" \
	--preview-every "${GROVE_DIFF_PREVIEW_EVERY:-3}" || status=$?
echo "diff: took $((SECONDS - start)) s"
exit "$status"
