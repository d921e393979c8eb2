#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Checks that every command and option `grove --help` lists is documented in grove(1):
#   check-help.py HELP.txt grove.1
# A command must head an entry of the COMMANDS section (bold, at the start of a line); an option
# must appear in bold (\fB--opt\fR) somewhere in the page. Prints what is missing; exit 1 if any.
import re
import sys


def help_items(text):
    commands, options = [], []
    section = None
    for line in text.splitlines():
        if not line.strip():
            section = None
            continue
        if not line.startswith(" "):
            section = line.rstrip(":") if line.endswith(":") else None
            # Usage lines and prose name options too.
        if section == "Commands":
            m = re.match(r"^    ([a-z][a-z-]*)\b", line)
            if m:
                commands.append(m.group(1))
        for opt in re.findall(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)", line):
            if opt not in options:
                options.append(opt)
    return commands, options


def roff_sections(roff):
    sections, name = {}, None
    for line in roff.splitlines():
        if line.startswith(".SH "):
            name = line[4:].strip().strip('"')
            sections[name] = []
        elif name:
            sections[name].append(line)
    return sections


def main(argv):
    if len(argv) != 3:
        print("usage: check-help.py HELP.txt grove.1", file=sys.stderr)
        return 2
    help_text = open(argv[1]).read()
    roff = open(argv[2]).read()
    commands, options = help_items(help_text)
    if len(commands) < 10 or len(options) < 20:
        print("could not parse the help: %d commands, %d options" % (len(commands), len(options)),
              file=sys.stderr)
        return 1
    sections = roff_sections(roff)
    cmd_lines = sections.get("COMMANDS", [])
    missing = []
    for c in commands:
        if not any(l.startswith("\\fB%s\\fR" % c) for l in cmd_lines):
            missing.append("command '%s' (no entry in COMMANDS)" % c)
    bold = set(re.findall(r"\\fB(.*?)\\fR", roff))
    for o in options:
        if o not in bold:
            missing.append("option '%s' (not in bold anywhere)" % o)
    for m in missing:
        print("grove(1) does not document %s" % m)
    print("checked %d commands and %d options" % (len(commands), len(options)))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
