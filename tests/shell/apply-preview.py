#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""grove, with every real `grove apply` checked against its preview (tests/shell/t0071).

Run as the GROVE of a shell test, with GROVE_REAL the grove binary and APPLY_PREVIEW_LOG a file.
Every command but a real apply (one without --check, -n, --help) is exec'd unchanged. A real apply
is preceded by the same command with `--check --json`, and followed by a comparison of what the
check said with what the apply then did, from the disk and the apply's exit status (and its own
document when it was given --json):

- exit status: check 0 -> apply 0 changing nothing; 1 -> 0; 6 (conflicts) -> 1; anything else the same;
- each target (and its stow dir): the check's ops, applied to a listing of the folders taken before
  the apply, give the listing after it (op kinds as the executor runs them: docs/json.md);
- each profile: changed, the apply makes the generation the check named current; unchanged, the
  current generation stays;
- with --json on the apply: its targets' ops, packages and conflicts, its alternatives requests and
  its profiles equal the check's.

A difference is appended to APPLY_PREVIEW_LOG (one block per apply); a compared apply adds one
"compared" line. The apply's own output and exit status pass through unchanged.
"""

import json
import os
import subprocess
import sys

REAL = os.environ['GROVE_REAL']
LOG = os.environ['APPLY_PREVIEW_LOG']
GLOBAL_VALUED = {'--state', '--wait', '-d', '-t', '--dir', '--target'}


def command_index(argv):
    """The index of the command word (the first word that is not a global option), or None."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if not a.startswith('-') or a == '-':
            return i
        if a in GLOBAL_VALUED:
            i += 1
        i += 1
    return None


def listing(roots):
    """Every entry under each root, by absolute path: ('d',), ('l', text) or ('f', bytes)."""
    out = {}
    for root in roots:
        if not os.path.isdir(root):
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                full = os.path.join(dirpath, name)
                if os.path.islink(full):
                    out[full] = ('l', os.readlink(full))
                elif os.path.isdir(full):
                    out[full] = ('d',)
                elif os.path.isfile(full):
                    try:
                        with open(full, 'rb') as fh:
                            out[full] = ('f', fh.read())
                    except OSError:
                        out[full] = ('f', None)
                else:
                    out[full] = ('s',)
            dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return out


def under(path, top):
    return path == top or path.startswith(top.rstrip('/') + '/')


def apply_ops(tree, target, ops, problems):
    """tree (a listing) as the executor leaves it after ops in target."""
    folded = []
    for op in ops:
        p = os.path.join(target, op['path'])
        kind = op['op']
        if any(under(p, f) and p != f for f in folded):
            continue  # the old folder a fold swapped out is emptied: gone with it
        have = tree.get(p)
        if kind == 'mkdir':
            if have is not None:
                problems.append('mkdir %s over %r' % (p, have))
            tree[p] = ('d',)
        elif kind in ('link', 'relink'):
            if kind == 'link' and have is not None:
                problems.append('link %s over %r' % (p, have))
            if kind == 'relink' and have != ('l', op['old_text']):
                problems.append('relink %s: was %r, not a link to %r' % (p, have, op['old_text']))
            tree[p] = ('l', op['text'])
        elif kind == 'unlink':
            if have != ('l', op['old_text']):
                problems.append('unlink %s: was %r, not a link to %r' % (p, have, op['old_text']))
            tree.pop(p, None)
        elif kind == 'rmdir':
            if have != ('d',) or any(under(k, p) and k != p for k in tree):
                problems.append('rmdir %s: not an empty folder' % p)
            tree.pop(p, None)
        elif kind == 'unfold':
            if have != ('l', op['old_text']):
                problems.append('unfold %s: was %r, not a link to %r' % (p, have, op['old_text']))
            tree[p] = ('d',)
        elif kind == 'fold':
            for k in [k for k in tree if under(k, p)]:
                del tree[k]
            tree[p] = ('l', op['text'])
            folded.append(p)
        elif kind == 'adopt':
            pkg_file = os.path.normpath(os.path.join(os.path.dirname(p), op['text']))
            if have is None or have[0] != 'f':
                problems.append('adopt %s: not a file: %r' % (p, have))
            else:
                tree[pkg_file] = have
            tree[p] = ('l', op['text'])
        else:
            problems.append('unknown op %r' % kind)


def current_generations(prefix, profiles):
    """Each profile's current generation number (0: none), read with `grove profile list`."""
    cur = {}
    for name in profiles:
        p = subprocess.run([REAL] + prefix + ['--json', 'profile', '-p', name, 'list'],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        n = 0
        try:
            for g in json.loads(p.stdout).get('generations', []):
                if g.get('current'):
                    n = g['number']
        except ValueError:
            n = None
        cur[name] = n
    return cur


def target_view(t):
    return {'target': t['target'], 'dir': t['dir'], 'stow': t['stow'], 'unstow': t['unstow'],
            'ops': t['ops'], 'conflicts': t['conflicts']}


def report(argv, problems):
    with open(LOG, 'a') as fh:
        fh.write('DIFFERENCE: grove %s (in %s)\n' % (' '.join(argv), os.getcwd()))
        for p in problems:
            fh.write('  %s\n' % p)


def main():
    argv = sys.argv[1:]
    ci = command_index(argv)
    if ci is None or argv[ci] != 'apply' or \
            any(a in ('--check', '-n', '--dry-run', '--simulate', '-h', '--help') for a in argv):
        os.execv(REAL, [REAL] + argv)
    prefix = argv[:ci]
    check = subprocess.run([REAL] + argv[:ci + 1] + ['--check', '--json'] + argv[ci + 1:],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    doc = None
    if check.stdout.strip():
        try:
            doc = json.loads(check.stdout)
        except ValueError:
            report(argv, ['apply --check --json printed no JSON document: %r' % check.stdout[:300]])
    # A check that failed before it had a plan prints grove's error document (docs/json.md,
    # "Errors"): no plan to compare, only the exit status.
    if doc and 'error' in doc and 'exit' in doc:
        doc = None
    roots, names = [], []
    if doc:
        for t in doc['targets']:
            roots += [t['target'], t['dir']]
        names = [p['name'] for p in doc['profiles']['list']]
    before = listing(roots)
    gens_before = current_generations(prefix, names)
    real = subprocess.run([REAL] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sys.stdout.buffer.write(real.stdout)
    sys.stdout.flush()
    sys.stderr.buffer.write(real.stderr)
    sys.stderr.flush()

    problems = []
    # A check that fails prints the real run's error and no document: the apply fails the same way.
    want_rc = {0: 0, 1: 0 if doc else 1, 6: 1}.get(check.returncode, check.returncode)
    if real.returncode != want_rc:
        problems.append('exit status: apply --check %d, apply %d (expected %d)' %
                        (check.returncode, real.returncode, want_rc))
    after = listing(roots)
    if doc and real.returncode == 0:
        expect = dict(before)
        for t in doc['targets']:
            apply_ops(expect, t['target'], t['ops'], problems)
        for path in sorted(set(expect) | set(after)):
            if expect.get(path) != after.get(path):
                problems.append('%s: the check planned %r, the apply left %r' %
                                (path, expect.get(path), after.get(path)))
        gens_after = current_generations(prefix, names)
        for p in doc['profiles']['list']:
            want = p['number'] if p['changed'] else gens_before[p['name']]
            if gens_after[p['name']] != want:
                problems.append('profile %s: the check said changed %s, generation %s; after the apply '
                                'generation %s is current (before: %s)' %
                                (p['name'], p['changed'], p['number'], gens_after[p['name']],
                                 gens_before[p['name']]))
    elif doc and real.returncode != 0 and check.returncode == 6 and after != before:
        problems.append('the check found conflicts, and the apply changed the targets')
    if doc and real.returncode == 0 and '--json' in argv:
        try:
            done = json.loads(real.stdout)
        except ValueError:
            done = None
            problems.append('apply --json printed no JSON document')
        if done:
            if doc['changed'] != done['changed']:
                problems.append('"changed": check %s, apply %s' % (doc['changed'], done['changed']))
            if [target_view(t) for t in doc['targets']] != [target_view(t) for t in done['targets']]:
                problems.append('targets: check %s, apply %s' % (doc['targets'], done['targets']))
            strip = [{k: v for k, v in a.items() if k != 'txn'} for a in doc['alternatives']]
            if strip != [{k: v for k, v in a.items() if k != 'txn'} for a in done['alternatives']]:
                problems.append('alternatives: check %s, apply %s' % (doc['alternatives'], done['alternatives']))
            if doc['profiles'] != done['profiles']:
                problems.append('profiles: check %s, apply %s' % (doc['profiles'], done['profiles']))
    if problems:
        report(argv, problems)
    else:
        with open(LOG, 'a') as fh:
            fh.write('compared: %d targets, %d alternatives requests, %d profiles\n' %
                     (len(doc['targets']) if doc else 0, len(doc['alternatives']) if doc else 0,
                      len(names)))
    sys.exit(real.returncode)


if __name__ == '__main__':
    main()
