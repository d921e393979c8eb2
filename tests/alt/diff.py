#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Differential test of `grove alt` against Debian's update-alternatives on seeded random sequences.
"""Runs the same random sequence of alternatives commands (and tampering between them) against
update-alternatives and grove alt, each in its own sandbox, and compares after every step: the
exit status, output and messages, every entry of the link folders (link text or "file"), the
--log file, the admin files (ADMINDIR/NAME, byte for byte) and the --query output of every group.
With --mixed the second sandbox has each step run by update-alternatives or grove at random (the
two sharing its admindir, altdir and log), still against update-alternatives alone. A sequence stops at its first difference, which is classified as one of the known
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
    "ua-stale-current": "--install of a group with no saved state while ALTDIR/NAME is already a "
                        "link (left behind): update-alternatives frees the current value it read "
                        "when it replaces its empty group by the new one, then reads that freed "
                        "memory (often finding the new choice there, so it prints 'forcing "
                        "reinstallation' instead of 'using'); links and state end the same",
    "foreign-file-kept": "a regular file where a link of the group should be (ALTDIR/NAME or a "
                         "follower's ALTDIR entry): update-alternatives renames its link over it "
                         "or deletes it; grove never overwrites or deletes what is not a link "
                         "(invariant 5) and warns instead",
    "ua-repeated-selection": "--set-selections naming one group on two lines: update-alternatives "
                             "keeps the group it read for the whole input, so the later line "
                             "works from the current link as it was before the earlier one (it "
                             "warns again, relinks again, says 'forcing reinstallation', or "
                             "falls back to auto over a link it already mended); grove reads the "
                             "group again for each line, as two runs would; the links end the "
                             "same, the saved mode may not",
}

GROUPS = ["g0", "g1", "g2"]
SLAVES = ["s0", "s1"]
PRIOS = [0, 5, 5, 10, 10, 20, -1]


def merged_usr(seed):
    """Every third sequence runs on a merged /usr (issue 38): I/bin is a link to usr/bin and the
    altdir I/alt one to etc/alt, relative or (every other time) absolute, as on Debian 12;
    both tools follow them. Chosen by the seed, so the random steps stay as they were."""
    return None if seed % 3 else ("relative" if seed % 6 == 0 else "absolute")


def setup(root, merged=None):
    for d in ["I/opt", "D", "S"] + (["I/usr/bin", "I/etc/alt"] if merged else ["I/bin", "I/alt"]):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    if merged:
        for link, to in [("I/bin", "usr/bin"), ("I/alt", "etc/alt")]:
            os.symlink(to if merged == "relative" else os.path.join(root, "I", to),
                       os.path.join(root, link))
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


# grove alt's lock file in the admindir (empty, 0600): no group for update-alternatives, which
# skips names ending in ".dpkg-tmp" (docs/alternatives.md), so none of its state either.
GROVE_LOCK = ".grove lock.dpkg-tmp"


def admin_files(root):
    """ADMINDIR's entries and their contents: update-alternatives' state, which grove keeps too."""
    out = {}
    d = os.path.join(root, "D")
    for name in sorted(os.listdir(d)):
        if name == GROVE_LOCK:
            continue
        p = os.path.join(d, name)
        if os.path.islink(p) or not os.path.isfile(p):
            out[name] = "not a file"
        else:
            with open(p, "rb") as f:
                out[name] = f.read().decode("utf-8", "replace").replace(root, "@")
    return out


class Box:
    """A sandbox run by update-alternatives ("ua"), grove ("gr"), or each command by one of the
    two at random ("mixed": both on the same admindir, altdir and log)."""
    def __init__(self, root, kind, exe, ua_exe=None, rng=None):
        self.root, self.kind, self.exe, self.ua_exe, self.rng = root, kind, exe, ua_exe, rng
        self.last = kind

    def cmd(self, args, stdin=None):
        r = self.root
        common = ["--altdir", r + "/I/alt", "--admindir", r + "/D", "--log", r + "/L",
                  "--instdir", r + "/I"]
        kind = self.kind
        if kind == "mixed":
            kind = self.rng.choice(["ua", "gr"])
        self.last = kind
        if kind == "ua":
            argv = [self.ua_exe or self.exe] + common + args
        else:
            argv = [self.exe, "--state", r + "/S", "alt"] + common + args
        p = subprocess.run([a.replace("@", r) for a in argv], capture_output=True, text=True,
                           env=dict(os.environ, LC_ALL="C"),
                           input=stdin.replace("@", r) if stdin is not None else "")
        return p.returncode, p.stdout.replace(r, "@"), p.stderr.replace(r, "@")


def random_answer(rng):
    """What a user types at --config's prompt: nothing, a number, a path, or junk first."""
    a = rng.choice(["", "0", "1", "2", "3", "9", "@/I/opt/p%d" % rng.randrange(5), "x"])
    if a in ("9", "x"):
        a += "\n" + rng.choice(["", "1", "0"])
    return a + "\n" if rng.random() < 0.9 else a  # sometimes the input just ends


def random_selections(rng):
    lines = []
    for _ in range(rng.randrange(1, 4)):
        g = rng.choice(GROUPS + ["nosuch"])
        st = rng.choice(["auto", "manual", "manual", "bogus"])
        lines.append(rng.choice([
            "%s %s @/I/opt/p%d" % (g, st, rng.randrange(5)),
            "%s\t%s   @/I/opt/p%d" % (g, st, rng.randrange(5)),
            g, "%s %s" % (g, st), ""]))
    return "\n".join(lines) + "\n"


def random_step(rng):
    g = rng.choice(GROUPS)
    op = rng.choices(["install", "set", "auto", "remove", "remove-all", "query", "display",
                      "list", "tamper", "config", "get-selections", "set-selections", "all",
                      "gone"],
                     [8, 3, 2, 3, 1, 1, 1, 1, 3, 2, 1, 1, 1, 1])[0]
    if op == "config":
        return ("cmd", (["--skip-auto"] if rng.random() < 0.3 else []) + ["--config", g],
                random_answer(rng))
    if op == "all":
        return ("cmd", (["--skip-auto"] if rng.random() < 0.5 else []) + ["--all"],
                "".join(random_answer(rng) for _ in range(3)))
    if op == "get-selections":
        return ("cmd", ["--get-selections"])
    if op == "set-selections":
        return ("cmd", ["--set-selections"], random_selections(rng))
    if op == "gone":
        # A choice's file disappears (update-alternatives drops it when it next loads the
        # group) or comes back.
        return ("gone", rng.randrange(4), rng.random() < 0.5)
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


def queried(step):
    """The groups whose --query is compared after STEP: the one it names (the links and admin
    files, compared after every step, are what --query reads), or every group after a step
    naming none (--all, --set-selections, --get-selections, and the --get-selections that ends
    every sequence). Each query is two processes: querying all three groups after every step
    was three quarters of the test's time."""
    names = [g for g in GROUPS if g in step[1]]
    return names if len(names) == 1 else GROUPS


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


def gone(root, step):
    _, k, back = step
    p = os.path.join(root, "I/opt/p%d" % k)
    if back:
        open(p, "a").close()
    elif os.path.exists(p):
        os.unlink(p)


FORMS = ["reverse", "followers", "priorities", "trailing", "missing-junk", "missing-twice",
         "empty"]


def random_form(rng):
    """An admin file rewritten in a form update-alternatives reads but does not write (issue 37
    item 4): drawn from its own generator, so the commands of a seed stay the ones they were."""
    return ("form", rng.choice(GROUPS), rng.choice(FORMS), rng.randrange(1 << 30))


def reform(root, step):
    """Rewrites ADMINDIR/NAME in the form the step names (the same bytes in both sandboxes, their
    root aside): choices or followers in reverse order, priorities written 0N, +N or ' N', text and
    a NUL byte after the last choice, a missing choice whose priority is no integer or that is
    written twice, or, where there is no file, a group with no choice."""
    _, g, form, k = step
    rng = random.Random(k)
    p = os.path.join(root, "D", g)
    if not os.path.exists(p):
        if form == "empty":
            with open(p, "w") as f:
                f.write("auto\n%s/I/bin/%s\n\n\n" % (root, g))
        return
    with open(p, "rb") as f:
        lines = f.read().split(b"\n")
    head, i = lines[:2], 2
    slaves = []
    while i < len(lines) and lines[i]:
        slaves.append(lines[i:i + 2])
        i += 2
    i += 1
    choices = []
    while i < len(lines) and lines[i]:
        choices.append([lines[i], lines[i + 1], lines[i + 2:i + 2 + len(slaves)]])
        i += 2 + len(slaves)
    tail = b""
    if form == "reverse":
        choices.reverse()
    elif form == "followers":
        slaves.reverse()
        for c in choices:
            c[2].reverse()
    elif form == "priorities":
        for c in choices:
            if not c[1].lstrip(b"-").isdigit():
                continue  # (a missing choice's priority that is no integer stays)
            n = int(c[1])
            c[1] = rng.choice([b"0%d" % n if n >= 0 else b"-0%d" % -n, b"+%d" % n if n >= 0
                               else b"%d" % n, b" %d" % n, b"\t%d" % n])
    elif form == "trailing":
        tail = b"junk\n\n\x00after\n"
    elif form in ("missing-junk", "missing-twice"):
        junk = [b"@/I/opt/zz".replace(b"@", root.encode()), b"ten" if form == "missing-junk"
                else b"3", [b"junk"] * len(slaves)]
        for _ in range(1 if form == "missing-junk" else 2):
            choices.insert(rng.randrange(len(choices) + 1), list(junk))
    out = head
    for sl in slaves:
        out += sl
    out.append(b"")
    for c in choices:
        out += [c[0], c[1]] + c[2]
    out.append(b"")
    with open(p, "wb") as f:
        f.write(b"\n".join(out) + b"\n" + tail)


def log_lines(root):
    """The --log file without each line's program name and time stamp."""
    try:
        with open(os.path.join(root, "L")) as f:
            text = f.read()
    except FileNotFoundError:
        return []
    out = []
    for line in text.splitlines():
        head, sep, rest = line.partition(": ")
        out.append(rest.replace(root, "@") if sep and head[-8:-6] == ":" == head[-6:-5] or
                   sep else line)
    return out


def repeats_a_group(stdin):
    """Whether a --set-selections input has two lines (of three fields or more) for one group."""
    names = [line.split()[0] for line in (stdin or "").splitlines() if len(line.split()) >= 3]
    return len(names) != len(set(names))


def but_status(files):
    """Admin files without their first line (the group's mode)."""
    return {k: v.split("\n", 1)[1:] if isinstance(v, str) else v for k, v in files.items()}


def classify(before, ua_snap, gr_snap, step=None, saved=None, a=None, b=None, admin=None):
    """The known kind of a difference, or None."""
    if (step and step[1][0] == "--set-selections" and len(step) > 2 and
            repeats_a_group(step[2]) and a[0] == b[0] and ua_snap == gr_snap and admin and
            but_status(admin[0]) == but_status(admin[1])):
        return "ua-repeated-selection"
    if (step and step[1][0] == "--install" and saved is not None and step[1][2] not in saved
            and before.get("I/alt/" + step[1][2], ("none",))[0] == "link" and a[0] == b[0]
            and ua_snap == gr_snap):
        return "ua-stale-current"
    diff = [k for k in set(ua_snap) | set(gr_snap) if ua_snap.get(k) != gr_snap.get(k)]
    if diff and all(gr_snap.get(k) == ("file",) and before.get(k) == ("file",) and
                    ua_snap.get(k, ("none",))[0] in ("link", "none") for k in diff):
        return "foreign-file-kept"
    return None


def run_seed(seed, steps, ua_exe, gr_exe, verbose, mixed=False, with_forms=True):
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="altdiff.")
    try:
        ua = Box(os.path.join(tmp, "u"), "ua", ua_exe)
        if mixed:
            gr = Box(os.path.join(tmp, "g"), "mixed", gr_exe, ua_exe, random.Random(-seed))
        else:
            gr = Box(os.path.join(tmp, "g"), "gr", gr_exe)
        ran = []
        setup(ua.root, merged_usr(seed))
        setup(gr.root, merged_usr(seed))
        forms = random.Random(seed * 7919 + 17) if with_forms else None
        for i in range(steps + 1):
            # The last step only reads, and compares every group's --query.
            step = random_step(rng) if i < steps else ("cmd", ["--get-selections"])
            if forms and i < steps and forms.random() < 0.2:
                for box in (ua, gr):
                    reform(box.root, random_form(random.Random(seed * 1000 + i)))
            before = snapshot(gr.root)
            saved = os.listdir(os.path.join(ua.root, "D"))
            if step[0] in ("tamper", "gone"):
                for box in (ua, gr):
                    (tamper if step[0] == "tamper" else gone)(box.root, step)
                continue
            stdin = step[2] if len(step) > 2 else None
            a = ua.cmd(step[1], stdin)
            b = gr.cmd(step[1], stdin)
            ran.append(gr.last)
            sa, sb = snapshot(ua.root), snapshot(gr.root)
            why = None
            if a[0] != b[0]:
                why = "exit %d vs %d" % (a[0], b[0])
            elif sa != sb:
                why = "links differ"
            elif a[1].replace("update-alternatives", "grove alt") != \
                    b[1].replace("update-alternatives", "grove alt"):
                why = "output differs"
            elif a[2].replace("update-alternatives", "grove alt") != \
                    b[2].replace("update-alternatives", "grove alt"):
                why = "messages differ"
            elif log_lines(ua.root) != log_lines(gr.root):
                why = "log differs"
            elif admin_files(ua.root) != admin_files(gr.root):
                why = "admin files differ"
            else:
                for g in queried(step):
                    qa, qb = ua.cmd(["--query", g]), gr.cmd(["--query", g])
                    if qa[:2] != qb[:2]:
                        why = "query %s differs" % g
                        break
            if why is None:
                continue
            # A difference made by a step update-alternatives ran in both sandboxes is no
            # grove choice: only grove's own steps may show a known kind.
            kind = classify(before, sa, sb, step, saved, a, b,
                            (admin_files(ua.root), admin_files(gr.root))) \
                if gr.last == "gr" else None
            if verbose or kind is None:
                print("seed %d step %d %s: %s" % (seed, i, " ".join(step[1]), why))
                if mixed:
                    print("  mixed run, steps by: %s" % " ".join(ran))
                if why == "admin files differ":
                    fa, fb = admin_files(ua.root), admin_files(gr.root)
                    for k in sorted(set(fa) | set(fb)):
                        if fa.get(k) != fb.get(k):
                            print("  %s: ua %r\n  %s: gr %r" % (k, fa.get(k), k, fb.get(k)))
                if stdin is not None:
                    print("  stdin: %r" % stdin)
                if why == "log differs":
                    la, lb = log_lines(ua.root), log_lines(gr.root)
                    print("  ua log: %r\n  gr log: %r" % (la[-4:], lb[-4:]))
                if kind is None:
                    print("  update-alternatives: rc=%d %s %s" % (a[0], a[2].strip(), sa))
                    print("  grove alt:           rc=%d %s %s" % (b[0], b[2].strip(), sb))
                    if a[1] != b[1]:
                        print("  ua out: %r\n  gr out: %r" % (a[1], b[1]))
                    if why == "messages differ":
                        print("  ua err: %r\n  gr err: %r" % (a[2], b[2]))
            return kind or "unexplained"
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--steps", type=int, default=25)
    ap.add_argument("--also", default="",
                    help="comma-separated seeds run as well (sequences that once found a difference)")
    ap.add_argument("-v", action="store_true")
    ap.add_argument("--no-forms", action="store_true",
                    help="leave the admin files in the form update-alternatives writes them "
                    "(by default, before a fifth of the steps, a group's file is rewritten in "
                    "another form it reads: FORMS)")
    ap.add_argument("--mixed", action="store_true",
                    help="each step run by update-alternatives or grove at random, on one "
                    "sandbox, against update-alternatives alone")
    o = ap.parse_args()
    ua_exe = os.environ.get("UPDATE_ALTERNATIVES", "/usr/bin/update-alternatives")
    gr_exe = os.environ["GROVE"]
    counts = {}
    also = [int(x) for x in o.also.split(",") if x]
    for seed in list(range(o.first, o.first + o.seeds)) + also:
        # (the sequences of --also as they were found, without admin files in other forms)
        kind = run_seed(seed, o.steps, ua_exe, gr_exe, o.v, o.mixed,
                        not o.no_forms and seed not in also) or "same"
        counts[kind] = counts.get(kind, 0) + 1
    print("alt-differential%s: %d sequences, %d same, %s"
          % (" (mixed)" if o.mixed else "", o.seeds + len(also), counts.get("same", 0),
             ", ".join("%s %d" % (k, v) for k, v in sorted(counts.items()) if k != "same")
             or "no differences"))
    return 1 if counts.get("unexplained") else 0


if __name__ == "__main__":
    sys.exit(main())
