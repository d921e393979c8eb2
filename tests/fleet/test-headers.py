#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# The commands in the headers of examples/fleet/*.yml run as written (issue 43 item 5): a fleet
# is made with examples/fleet/make-fleet.sh (2 hosts) in a folder of the test, and every header
# line that runs ansible-playbook is run from the source tree as the reader would type it, with
# /tmp/fleet replaced by that folder and --syntax-check added (Ansible resolves the collection,
# its roles and modules, and the inventory, and runs no task). The commands that run on a fleet of
# examples/fleet/netns-fleet.sh are left to tests/fleet/test-netns.py, which runs them for real.
# Prints "ok N - ..." lines.
import os
import re
import shlex
import shutil
import subprocess
import tempfile

import fleettap  # the test's own stdin, and its TAP lines


GROVE = os.environ.get('GROVE')
SRC = os.environ.get('GROVE_SOURCE_ROOT') or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
_tap = fleettap.Tap('test-headers')
ok, fail, expect = _tap.ok, _tap.fail, _tap.expect


def main():
    if not GROVE:
        fail('GROVE must name the grove binary')
    top = tempfile.mkdtemp(prefix='grove-headers.')
    try:
        run(top)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    _tap.done()


def run(top):
    fleet = os.path.join(top, 'fleet')
    env = dict(os.environ, ANSIBLE_HOME=os.path.join(top, 'ansible-home'), ANSIBLE_NOCOLOR='1',
               HOME=os.path.join(top, 'home'))
    for k in ('ANSIBLE_CONFIG', 'ANSIBLE_COLLECTIONS_PATH', 'ANSIBLE_COLLECTIONS_PATHS'):
        env.pop(k, None)
    r = subprocess.run(['bash', os.path.join(SRC, 'examples/fleet/make-fleet.sh'), fleet, '2', GROVE],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        fail('make-fleet.sh: exit %d: %s' % (r.returncode, r.stderr[-1000:]))
    ok('make-fleet.sh made a fleet of 2 hosts')
    books = sorted(f for f in os.listdir(os.path.join(SRC, 'examples/fleet')) if f.endswith('.yml'))
    commands = 0
    for book in books:
        for line in open(os.path.join(SRC, 'examples/fleet', book)):
            m = re.match(r'#\s+(.*\bansible-playbook\b.*)$', line.rstrip('\n'))
            if not m:
                continue
            if 'netns-fleet.sh' in m.group(1):
                # A fleet in network namespaces: test-netns.py runs these as written, for real.
                commands += 1
                continue
            words = shlex.split(m.group(1).replace('/tmp/fleet', fleet))
            assigns = {}
            while words and re.match(r'^[A-Z_][A-Z0-9_]*=', words[0]):
                k, v = words.pop(0).split('=', 1)
                assigns[k] = v
            r = subprocess.run(words + ['--syntax-check'], cwd=SRC, capture_output=True, text=True,
                               env=dict(env, **assigns))
            if r.returncode != 0:
                fail('%s: the header command %r fails: exit %d: %s%s' % (
                    book, m.group(1), r.returncode, r.stdout[-1500:], r.stderr[-1500:]))
            commands += 1
            ok('%s: %s runs as written' % (book, m.group(1)))
    if commands < len(books):
        fail('only %d header commands in %d playbooks' % (commands, len(books)))


if __name__ == '__main__':
    main()
