# -*- coding: utf-8 -*-
# SPDX-License-Identifier: GPL-3.0-or-later
# The options every grove.farm module shares: which grove, which log, how long to wait for a lock.
from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r'''
options:
  grove:
    description:
      - The C(grove) binary on the managed host, as a path or a name looked up on C(PATH)
        first, then in C(/usr/local/bin).
    type: str
    default: grove
  state_dir:
    description:
      - grove's transaction log folder (C(grove --state)). Default is grove's own
        (C($GROVE_STATE_DIR), else C(~/.local/state/grove), C(/var/lib/grove) for root).
    type: path
  wait:
    description:
      - Seconds to wait for a target locked by another grove run (C(grove --wait)).
      - When the target is still locked after that, the task fails with C(rc=75) and
        C(locked=true); use C(until) with C(result is not failed) with C(retries) to retry it as
        a whole.
    type: int
    default: 0
notes:
  - The module runs C(grove --json) on the managed host and reads its JSON document and exit
    status (0 done, 1 refused, 2 usage, 3 rolled back, 4 needs attention, 75 locked, 78 bad
    config); it never parses grove's messages.
  - A conflict is never resolved by deleting anything; the task fails with the conflicts listed
    in C(conflicts) and C(msg), and nothing is changed on that host.
'''
