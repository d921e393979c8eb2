#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: GPL-3.0-or-later
# grove.farm.undo: undo a target's last transaction, or roll it back to a transaction number.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: undo
short_description: Undo grove's last transaction on a target, or roll back to or before a transaction
version_added: 0.1.0
description:
  - Without I(to), reverts the last committed transaction on I(target) that is not an undo
    already (C(grove undo)), as a new transaction. Each run undoes one more, like a command;
    use I(to) for a task that can run twice.
  - With I(to), brings the target back to its state after transaction I(to)
    (C(grove rollback --to N)) by reverting every later transaction in one new transaction.
    Run again, it finds nothing to revert and reports C(ok).
  - With I(before), brings the target back to its state before its transaction I(before)
    (C(grove rollback --before T)); that transaction and every later one of the target are
    reverted in one new transaction. I(before) must be a transaction of I(target) (the
    C(transaction) another module returned for it); unlike I(to) set to T - 1 it never depends on
    which target logged the number before it.
  - The transaction numbers are those the other grove.farm modules return as C(transaction), and
    C(grove log) lists. They are per state dir, so they differ from host to host; register the
    result of a task on each host and use it there (see the examples).
  - A revert that would remove or replace something grove did not leave there (the user changed
    the link since) is refused with the conflicts listed, and nothing changes.
  - In check mode grove plans the revert (C(grove -n)) and reports it; nothing changes.
options:
  target:
    description: The target whose log to revert (a stow target, or an alternatives root).
    type: path
    required: true
  to:
    description: Roll back to the state after this transaction (C(grove rollback --to)).
    type: int
  before:
    description:
      - Roll back to the state before this transaction of the target (C(grove rollback --before)).
      - Mutually exclusive with I(to).
    type: int
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
- name: Stow the new dotfiles
  grove.farm.package:
    dir: ~/dotfiles
    packages: [vim, git]
  register: stowed

- name: Back to how each host was before that task, if it changed anything there
  grove.farm.undo:
    target: "{{ stowed.target }}"
    before: "{{ stowed.transaction }}"
  when: stowed.transaction > 0

- name: Undo the last change on /usr/local
  become: true
  grove.farm.undo:
    target: /usr/local
'''

RETURN = r'''
transaction:
  description: The transaction the revert made (0 when nothing had to change, and in check mode).
  returned: always
  type: int
reverts:
  description: The transactions reverted, oldest first (empty when nothing changed).
  returned: always
  type: list
  elements: int
target:
  description: The target, absolute.
  returned: always
  type: str
ops:
  description: The revert's ops (grove's JSON op objects).
  returned: always
  type: list
  elements: dict
conflicts:
  description: Why grove refused (the task fails when not empty).
  returned: always
  type: list
  elements: dict
rc:
  description: 0 on success (Ansible reads a non-zero C(rc) as a failure); grove's own is C(grove_rc).
  returned: always
  type: int
grove_rc:
  description: grove's exit status (1 when there was nothing to undo).
  returned: always
  type: int
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.grove.farm.plugins.module_utils.grove import (
    Grove, common_args, ops_diff, EXIT_OK, EXIT_REFUSED)


def main():
    module = AnsibleModule(
        argument_spec=common_args(
            target=dict(type='path', required=True),
            to=dict(type='int'),
            before=dict(type='int'),
        ),
        mutually_exclusive=[('to', 'before')],
        supports_check_mode=True,
    )
    p = module.params
    grove = Grove(module)
    if p['before'] is not None:
        if p['before'] < 1:
            module.fail_json(msg='before: a transaction number (1 or more) is needed')
        args = ['rollback', '--before=%d' % p['before'], '--target=' + p['target']]
        what = 'rollback before %d on %s' % (p['before'], p['target'])
    elif p['to'] is None:
        # Every value as --opt=VALUE: a value is never read as an option.
        args = ['undo', '--target=' + p['target']]
        what = 'undo on %s' % p['target']
    else:
        if p['to'] < 0:
            module.fail_json(msg='to: a transaction number (0 or more) is needed')
        args = ['rollback', '--to=%d' % p['to'], '--target=' + p['target']]
        what = 'rollback to %d on %s' % (p['to'], p['target'])
    rc, doc, out, err = grove.run(args, dry_run=module.check_mode)
    if rc == EXIT_REFUSED and doc is not None and not doc.get('reverts') and not doc.get('conflicts'):
        # Nothing to undo: the target is as far back as it goes; nothing to change.
        module.exit_json(changed=False, transaction=0, reverts=[], target=doc.get('target'),
                         ops=[], conflicts=[], rc=0, grove_rc=rc, msg='nothing to undo')
    if rc != EXIT_OK or doc is None:
        grove.fail(rc if rc != EXIT_OK else 1, doc, out, err, what, transaction=0,
                   ops=(doc or {}).get('ops', []), reverts=(doc or {}).get('reverts', []))
    ops = doc.get('ops') or []
    txn = int(doc.get('transaction') or 0)
    changed = bool(doc.get('changed')) if module.check_mode else txn > 0
    # grove rollback --to N with nothing left to revert still lists the transactions after N (their
    # net effect is nothing): reverted, for the task, are only those of a revert it made or plans.
    reverts = (doc.get('reverts') or []) if changed else []
    result = dict(changed=changed, transaction=txn, reverts=reverts,
                  target=doc.get('target'), ops=ops, conflicts=[], rc=0, grove_rc=rc)
    if module._diff:
        result['diff'] = ops_diff(ops, doc.get('target'))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
