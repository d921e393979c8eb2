#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The layering of docs/architecture.md, checked by grep (issue 14):
#  1. the CLI (src/cli/) includes only the public headers include/grove/*.h, its own headers and
#     the build's grove-config.h: never a private header of src/ (but src/banned.h, a compile-time
#     guard with no API, as "../banned.h");
#  2. only the fs layer calls filesystem syscalls (scripts/check-syscalls.sh);
#  3. only session.c (the transaction driver) opens or finishes a journal transaction;
#  4. no include cycle between modules (a module: a folder of src/, with the public headers
#     include/grove/NAME.h of its files NAME.c or NAME_*.c);
#  5. files of src/ over 1,200 lines and functions over 120 are listed for a reviewer to read
#     (warnings, never a failure: code is split where its responsibilities part, never to fit a
#     number; a comment "grove: long file: REASON" in a file's first 5 lines, or "grove: long
#     function: REASON" right above a function, says why and silences it);
#  6. every .c of src/ includes banned.h itself, after its other includes;
#  7. the planner is pure: no planner file (src/plan/planner*.c) calls the scanner or the fs layer
#     (the bounded walk reads through the reader the scan→plan loop gives it);
#  8. only the transaction driver (src/session/) writes what a session carries (its group changes,
#     package rows, progress, rollback, admindir): its owners call grove_session_take_alt,
#     grove_session_set_progress and the rest (session.h).
#  9. JSON is written in one place, src/cli/json*.c (issue 39 item 2, docs/json.md): no other file
#     includes jansson.h, calls jansson (json_*), or spells a JSON member ("\"key\": ") itself.
# What the object files say (exported names, calls between modules) is scripts/check-symbols.py's,
# run on a build.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
fail() {
    echo "$1"
    status=1
}

# 1.
bad=$(grep -nE '^\s*#\s*include\s*"' $(git ls-files 'src/cli/*.c' 'src/cli/*.h') |
      grep -vE '#\s*include\s*"(grove/[a-z_]+\.h|grove-config\.h|\.\./banned\.h)"' |
      while IFS= read -r line; do
          inc=$(sed -E 's/.*#\s*include\s*"([^"]+)".*/\1/' <<<"$line")
          [ -e "src/cli/$inc" ] || echo "$line"
      done)
[ -z "$bad" ] || fail "the CLI includes private headers of src/ (use include/grove/*.h):
$bad"

# 2.
bash scripts/check-syscalls.sh >/dev/null || fail "$(bash scripts/check-syscalls.sh)"

# 3.
bad=$(grep -nE '\bgrove_journal_(begin|begin_alt|begin_intent|finish)\s*\(' $(git ls-files 'src/*.c' 'src/cli/*.c') |
      grep -vE '^src/(session/session|journal/[a-z_]+)\.c:' || true)
[ -z "$bad" ] || fail "journal transactions opened or finished outside session.c:
$bad"

# 6.
for f in $(git ls-files 'src/*.c'); do
    last=$(grep -n '^#include' "$f" | tail -1)
    [[ $last == *'banned.h"'* ]] || fail "$f: banned.h is not its last include (#include \"banned.h\" /* last */)"
done

# 7.
bad=$(grep -nE '\bgrove_(scan|fs|root)_[a-z_]+\s*\(' $(git ls-files 'src/plan/planner*.c') |
      grep -vE '^\S+:[0-9]+:\s*(//|/\*|\*)' || true)
[ -z "$bad" ] || fail "the planner calls the scanner or the fs layer (give it a reader instead):
$bad"

# 8.
bad=$(grep -nE '\b(s|session|sess)(\.|->)(alt|n_alt|pkgs|n_pkgs|record_pkgs|alt_admin|progress|progress_ctx|rollback|rollback_ctx|roots|n_roots)\s*=[^=]' \
      $(git grep -lw 'grove_session' -- 'src/*.c' ':!src/session/') /dev/null || true)
[ -z "$bad" ] || fail "a session's carried inputs written outside the driver (use grove_session_take_alt, grove_session_set_progress, ...):
$bad"

# 9.
jansson='json_(object|array|string|integer|real|number|true|false|null|boolean|dump|load|decref|incref|pack|unpack|v?sprintf|equal|copy|deep_copy)[a-z_]*'
bad=$(grep -nE "#\\s*include\\s*<jansson\\.h>|\\b$jansson\\s*\\(|\\\\\"[a-z_]+\\\\\": " \
          $(git ls-files 'src/*.c' 'src/*.h' 'src/**/*.c' 'src/**/*.h' 'include/grove/*.h') |
      grep -vE '^src/cli/json[a-z_]*\.c:' || true)
[ -z "$bad" ] || fail "JSON written outside src/cli/json*.c (hand its values to json.c's API):
$bad"

# 4. and 5.
python3 - <<'PY' || status=1
import glob, os, re, sys

def module(path):
    # A module is a folder of src/ (src/journal/, src/cli/, ...); a public header
    # include/grove/NAME.h belongs to the folder holding NAME.c, else NAME_*.c.
    parts = path.split("/")
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[0] == "src":
        return parts[1].rsplit(".", 1)[0]  # src/banned.h
    name = os.path.basename(path)[:-2]
    for pat in ("src/*/%s.c" % name, "src/*/%s_*.c" % name):
        hits = sorted(glob.glob(pat))
        if hits:
            return hits[0].split("/")[1]
    return "grove/" + name

edges = {}
files = sorted(glob.glob("src/**/*.[ch]", recursive=True) + glob.glob("include/grove/*.h"))
for f in files:
    m = module(f)
    here = os.path.dirname(f)
    for inc in re.findall(r'^\s*#\s*include\s*"([^"]+)"', open(f).read(), re.M):
        if inc.startswith("grove/"):
            t = module("include/" + inc)
        elif os.path.exists(os.path.join(here, inc)):
            t = module(os.path.normpath(os.path.join(here, inc)))
        elif os.path.exists("src/" + inc) and not f.startswith("src/cli/"):
            t = module("src/" + inc)
        else:
            continue
        if t not in ("base", "banned") and t != m:
            edges.setdefault(m, {}).setdefault(t, f)
ok = True
state = {}
def visit(m, stack):
    global ok
    state[m] = 1
    for t in sorted(edges.get(m, {})):
        if state.get(t) == 1:
            cyc = stack[stack.index(t):] + [t] if t in stack else [m, t]
            print("include cycle between modules: " + " -> ".join(cyc) + " (" +
                  ", ".join(edges[a][b] for a, b in zip(cyc, cyc[1:])) + ")")
            ok = False
        elif not state.get(t):
            visit(t, stack + [t])
    state[m] = 2
for m in sorted(edges):
    if not state.get(m):
        visit(m, [m])

for f in sorted(glob.glob("src/**/*.c", recursive=True)):
    lines = open(f).read().split("\n")
    if len(lines) > 1201 and not any("grove: long file:" in l for l in lines[:5]):
        print(f"warning: {f}: {len(lines) - 1} lines (over 1,200: do its responsibilities part?)")
    i = 0
    while i < len(lines):
        m = re.match(r"^([a-z_][a-z0-9_]*)\(", lines[i])
        if m:
            j = i
            while j < len(lines) and lines[j] != "{" and not lines[j].endswith(";"):
                j += 1
            if j < len(lines) and lines[j] == "{":
                k = j
                while lines[k] != "}":
                    k += 1
                n = k - i + 2  # from the return type's line to the closing brace
                above = []
                a = i - 2
                while a >= 0 and (lines[a].startswith("/*") or lines[a].startswith(" *")):
                    above.append(lines[a])
                    a -= 1
                if n > 120 and not any("grove: long function:" in l for l in above):
                    print(f"warning: {f}:{i + 1}: {m.group(1)} is {n} lines (over 120: does it do one thing?)")
                i = k
        i += 1
sys.exit(0 if ok else 1)
PY
[ "$status" -eq 0 ] && echo "layer check: ok"
exit "$status"
