# -*- coding: utf-8 -*-
# SPDX-License-Identifier: GPL-3.0-or-later
# The fleet test's stdout callback: one JSON document with every task's result per host and the
# stats (ansible.posix's json callback is not in ansible-core).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = '''
name: fleet_json
type: stdout
short_description: every task result per host, and the stats, as one JSON document
description: For grove's fleet test.
'''

import json

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'stdout'
    CALLBACK_NAME = 'fleet_json'

    def __init__(self, display=None):
        super(CallbackModule, self).__init__(display)
        self.plays = []

    def v2_playbook_on_play_start(self, play):
        self.plays.append({'play': {'name': play.get_name()}, 'tasks': []})

    def v2_playbook_on_task_start(self, task, is_conditional):
        self.plays[-1]['tasks'].append({'task': {'name': task.get_name()}, 'hosts': {}})

    def v2_playbook_on_handler_task_start(self, task):
        self.v2_playbook_on_task_start(task, False)

    def _record(self, result, **extra):
        r = dict(result._result)
        r.update(extra)
        for play in reversed(self.plays):
            for t in reversed(play['tasks']):
                if t['task']['name'] == result._task.get_name():
                    t['hosts'][result._host.get_name()] = r
                    return

    def v2_runner_on_ok(self, result):
        self._record(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, failed=True)

    def v2_runner_on_skipped(self, result):
        self._record(result, skipped=True)

    def v2_runner_on_unreachable(self, result):
        self._record(result, unreachable=True, failed=True)

    def v2_playbook_on_stats(self, stats):
        out = {}
        for h in sorted(stats.processed.keys()):
            s = stats.summarize(h)
            out[h] = {'ok': s['ok'], 'changed': s['changed'], 'failures': s['failures'],
                      'unreachable': s['unreachable'], 'skipped': s['skipped']}
        self._display.display(json.dumps({'plays': self.plays, 'stats': out}, default=str))
