# -*- coding: utf-8 -*-
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/fleet-netns.sh's stdout callback: per host, the seconds its tasks took (each from its start
# on that host to its result), summed, as one JSON document; and whether anything failed.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = '''
name: host_times
type: stdout
short_description: per host, the summed wall time of its tasks, as JSON
description: For grove's bench/fleet-netns.sh.
'''

import json
import time

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'stdout'
    CALLBACK_NAME = 'host_times'

    def __init__(self, display=None):
        super(CallbackModule, self).__init__(display)
        self.start = {}
        self.total = {}
        self.failed = 0
        self.changed = 0

    def v2_runner_on_start(self, host, task):
        self.start[(host.get_name(), task._uuid)] = time.monotonic()

    def _end(self, result):
        h = result._host.get_name()
        t0 = self.start.pop((h, result._task._uuid), None)
        if t0 is not None:
            self.total[h] = self.total.get(h, 0.0) + time.monotonic() - t0
        if result._result.get('changed'):
            self.changed += 1

    def v2_runner_on_ok(self, result):
        self._end(result)

    def v2_runner_on_skipped(self, result):
        self._end(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._end(result)
        self.failed += 1

    def v2_runner_on_unreachable(self, result):
        self._end(result)
        self.failed += 1

    def v2_playbook_on_stats(self, stats):
        self._display.display(json.dumps({'hosts': self.total, 'failed': self.failed,
                                          'changed': self.changed}))
