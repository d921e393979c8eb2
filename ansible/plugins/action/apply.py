# -*- coding: utf-8 -*-
# SPDX-License-Identifier: GPL-3.0-or-later
# The action of grove.farm.apply: reads a controller-side manifest (src) and sends its text.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(('src', 'path', 'content', 'basedir', 'host', 'tags', 'grove',
                             'state_dir', 'wait'))

    def run(self, tmp=None, task_vars=None):
        if task_vars is None:
            task_vars = dict()
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        src = args.pop('src', None)
        if src is not None:
            if args.get('path') is not None or args.get('content') is not None:
                raise AnsibleActionFail('src is mutually exclusive with path and content')
            try:
                found = self._find_needle('files', src)
            except Exception as e:
                raise AnsibleActionFail('src: %s' % to_text(e))
            with open(found, 'rb') as f:
                args['content'] = to_text(f.read(), errors='surrogate_or_strict')
        result.update(self._execute_module(module_name='grove.farm.apply', module_args=args,
                                           task_vars=task_vars))
        return result
