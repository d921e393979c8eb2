#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: GPL-3.0-or-later
# grove.farm.package: stow, unstow or restow packages with grove, one transaction per task.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: package
short_description: Stow, unstow or restow packages into a target with grove
version_added: 0.1.0
description:
  - Links the packages of a stow directory into a target as GNU Stow does (tree folding,
    ignore lists, C(--dotfiles)), with C(grove stow), C(grove unstow) or C(grove restow) on the
    managed host.
  - All of a task's packages change in one grove transaction; the task is C(changed) exactly when
    grove committed one, and its number is returned as C(transaction) (for M(grove.farm.undo)).
  - In check mode grove plans the same command (C(grove -n)) and reports the plan; nothing changes.
  - With C(--diff) the links and folders the task makes or removes are shown, before and after.
  - A conflict (a file of the user's where a link should go, a link of another package) fails the
    task with every conflict listed, and nothing changes. Nothing is ever deleted to resolve it;
    I(adopt) moves the user's file into the package instead.
options:
  packages:
    description: The packages (folders of I(dir)).
    type: list
    elements: str
    required: true
    aliases: [name, package]
  dir:
    description: The stow directory (C(-d)).
    type: path
    required: true
  target:
    description: The target folder (C(-t)). Default is the parent of I(dir), as in GNU Stow.
    type: path
  state:
    description:
      - I(present) stows the packages (C(grove stow)); I(absent) unstows them (C(grove unstow));
        I(latest) restows them (C(grove restow)), so links added to or removed from the package
        since are added or removed.
      - All three do nothing, and report C(ok), when the target is already as asked.
    type: str
    choices: [present, absent, latest]
    default: present
  dotfiles:
    description: A package entry C(dot-x) is linked as C(.x) (C(--dotfiles)).
    type: bool
    default: false
  no_folding:
    description: Make folders of links, never one link to a package's folder (C(--no-folding)).
    type: bool
    default: false
  ignore:
    description: Regexes of package paths to skip, matching the end of the path (C(--ignore)).
    type: list
    elements: str
    default: []
  defer:
    description: Regexes of paths left to the package that already has them (C(--defer)).
    type: list
    elements: str
    default: []
  override:
    description: Regexes of paths taken over from another package (C(--override)).
    type: list
    elements: str
    default: []
  adopt:
    description:
      - Move an existing file of the target into the package, then link it (C(--adopt)).
        The file is moved, never copied and deleted; the package's own copy is replaced by it.
    type: bool
    default: false
extends_documentation_fragment:
  - grove.farm.common
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
author:
  - grove developers
'''

EXAMPLES = r'''
- name: Dotfiles of the user, dot-x becoming .x
  grove.farm.package:
    dir: ~/dotfiles
    target: "~"
    packages: [bash, git, vim]
    dotfiles: true

- name: Software in /usr/local/stow (the target defaults to /usr/local)
  become: true
  grove.farm.package:
    dir: /usr/local/stow
    packages: hello-2.13

- name: Pick up files added to a package since it was stowed
  grove.farm.package:
    dir: ~/dotfiles
    packages: vim
    state: latest

- name: Unstow, waiting up to 30 s for another run's lock
  grove.farm.package:
    dir: ~/dotfiles
    packages: tmux
    state: absent
    wait: 30
  register: r

- name: The transaction to undo it with
  ansible.builtin.debug:
    msg: "grove.farm.undo: target={{ r.target }} to={{ r.transaction - 1 }}"
'''

RETURN = r'''
transaction:
  description: The grove transaction made (0 when nothing changed, and in check mode).
  returned: always
  type: int
  sample: 12
target:
  description: The target, absolute.
  returned: always
  type: str
  sample: /home/me
stow_dir:
  description: The stow directory, absolute.
  returned: always
  type: str
ops:
  description: The plan's ops (grove's JSON op objects), in the order they run.
  returned: always
  type: list
  elements: dict
  sample: [{"op": "link", "path": ".vimrc", "text": "dotfiles/vim/dot-vimrc", "old_text": null, "package": "vim"}]
conflicts:
  description: Why grove refused (grove's JSON conflict objects); the task fails when not empty.
  returned: always
  type: list
  elements: dict
warnings_grove:
  description: grove's warnings, e.g. Stow's "skipping marked Stow directory".
  returned: always
  type: list
  elements: str
rc:
  description: grove's exit status.
  returned: always
  type: int
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.grove.farm.plugins.module_utils.grove import (
    Grove, common_args, ops_diff, bool_flag, list_flags, EXIT_OK)

COMMAND = {'present': 'stow', 'absent': 'unstow', 'latest': 'restow'}


def main():
    module = AnsibleModule(
        argument_spec=common_args(
            packages=dict(type='list', elements='str', required=True, aliases=['name', 'package']),
            dir=dict(type='path', required=True),
            target=dict(type='path'),
            state=dict(type='str', default='present', choices=['present', 'absent', 'latest']),
            dotfiles=dict(type='bool', default=False),
            no_folding=dict(type='bool', default=False),
            ignore=dict(type='list', elements='str', default=[]),
            defer=dict(type='list', elements='str', default=[]),
            override=dict(type='list', elements='str', default=[]),
            adopt=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if not p['packages']:
        module.fail_json(msg='packages: at least one package is needed')
    grove = Grove(module)
    # Every value as --opt=VALUE or after '--': a value is never read as an option.
    args = [COMMAND[p['state']], '--dir=' + p['dir']]
    if p['target']:
        args += ['--target=' + p['target']]
    args += bool_flag(p['dotfiles'], '--dotfiles') + bool_flag(p['no_folding'], '--no-folding')
    args += bool_flag(p['adopt'], '--adopt')
    args += list_flags(p['ignore'], '--ignore') + list_flags(p['defer'], '--defer')
    args += list_flags(p['override'], '--override')
    args += ['--'] + p['packages']

    rc, doc, out, err = grove.run(args, dry_run=module.check_mode)
    if rc != EXIT_OK or doc is None or doc.get('conflicts'):
        grove.fail(rc if rc != EXIT_OK else 1, doc, out, err,
                   '%s %s' % (COMMAND[p['state']], ' '.join(p['packages'])),
                   transaction=0, ops=(doc or {}).get('ops', []))
    ops = doc.get('ops') or []
    txn = 0 if module.check_mode else int(doc.get('transaction') or 0)
    changed = bool(doc.get('changed')) if module.check_mode else txn > 0
    result = dict(changed=changed, transaction=txn, target=doc.get('target'),
                  stow_dir=doc.get('stow_dir'), ops=ops, conflicts=[],
                  warnings_grove=doc.get('warnings') or [], rc=rc)
    if module._diff:
        result['diff'] = ops_diff(ops, doc.get('target'))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
