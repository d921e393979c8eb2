#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# What the library's object files say about its modules (issue 39 item 4), from `nm`:
#   check-symbols.py BUILD_DIR [--cycles-fail]
#  1. every symbol an object file of src/ exports is grove_-prefixed (main excepted): a function
#     two files share is the module's API, named as such; everything else is static;
#  2. the calls between modules (a module as in check-layers.sh: include/grove/NAME.h, src/NAME.c,
#     src/NAME_*.c; the CLI one module): each module's callees, and every cycle among them,
#     printed; with --cycles-fail a cycle fails the check (once the modules are cut at seams).
import glob
import os
import re
import subprocess
import sys


def objects(build):
    out = []
    for lib in ("libgrove.a.p", "libgrovecli.a.p", "grove.p"):
        for o in sorted(glob.glob(os.path.join(build, lib, "*.o"))):
            src = os.path.basename(o)[:-2]  # src_cli_main.c.o -> src_cli_main.c
            src = src.replace("src_cli_", "src/cli/", 1) if src.startswith("src_cli_") else \
                src.replace("src_", "src/", 1)
            out.append((o, src))
    return out


def module_of(path, public):
    if path.startswith("src/cli/"):
        return "cli"
    name = os.path.basename(path).rsplit(".", 1)[0]
    for h in public:
        if name == h or name.startswith(h + "_"):
            return h
    return name.split("_")[0]


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
    public = sorted((os.path.basename(h)[:-2] for h in glob.glob("include/grove/*.h")), key=len,
                    reverse=True)
    objs = objects(build)
    if len(objs) < 20:
        print("check-symbols: found %d object files under %s: build first" % (len(objs), build))
        return 1
    status = 0
    owner, uses = {}, {}
    for o, src in objs:
        defined, undefined = nm(o)
        mod = module_of(src, public)
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
