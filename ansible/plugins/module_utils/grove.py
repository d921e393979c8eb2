# -*- coding: utf-8 -*-
# SPDX-License-Identifier: GPL-3.0-or-later
# The code every grove.farm module shares: running grove --json, reading its exit status,
# turning its ops into Ansible's diff, and failing with the conflict list.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import subprocess

from ansible.module_utils.common.text.converters import to_bytes, to_native, to_text

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_ROLLED_BACK = 3
EXIT_ATTENTION = 4
EXIT_LOCKED = 75
EXIT_CONFIG = 78

EXIT_WORDS = {
    EXIT_REFUSED: 'refused (conflicts or a failed precondition; nothing changed)',
    EXIT_USAGE: 'usage error',
    EXIT_ROLLED_BACK: 'failed part-way and rolled back',
    EXIT_ATTENTION: 'an interrupted transaction needs attention (grove verify, grove recover)',
    EXIT_LOCKED: 'the target is locked by another grove run',
    EXIT_CONFIG: 'bad configuration or manifest',
}

COMMON_ARGS = dict(
    grove=dict(type='str', default='grove'),
    state_dir=dict(type='path'),
    wait=dict(type='int', default=0),
)


def common_args(**extra):
    spec = dict(COMMON_ARGS)
    spec.update(extra)
    return spec


class Grove(object):
    """One managed host's grove: builds command lines with the global options and runs them."""

    def __init__(self, module):
        self.module = module
        self.last_error = None
        p = module.params
        exe = p.get('grove') or 'grove'
        if '/' in exe:
            exe = os.path.expanduser(exe)
            if not os.access(exe, os.X_OK):
                module.fail_json(msg="grove not found or not executable at '%s'" % exe, rc=127)
            self.exe = exe
        else:
            # PATH first, as the docs say: /usr/local/bin (the install role's default prefix)
            # only when PATH has no grove, so an old grove there never wins over a newer one
            # earlier on PATH. (get_bin_path looks in its opt_dirs before PATH.)
            self.exe = on_path(exe) or module.get_bin_path(exe, required=True,
                                                           opt_dirs=['/usr/local/bin'])
        self.state_dir = p.get('state_dir')
        self.wait = p.get('wait') or 0
        self.commands = []
        self.last_rc = None

    def argv(self, args, json_out=True, dry_run=False):
        cmd = [self.exe]
        # Values as --opt=VALUE: a value is never read as an option.
        if self.state_dir:
            cmd.append('--state=' + self.state_dir)
        if self.wait:
            cmd.append('--wait=%d' % self.wait)
        if json_out:
            cmd.append('--json')
        if dry_run:
            cmd.append('-n')
        return cmd + list(args)

    def run(self, args, json_out=True, dry_run=False, data=None):
        """Runs grove; returns (rc, document or None, stdout, stderr). Never fails the module."""
        cmd = self.argv(args, json_out=json_out, dry_run=dry_run)
        self.commands.append(cmd)
        # LC_ALL=C: grove's words are English anyway; NO_COLOR: never escape codes in results.
        # subprocess's communicate() reads both pipes to the end. ansible-core 2.14's run_command
        # does not always: when its 1-second select() times out just before the command writes
        # and exits, it stops reading, and a slow grove's whole JSON document is lost (seen on a
        # loaded machine: exit 0, empty stdout).
        env = dict(os.environ, NO_COLOR='1', LC_ALL='C')
        try:
            p = subprocess.Popen(cmd, stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, close_fds=True)
            b_out, b_err = p.communicate(to_bytes(data) if data is not None else None)
        except (OSError, IOError) as e:
            self.module.fail_json(msg='cannot run %s: %s' % (cmd[0], to_native(e)), rc=127, cmd=cmd)
        rc = p.returncode
        out = to_text(b_out, errors='surrogate_or_replace')
        err = to_text(b_err, errors='surrogate_or_replace')
        self.last_rc = rc
        self.last_error = None
        doc = None
        if json_out and out.strip():
            try:
                doc = json.loads(out)
            except ValueError:
                doc = None
        # A command that failed before it had a document of its own prints grove's error
        # document (docs/json.md, "Errors"): the reason, for fail(); no result document.
        if isinstance(doc, dict) and 'error' in doc and 'exit' in doc:
            self.last_error = doc.get('error') or {}
            doc = None
        return rc, doc, out, err

    def fail(self, rc, doc, out, err, what, **extra):
        """Fails the task with grove's exit status explained, its stderr and any conflicts."""
        conflicts = (doc or {}).get('conflicts') or []
        words = EXIT_WORDS.get(rc, 'exit status %d' % rc)
        if doc is None and rc in (EXIT_OK, EXIT_REFUSED) and self.last_rc == EXIT_OK:
            words = 'grove exited 0 but printed no JSON document (stdout %d bytes)' % len(out)
        msg = '%s: %s' % (what, words)
        if conflicts:
            msg += ': ' + '; '.join(conflict_line(c) for c in conflicts)
        elif self.last_error and self.last_error.get('message'):
            msg += ': ' + self.last_error['message']
        elif err.strip():
            msg += ': ' + err.strip().splitlines()[-1]
        # Each thing once (Ansible adds stdout_lines and stderr_lines to whatever is returned):
        # the document as grove_result, its conflicts as conflicts only; stdout when it was no
        # document, stderr when it is not the same conflicts in words.
        result = dict(msg=msg, rc=rc, conflicts=conflicts, locked=rc == EXIT_LOCKED,
                      cmd=self.commands[-1] if self.commands else None)
        if self.last_error is not None:
            result['error'] = self.last_error
        elif doc is None:
            result['stdout'] = out
        else:
            result['grove_result'] = dict((k, v) for k, v in doc.items() if k != 'conflicts')
        if not conflicts and self.last_error is None:
            result['stderr'] = err
        result.update(extra)
        self.module.fail_json(**result)


def on_path(name):
    """The first executable file name in PATH's folders, or None."""
    for d in os.environ.get('PATH', '').split(os.pathsep):
        path = os.path.join(d or '.', name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def conflict_line(c):
    line = c.get('message') or ''
    if c.get('package'):
        line = '%s %s: %s' % (c.get('action') or 'stow', c['package'], line)
    if c.get('hint'):
        line += ' (%s)' % c['hint']
    return line


def _entry_before(op):
    kind = op.get('op')
    path = op.get('path')
    if kind in ('mkdir', 'link'):
        return None
    if kind in ('unlink', 'relink', 'unfold'):
        return '%s -> %s' % (path, op.get('old_text'))
    if kind in ('rmdir', 'fold'):
        return '%s/' % path
    if kind == 'adopt':
        return '%s (file)' % path
    return path


def _entry_after(op):
    kind = op.get('op')
    path = op.get('path')
    if kind in ('link', 'relink', 'fold', 'adopt'):
        return '%s -> %s' % (path, op.get('text'))
    if kind in ('mkdir', 'unfold'):
        return '%s/' % path
    return None


def ops_diff(ops, header):
    """Ansible's diff for a list of grove ops: the entries they touch, before and after, one line
    each (PATH -> TEXT for a link, PATH/ for a folder, absent entries left out), sorted by path."""
    before = {}
    after = {}
    for op in ops or []:
        path = op.get('path')
        if path not in before:
            b = _entry_before(op)
            before[path] = b
        after[path] = _entry_after(op)

    def text(d):
        lines = [d[k] for k in sorted(d) if d[k] is not None]
        return ''.join(line + '\n' for line in lines)
    return dict(before_header='%s (before)' % header, after_header='%s (after)' % header,
                before=text(before), after=text(after))


def merge_diffs(diffs):
    diffs = [d for d in diffs if d and (d.get('before') or d.get('after'))]
    if not diffs:
        return dict(before='', after='')
    if len(diffs) == 1:
        return diffs[0]
    return dict(before=''.join('# %s\n%s' % (d['before_header'], d['before']) for d in diffs),
                after=''.join('# %s\n%s' % (d['after_header'], d['after']) for d in diffs))


def bool_flag(value, flag):
    return [flag] if value else []


def list_flags(values, flag):
    return ['%s=%s' % (flag, v) for v in values or []]
