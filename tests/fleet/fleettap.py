# SPDX-License-Identifier: GPL-3.0-or-later
"""What every fleet test shares: its TAP lines, and a stdin of its own (import it first).

Ansible refuses a non-blocking stdin, and the stdin a test inherits may be an open file
description shared with other tests (ssh sets its stdin non-blocking): importing this module gives
the process, and so every program it starts, a /dev/null of its own.
"""
import os
import sys

_devnull = os.open(os.devnull, os.O_RDONLY)
os.dup2(_devnull, 0)
os.close(_devnull)


class Tap:
    """ok/fail/expect printing TAP lines for the test called name."""

    def __init__(self, name):
        self.name = name
        self.n = 0

    def ok(self, desc):
        self.n += 1
        print('ok %d - %s' % (self.n, desc), flush=True)

    def fail(self, msg):
        print('FAIL: %s: %s' % (self.name, msg), file=sys.stderr, flush=True)
        print('# %s: FAILED after %d checks passed' % (self.name, self.n), flush=True)
        sys.exit(1)

    def expect(self, cond, msg):
        if not cond:
            self.fail(msg)

    def done(self):
        print('# %s: %d checks passed' % (self.name, self.n))
