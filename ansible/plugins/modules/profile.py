#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: GPL-3.0-or-later
# grove.farm.profile: a grove profile's packages and generations (grove profile).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: profile
short_description: Install or remove packages in a grove profile, switch, roll back or delete generations
version_added: 0.1.0
description:
  - A grove profile is a link to a generation, a symlink forest of a set of packages (Nix-like).
    Each change builds a new generation aside and switches the profile link with one rename
    (C(grove profile), see grove's C(docs/profiles.md)).
  - One task does one of - I(packages) with I(state) (install, remove, or build exactly these),
    I(switch) to a generation, I(rollback) to the previous one, I(delete) generations; I(gc)
    may go with any of them (it runs last) or alone.
  - The task is C(changed) exactly when grove changed the profile; C(generation) is the current
    generation after it and C(previous) the one before, the handle to undo it with I(switch).
  - In check mode grove plans the change (C(grove -n profile)) and reports it; nothing changes.
options:
  profile:
    description:
      - The profile (C(grove profile -p)) - a name (a profile in the state dir's C(profiles) folder)
        or a path (anything with a C(/)). Default is grove's C(default) profile, which the first
        build also links from C(~/.grove-profile).
    type: path
    aliases: [name]
  dir:
    description: The stow directory the packages come from (C(-d)); needed to build the first generation.
    type: path
  packages:
    description: Packages to install, remove, or build the generation from (see I(state)).
    type: list
    elements: str
  state:
    description:
      - With I(packages) - C(present) adds them to the current generation's (C(grove profile install)),
        C(absent) removes them (C(grove profile remove)), C(exact) builds a generation of exactly
        these packages (C(grove profile build)).
      - Each does nothing when the current generation already has what is asked.
    type: str
    choices: [present, absent, exact]
    default: present
  switch:
    description: Make generation N current (C(grove profile switch N)). Nothing to do when it already is.
    type: int
  rollback:
    description:
      - Go back to the previous generation (C(grove profile rollback)). Like a command, each run goes
        back one more; prefer I(switch) with a registered C(previous) for a task that can run twice.
    type: bool
    default: false
  delete:
    description: Generations to delete (C(grove profile delete)) - numbers, C(old) (all but the current),
      C(+N) (all but the newest N), C(Nd) (older than N days). The current one is never deleted.
    type: list
    elements: str
  gc:
    description: Remove the folders of generations no longer linked (C(grove profile gc)).
    type: bool
    default: false
  dotfiles:
    description: Build with C(--dotfiles).
    type: bool
    default: false
  no_folding:
    description: Build with C(--no-folding).
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
- name: ripgrep and fd in the user's profile
  grove.farm.profile:
    dir: ~/pkgs
    packages: [ripgrep, fd]
  register: prof

- name: Back to the generation before that task, wherever it changed something
  grove.farm.profile:
    switch: "{{ prof.previous }}"
  when: prof.changed and prof.previous > 0

- name: One step back
  grove.farm.profile:
    rollback: true

- name: Keep the newest three generations and drop the rest from disk
  grove.farm.profile:
    delete: ['+3']
    gc: true
'''

RETURN = r'''
transaction:
  description: The last transaction the task made, in the log of the profile's generations
    (C(grove log -t PROFILE.generations)); 0 when nothing changed, and in check mode.
  returned: always
  type: int
profile:
  description: The profile link, absolute.
  returned: always
  type: str
generation:
  description: The current generation after the task (in check mode, the one that would be).
  returned: always
  type: int
previous:
  description: The generation current before the task (0 for none).
  returned: always
  type: int
packages:
  description: The packages of the generation built (install, remove, build).
  returned: when packages is given
  type: list
  elements: str
deleted:
  description: The generations whose links were deleted.
  returned: always
  type: list
  elements: int
removed:
  description: How many generation folders gc removed.
  returned: always
  type: int
ops:
  description: The ops in the profile's folder (grove's JSON op objects), of every step.
  returned: always
  type: list
  elements: dict
conflicts:
  description: Why grove refused to build (the task fails when not empty).
  returned: always
  type: list
  elements: dict
rc:
  description: grove's last exit status.
  returned: always
  type: int
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.grove.farm.plugins.module_utils.grove import (
    Grove, common_args, ops_diff, bool_flag, EXIT_OK)

SUB = {'present': 'install', 'absent': 'remove', 'exact': 'build'}


def main():
    module = AnsibleModule(
        argument_spec=common_args(
            profile=dict(type='path', aliases=['name']),
            dir=dict(type='path'),
            packages=dict(type='list', elements='str'),
            state=dict(type='str', default='present', choices=['present', 'absent', 'exact']),
            switch=dict(type='int'),
            rollback=dict(type='bool', default=False),
            delete=dict(type='list', elements='str'),
            gc=dict(type='bool', default=False),
            dotfiles=dict(type='bool', default=False),
            no_folding=dict(type='bool', default=False),
        ),
        mutually_exclusive=[['packages', 'switch', 'rollback', 'delete']],
        required_one_of=[['packages', 'switch', 'rollback', 'delete', 'gc']],
        supports_check_mode=True,
    )
    p = module.params
    grove = Grove(module)
    # Every value as --opt=VALUE or after '--': a value is never read as an option.
    base = ['profile'] + (['--profile=' + p['profile']] if p['profile'] else [])
    steps = []
    packages = p['packages']
    if packages is not None and p['state'] == 'absent':
        # grove refuses to remove a package the current generation lacks; for a state that is
        # already reached, nothing to do.
        rc, doc, out, err = grove.run(base + ['list'])
        if rc != EXIT_OK or doc is None:
            grove.fail(rc if rc != EXIT_OK else 1, doc, out, err, 'profile list')
        have = set()
        for g in doc.get('generations') or []:
            if g.get('current'):
                have = set(g.get('packages') or [])
        packages = [x for x in packages if x in have]
        if not packages:
            module.exit_json(changed=False, profile=doc.get('profile'), generation=doc.get('current') or 0,
                             previous=doc.get('current') or 0, deleted=[], removed=0, ops=[],
                             conflicts=[], rc=0, transaction=0, packages=sorted(have))
    if packages is not None:
        if not packages and p['state'] != 'exact':
            module.fail_json(msg='packages: at least one package is needed')
        args = [SUB[p['state']]]
        if p['dir']:
            args += ['--dir=' + p['dir']]
        if p['state'] != 'absent':
            args += bool_flag(p['dotfiles'], '--dotfiles') + bool_flag(p['no_folding'], '--no-folding')
        steps.append(args + ['--'] + packages)
    elif p['switch'] is not None:
        steps.append(['switch', str(p['switch'])])
    elif p['rollback']:
        steps.append(['rollback'])
    elif p['delete']:
        steps.append(['delete', '--'] + p['delete'])
    if p['gc']:
        steps.append(['gc'])

    result = dict(changed=False, profile=None, generation=0, previous=0, deleted=[], removed=0,
                  ops=[], conflicts=[], rc=0)
    first = True
    for args in steps:
        rc, doc, out, err = grove.run(base + args, dry_run=module.check_mode)
        if rc != EXIT_OK or doc is None or doc.get('conflicts'):
            grove.fail(rc if rc != EXIT_OK else 1, doc, out, err, 'profile %s' % ' '.join(args),
                       ops=(doc or {}).get('ops', []))
        ops = doc.get('ops') or []
        result['rc'] = rc
        result['profile'] = doc.get('profile')
        result['ops'] += ops
        # With -n, grove's "changed" says whether it would be done (dry_run true).
        result['changed'] = result['changed'] or bool(doc.get('changed'))
        if 'generation' in doc:
            if first:
                result['previous'] = doc.get('previous') or 0
            result['generation'] = doc.get('generation') or 0
            first = False
        if 'packages' in doc:
            result['packages'] = sorted(set(doc.get('packages') or []))
        if 'deleted' in doc:
            result['deleted'] = doc.get('deleted') or []
        if 'removed' in doc:
            result['removed'] = doc.get('removed') or 0
    if first:
        # delete or gc alone: report the current generation too.
        rc, doc, out, err = grove.run(base + ['list'])
        if rc == EXIT_OK and doc:
            result['generation'] = result['previous'] = doc.get('current') or 0
            result['profile'] = doc.get('profile')
    result['transaction'] = 0
    if result['changed'] and not module.check_mode and result['profile']:
        # A profile's transactions are logged on its generations folder (docs/profiles.md).
        rc, doc, out, err = grove.run(['log', '--target=' + result['profile'] + '.generations'])
        if rc == EXIT_OK and doc and doc.get('transactions'):
            result['transaction'] = doc['transactions'][0].get('id') or 0
    if module._diff:
        result['diff'] = ops_diff(result['ops'], result['profile'])
    module.exit_json(**result)


if __name__ == '__main__':
    main()
