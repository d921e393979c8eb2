#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# What the library's object files say about its modules (issue 39 item 4), from `nm`:
#   check-symbols.py BUILD_DIR [--cycles-fail]
#  1. every symbol an object file of src/ exports is grove_-prefixed (main excepted): a function
#     two files share is the module's API, named as such; everything else is static;
#  2. the calls between modules (a module is a folder of src/: src/journal/, src/cli/, ...): each
#     module's callees, and every cycle among them, printed; with --cycles-fail a cycle fails the
#     check.
import json
import os
import re
import subprocess
import sys


def objects(build):
    # The build's own record of which source each object file of the library and the program
    # was compiled from.
    with open(os.path.join(build, "compile_commands.json")) as f:
        commands = json.load(f)
    top = os.path.abspath(".")
    out = []
    for c in commands:
        o = c["output"]
        if not o.split("/")[0] in ("libgrove.a.p", "libgrovecli.a.p", "grove.p"):
            continue
        src = os.path.relpath(os.path.join(c["directory"], c["file"]), top)
        out.append((os.path.join(build, o), src))
    return sorted(out)


def module_of(path):
    # A module is a folder of src/ (src/journal/, src/cli/, ...).
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "src" else parts[0]


def nm(o):
    text = subprocess.run(["nm", o], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRCVW":
            defined.add(parts[2])
    return defined, undefined


def cycles(edges):
    # Tarjan's strongly connected components; a component of more than one module is a cycle.
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def main(argv):
    if len(argv) < 2:
        print("usage: check-symbols.py BUILD_DIR [--cycles-fail]", file=sys.stderr)
        return 2
    build, cycles_fail = argv[1], "--cycles-fail" in argv[2:]
    objs = objects(build)
    if len(objs) < 20:
        print("check-symbols: found %d object files under %s: build first" % (len(objs), build))
        return 1
    status = 0
    owner, uses = {}, {}
    for o, src in objs:
        defined, undefined = nm(o)
        mod = module_of(src)
        for s in defined:
            owner[s] = mod
            if not s.startswith("grove_") and s != "main":
                print("%s exports '%s': name it grove_… (a module's API) or make it static" % (src, s))
                status = 1
        uses.setdefault(mod, set()).update(undefined)
    edges, why = {}, {}
    for mod, syms in sorted(uses.items()):
        for s in sorted(syms):
            t = owner.get(s)
            if t and t != mod:
                edges.setdefault(mod, set()).add(t)
                why.setdefault((mod, t), []).append(s)
    found = cycles(edges)
    for comp in found:
        print("call cycle between modules: %s" % " <-> ".join(comp))
        for a in comp:
            for b in sorted(edges[a] & set(comp)):
                names = why[(a, b)]
                print("  %s calls %s: %s%s" % (a, b, ", ".join(names[:4]),
                                              " and %d more" % (len(names) - 4) if len(names) > 4 else ""))
    if found and cycles_fail:
        status = 1
    print("check-symbols: %d object files, %d modules, %d calls between modules, %d cycles%s" %
          (len(objs), len(uses), sum(len(v) for v in edges.values()), len(found),
           "" if cycles_fail else " (reported, not yet a failure)"))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
