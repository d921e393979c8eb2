#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Task values never become grove's options (issue 37 item 7): each grove.farm module runs, as
# Ansible runs it (python3 MODULE ARGS.json, the collection on the import path), against the
# built grove with values shaped like grove's global options (--state=DIR, --json, -n, --wait,
# --color); the task fails or treats them as values, and no state dir is made at DIR. Cheap: no
# ansible-playbook, one module run per case. Prints "ok N - ..." lines; any failure exits 1.
import json
import os
import shutil
import subprocess
import tempfile

import fleettap  # the test's own stdin, and its TAP lines


GROVE = os.environ.get('GROVE')
SRC = os.environ.get('GROVE_SOURCE_ROOT') or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
COLL = os.path.join(SRC, 'ansible')
_tap = fleettap.Tap('test-values')
ok, fail, expect = _tap.ok, _tap.fail, _tap.expect


def main():
    if not GROVE:
        fail('GROVE must name the grove binary')
    top = tempfile.mkdtemp(prefix='grove-values.')
    try:
        run(top)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    _tap.done()


def run(top):
    os.makedirs(os.path.join(top, 'lib/ansible_collections/grove'))
    os.symlink(COLL, os.path.join(top, 'lib/ansible_collections/grove/farm'))
    env = dict(os.environ, PYTHONPATH=os.path.join(top, 'lib'), PYTHONDONTWRITEBYTECODE='1')
    evil = os.path.join(top, 'evil')
    state = os.path.join(top, 'state')
    stow = os.path.join(top, 'stow')
    target = os.path.join(top, 'target')
    os.makedirs(os.path.join(stow, 'a/bin'))
    with open(os.path.join(stow, 'a/bin/a'), 'w') as f:
        f.write('a')
    os.makedirs(target)
    for d in ('alt/etc/alternatives', 'alt/admin', 'alt/usr/bin'):
        os.makedirs(os.path.join(top, d))
    with open(os.path.join(top, 'alt/usr/bin/vim'), 'w') as f:
        f.write('vim')

    def module(name, args):
        """Runs one module task; returns its result document."""
        path = os.path.join(top, 'args.json')
        with open(path, 'w') as f:
            json.dump({'ANSIBLE_MODULE_ARGS': dict(args, grove=GROVE, state_dir=state)}, f)
        r = subprocess.run(['/usr/bin/python3', os.path.join(COLL, 'plugins/modules/%s.py' % name), path],
                           capture_output=True, text=True, env=env, cwd=top)
        try:
            return json.loads(r.stdout)
        except ValueError:
            fail('%s %r: no result document: %s %s' % (name, args, r.stdout[-500:], r.stderr[-500:]))

    def refused(name, args, desc):
        res = module(name, args)
        if not res.get('failed'):
            fail('%s: the task did not fail: %r' % (desc, res))
        if os.path.exists(evil):
            fail('%s: a state dir was made at the value\'s path (commands: %r)' % (desc, res.get('cmd')))
        ok(desc)
        return res

    hostile = ['--state=' + evil, '--json', '-n', '--wait', '--color']
    # A profile with one generation, so that delete has something to refuse.
    res = module('profile', dict(profile=os.path.join(top, 'prof'), dir=stow, packages=['a'],
                                 state='exact'))
    if res.get('failed') or not res.get('changed'):
        fail('profile: the setup task failed: %r' % res)
    for v in hostile:
        refused('profile', dict(profile=os.path.join(top, 'prof'), delete=[v]),
                'profile delete: [%s] is a generation grove refuses, not an option' % v)
    refused('profile', dict(profile=os.path.join(top, 'prof'), delete=['1', '--state=' + evil]),
            'profile delete: a hostile value after a good one')
    refused('profile', dict(profile='--state=' + evil, rollback=True),
            'profile: a profile path shaped like --state')

    alt = dict(root=None, altdir=os.path.join(top, 'alt/etc/alternatives'),
               admindir=os.path.join(top, 'alt/admin'))
    for v in hostile:
        refused('alternative', dict(alt, name=v, path=os.path.join(top, 'alt/usr/bin/vim'),
                                    link=os.path.join(top, 'alt/usr/bin/editor'), state='present'),
                'alternative: name %s is refused' % v)
    refused('alternative', dict(alt, name='editor', path=os.path.join(top, 'alt/usr/bin/vim'),
                                link=os.path.join(top, 'alt/usr/bin/editor'), state='present',
                                subcommands=[dict(name='--state=' + evil, link='/x', path='/y')]),
            'alternative: a follower name shaped like --state is refused')
    res = module('alternative', dict(alt, name='editor', path=os.path.join(top, 'alt/usr/bin/vim'),
                                     link=os.path.join(top, 'alt/usr/bin/editor'), state='present'))
    if res.get('failed') or not res.get('changed'):
        fail('alternative: an honest task failed: %r' % res)
    ok('alternative: an honest task still works')

    for v in hostile:
        refused('package', dict(dir=stow, target=target, packages=[v]),
                'package: package %s is a package name, not an option' % v)
    refused('package', dict(dir='--state=' + evil, target=target, packages=['a']),
            'package: a stow dir shaped like --state is a stow dir')
    refused('package', dict(dir=stow, target='--state=' + evil, packages=['a']),
            'package: a target shaped like --state is a target')
    refused('apply', dict(path='--state=' + evil), 'apply: a manifest path shaped like --state')
    refused('apply', dict(path=os.path.join(top, 'none.yaml'), host='--state=' + evil),
            'apply: a host shaped like --state')
    refused('undo', dict(target='--state=' + evil), 'undo: a target shaped like --state')

    # Issue 43 item 5: a failed task returns each conflict once (not in stdout, stdout_lines,
    # stderr, stderr_lines and grove_result besides conflicts).
    os.makedirs(os.path.join(target, 'bin'))
    with open(os.path.join(target, 'bin/a'), 'w') as f:
        f.write('the user\'s own file')
    res = module('package', dict(dir=stow, target=target, packages=['a']))
    if not res.get('failed') or len(res.get('conflicts') or []) != 1:
        fail('package over a file of the user: not one conflict: %r' % res)
    rest = dict((k, v) for k, v in res.items() if k not in ('msg', 'invocation', 'conflicts'))
    if 'bin/a' in json.dumps(rest) or 'bin/a' not in json.dumps(res['conflicts']):
        fail('the conflict is returned more than once (msg and conflicts aside): %r' % res)
    shutil.rmtree(os.path.join(target, 'bin'))
    ok('a failed task returns the conflict once, in conflicts (and msg says it)')

    # Issue 43 item 5: grove is looked up on PATH first; an old grove in /usr/local/bin (bound
    # over the machine's in a private mount namespace, which stays untouched) does not win.
    newbin = os.path.join(top, 'newbin')
    oldbin = os.path.join(top, 'oldbin')
    os.makedirs(newbin)
    os.makedirs(oldbin)
    os.symlink(os.path.abspath(GROVE), os.path.join(newbin, 'grove'))
    with open(os.path.join(oldbin, 'grove'), 'w') as f:
        f.write('#!/bin/sh\necho "old grove" >&2\nexit 99\n')
    os.chmod(os.path.join(oldbin, 'grove'), 0o755)
    path = os.path.join(top, 'args.json')
    with open(path, 'w') as f:
        json.dump({'ANSIBLE_MODULE_ARGS': dict(dir=stow, target=target, packages=['a'],
                                               state_dir=state)}, f)
    r = subprocess.run(['unshare', '--mount', '--propagation', 'private', 'sh', '-c',
                        'mount --bind "$1" /usr/local/bin && exec /usr/bin/python3 "$2" "$3"', 'sh',
                        oldbin, os.path.join(COLL, 'plugins/modules/package.py'), path],
                       capture_output=True, text=True, cwd=top,
                       env=dict(env, PATH=newbin + os.pathsep + os.environ.get('PATH', '')))
    try:
        res = json.loads(r.stdout)
    except ValueError:
        fail('package with grove on PATH: no result document: %s %s' % (r.stdout[-500:], r.stderr[-500:]))
    if res.get('failed') or not res.get('changed'):
        fail('package with a newer grove first on PATH and an old one in /usr/local/bin: %r' % res)
    ok('grove is found on PATH before /usr/local/bin')


if __name__ == '__main__':
    main()
