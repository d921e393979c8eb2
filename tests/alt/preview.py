#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Preview differential (issue 39 item 1): grove alt --dry-run against the real run that follows it.
"""Runs the alternatives differential's random sequences (diff.py's steps, tampering and admin
file forms, in one grove sandbox) and before every command runs its dry run first: the dry run
must change nothing in the sandbox (links, admindir, log, state dir: every entry's type, text,
bytes and times), and what it predicts must be what the real run then does:

- the exit status is the real run's;
- a single mutating command (--install, --set, --auto, --remove, --remove-all, --config) is
  previewed with --json: applied to the tree before, its ops give exactly the tree after the real
  run (every link, folder and file beneath the instdir, walked without following links); its
  group's text `after` is the admin file the real run leaves (null: none), and with no group no
  admin file changes; `changed` is whether the real run changed the tree or an admin file;
- its messages are the real run's (stdout and stderr), said as what would be done: the preview's
  lines with each "would …" turned back into update-alternatives' words equal the real run's;
- --set-selections and --all (several commands, no JSON document) are previewed in text: the exit
  status, and that nothing changes.

The truth is the disk after the real run, never the preview's own output.

Usage: preview.py [--seeds N] [--first S] [--steps K] [--also S,S] [-v]   (GROVE from env)
"""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diff  # noqa: E402  (the differential's steps, sandbox and tampering)

SINGLE = ("--install", "--set", "--auto", "--remove", "--remove-all", "--config")

# A dry run's words for what the real run does (update-alternatives' words), longest first.
WOULD = [
    ("would remove it from list", "removing from list"),
    ("would not replace", "not replacing"),
    ("would not remove", "not removing"),
    ("would set up", "setting up"),
    ("would rename", "renaming"),
    ("would switch", "switching"),
    ("would update", "updating"),
    ("would remove", "removing"),
    ("would force", "forcing"),
    ("would select", "selecting"),
    ("would skip", "skip"),
    ("would use", "using"),
]


def undry(line):
    for a, b in WOULD:
        line = line.replace(a, b)
    return line


def tree(top):
    """Every entry beneath top, not following links: path -> ("link", text) | ("dir",) |
    ("file", sha1)."""
    out = {}
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, top)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = ("dir",)
            else:
                with open(p, "rb") as f:
                    out[rel] = ("file", hashlib.sha1(f.read()).hexdigest())
    return out


def everything(root):
    """The whole sandbox with each entry's times and inode: what a dry run must leave as it is."""
    out = {}
    for d, dirs, files in os.walk(root):
        for n in [""] + dirs + files:
            p = os.path.join(d, n) if n else d
            st = os.lstat(p)
            data = None
            if os.path.islink(p):
                data = os.readlink(p)
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    data = hashlib.sha1(f.read()).hexdigest()
            out[os.path.relpath(p, root)] = (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns,
                                            st.st_ctime_ns, data)
    return out


def admin(root):
    out = {}
    d = os.path.join(root, "D")
    for name in os.listdir(d):
        if name == diff.GROVE_LOCK:
            continue
        with open(os.path.join(d, name), "rb") as f:
            out[name] = f.read()
    return out


def run(box, args, stdin, extra):
    r = box.root
    argv = [box.exe, "--state", r + "/S"] + extra + ["alt", "--altdir", r + "/I/alt",
                                                      "--admindir", r + "/D", "--log", r + "/L",
                                                      "--instdir", r + "/I"] + args
    p = subprocess.run([a.replace("@", r) for a in argv], capture_output=True, text=True,
                       env=dict(os.environ, LC_ALL="C"),
                       input=stdin.replace("@", r) if stdin is not None else "")
    return p.returncode, p.stdout.replace(r, "@"), p.stderr.replace(r, "@")


def lines(text):
    """The lines of text; --config's prompt (no newline after it) ends one."""
    return [x for x in text.replace("selection number: ", "selection number:\n").split("\n")
            if x]


def check_single(box, args, stdin, stats):
    """The JSON preview of one command against the real run after it; None or what differs."""
    root = box.root
    inst = os.path.join(root, "I")
    whole = everything(root)
    prc, pout, perr = run(box, args, stdin, ["-n", "--json"])
    if everything(root) != whole:
        return "the dry run changed the sandbox"
    t0, a0 = tree(inst), admin(root)
    rc, out, err = run(box, args, stdin, [])
    t1, a1 = tree(inst), admin(root)
    if prc != rc:
        return "exit %d predicted, %d real\n  preview: %r\n  real: %r %r" % (prc, rc, perr, out,
                                                                            err)
    # The messages: a failure's error line and the messages before it, the same words.
    real_msgs = sorted(lines(out) + lines(err))
    if sorted(undry(x) for x in lines(perr)) != real_msgs:
        return "messages differ\n  preview: %r\n  real:    %r" % (lines(perr), lines(out) +
                                                                  lines(err))
    if rc != 0:
        if pout.strip():
            return "a failed dry run printed a document: %r" % pout
        if t0 != t1:
            return "the real run failed and changed the links"
        stats["failed"] += 1
        return None
    doc = json.loads(pout.replace("@", root))  # (run() wrote the sandbox as @)
    want = dict(t0)
    for op in doc["ops"]:
        p = op["path"]
        if op["op"] in ("link", "relink"):
            want[p] = ("link", op["text"])
        elif op["op"] == "unlink":
            want.pop(p, None)
        elif op["op"] == "mkdir":
            want[p] = ("dir",)
        else:
            return "unexpected op %r" % op
    if want != t1:
        keys = sorted(k for k in set(want) | set(t1) if want.get(k) != t1.get(k))
        return "ops predicted another tree: %s" % ", ".join(
            "%s predicted %r real %r" % (k, want.get(k), t1.get(k)) for k in keys)
    g = doc["group"]
    want_admin = dict(a0)
    if g is not None:
        if g["after"] is None:
            want_admin.pop(g["name"], None)
        else:
            want_admin[g["name"]] = g["after"].encode()
    if want_admin != a1:
        keys = sorted(k for k in set(want_admin) | set(a1) if want_admin.get(k) != a1.get(k))
        return "admin files predicted otherwise: %s" % ", ".join(
            "%s predicted %r real %r" % (k, want_admin.get(k), a1.get(k)) for k in keys)
    real_changed = t0 != t1 or a0 != a1
    if doc["changed"] != real_changed:
        return "changed %s predicted, the real run %s" % (doc["changed"], real_changed)
    stats["changed" if real_changed else "unchanged"] += 1
    return None


PLAN = re.compile(r"^(grove alt: dry run: |link   |relink |unlink |mkdir  |"
                  r"  (mode|link|follower \S+|choice \S+): )")


def check_multi(box, args, stdin, stats):
    """--set-selections, --all: the text preview's exit status and messages (its plans left out),
    and nothing changed. A --set-selections naming one group on two lines is previewed line by
    line from the disk as it is (the second line does not see the first's effect): only its exit
    status is compared."""
    whole = everything(box.root)
    prc, pout, perr = run(box, args, stdin, ["-n"])
    if everything(box.root) != whole:
        return "the dry run changed the sandbox"
    rc, out, err = run(box, args, stdin, [])
    if prc != rc:
        return "exit %d predicted, %d real\n  preview: %r\n  real: %r %r" % (prc, rc, perr, out,
                                                                            err)
    said = [undry(x) for x in lines(pout) if not PLAN.match(x)], [undry(x) for x in lines(perr)]
    if (said != (lines(out), lines(err)) and
            not (args[0] == "--set-selections" and diff.repeats_a_group(stdin))):
        return "messages differ\n  preview: %r\n  real:    %r" % (said, (lines(out), lines(err)))
    stats["multi"] += 1
    return None


def run_seed(seed, steps, exe, verbose, stats):
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="altpreview.")
    try:
        box = diff.Box(os.path.join(tmp, "g"), "gr", exe)
        diff.setup(box.root, diff.merged_usr(seed))
        forms = random.Random(seed * 7919 + 17)
        for i in range(steps):
            step = diff.random_step(rng)
            if forms.random() < 0.2:
                diff.reform(box.root, diff.random_form(random.Random(seed * 1000 + i)))
            if step[0] in ("tamper", "gone"):
                (diff.tamper if step[0] == "tamper" else diff.gone)(box.root, step)
                continue
            args, stdin = step[1], step[2] if len(step) > 2 else None
            what = [a for a in args if a.startswith("--") and a != "--skip-auto"][0]
            if what in SINGLE:
                why = check_single(box, args, stdin, stats)
            elif what in ("--set-selections", "--all"):
                why = check_multi(box, args, stdin, stats)
            else:
                box.cmd(args, stdin)  # a reader: nothing to preview
                continue
            stats["steps"] += 1
            if why:
                print("seed %d step %d %s: %s" % (seed, i, " ".join(args), why))
                if stdin is not None:
                    print("  stdin: %r" % stdin)
                return False
            if verbose:
                print("seed %d step %d %s: ok" % (seed, i, " ".join(args)))
        return True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--steps", type=int, default=25)
    ap.add_argument("--also", default="")
    ap.add_argument("-v", action="store_true")
    o = ap.parse_args()
    exe = os.environ["GROVE"]
    stats = dict(steps=0, changed=0, unchanged=0, failed=0, multi=0)
    bad = 0
    seeds = list(range(o.first, o.first + o.seeds)) + [int(x) for x in o.also.split(",") if x]
    for seed in seeds:
        if not run_seed(seed, o.steps, exe, o.v, stats):
            bad += 1
    print("alt-preview: %d sequences, %d previewed steps (%d changing, %d changing nothing, "
          "%d failing as predicted, %d --set-selections/--all), %d sequences differ"
          % (len(seeds), stats["steps"], stats["changed"], stats["unchanged"], stats["failed"],
             stats["multi"], bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
