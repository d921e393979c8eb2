#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark shapes, run by hand: writes one reproducible stow dir, a template of unrelated target
# files and a shape.env for bench/run.sh. No randomness: the same shape is the same tree.
"""Usage: gen.py SHAPE DIR

Shapes: dotfiles, dothome, pkg1k, pkg10k, pkg100k, nofold100k, multi200, multi800, deep128; for growth
curves also multiN (N packages sharing bin/ lib/ share/) and deepN (two N-deep chains); for memory
also pkgN/pkgNk/pkgNm and nofoldN/nofoldNk/nofoldNm (one package of N, N thousand or N million
files, nofold stowed with --no-folding: pkg10, pkg1m, nofold1m); for rollbacks rollKxN (K packages
of N files, e.g. roll10x100k, stowed with --no-folding one per transaction).
Writes DIR/stow/<packages>, DIR/unrelated/ (copied into the target for the "unrelated" op) and
DIR/shape.env (PKGS, ADD = the file the add-one op creates, FLAGS).
"""
import os
import re
import sys


def touch(path, body=b""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(body)


def unrelated_prefix(root):
    """5,000 unrelated files in bin/ lib/ share/ (the folders packages share) and var/."""
    for i in range(1000):
        touch(f"{root}/bin/other-{i:04d}")
        touch(f"{root}/lib/libother-{i:04d}.so")
    for d in range(20):
        for i in range(100):
            touch(f"{root}/share/other{d:02d}/f{i:03d}")
    for d in range(10):
        for i in range(100):
            touch(f"{root}/var/d{d:02d}/f{i:03d}")


def big_package(stow, name, files):
    """One package: 10 programs in bin/, 10 libraries in lib/, the rest in share/NAME/dKKK/ (100 per
    folder)."""
    p = f"{stow}/{name}"
    if files < 20:  # a small one (pkg10): half programs, half libraries
        for i in range(files):
            if i % 2 == 0:
                touch(f"{p}/bin/{name}-tool{i}", b"#!/bin/sh\n")
            else:
                touch(f"{p}/lib/lib{name}{i}.so")
        return [name]
    for i in range(10):
        touch(f"{p}/bin/{name}-tool{i}", b"#!/bin/sh\n")
        touch(f"{p}/lib/lib{name}{i}.so")
    for k in range(files - 20):
        touch(f"{p}/share/{name}/d{k // 100:04d}/f{k % 100:02d}")
    return [name]


def main():
    shape, root = sys.argv[1], sys.argv[2]
    stow, unrel = f"{root}/stow", f"{root}/unrelated"
    os.makedirs(stow)
    os.makedirs(unrel)
    flags = ""
    if shape == "dotfiles":
        pkgs = []
        for n in range(20):
            name = f"app{n:02d}"
            p = f"{stow}/{name}"
            touch(f"{p}/.{name}rc", b"set x\n")
            for c in ("main.conf", "keys.conf", "colors.conf"):
                touch(f"{p}/.config/{name}/{c}", b"k = v\n")
            touch(f"{p}/.local/bin/{name}-helper", b"#!/bin/sh\n")
            pkgs.append(name)
        add = "app00/.app00-extra"
        # A lived-in home: caches, documents, other programs' config, history files.
        for d in range(20):
            for i in range(100):
                touch(f"{unrel}/.cache/c{d:02d}/f{i:03d}")
        for d in range(10):
            for i in range(100):
                touch(f"{unrel}/Documents/d{d:02d}/doc{i:03d}.txt")
        for d in range(30):
            for i in range(10):
                touch(f"{unrel}/.config/other{d:02d}/f{i}")
        for i in range(200):
            touch(f"{unrel}/.local/bin/tool{i:03d}")
        for i in range(50):
            touch(f"{unrel}/.hist{i:02d}")
    elif shape == "dothome":
        # The populated home of issue 18: 20 packages that add into .config/, .local/share/ and
        # .local/bin/ (folders they share), stowed into a home of 3,800 unrelated files whose
        # .config/ holds 320 entries, some with deep trees under them.
        pkgs = []
        for n in range(20):
            name = f"app{n:02d}"
            p = f"{stow}/{name}"
            touch(f"{p}/.{name}rc", b"set x\n")
            for c in ("main.conf", "keys.conf", "colors.conf"):
                touch(f"{p}/.config/{name}/{c}", b"k = v\n")
            touch(f"{p}/.config/{name}/themes/dark/theme.conf", b"k = v\n")
            touch(f"{p}/.local/share/{name}/data.db")
            touch(f"{p}/.local/bin/{name}-helper", b"#!/bin/sh\n")
            pkgs.append(name)
        add = "app00/.local/bin/app00-extra"  # a new link in a folder the packages share
        for d in range(15):
            for i in range(100):
                touch(f"{unrel}/.cache/c{d:02d}/f{i:03d}")
        for d in range(5):
            for i in range(100):
                touch(f"{unrel}/Documents/d{d:02d}/doc{i:03d}.txt")
        for d in range(280):
            for i in range(2):
                touch(f"{unrel}/.config/other{d:03d}/f{i}")
        for i in range(30):
            touch(f"{unrel}/.config/rc{i:02d}.conf")
        for d in range(10):
            deep = f"{unrel}/.config/deep{d:02d}"
            for lvl in range(8):
                deep += f"/l{lvl}"
                for i in range(3):
                    touch(f"{deep}/f{i}")
        for d in range(60):
            for i in range(5):
                touch(f"{unrel}/.local/share/other{d:02d}/f{i}")
        for i in range(150):
            touch(f"{unrel}/.local/bin/tool{i:03d}")
        for i in range(50):
            touch(f"{unrel}/.hist{i:02d}")
    elif re.fullmatch(r"(pkg|nofold)[1-9][0-9]*[km]?", shape):
        kind, num, unit = re.fullmatch(r"(pkg|nofold)([0-9]+)([km]?)", shape).groups()
        files = int(num) * {"k": 1000, "m": 1000000, "": 1}[unit]
        pkgs = big_package(stow, "big", files)
        add = "big/share/big/d0000/new"
        if kind == "nofold":
            flags = "--no-folding"
        unrelated_prefix(unrel)
    elif re.fullmatch(r"roll[1-9][0-9]*x[1-9][0-9]*[km]?", shape):
        # K packages of N files each (big_package's layout: they share bin/, lib/ and share/),
        # stowed with --no-folding one per transaction: the rollback over K transactions.
        count, num, unit = re.fullmatch(r"roll([0-9]+)x([0-9]+)([km]?)", shape).groups()
        files = int(num) * {"k": 1000, "m": 1000000, "": 1}[unit]
        pkgs = []
        for n in range(int(count)):
            pkgs += big_package(stow, f"p{n:02d}", files)
        add = "p00/share/p00/d0000/new"
        flags = "--no-folding"
        unrelated_prefix(unrel)
    elif re.fullmatch(r"multi[1-9][0-9]*", shape):
        count = int(shape[5:])
        pkgs = []
        for n in range(count):
            name = f"p{n:03d}"
            p = f"{stow}/{name}"
            touch(f"{p}/bin/{name}-a", b"#!/bin/sh\n")
            touch(f"{p}/bin/{name}-b", b"#!/bin/sh\n")
            touch(f"{p}/lib/lib{name}.so")
            touch(f"{p}/lib/lib{name}.so.1")
            for i in range(5):
                touch(f"{p}/share/{name}/data{i}")
            touch(f"{p}/share/man/man1/{name}.1")
            pkgs.append(name)
        add = "p000/bin/p000-new"
        unrelated_prefix(unrel)
    elif re.fullmatch(r"deep[1-9][0-9]*", shape):
        # Two packages with the same N-deep chain of folders, a file at every level of each:
        # nothing can fold, every level is a shared folder.
        depth = int(shape[4:])
        pkgs = ["deepa", "deepb"]
        for name in pkgs:
            d = f"{stow}/{name}"
            for lvl in range(depth):
                d += "/l"
                touch(f"{d}/{name}-{lvl:03d}")
        add = "deepa/" + "l/" * depth + "new"
        for d in range(10):
            for i in range(100):
                touch(f"{unrel}/other/d{d:02d}/f{i:03d}")
        for i in range(100):
            touch(f"{unrel}/l/other{i:03d}")
    else:
        sys.exit(f"gen.py: unknown shape '{shape}'")
    with open(f"{root}/shape.env", "w") as f:
        f.write(f"PKGS='{' '.join(pkgs)}'\nADD='{add}'\nFLAGS='{flags}'\n")


if __name__ == "__main__":
    main()
