#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark ratios, run by hand: from bench/run.sh's raw results, how many times less wall and CPU
# time (user + sys) each grove build takes than GNU Stow 2.4.1, per shape and op: the ratio of the
# medians, and the spread of the per-run ratios (run r of grove against run r of Stow, which ran
# next to each other in the rotation).
"""Usage: ratios.py RESULTS-DIR"""
import statistics
import sys
from collections import defaultdict

OPS = ["stow", "noop", "add1", "unstow", "unrel"]


def main():
    runs = defaultdict(dict)  # (shape, op, tool) -> run -> (wall ms, cpu ms)
    for line in open(f"{sys.argv[1]}/results.txt"):
        if line.startswith("#"):
            continue
        f = line.split()
        shape, op, tool, run = f[:4]
        if f[-1] != "0":
            continue  # a failed or timed-out op
        runs[(shape, op, tool)][run] = (float(f[4]) * 1000, float(f[5]) * 1000)
    print("| shape | op | tool | n | wall ms | CPU ms | Stow wall / CPU ms | × less wall (runs) | × less CPU (runs) |")
    print("| --- | --- | --- | --: | --: | --: | --: | --- | --- |")
    for shape in sorted({k[0] for k in runs}):
        for op in OPS:
            stow = runs.get((shape, op, "stow241"), {})
            if not stow:
                continue
            sw = statistics.median(v[0] for v in stow.values())
            sc = statistics.median(v[1] for v in stow.values())
            for tool in ("grove", "grove-static"):
                g = runs.get((shape, op, tool), {})
                if not g:
                    continue
                gw = statistics.median(v[0] for v in g.values())
                gc = statistics.median(v[1] for v in g.values())
                rw = [stow[r][0] / g[r][0] for r in g if r in stow]
                rc = [stow[r][1] / g[r][1] for r in g if r in stow and g[r][1] > 0]
                print(f"| {shape} | {op} | {tool} | {len(g)} | {gw:.1f} | {gc:.1f} | {sw:.1f} / {sc:.1f} "
                      f"| {sw / gw:.1f} ({min(rw):.1f}–{max(rw):.1f}) | {sc / gc:.1f} ({min(rc):.1f}–{max(rc):.1f}) |")


if __name__ == "__main__":
    main()
