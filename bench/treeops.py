#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark helper, run by hand: lists a target tree, turns two listings into the floor's op list,
# and compares a tool's result with grove's.
"""Usage:
    treeops.py list TARGET > LISTING        one line per entry: type, path, link text
    treeops.py ops BEFORE AFTER > OPS       the floor's ops that turn BEFORE into AFTER
    treeops.py reads OP BEFORE AFTER STOW-DIR TARGET FLAGS PKG... > READS
        the reads any tool with Stow's semantics must make for OP (stow, noop, add1, unstow,
        unrel) on those packages: the floor's D and K lines (bench/floor.c)
    treeops.py reads-all OP BEFORE AFTER STOW-DIR TARGET FLAGS PKG... > READS
        the same, with every package folder listed, the folded ones too: what grove reads by
        design (it refuses a package holding an escaping link or a special file anywhere, even
        inside a folder that folds; docs/performance.md, "The floor plus grove's reads")
    treeops.py resolved TARGET > RESOLVED   every reachable file and the real file it is
    treeops.py check REF REF-RESOLVED OTHER OTHERROOT
        prints "same" (identical entries and link texts), "same files" (different links, but
        every file path resolves to the same package file, as with cp -rs) or "DIFF: ..."
"""
import os
import sys


def listing(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            path = name if rel == "." else f"{rel}/{name}"
            if os.path.islink(full):
                out.append(f"l\t{path}\t{os.readlink(full)}")
            elif os.path.isdir(full):
                out.append(f"d\t{path}\t")
            else:
                out.append(f"f\t{path}\t")
    out.sort()
    return out


def load(fn):
    m = {}
    with open(fn) as f:
        for line in f:
            t, p, l = line.rstrip("\n").split("\t")
            m[p] = (t, l)
    return m


def ops(before, after):
    b, a = load(before), load(after)
    gone = [p for p in b if p not in a or a[p] != b[p]]
    new = [p for p in a if p not in b or a[p] != b[p]]
    # Entries beneath a removed folder go with it (a plain rmdir needs them gone first, and they
    # are listed); entries beneath an added link do not exist in listings.
    res = []
    for p in sorted(gone, key=lambda p: (-p.count("/"), p)):
        t = b[p][0]
        if t == "f":
            sys.exit(f"treeops: a file would be removed: {p}")
        res.append(f"{'U' if t == 'l' else 'R'} {p}")
    for p in sorted(new, key=lambda p: (p.count("/"), p)):
        t, l = a[p]
        if t == "f":
            continue  # files are the user's doing (the added package file), not a tool's
        res.append(f"M {p}" if t == "d" else f"L {p}\t{l}")
    return res


def dotfiles_adjust(rel):
    return "/".join("." + c[4:] if c.startswith("dot-") and len(c) > 4 else c for c in rel.split("/"))


def reads(op, before, after, stowdir, target, flags, pkgs, every_folder=False):
    """What any tool with Stow's semantics must read for OP, whatever its design: every package's
    own folder, and each package folder whose place in the target is a real folder (before the
    op for an unstow, after it for a stow, either for a restow), since the links inside can only
    be made or found from the folder's listing; and, when the op may remove or keep links, every
    target link that points into a named package (a tool must read a link to know it is the
    package's). A folder that is folded (one link to it) is not listed: Stow does not list it.
    Lower bound only: no lookups of the target's entries, no log."""
    b, a = load(before), load(after)
    decide = {"stow": [a], "unrel": [a], "unstow": [b], "noop": [b, a], "add1": [b, a]}[op]
    dotfiles = "--dotfiles" in flags.split()
    res = []
    for p in pkgs:
        root = os.path.join(stowdir, p)
        for dirpath, dirnames, _ in os.walk(root):
            dirnames.sort()
            rel = os.path.relpath(dirpath, root)
            if rel == ".":
                res.append(f"D {p}")
                continue
            tpath = dotfiles_adjust(rel) if dotfiles else rel
            if every_folder or any(m.get(tpath, ("",))[0] == "d" for m in decide):
                res.append(f"D {p}/{rel}")
            else:
                dirnames[:] = []  # nothing below a folder left unlisted is visited either
    if op in ("unstow", "noop", "add1"):
        roots = [os.path.join(stowdir, p) for p in pkgs]
        for path, (t, text) in sorted(b.items()):
            if t != "l":
                continue
            dest = os.path.normpath(os.path.join(target, os.path.dirname(path), text))
            if any(dest == r or dest.startswith(r + "/") for r in roots):
                res.append(f"K {path}")
    return res


def resolved(root):
    """Every file reachable from ROOT (following links) and the real file it is."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        rel = os.path.relpath(dirpath, root)
        for name in filenames:
            full = os.path.join(dirpath, name)
            out[name if rel == "." else f"{rel}/{name}"] = os.path.realpath(full)
    return out


def check(ref, refresolved, other, otherroot):
    a, b = open(ref).read(), open(other).read()
    if a == b:
        return "same"
    with open(refresolved) as f:
        ra = dict(line.rstrip("\n").split("\t") for line in f)
    rb = resolved(otherroot)
    if ra == rb:
        return "same files"
    only_a = sorted(set(ra) - set(rb))
    only_b = sorted(set(rb) - set(ra))
    differ = sorted(p for p in set(ra) & set(rb) if ra[p] != rb[p])
    return (f"DIFF: {len(only_a)} only in grove's, {len(only_b)} only in this, "
            f"{len(differ)} resolve elsewhere; e.g. {(only_a + only_b + differ)[:3]}")


def main():
    cmd = sys.argv[1]
    if cmd == "list":
        sys.stdout.write("".join(x + "\n" for x in listing(sys.argv[2])))
    elif cmd == "resolved":
        r = resolved(sys.argv[2])
        sys.stdout.write("".join(f"{k}\t{v}\n" for k, v in sorted(r.items())))
    elif cmd == "ops":
        sys.stdout.write("".join(x + "\n" for x in ops(sys.argv[2], sys.argv[3])))
    elif cmd in ("reads", "reads-all"):
        a = sys.argv[2:]
        r = reads(a[0], a[1], a[2], a[3], a[4], a[5], a[6:], cmd == "reads-all")
        sys.stdout.write("".join(x + "\n" for x in r))
    elif cmd == "check":
        print(check(*sys.argv[2:6]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
