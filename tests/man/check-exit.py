#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Checks that README.md, `grove --help` and grove(1) list the same exit statuses, and that those
# are the ones the CLI defines (the GROVE_EXIT_* enum of src/cli/cli.h):
#   check-exit.py cli.h README.md HELP.txt grove.1.scd
# README and --help: the paragraph that starts "Exit status:", each status a number followed by a
# word ("4 needs attention"); grove(1): the EXIT STATUS section, each status a bold *N* line.
# Prints what differs; exit 1 if anything does.
import re
import sys


def enum_codes(header):
    return {int(v) for v in re.findall(r"GROVE_EXIT_[A-Z_]+\s*=\s*(\d+)", header)}


def paragraph_codes(text):
    m = re.search(r"Exit status:(.*?)(?:\n\s*\n|\Z)", text, re.S)
    if not m:
        return None
    body = re.sub(r"`[^`]*`", "cmd", m.group(1))  # `apply --check` etc. hold no statuses
    body = body.split("grove alt exits")[0]  # alt's own statuses are update-alternatives'
    return {int(n) for n in re.findall(r"(?<![\w.-])(\d+) (?=[a-z`(])", body)}


def man_codes(scd):
    m = re.search(r"^# EXIT STATUS\n(.*?)^# ", scd, re.S | re.M)
    if not m:
        return None
    return {int(n) for n in re.findall(r"^\*(\d+)\*\s*$", m.group(1), re.M)}


def main(argv):
    if len(argv) != 5:
        print("usage: check-exit.py cli.h README.md HELP.txt grove.1.scd", file=sys.stderr)
        return 2
    want = enum_codes(open(argv[1]).read())
    if len(want) < 5:
        print("could not read the exit statuses of %s: %s" % (argv[1], sorted(want)))
        return 1
    found = {
        "README.md": paragraph_codes(open(argv[2]).read()),
        "grove --help": paragraph_codes(open(argv[3]).read()),
        "grove(1)": man_codes(open(argv[4]).read()),
    }
    bad = 0
    for where, codes in found.items():
        if codes is None:
            print("%s: no exit status list found" % where)
            bad = 1
        elif codes != want:
            missing, extra = sorted(want - codes), sorted(codes - want)
            print("%s: missing %s, unknown %s" % (where, missing, extra))
            bad = 1
    print("checked %d exit statuses %s in %d places" % (len(want), sorted(want), len(found)))
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
