#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# grove apply: --check exits 0 (nothing to change), 1 (would change) or 6 (conflicts); a conflict
# leaves the whole --diff shown and names the manifest line behind it; with no -f the manifest is
# ./grove.yaml, else $XDG_CONFIG_HOME/grove/grove.yaml, and none names the places searched.
source "$(dirname "$0")/lib.sh"

S=$ROOT/dotfiles
H=$ROOT/home
E=$ROOT/etc
mk_file "$S/bash/.bashrc" "bash"
mk_file "$S/vim/.vimrc" "vim"
mk_file "$S/etcpkg/motd" "motd"
mk_file "$H/.bashrc" "mine"
mkdir -p "$E" "$ROOT/work"
cd "$ROOT/work"

# ---- where the manifest is looked for ----
expect_exit 78 "$GROVE" apply --check
expect_err_line "no manifest: looked for \./grove\.yaml and $XDG_CONFIG_HOME/grove/grove\.yaml" "-f FILE"
mkdir -p "$XDG_CONFIG_HOME/grove"
cat >"$XDG_CONFIG_HOME/grove/grove.yaml" <<YAML
targets:
  - path: $E
    dir: $S
    packages: [etcpkg]
YAML
expect_exit 1 "$GROVE" apply --check
expect_out_has "target $E: +etcpkg (1 change)"
cat >grove.yaml <<YAML
targets:
  - path: $H
    dir: $S
    packages: [vim]
YAML
expect_exit 1 "$GROVE" apply --check
expect_out_has "target $H: +vim (1 change)"
[[ $(grep -c '^target' "$OUT") == 1 ]] || fail "./grove.yaml did not win: $(cat "$OUT")"
check "no -f: ./grove.yaml, else \$XDG_CONFIG_HOME/grove/grove.yaml, else an error naming both"

# ---- --check: 0, 1, 6 ----
expect_exit 0 "$GROVE" apply
expect_exit 0 "$GROVE" apply --check
expect_out_has "nothing to change"
cat >grove.yaml <<YAML
targets:
  - path: $E
    dir: $S
    packages: [etcpkg]
  - path: $H
    dir: $S
    packages:
      - vim
      - bash
YAML
snapshot "$H"
expect_exit 6 "$GROVE" apply --check --diff
expect_out_has "+ $E/motd -> ../dotfiles/etcpkg/motd"
expect_out_has "target $H: +bash (0 changes, 1 conflict)"
expect_err_has "grove: target '$H' (grove.yaml:5) has conflicts:"
expect_err_has "  grove.yaml:9: stow 'bash': cannot stow ../dotfiles/bash/.bashrc over existing target .bashrc"
expect_exit 6 "$GROVE" -n apply
expect_exit 6 "$GROVE" apply --check --json
"$GROVE_TEST_PY" "$GROVE_SOURCE_ROOT/tests/json/validate.py" "$GROVE_SOURCE_ROOT/docs/grove.schema.json" "$OUT" apply ||
	fail "apply --check --json with a conflict does not validate: $(cat "$OUT")"
"$GROVE_TEST_PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); t=d["targets"]; assert t[0]["ops"] and [c["line"] for c in t[1]["conflicts"]] == [9] and not d["applied"], d' "$OUT" ||
	fail "apply --check --json with a conflict: $(cat "$OUT")"
check "apply --check: a conflict is exit 6, with the whole diff and the manifest line"

expect_exit 1 "$GROVE" apply --diff
expect_out_has "+ $E/motd -> ../dotfiles/etcpkg/motd"
expect_err_has "grove.yaml:9: stow 'bash'"
expect_unchanged "$H"
expect_tree "$E" ""
check "apply (no --check) with a conflict: exit 1, nothing changed"
