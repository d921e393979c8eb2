#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Differential test of `grove alt` against Debian's update-alternatives on seeded random sequences.
"""Runs the same random sequence of alternatives commands (and tampering between them) against
update-alternatives and grove alt, each in its own sandbox, and compares after every step: the
exit status, every entry of the link folders (link text or "file"), and the --query output of
every group. A sequence stops at its first difference, which is classified as one of the known
deliberate differences (KNOWN) or counted as unexplained.

Usage: diff.py [--seeds N] [--first S] [--steps K] [-v]   (GROVE, UPDATE_ALTERNATIVES from env)
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

# Deliberate differences: kind -> reason (also in docs/alternatives.md).
KNOWN = {
    "foreign-file-kept": "a regular file where a link of the group should be (ALTDIR/NAME or a "
                         "follower's ALTDIR entry): update-alternatives renames its link over it "
                         "or deletes it; grove never overwrites or deletes what is not a link "
                         "(invariant 5) and warns instead",
}

GROUPS = ["g0", "g1", "g2"]
SLAVES = ["s0", "s1"]
PRIOS = [0, 5, 5, 10, 10, 20, -1]


def setup(root):
    for d in ["I/bin", "I/alt", "I/opt", "D", "S"]:
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for k in range(4):
        open(os.path.join(root, "I/opt/p%d" % k), "w").close()
    for k in range(3):
        open(os.path.join(root, "I/opt/f%d" % k), "w").close()


def snapshot(root):
    out = {}
    for d in ["I/bin", "I/alt"]:
        full = os.path.join(root, d)
        for name in sorted(os.listdir(full)):
            p = os.path.join(full, name)
            key = d + "/" + name
            if os.path.islink(p):
                out[key] = ("link", os.readlink(p).replace(root, "@"))
            elif os.path.isdir(p):
                out[key] = ("dir",)
            else:
                out[key] = ("file",)
    return out


class Box:
    def __init__(self, root, kind, exe):
        self.root, self.kind, self.exe = root, kind, exe

    def cmd(self, args):
        r = self.root
        common = ["--altdir", r + "/I/alt", "--admindir", r + "/D", "--log", r + "/L",
                  "--instdir", r + "/I"]
        if self.kind == "ua":
            argv = [self.exe] + common + args
        else:
            argv = [self.exe, "--state", r + "/S", "alt"] + common + args
        p = subprocess.run([a.replace("@", r) for a in argv], capture_output=True, text=True,
                           env=dict(os.environ, LC_ALL="C"))
        return p.returncode, p.stdout.replace(r, "@"), p.stderr.replace(r, "@")


def random_step(rng):
    g = rng.choice(GROUPS)
    op = rng.choices(["install", "set", "auto", "remove", "remove-all", "query", "display",
                      "list", "tamper"], [8, 3, 2, 3, 1, 1, 1, 1, 3])[0]
    if op == "install":
        args = ["--install", "@/I/bin/" + g, g, "@/I/opt/p%d" % rng.randrange(4),
                str(rng.choice(PRIOS))]
        for s in SLAVES:
            if rng.random() < 0.5:
                f = "@/I/opt/f%d" % rng.randrange(4)  # f3 does not exist
                args += ["--slave", "@/I/bin/" + g + s, g + s, f]
        return ("cmd", args)
    if op in ("set", "remove"):
        return ("cmd", ["--" + op, g, "@/I/opt/p%d" % rng.randrange(5)])
    if op == "tamper":
        where = rng.choice(["bin", "alt"])
        name = g + rng.choice(["", "", "s0", "s1"])
        how = rng.choice(["delete", "file", "repoint", "repoint-other"])
        return ("tamper", where, name, how, rng.randrange(4))
    return ("cmd", ["--" + op, g])


def tamper(root, step):
    _, where, name, how, k = step
    p = os.path.join(root, "I", where, name)
    exists = os.path.lexists(p)
    if how == "delete":
        if exists:
            os.unlink(p)
    elif how == "file":
        if exists:
            os.unlink(p)
        with open(p, "w") as f:
            f.write("tamper\n")
    elif how == "repoint":
        if exists:
            os.unlink(p)
        os.symlink(root + "/I/opt/p%d" % k, p)
    else:
        if exists:
            os.unlink(p)
        os.symlink(root + "/I/opt/nowhere", p)


def classify(before, ua_snap, gr_snap):
    """The known kind of a difference in the link folders, or None."""
    diff = [k for k in set(ua_snap) | set(gr_snap) if ua_snap.get(k) != gr_snap.get(k)]
    if diff and all(gr_snap.get(k) == ("file",) and before.get(k) == ("file",) and
                    ua_snap.get(k, ("none",))[0] in ("link", "none") for k in diff):
        return "foreign-file-kept"
    return None


def run_seed(seed, steps, ua_exe, gr_exe, verbose):
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="altdiff.")
    try:
        ua = Box(os.path.join(tmp, "u"), "ua", ua_exe)
        gr = Box(os.path.join(tmp, "g"), "gr", gr_exe)
        setup(ua.root)
        setup(gr.root)
        for i in range(steps):
            step = random_step(rng)
            before = snapshot(gr.root)
            if step[0] == "tamper":
                tamper(ua.root, step)
                tamper(gr.root, step)
                continue
            a = ua.cmd(step[1])
            b = gr.cmd(step[1])
            sa, sb = snapshot(ua.root), snapshot(gr.root)
            why = None
            if a[0] != b[0]:
                why = "exit %d vs %d" % (a[0], b[0])
            elif sa != sb:
                why = "links differ"
            elif step[1][0] in ("--query", "--display", "--list") and a[1] != b[1]:
                why = "output differs"
            else:
                for g in GROUPS:
                    qa, qb = ua.cmd(["--query", g]), gr.cmd(["--query", g])
                    if qa[:2] != qb[:2]:
                        why = "query %s differs" % g
                        break
            if why is None:
                continue
            kind = classify(before, sa, sb)
            if verbose or kind is None:
                print("seed %d step %d %s: %s" % (seed, i, " ".join(step[1]), why))
                if kind is None:
                    print("  update-alternatives: rc=%d %s %s" % (a[0], a[2].strip(), sa))
                    print("  grove alt:           rc=%d %s %s" % (b[0], b[2].strip(), sb))
                    if a[1] != b[1]:
                        print("  ua out: %r\n  gr out: %r" % (a[1], b[1]))
            return kind or "unexplained"
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--steps", type=int, default=25)
    ap.add_argument("-v", action="store_true")
    o = ap.parse_args()
    ua_exe = os.environ.get("UPDATE_ALTERNATIVES", "/usr/bin/update-alternatives")
    gr_exe = os.environ["GROVE"]
    counts = {}
    for seed in range(o.first, o.first + o.seeds):
        kind = run_seed(seed, o.steps, ua_exe, gr_exe, o.v) or "same"
        counts[kind] = counts.get(kind, 0) + 1
    print("alt-differential: %d sequences, %d same, %s"
          % (o.seeds, counts.get("same", 0),
             ", ".join("%s %d" % (k, v) for k, v in sorted(counts.items()) if k != "same")
             or "no differences"))
    return 1 if counts.get("unexplained") else 0


if __name__ == "__main__":
    sys.exit(main())
