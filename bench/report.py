#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark report, run by hand: turns bench/run.sh's raw results into the markdown tables of
# docs/performance.md (medians, ratios to GNU Stow 2.4.1 and to the floor, RSS, syscalls, checks).
"""Usage: report.py RESULTS-DIR"""
import os
import statistics
import sys
from collections import defaultdict

OPS = ["stow", "noop", "add1", "unstow", "unrel"]
OP_NAMES = {
    "stow": "stow, empty target",
    "noop": "no-op restow",
    "add1": "restow, one file added",
    "unstow": "unstow",
    "unrel": "stow, unrelated files in target",
}
TOOLS = ["grove", "grove-static", "stow241", "stow231", "xstow", "cp", "floor", "floor-read",
         "floor-read-all"]
TOOL_NAMES = {"grove": "grove", "grove-static": "grove, static SQLite+PCRE2", "stow241": "Stow 2.4.1", "stow231": "Stow 2.3.1",
              "xstow": "xstow", "cp": "cp -rs", "floor": "floor",
              "floor-read": "floor + reads", "floor-read-all": "floor + grove's reads"}


def read(path):
    return open(path).read().splitlines() if os.path.exists(path) else []


def ms(x):
    return f"{x * 1000:.1f}" if x < 10 else f"{x * 1000:.0f}"


def main():
    d = sys.argv[1]
    wall, cpu, rss, bad = defaultdict(list), defaultdict(list), defaultdict(list), defaultdict(int)
    shapes = []
    for line in read(f"{d}/results.txt"):
        shape, op, tool, run, w, c, _u, _s, r, st = line.split()
        if shape not in shapes:
            shapes.append(shape)
        k = (shape, op, tool)
        if st != "0":
            bad[k] += 1
            continue
        wall[k].append(float(w))
        cpu[k].append(float(c))
        rss[k].append(int(r))
    checks = defaultdict(set)
    for line in read(f"{d}/checks.txt"):
        shape, op, tool, _run, res = line.split(" ", 4)
        checks[(shape, op, tool)].add(res)
    calls = {}
    for line in read(f"{d}/syscalls.txt"):
        shape, op, tool, n = line.split()
        calls[(shape, op, tool)] = n
    fops, freads, freads_all = {}, {}, {}
    for line in read(f"{d}/floor-ops.txt"):
        shape, op, kind, n = line.split()
        {"floor-reads": freads, "floor-reads-all": freads_all}.get(kind, fops)[(shape, op)] = n
    capped = read(f"{d}/capped.txt")

    print("".join(f"<!-- {l.lstrip('# ')} -->\n" for l in read(f"{d}/machine.txt")), end="")
    for shape in shapes:
        print(f"\n### {shape}\n")
        print("| op | tool | n | wall ms (median) | CPU ms (median) | × Stow 2.4.1 (wall) "
              "| × floor (wall) | × floor + reads (wall) | peak RSS MiB | syscalls | tree vs grove's |")
        print("| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --- |")
        for op in OPS:
            ref = wall.get((shape, op, "stow241"))
            flo = wall.get((shape, op, "floor"))
            flr = wall.get((shape, op, "floor-read"))
            flrm = statistics.median(flr) if flr else None
            refm = statistics.median(ref) if ref else None
            flom = statistics.median(flo) if flo else None
            for tool in TOOLS:
                k = (shape, op, tool)
                if k not in wall and k not in bad:
                    continue
                name = OP_NAMES[op] + (f" ({fops[(shape, op)]} floor ops)"
                                       if (shape, op) in fops and tool == "grove" else "")
                if tool == "floor-read" and (shape, op) in freads:
                    name += f" ({freads[(shape, op)]} reads)"
                if tool == "floor-read-all" and (shape, op) in freads_all:
                    name += f" ({freads_all[(shape, op)]} reads)"
                if k not in wall:
                    print(f"| {name} | {TOOL_NAMES[tool]} | 0 | failed ×{bad[k]} | | | | | | | |")
                    continue
                w = statistics.median(wall[k])
                c = statistics.median(cpu[k])
                rs = f"{max(rss[k]) / 1024:.1f}"
                xs = f"{w / refm:.3g}" if refm else "—"
                xf = f"{w / flom:.3g}" if flom else "—"
                xr = f"{w / flrm:.3g}" if flrm else "—"
                ch = "; ".join(sorted(checks.get(k, {"—"})))
                if tool == "grove":
                    ch = "(reference)"
                fail = f" ({bad[k]} failed)" if bad[k] else ""
                print(f"| {name} | {TOOL_NAMES[tool]} | {len(wall[k])}{fail} | {ms(w)} | {ms(c)} "
                      f"| {xs} | {xf} | {xr} | {rs} | {calls.get(k, '—')} | {ch} |")
    if capped:
        print("\nCapped (a single run took longer than the cap; medians from fewer runs):\n")
        for c in capped:
            print(f"- {c}")


if __name__ == "__main__":
    main()
