#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: GPL-3.0-or-later
# grove.farm.apply: converge a host to a grove.yaml manifest (grove apply).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: apply
short_description: Converge a host to a grove.yaml manifest
version_added: 0.1.0
description:
  - Runs C(grove apply) on the managed host. Packages the manifest dropped are unstowed, new ones
    stowed, packages whose options changed restowed, each target in one grove transaction;
    then the manifest's alternatives groups and profiles. See grove's C(docs/manifest.md).
  - The manifest comes from the controller (I(src), read by the action plugin and sent with the
    task) or is already on the host (I(path)).
  - All targets are planned before any changes; a conflict in any of them fails the task with every
    conflict listed (per target in C(targets[].conflicts)) and nothing changes on that host.
  - The task is C(changed) exactly when grove committed a transaction (a target, an alternatives
    request or a profile generation); C(transaction) is the highest of their numbers and
    C(transactions) lists each.
  - In check mode C(grove apply --check) plans everything and reports it; nothing changes.
options:
  src:
    description:
      - A manifest on the controller (a path, looked up in the role's or playbook's C(files/) as
        M(ansible.builtin.copy) does). It is written to a private temporary file in I(basedir)
        on the host for the run and removed afterwards.
      - Mutually exclusive with I(path).
    type: path
  path:
    description: A manifest already on the managed host (C(grove apply -f)).
    type: path
  basedir:
    description:
      - With I(src), the folder the manifest's relative paths are relative to. Default is the
        home folder of the user the task runs as.
    type: path
  host:
    description: The host name the manifest's C(hosts) lists are matched against (C(--host)).
      Default is grove's (C($GROVE_HOST), config.yaml, then the machine's name).
    type: str
  tags:
    description: Tags to turn on (C(--tag), added to the manifest's and config.yaml's).
    type: list
    elements: str
    default: []
  content:
    description:
      - The manifest's text. Set by the action plugin from I(src); a task may give it directly
        (then relative paths are relative to I(basedir)).
    type: str
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
- name: The farm of this host, from the manifest next to the playbook
  grove.farm.apply:
    src: grove.yaml
    host: "{{ inventory_hostname }}"
    tags: "{{ grove_tags | default([]) }}"

- name: A manifest the dotfiles repository carries
  grove.farm.apply:
    path: ~/dotfiles/grove.yaml
  register: applied

- name: Every transaction it made
  ansible.builtin.debug:
    var: applied.transactions
'''

RETURN = r'''
transaction:
  description: The highest transaction number the run made (0 when nothing changed, and in check mode).
  returned: always
  type: int
transactions:
  description: Each transaction made, with what it was for (C(target), C(alternative) or C(profile)).
  returned: always
  type: list
  elements: dict
  sample: [{"kind": "target", "target": "/home/me", "txn": 12}]
targets:
  description: grove's per-target results (C(target), C(dir), C(txn), C(stow), C(unstow), C(ops), C(conflicts)).
  returned: always
  type: list
  elements: dict
alternatives:
  description: grove's alternatives requests (C(op), C(group), C(path), C(txn)).
  returned: always
  type: list
  elements: dict
profiles:
  description: grove's profiles result (C(declared), C(changed), C(list)).
  returned: always
  type: dict
conflicts:
  description: Every target's conflicts, each with the C(target) added; the task fails when not empty.
  returned: always
  type: list
  elements: dict
grove_result:
  description: grove's whole C(apply) JSON document.
  returned: always
  type: dict
rc:
  description: 0 on success (Ansible reads a non-zero C(rc) as a failure); grove's own is C(grove_rc).
  returned: always
  type: int
grove_rc:
  description: grove's exit status (1 in check mode when something would change).
  returned: always
  type: int
'''

import os
import pwd
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes
from ansible_collections.grove.farm.plugins.module_utils.grove import (
    Grove, common_args, ops_diff, merge_diffs, EXIT_OK, EXIT_REFUSED)


def transactions_of(doc):
    out = []
    for t in doc.get('targets') or []:
        if t.get('txn'):
            out.append(dict(kind='target', target=t.get('target'), txn=t['txn']))
    for a in doc.get('alternatives') or []:
        # A group's requests share its one transaction: listed once.
        if a.get('txn') and not (out and out[-1].get('kind') == 'alternative' and
                                 out[-1]['txn'] == a['txn']):
            out.append(dict(kind='alternative', group=a.get('group'), txn=a['txn']))
    return out


def main():
    module = AnsibleModule(
        argument_spec=common_args(
            src=dict(type='path'),
            path=dict(type='path'),
            content=dict(type='str', no_log=False),
            basedir=dict(type='path'),
            host=dict(type='str'),
            tags=dict(type='list', elements='str', default=[]),
        ),
        mutually_exclusive=[['path', 'content'], ['path', 'src']],
        required_one_of=[['path', 'content']],
        supports_check_mode=True,
    )
    p = module.params
    grove = Grove(module)
    tmp = None
    try:
        if p['content'] is not None:
            basedir = p['basedir'] or os.environ.get('HOME') or pwd.getpwuid(os.getuid()).pw_dir
            fd, tmp = tempfile.mkstemp(prefix='.grove-ansible-', suffix='.yaml', dir=basedir)
            with os.fdopen(fd, 'wb') as f:
                f.write(to_bytes(p['content']))
            manifest = tmp
        else:
            manifest = p['path']
        # Every value as --opt=VALUE: a value is never read as an option.
        args = ['apply', '--file=' + manifest]
        if p['host']:
            args += ['--host=' + p['host']]
        for tag in p['tags']:
            args += ['--tag=' + tag]
        if module.check_mode:
            args.append('--check')
        rc, doc, out, err = grove.run(args)
    finally:
        if tmp:
            os.unlink(tmp)

    conflicts = []
    for t in (doc or {}).get('targets') or []:
        for c in t.get('conflicts') or []:
            c = dict(c)
            c['target'] = t.get('target')
            conflicts.append(c)
    # --check exits 1 when something would change: that is an answer, not a failure.
    would_change = module.check_mode and rc == EXIT_REFUSED and doc is not None and not conflicts
    if doc is None or conflicts or (rc != EXIT_OK and not would_change):
        if conflicts:
            doc = dict(doc or {}, conflicts=conflicts)
        grove.fail(rc if rc != EXIT_OK else 1, doc, out, err, 'apply %s' % (p['path'] or p['src'] or 'manifest'),
                   transaction=0, transactions=[])
    txns = transactions_of(doc)
    profiles = doc.get('profiles') or {}
    if module.check_mode:
        changed = bool(doc.get('changed'))
    else:
        changed = bool(txns) or bool(doc.get('applied') and profiles.get('changed'))
    result = dict(changed=changed, transaction=max([t['txn'] for t in txns] or [0]),
                  transactions=txns, targets=doc.get('targets') or [],
                  alternatives=doc.get('alternatives') or [], profiles=profiles,
                  conflicts=[], grove_result=doc, rc=0, grove_rc=rc)
    if module._diff:
        result['diff'] = merge_diffs([ops_diff(t.get('ops'), t.get('target'))
                                      for t in doc.get('targets') or []])
    module.exit_json(**result)


if __name__ == '__main__':
    main()
