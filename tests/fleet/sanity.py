#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# The offline part of `ansible-test sanity` (the rest wants pip and the network) and a stand-in for
# the rest: every plugin
# of the grove.farm collection compiles, `ansible-doc` renders every module, and every module's
# DOCUMENTATION (with its doc fragment) is valid YAML that matches its argument spec - names,
# types, elements, required, defaults, choices, aliases, suboptions - and EXAMPLES/RETURN parse.
import ast
import json
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile

import yaml

import fleettap  # the test's own stdin


sys.dont_write_bytecode = True  # nothing written into the source tree

SRC = os.environ.get('GROVE_SOURCE_ROOT') or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
COLL = os.path.join(SRC, 'ansible')
MODULES = ['package', 'apply', 'alternative', 'profile', 'undo']
n = 0
failed = []


def ok(desc):
    global n
    n += 1
    print('ok %d - %s' % (n, desc), flush=True)


quiet = []


def bad(msg):
    failed.append(msg)
    if not quiet:
        print('FAIL: sanity: %s' % msg, file=sys.stderr, flush=True)


def literal(path, name):
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], 'id', None) == name:
            return node.value.value
    return None


class Captured(Exception):
    pass


def argspec(name):
    """Runs the module's main() with AnsibleModule replaced by a recorder of its keyword args."""
    import ansible.module_utils.basic as basic
    real = basic.AnsibleModule

    class Recorder(object):
        def __init__(self, **kw):
            raise Captured(kw)
    basic.AnsibleModule = Recorder
    try:
        mod = __import__('ansible_collections.grove.farm.plugins.modules.%s' % name, fromlist=['main'])
        mod.AnsibleModule = Recorder
        try:
            mod.main()
        except Captured as c:
            return c.args[0]
    finally:
        basic.AnsibleModule = real
    raise AssertionError('%s: main() made no AnsibleModule' % name)


TYPES = {'str': 'str', 'path': 'path', 'int': 'int', 'bool': 'bool', 'list': 'list', 'dict': 'dict'}


def compare(where, doc_opts, spec):
    for k in sorted(set(doc_opts) | set(spec)):
        if k not in doc_opts:
            bad('%s: option %s is in the argument spec but not documented' % (where, k))
            continue
        if k not in spec:
            bad('%s: option %s is documented but not in the argument spec' % (where, k))
            continue
        d, s = doc_opts[k], spec[k]
        if not d.get('description'):
            bad('%s: option %s has no description' % (where, k))
        for attr, default in (('type', 'str'), ('elements', None), ('required', False),
                              ('default', None), ('choices', None), ('aliases', None)):
            dv, sv = d.get(attr, default), s.get(attr, default)
            if attr == 'default' and sv == [] and dv is None:
                dv = []
            if attr == 'aliases':
                dv, sv = sorted(dv or []), sorted(sv or [])
            if dv != sv:
                bad('%s: option %s: %s is %r in DOCUMENTATION, %r in the spec' % (where, k, attr, dv, sv))
        if 'options' in s or 'suboptions' in d:
            compare('%s.%s' % (where, k), d.get('suboptions') or {}, s.get('options') or {})


def main():
    top = tempfile.mkdtemp(prefix='grove-sanity.')
    try:
        run(top)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def run(top):
    os.makedirs(os.path.join(top, 'ansible_collections/grove'))
    os.symlink(COLL, os.path.join(top, 'ansible_collections/grove/farm'))
    sys.path.insert(0, top)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=top, ANSIBLE_HOME=os.path.join(top, 'home'),
               ANSIBLE_NOCOLOR='1')

    plugins = []
    for d, _, files in os.walk(os.path.join(COLL, 'plugins')):
        plugins += [os.path.join(d, f) for f in files if f.endswith('.py')]
    for f in sorted(plugins):
        try:
            py_compile.compile(f, cfile=os.path.join(top, 'c.pyc'), doraise=True)
        except py_compile.PyCompileError as e:
            bad('%s does not compile: %s' % (f, e))
    ok('py_compile: %d plugin files' % len(plugins))

    for yml in ('galaxy.yml', 'meta/runtime.yml', 'roles/install/tasks/main.yml',
                'roles/install/defaults/main.yml', 'roles/install/meta/main.yml'):
        yaml.safe_load(open(os.path.join(COLL, yml)))
    runtime = yaml.safe_load(open(os.path.join(COLL, 'meta/runtime.yml')))
    if sorted(runtime['action_groups']['grove']) != sorted(MODULES):
        bad('meta/runtime.yml: the action group is not every module')
    ok('galaxy.yml, meta/runtime.yml and the role parse; the action group lists every module')

    fragment = yaml.safe_load(literal(os.path.join(COLL, 'plugins/doc_fragments/common.py'), 'DOCUMENTATION'))
    # One ansible-doc run for all modules (each run costs seconds of Ansible's start-up).
    r = subprocess.run(['ansible-doc', '--json'] + ['grove.farm.%s' % m for m in MODULES],
                       capture_output=True, text=True, env=env)
    rendered = json.loads(r.stdout) if r.returncode == 0 else {}
    if r.returncode != 0:
        bad('ansible-doc: exit %d: %s' % (r.returncode, r.stderr[-800:]))
    for m in MODULES:
        path = os.path.join(COLL, 'plugins/modules/%s.py' % m)
        got = rendered.get('grove.farm.%s' % m) or {}
        if not got.get('doc', {}).get('options') or not got.get('examples') or not got.get('return'):
            bad('ansible-doc grove.farm.%s: no options, examples or return values' % m)
        elif 'grove' not in got['doc']['options'] or 'wait' not in got['doc']['options']:
            bad('ansible-doc grove.farm.%s: the doc fragment is not merged' % m)
        doc = yaml.safe_load(literal(path, 'DOCUMENTATION'))
        for key in ('EXAMPLES', 'RETURN'):
            text = literal(path, key)
            if not text or yaml.safe_load(text) is None:
                bad('%s: %s is missing or empty' % (m, key))
        if doc.get('module') != m or not doc.get('short_description') or not doc.get('description'):
            bad('%s: DOCUMENTATION lacks module, short_description or description' % m)
        opts = dict(doc.get('options') or {})
        if 'grove.farm.common' in (doc.get('extends_documentation_fragment') or []):
            opts.update(fragment['options'])
        else:
            bad('%s: does not extend grove.farm.common' % m)
        kw = argspec(m)
        if not kw.get('supports_check_mode'):
            bad('%s: no check mode' % m)
        if doc.get('attributes', {}).get('check_mode', {}).get('support') != 'full':
            bad('%s: DOCUMENTATION does not state full check mode support' % m)
        compare(m, opts, kw['argument_spec'])
        ok('grove.farm.%s: ansible-doc renders it; DOCUMENTATION, EXAMPLES, RETURN parse; options match the spec' % m)
    # ansible-test sanity: the tests that run offline (the others build a virtualenv with pip and
    # the network: ansible-doc, import, pep8, pylint, runtime-metadata, validate-modules, yamllint
    # - what they check of the modules is checked above). It wants the collection at
    # ansible_collections/NS/NAME in a git tree, so a copy is made.
    at = os.path.join(top, 'at', 'ansible_collections', 'grove', 'farm')
    shutil.copytree(COLL, at, ignore=shutil.ignore_patterns('__pycache__', 'tests'))
    subprocess.run(['git', 'init', '-q', '.'], cwd=at, check=True)
    subprocess.run(['git', 'add', '-A'], cwd=at, check=True)
    offline = ['action-plugin-docs', 'compile', 'empty-init', 'future-import-boilerplate',
               'line-endings', 'metaclass-boilerplate', 'no-assert', 'no-basestring',
               'no-dict-iteritems', 'no-dict-iterkeys', 'no-dict-itervalues', 'no-get-exception',
               'no-illegal-filenames', 'no-main-display', 'no-smart-quotes', 'no-unicode-literals',
               'replace-urlopen', 'shebang', 'symlinks', 'use-argspec-type-path', 'use-compat-six']
    cmd = ['ansible-test', 'sanity', '--python', '%d.%d' % sys.version_info[:2]]
    for t in offline:
        cmd += ['--test', t]
    r = subprocess.run(cmd, cwd=at, capture_output=True, text=True,
                       env=dict(env, HOME=os.path.join(top, 'home')))
    if r.returncode != 0:
        bad('ansible-test sanity (offline tests): exit %d:\n%s%s' % (r.returncode, r.stdout[-3000:], r.stderr[-3000:]))
    else:
        ok('ansible-test sanity: the %d tests that run offline pass' % len(offline))

    # The comparison itself must catch a mismatch.
    before = len(failed)
    quiet.append(True)
    compare('self-test', {'a': {'description': 'x', 'type': 'int'}}, {'a': {'type': 'str'}, 'b': {}})
    quiet.pop()
    if len(failed) != before + 2:
        bad('the DOCUMENTATION/spec comparison misses mismatches')
    else:
        del failed[before:]
        ok('the comparison catches a mistyped and an undocumented option')
    if failed:
        print('# sanity: FAILED (%d problems)' % len(failed))
        sys.exit(1)
    print('# sanity: %d checks passed' % n)


if __name__ == '__main__':
    main()

