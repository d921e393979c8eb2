#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: GPL-3.0-or-later
# grove.farm.alternative: an alternatives group and its choice, with grove alt
# (update-alternatives' semantics, one grove transaction per change).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: alternative
short_description: Manage an alternatives group and its choice with grove alt
version_added: 0.1.0
description:
  - Installs, selects or removes a choice of an alternatives group with C(grove alt), which keeps
    update-alternatives' command line and semantics and makes each change - the generic link and
    every follower - one grove transaction that C(grove undo) (M(grove.farm.undo)) reverts.
  - The options are those of C(community.general.alternatives) where they mean the same
    (I(name), I(path), I(link), I(priority), I(state), I(subcommands) also spelt I(followers) or
    I(slaves)), so a playbook switches modules by changing the module's name.
  - The module reads the group with C(grove alt --query) (update-alternatives' machine-readable
    format), decides the C(--install), C(--set), C(--auto) or C(--remove) that brings it to the
    state asked, and runs them.
  - In check mode each command is predicted by C(grove alt --dry-run --json), which decides as the
    real run would and changes, locks and logs nothing; the task is C(changed) when a predicted
    command would change a link or the group's saved text, and C(after) and the diff are the
    group as the predictions leave it. A C(--set) or C(--auto) that follows an C(--install) is
    decided on the install's prediction (its group text and the C(ALTDIR/NAME) link it writes),
    in check mode and for real alike; as the disk does not have the install yet, a C(--set) then
    counts as making the choice current in manual mode, and an C(--auto) as selecting the highest
    priority, the current choice winning a tie (the one place update-alternatives' rule is
    applied in Python). In check mode C(after) has no C(best).
  - The task is C(changed) exactly when a command ran and committed; C(transaction) is the
    number of the last transaction in the log of the alternatives root.
options:
  name:
    description: The group's name (the generic name in C(/etc/alternatives)).
    type: str
    required: true
  path:
    description: The choice (an absolute path to an existing file). Needed unless I(state=auto).
    type: path
  link:
    description: The generic link (e.g. C(/usr/bin/editor)); needed to create the group, else
      the group's own.
    type: path
  priority:
    description: The choice's priority.
    type: int
    default: 50
  state:
    description:
      - C(present) installs the choice (or updates its priority and followers) and leaves the
        selection alone; C(selected) also makes it the group's choice (manual mode); C(auto)
        installs it when I(path) is given and puts the group in auto mode (the highest priority
        wins); C(absent) removes the choice (the group goes with its last choice).
    type: str
    choices: [present, selected, auto, absent]
    default: selected
  subcommands:
    description: The followers (update-alternatives' slaves) the choice provides.
    type: list
    elements: dict
    aliases: [followers, slaves]
    suboptions:
      name:
        description: The follower's name.
        type: str
        required: true
      link:
        description: The follower's generic link.
        type: path
        required: true
      path:
        description: The file this choice provides for it.
        type: path
        required: true
  root:
    description: Take every path inside this folder (C(grove alt --root)); the log target.
    type: path
  altdir:
    description: The alternatives folder (C(--altdir)).
    type: path
  admindir:
    description: The administrative folder (C(--admindir)).
    type: path
extends_documentation_fragment:
  - grove.farm.common
attributes:
  check_mode:
    support: full
    details: predicted by C(grove alt --dry-run); see the description for a C(--set) or C(--auto) after an C(--install).
  diff_mode:
    support: full
author:
  - grove developers
'''

EXAMPLES = r'''
- name: vim as the editor, with its man page (community.general.alternatives' options)
  become: true
  grove.farm.alternative:
    name: editor
    link: /usr/bin/editor
    path: /usr/bin/vim.basic
    priority: 50
    subcommands:
      - name: editor.1.gz
        link: /usr/share/man/man1/editor.1.gz
        path: /usr/share/man/man1/vim.1.gz

- name: nano installed as a choice, the selection left alone
  become: true
  grove.farm.alternative:
    name: editor
    path: /bin/nano
    priority: 40
    state: present

- name: Back to auto mode
  become: true
  grove.farm.alternative:
    name: editor
    state: auto
'''

RETURN = r'''
commands:
  description: The grove alt commands run (in check mode, that would run), without the global options.
  returned: always
  type: list
  elements: list
  sample: [["--install", "/usr/bin/editor", "editor", "/usr/bin/vim.basic", "50"], ["--set", "editor", "/usr/bin/vim.basic"]]
transactions:
  description: The transactions made, one per command run (C(--install) and C(--set) are two).
  returned: always
  type: list
  elements: int
transaction:
  description: The last transaction made (0 when nothing changed, and in check mode).
  returned: always
  type: int
before:
  description: The group before (C(link), C(status), C(value), C(choices)), or null when it did not exist.
  returned: always
  type: dict
after:
  description: The group after (in check mode, as grove alt --dry-run predicts it, without C(best)), or null when it is gone.
  returned: always
  type: dict
rc:
  description: grove's last exit status.
  returned: always
  type: int
'''

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.grove.farm.plugins.module_utils.grove import (
    Grove, common_args, EXIT_OK, EXIT_USAGE)


def parse_query(text):
    """update-alternatives --query: a header stanza, then one stanza per choice."""
    group = None
    cur = None
    in_slaves = False
    for line in text.splitlines():
        if not line.strip():
            cur = None
            in_slaves = False
            continue
        if line.startswith(' ') and in_slaves:
            a, _, b = line.strip().partition(' ')
            (cur if cur is not None else group)['followers'][a] = b
            continue
        key, _, val = line.partition(':')
        val = val.strip()
        in_slaves = key == 'Slaves'
        if key == 'Name':
            group = dict(name=val, link=None, status=None, best=None, value=None,
                         followers={}, choices={})
        elif group is None:
            continue
        elif key == 'Alternative':
            cur = dict(path=val, priority=0, followers={})
            group['choices'][val] = cur
        elif cur is not None and key == 'Priority':
            cur['priority'] = int(val)
        elif cur is None and key in ('Link', 'Status', 'Best', 'Value'):
            group[key.lower()] = None if val == 'none' else val
    return group


def parse_admin(text, value):
    """A group's text in update-alternatives' administrative format (what grove alt --dry-run
    predicts it saves) as parse_query's dict; the current value is not in that text, so it is
    given (the value the predicted links leave)."""
    if text is None:
        return None
    lines = text.split('\n')
    status, link = lines[0], lines[1]
    i = 2
    slaves = []
    while lines[i]:
        slaves.append((lines[i], lines[i + 1]))
        i += 2
    i += 1
    group = dict(name=None, link=link, status=status, best=None, value=value,
                 followers=dict(slaves), choices={})
    while i < len(lines) and lines[i]:
        c = dict(path=lines[i], priority=int(lines[i + 1]), followers={})
        for k, (name, _) in enumerate(slaves):
            if lines[i + 2 + k]:
                c['followers'][name] = lines[i + 2 + k]
        group['choices'][c['path']] = c
        i += 2 + len(slaves)
    return group


def best_of(group):
    """update-alternatives' auto choice: the current one unless a strictly higher priority
    exists. Used only for an --auto that follows a changing --install in check mode, the one
    step grove alt --dry-run cannot predict (it reads the disk, where the --install is not)."""
    best = None
    if group['value'] in group['choices']:
        best = group['choices'][group['value']]
    for c in group['choices'].values():   # the saved list order
        if best is None or c['priority'] > best['priority']:
            best = c
    return best['path'] if best else None


def render(group):
    if not group:
        return ''
    lines = ['%s -> %s (%s)' % (group['link'], group['value'], group['status'])]
    for name in sorted(group['followers']):
        lines.append('follower %s: %s' % (name, group['followers'][name]))
    for path in sorted(group['choices']):
        c = group['choices'][path]
        lines.append('choice %s priority %d' % (path, c['priority']))
        for name in sorted(c['followers']):
            lines.append('  %s: %s' % (name, c['followers'][name]))
    return ''.join(line + '\n' for line in lines)


def main():
    module = AnsibleModule(
        argument_spec=common_args(
            name=dict(type='str', required=True),
            path=dict(type='path'),
            link=dict(type='path'),
            priority=dict(type='int', default=50),
            state=dict(type='str', default='selected',
                       choices=['present', 'selected', 'auto', 'absent']),
            subcommands=dict(type='list', elements='dict', aliases=['followers', 'slaves'],
                             options=dict(name=dict(type='str', required=True),
                                          link=dict(type='path', required=True),
                                          path=dict(type='path', required=True))),
            root=dict(type='path'),
            altdir=dict(type='path'),
            admindir=dict(type='path'),
        ),
        required_if=[('state', 'present', ['path']), ('state', 'selected', ['path']),
                     ('state', 'absent', ['path'])],
        supports_check_mode=True,
    )
    p = module.params
    # update-alternatives' command line has no '--' and no --opt=VALUE: its arguments are whole
    # words, and one that begins with '-' could be read as an option by an older grove (or by
    # update-alternatives itself). No name or path honestly begins with '-': refuse them.
    values = [('name', p['name']), ('path', p['path']), ('link', p['link']),
              ('root', p['root']), ('altdir', p['altdir']), ('admindir', p['admindir'])]
    for s in p['subcommands'] or []:
        values += [('subcommands.name', s['name']), ('subcommands.link', s['link']),
                   ('subcommands.path', s['path'])]
    for key, value in values:
        if value is not None and (value.startswith('-') or not value):
            module.fail_json(msg="%s: '%s' is not a name or path (it %s)" % (
                key, value, 'is empty' if not value else "begins with '-'"))
    grove = Grove(module)
    alt = ['alt']
    for opt in ('root', 'altdir', 'admindir'):
        if p[opt]:
            alt += ['--' + opt, p[opt]]
    log_target = p['root'] or '/'

    admindir = p['admindir'] or os.path.join(
        p['root'] or '/', (os.environ.get('DPKG_ADMINDIR') or '/var/lib/dpkg').lstrip('/'), 'alternatives')
    if not os.path.isdir(admindir):
        # No group was ever made here; grove alt --query would make the folder (check mode
        # must not), so answer without it.
        rc, out, err = EXIT_USAGE, '', ''
    else:
        # (in check mode as a dry run, which writes nothing: not even grove's cache of the
        # admin files' stamps in its state dir, which a reading run keeps)
        dry = ['--dry-run'] if module.check_mode else []
        rc, _, out, err = grove.run(alt + dry + ['--query', p['name']], json_out=False)
    if rc == EXIT_OK:
        before = parse_query(out)
    elif rc == EXIT_USAGE and not out.strip():
        before = None   # no such group (update-alternatives' exit 2 for it)
    else:
        grove.fail(rc, None, out, err, 'alt --query %s' % p['name'])
    if before is None and p['state'] != 'absent' and p['path'] and not p['link']:
        module.fail_json(msg="link: the group '%s' does not exist; its generic link is needed to create it"
                         % p['name'])

    # The commands that bring the group to the state asked. Each one's effect comes from grove alt
    # --dry-run (the links it would write, the group text it would save); a command after one that
    # would change something is decided on that prediction, since the disk does not have it yet.
    commands = []
    predictions = []
    path = p['path']
    altdir = p['altdir'] or '/etc/alternatives'
    if p['root'] and altdir.startswith(p['root'].rstrip('/') + '/'):
        altdir = altdir[len(p['root'].rstrip('/')):]
    # ALTDIR/NAME as the dry run's ops name it (relative to the root, or to the instdir /).
    current_rel = os.path.normpath(os.path.join(altdir, p['name'])).lstrip('/')
    state = dict(group=before, exact=True)

    def predict(cmd):
        """Runs cmd as a dry run on the host as it is now; the state it would leave."""
        rc, doc, out, err = grove.run(alt + ['--dry-run'] + cmd)
        if rc != EXIT_OK or doc is None or not doc.get('dry_run'):
            grove.fail(rc, doc, out, err, 'alt --dry-run %s' % ' '.join(cmd), commands=commands + [cmd])
        predictions.append(doc)
        group = state['group']
        value = group['value'] if group else None
        for op in doc.get('ops') or []:
            if op.get('path') == current_rel:
                value = op.get('text')
        if doc.get('group') is not None:
            group = parse_admin(doc['group']['after'], value)
            if group is not None:
                group['name'] = p['name']
        elif group is not None:
            group = dict(group, value=value)
        state['group'] = group
        if doc.get('ops') or doc.get('group') is not None:
            state['exact'] = False

    def step(cmd, effect, decides=False):
        """Adds cmd and predicts it: in check mode always, for real only when a later decision
        depends on it (an --install before a --set or --auto). grove predicts it while the disk
        still says what it would start from; after a predicted change, effect says what the
        command means for the predicted group."""
        commands.append(cmd)
        if not (module.check_mode or decides):
            return
        if state['exact']:
            predict(cmd)
        else:
            effect(state['group'])

    if p['state'] == 'absent':
        if before and path in before['choices']:
            step(['--remove', p['name'], path], None)
    else:
        if path:
            link = p['link'] or (before or {}).get('link')
            want_f = dict((s['name'], s['path']) for s in p['subcommands'] or [])
            want_fl = dict((s['name'], s['link']) for s in p['subcommands'] or [])
            have = (before or {}).get('choices', {}).get(path)
            need = (have is None or have['priority'] != p['priority'] or
                    (p['link'] and p['link'] != before.get('link')) or
                    (p['subcommands'] is not None and
                     (have['followers'] != want_f or
                      any(before['followers'].get(n) != l for n, l in want_fl.items()))))
            if need:
                cmd = ['--install', link, p['name'], path, str(p['priority'])]
                for s in p['subcommands'] or []:
                    cmd += ['--slave', s['link'], s['name'], s['path']]
                # Always the first command, so grove predicts it.
                step(cmd, None, decides=p['state'] in ('selected', 'auto'))
        now = state['group']   # as the --install would leave it, if one runs
        if now is None and p['state'] == 'auto':
            module.fail_json(msg="the group '%s' does not exist" % p['name'])
        if p['state'] == 'selected' and (now['status'] != 'manual' or now['value'] != path):
            def set_effect(g):
                g['status'], g['value'] = 'manual', path   # what --set means
            step(['--set', p['name'], path], set_effect)
        if p['state'] == 'auto' and now['status'] != 'auto':
            def auto_effect(g):
                g['status'] = 'auto'
                g['value'] = best_of(g)
            step(['--auto', p['name']], auto_effect)

    after = state['group']
    changed = bool(commands)
    if module.check_mode:
        # A predicted link change or group text change, from grove's own dry run (a command
        # after such a change is only ever taken on top of it).
        changed = any(d.get('ops') or d.get('group') is not None for d in predictions)
    result = dict(changed=changed, commands=commands, transaction=0,
                  before=before, after=after, rc=0)
    result['transactions'] = []
    if commands and not module.check_mode:
        def log_ids():
            rc, doc, out, err = grove.run(['log', '--target=' + log_target])
            if rc != EXIT_OK or doc is None:
                return None
            return [t.get('id') for t in doc.get('transactions') or [] if t.get('state') == 'committed']
        seen = set(log_ids() or [])
        for cmd in commands:
            rc, _, out, err = grove.run(alt + cmd, json_out=False)
            if rc != EXIT_OK:
                grove.fail(rc, None, out, err, 'alt %s' % ' '.join(cmd), commands=commands)
        # Each grove alt command is one transaction on the alternatives root.
        result['transactions'] = sorted(i for i in (log_ids() or []) if i not in seen)
        result['transaction'] = max(result['transactions'] or [0])
        rc, _, out, err = grove.run(alt + ['--query', p['name']], json_out=False)
        result['after'] = parse_query(out) if rc == EXIT_OK else None
    if module._diff:
        result['diff'] = dict(before_header='%s (before)' % p['name'],
                              after_header='%s (after)' % p['name'],
                              before=render(before), after=render(result['after']))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
