#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# The network fleet test (issue 42): examples/fleet/netns-fleet.sh makes N hosts (default 12,
# GROVE_NETNS_HOSTS), each in its own network and mount namespace with its own sshd, and real
# ansible-playbook reaches them over SSH from a controller namespace with the grove.farm collection
# installed by ansible-galaxy. Checks: an interrupted `up` leaves nothing; each host sees only its
# own files; the site playbook converges and is idempotent; faults in the middle of a run - a host's
# sshd killed while its grove task runs, a host's link cut mid-task then restored, grove killed
# (SIGKILL, strace's fault injection, as the crash tier does) mid-transaction, a host whose state
# disk is full - leave every host's tree as before the run or as a clean run leaves it, never
# between; the next run converges every host and `grove verify` exits 0 on each; the rolling
# playbook and the fleet rollback as docs/fleet.md prints them. Synchronised through strace's
# output on fifos, never by sleeping. At the end (and on failure, SIGINT or SIGTERM) the fleet is
# torn down, and the test checks that no namespace, process or mount of it is left.
# Prints "ok N - ..." lines; any failure exits 1 (a missing tool is a failure, not a skip).
import hashlib
import json
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import tempfile

import fleettap  # the test's own stdin, and its TAP lines


GROVE = os.environ.get('GROVE')
SRC = os.environ.get('GROVE_SOURCE_ROOT') or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(SRC, 'examples/fleet/netns-fleet.sh')
SITE = os.path.join(SRC, 'examples/fleet/net-site.yml')
N = int(os.environ.get('GROVE_NETNS_HOSTS', '12'))
# The faulted hosts.
H_SSHD, H_LINK, H_KILL, H_FULL = 'h03', 'h05', 'h07', 'h09'
HELLO = 'hello in /usr/local'

_tap = fleettap.Tap('test-netns')
ok, fail, expect = _tap.ok, _tap.fail, _tap.expect



def run(*cmd, **kw):
    return subprocess.run(list(cmd), capture_output=True, text=True, **kw)


def netns_list():
    return set(l.split()[0] for l in run('ip', 'netns', 'list').stdout.splitlines() if l.strip())


def netns_pids(ns):
    r = run('ip', 'netns', 'pids', ns)
    return [int(x) for x in r.stdout.split()]


def comm(pid):
    try:
        with open('/proc/%d/comm' % pid) as f:
            return f.read().strip()
    except OSError:
        return None


def wait_gone(pids, what):
    """Waits for processes that are not our children to end (pidfd, no polling)."""
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            r, _, _ = select.select([fd], [], [], 30)
            expect(r, '%s: process %d (%s) still alive 30 s after SIGKILL' % (what, pid, comm(pid)))
        finally:
            os.close(fd)


def ns_inode(pid):
    try:
        return os.stat('/proc/%d/ns/net' % pid).st_ino
    except OSError:
        return None


def mounts_mentioning(text):
    out = []
    for pid in ['self'] + [p for p in os.listdir('/proc') if p.isdigit()]:
        try:
            with open('/proc/%s/mountinfo' % pid) as f:
                out += [l for l in f if text in l]
        except OSError:
            pass
    return out


def tree_listing(root):
    """Every entry beneath a host's folder: type, path, link text or content hash, mode; grove's
    database and locks, the overlay's work folder, Ansible's ~/.ansible and the grove binary (the
    install role's, or a fault wrapper's) left out."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if (rel.startswith(('state/grove.db', 'state/locks', 'state/alt-stamps', 'var-lib/work',
                                'root/.ansible', 'usr-local/bin/grove', 'state-tmpfs')) or
                    name.startswith('.grove lock')):
                continue
            st = os.lstat(path)
            if os.path.islink(path):
                out.append('l %s -> %s' % (rel, os.readlink(path)))
            elif os.path.isdir(path):
                out.append('d %s %o' % (rel, st.st_mode & 0o7777))
            else:
                with open(path, 'rb') as f:
                    h = hashlib.sha256(f.read()).hexdigest()[:16]
                out.append('f %s %s %o' % (rel, h, st.st_mode & 0o7777))
    return sorted(out)


def differ(a, b):
    """The first lines of a listing's difference from another."""
    return '; '.join(['-' + x for x in sorted(set(b) - set(a))][:4] + ['+' + x for x in sorted(set(a) - set(b))][:4])


def expected_links(hello):
    """What the site playbook links on a host, from first principles (GNU Stow's folding: share/ is
    the package's alone, so one link; bin/ holds grove too, so the package's bin/hello is linked in
    it; dot-x is .x with --dotfiles; the alternative's generic link and its /etc/alternatives link)."""
    return {
        'root/.bashrc': 'dotfiles/bash/dot-bashrc',
        'root/.gitconfig': 'dotfiles/git/dot-gitconfig',
        'root/.vimrc': 'dotfiles/vim/dot-vimrc',
        'root/.vim': 'dotfiles/vim/dot-vim',
        'usr-local/share': 'stow/hello-%s/share' % hello,
        'usr-local/bin/hello': '../stow/hello-%s/bin/hello' % hello,
        'usr-local/bin/editor': '/etc/alternatives/editor',
        'etc-alternatives/editor': '/usr/local/lib/editors/vim',
    }


class Fleet(object):
    def __init__(self, top, n):
        self.top = top
        self.dir = os.path.join(top, 'fleet')
        self.hosts = ['h%02d' % i for i in range(1, n + 1)]
        self.n = n
        self.prefix = None
        self.env = dict(os.environ)
        self.env.update({
            'ANSIBLE_CONFIG': os.path.join(self.dir, 'ansible.cfg'),
            'ANSIBLE_HOME': os.path.join(top, 'ansible-home'),
            'ANSIBLE_LOCAL_TEMP': os.path.join(top, 'ansible-local'),
            'ANSIBLE_STDOUT_CALLBACK': 'fleet_json',
            'ANSIBLE_CALLBACK_PLUGINS': os.path.join(HERE, 'callback'),
            'ANSIBLE_NOCOLOR': '1',
            'ANSIBLE_DEPRECATION_WARNINGS': '0',
        })
        for k in ('ANSIBLE_COLLECTIONS_PATH', 'ANSIBLE_COLLECTIONS_PATHS', 'ANSIBLE_INVENTORY',
                  'ANSIBLE_PIPELINING', 'ANSIBLE_SSH_ARGS'):
            self.env.pop(k, None)

    def up(self):
        r = run('bash', SCRIPT, 'up', self.dir, str(self.n), GROVE, env=self.env)
        if os.path.exists(os.path.join(self.dir, 'prefix')):
            with open(os.path.join(self.dir, 'prefix')) as f:
                self.prefix = f.read().strip()
        expect(r.returncode == 0, 'netns-fleet.sh up failed:\n%s\n%s' % (r.stdout, r.stderr))
        self.ctl = self.prefix + '-ctl'

    def ns(self, h):
        return '%s-%s' % (self.prefix, h)

    def root(self, h):
        return os.path.join(self.dir, 'hosts', h)

    def addr(self, h):
        return '10.213.0.%d' % (10 + int(h[1:]))

    def sshd_pids(self, h):
        return [p for p in netns_pids(self.ns(h)) if comm(p) == 'sshd']

    def listings(self):
        return dict((h, tree_listing(self.root(h))) for h in self.hosts)

    def in_host(self, h, *cmd):
        """CMD in host h's namespaces (those of its sshd: its network and its view of the files)."""
        pid = self.sshd_pids(h)[0]
        return run('nsenter', '-t', str(pid), '-n', '-m', '--', *cmd)

    def ssh(self, h, command):
        """One command over plain ssh from the controller's namespace (no ControlMaster)."""
        s = os.path.join(self.dir, 'ssh')
        return run('ip', 'netns', 'exec', self.ctl, 'ssh', '-F', 'none', '-i', s + '/id_ed25519',
                   '-o', 'IdentitiesOnly=yes', '-o', 'UserKnownHostsFile=' + s + '/known_hosts',
                   '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes', '-o', 'ControlPath=none',
                   'root@' + self.addr(h), command)

    def start(self, playbook, *args, argv=None):
        argv = argv or ['bash', SCRIPT, 'exec', self.dir, 'ansible-playbook', playbook] + list(args)
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=self.env, cwd=SRC, start_new_session=True)
        p.what = ' '.join(argv[3:])
        return p

    def header(self, book):
        """The command in examples/fleet/BOOK's header, as printed, for this fleet."""
        for line in open(os.path.join(SRC, 'examples/fleet', book)):
            m = re.match(r'#\s+(bash examples/fleet/netns-fleet.sh exec /tmp/nf .*ansible-playbook.*)$', line.rstrip())
            if m:
                return shlex.split(m.group(1).replace('/tmp/nf', self.dir))
        fail('no netns-fleet.sh command in the header of %s' % book)

    def play_header(self, book):
        return self.finish(self.start(None, argv=self.header(book)))

    def finish(self, p):
        out, err = p.communicate()
        try:
            doc = json.loads(out)
        except ValueError:
            fail('ansible-playbook %s printed no JSON (exit %d):\n%s\n%s' % (
                p.what, p.returncode, out[-3000:], err[-3000:]))
        return p.returncode, Run(doc, err)

    def play(self, playbook, *args):
        return self.finish(self.start(playbook, *args))

    def set_host_var(self, h, **kv):
        path = os.path.join(self.dir, 'host_vars', h + '.yml')
        with open(path, 'w') as f:
            json.dump(kv, f)

    def clear_host_var(self, h):
        path = os.path.join(self.dir, 'host_vars', h + '.yml')
        if os.path.exists(path):
            os.unlink(path)


class Run(object):
    def __init__(self, doc, stderr):
        self.doc = doc
        self.stderr = stderr
        self.stats = doc.get('stats', {})

    def results(self, task):
        out = {}
        for play in self.doc.get('plays', []):
            for t in play.get('tasks', []):
                if t['task']['name'] == task:
                    out.update(t['hosts'])
        return out

    def dump(self, h):
        out = []
        for play in self.doc.get('plays', []):
            for t in play.get('tasks', []):
                r = t['hosts'].get(h)
                if r is not None:
                    out.append('%s: %s' % (t['task']['name'], json.dumps(r)[:1500]))
        return '\n'.join(out)


class Tracer(object):
    """A host's grove run under strace, writing to a fifo this test reads: the wrapper the host's
    grove tasks call (grove_bin) stops grove (SIGSTOP) at its second symlinkat - the intent logged,
    the first link of the switch replaced, the second not: mid-transaction."""

    def __init__(self, fleet, h):
        self.dir = os.path.join(fleet.dir, 'faults', h)
        os.makedirs(self.dir)
        self.fifo = os.path.join(self.dir, 'strace')
        os.mkfifo(self.fifo)
        self.wrapper = os.path.join(self.dir, 'grove')
        with open(self.wrapper, 'w') as f:
            f.write('#!/bin/sh\nexec strace -f -q -o %s -e trace=symlinkat '
                    '-e inject=symlinkat:signal=SIGSTOP:when=2 /usr/local/bin/grove "$@"\n' % self.fifo)
        os.chmod(self.wrapper, 0o755)
        # Opened read-write: never blocks here, and strace's open for writing never blocks either.
        self.fd = os.open(self.fifo, os.O_RDWR | os.O_NONBLOCK)
        self.buf = b''
        self.pid = None
        self.proc = None

    def line(self, timeout=90):
        while b'\n' not in self.buf:
            r, _, _ = select.select([self.fd], [], [], timeout)
            if not r and self.proc is not None:
                os.killpg(self.proc.pid, signal.SIGKILL)
                out, err = self.proc.communicate()
                fail('strace on %s wrote nothing for %d s; ansible-playbook:\n%s\n%s' % (
                    self.dir, timeout, out[-3000:], err[-3000:]))
            expect(r, 'strace on %s wrote nothing for %d s' % (self.dir, timeout))
            self.buf += os.read(self.fd, 65536)
        line, self.buf = self.buf.split(b'\n', 1)
        return line.decode(errors='replace')

    def wait_for(self, pattern):
        while True:
            l = self.line()
            m = re.match(r'^(\d+)\s+(.*)$', l)
            if m and re.search(pattern, m.group(2)):
                return int(m.group(1)), m.group(2)

    def stopped(self):
        self.pid, _ = self.wait_for(r'--- stopped by SIGSTOP ---')
        return self.pid

    def exited(self):
        pid, what = self.wait_for(r'^\+\+\+ (exited|killed)')
        expect(pid == self.pid, 'strace: %s of %d, expected %d' % (what, pid, self.pid))
        return what

    def close(self):
        os.close(self.fd)


def interrupted_up(top, env):
    """`up` stopped by SIGTERM after its second host: its trap takes down what it made."""
    d = os.path.join(top, 'interrupted')
    p = subprocess.Popen(['bash', SCRIPT, 'up', d, '4', GROVE], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, env=env)
    seen = []
    for line in p.stderr:
        seen.append(line)
        if 'h02 up at' in line:
            p.send_signal(signal.SIGTERM)
            break
    rest = p.stderr.read()
    rc = p.wait()
    with open(os.path.join(d, 'prefix')) as f:
        prefix = f.read().strip()
    expect(rc == 143, 'interrupted up: exit %d, expected 143:\n%s%s' % (rc, ''.join(seen), rest))
    left = [ns for ns in netns_list() if ns.startswith(prefix + '-')]
    expect(not left, 'interrupted up left namespaces %s' % left)
    expect(not mounts_mentioning(d), 'interrupted up left mounts: %s' % mounts_mentioning(d)[:3])
    procs = [pid for pid in os.listdir('/proc') if pid.isdigit() and comm(int(pid)) == 'sshd' and
             d in open('/proc/%s/cmdline' % pid).read()]
    expect(not procs, 'interrupted up left sshd %s' % procs)
    ok('netns-fleet.sh up, interrupted (SIGTERM) after 2 of 4 hosts, leaves no namespace, process or mount')


def machine_view():
    """This machine's own entries at every path the fleet's playbooks write on a host (what a leak
    of a host's view would change): type, link text or content, mode and change time."""
    out = []
    paths = ['/root/.bashrc', '/root/.gitconfig', '/root/.vimrc', '/root/.vim', '/root/dotfiles',
             '/root/.ansible/tmp', '/usr/local', '/usr/local/stow', '/usr/local/share',
             '/usr/local/bin', '/usr/local/bin/hello', '/usr/local/bin/editor', '/usr/local/bin/grove',
             '/usr/local/lib/editors', '/etc/alternatives', '/etc/alternatives/editor',
             '/var/lib/dpkg/alternatives', '/var/lib/dpkg/alternatives/editor']
    for path in paths:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            out.append('%s absent' % path)
            continue
        if os.path.islink(path):
            what = '-> ' + os.readlink(path)
        elif os.path.isfile(path):
            with open(path, 'rb') as f:
                what = hashlib.sha256(f.read()).hexdigest()[:16]
        else:
            what = 'dir'
        out.append('%s %s %o %d' % (path, what, st.st_mode, st.st_ctime_ns if what != 'dir' else 0))
    return out


def main():
    expect(GROVE and os.access(GROVE, os.X_OK), 'GROVE must name the grove binary')
    expect(os.geteuid() == 0, 'the netns fleet test makes namespaces: run it as root')
    for tool in ('ip', 'ansible-playbook', 'ansible-galaxy', 'ssh', 'ssh-keygen', 'strace', 'nsenter',
                 'unshare'):
        expect(shutil.which(tool), '%s not found (bash scripts/install-deps.sh installs it)' % tool)
    expect(N >= 10, 'GROVE_NETNS_HOSTS: at least 10 hosts (the faults take h03 to h09)')

    top = tempfile.mkdtemp(prefix='grove-netns.')
    os.chmod(top, 0o755)
    fleet = Fleet(top, N)
    before_machine = machine_view()
    ns_before = netns_list()

    def on_signal(sig, frame):
        fail('interrupted by signal %d' % sig)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    recorded = {}
    try:
        interrupted_up(top, fleet.env)
        os.environ['FLEET_STATE_TMPFS'] = H_FULL
        fleet.env['FLEET_STATE_TMPFS'] = H_FULL
        fleet.up()
        for h in fleet.hosts + ['ctl']:
            ns = '%s-%s' % (fleet.prefix, h)
            recorded[ns] = netns_pids(ns)
        ok('a fleet of %d hosts in namespaces %s-*, each with its sshd' % (N, fleet.prefix))
        body(fleet, recorded)
    finally:
        teardown(fleet, recorded)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    expect(netns_list() - ns_before == set(), 'namespaces left: %s' % (netns_list() - ns_before))
    now = machine_view()
    expect(now == before_machine, "this machine's own files changed: %s" % differ(now, before_machine))
    ok("this machine's /root, /usr/local, /etc/alternatives and /var/lib/dpkg/alternatives entries that "
       "the hosts write are untouched")
    shutil.rmtree(top)
    _tap.done()


def teardown(fleet, recorded):
    if not fleet.prefix:
        return
    inodes = set()
    pids = set()
    for ns in [x for x in netns_list() if x.startswith(fleet.prefix + '-')]:
        for pid in netns_pids(ns):
            pids.add(pid)
            inodes.add(ns_inode(pid))
    for ps in recorded.values():
        pids.update(ps)
    inodes.discard(None)
    r = run('bash', SCRIPT, 'down', fleet.dir)
    expect(r.returncode == 0, 'netns-fleet.sh down failed: %s' % r.stderr)
    wait_gone(sorted(pids), 'teardown')
    left_ns = [ns for ns in netns_list() if ns.startswith(fleet.prefix + '-')]
    expect(not left_ns, 'namespaces left after down: %s' % left_ns)
    left = [p for p in os.listdir('/proc') if p.isdigit() and ns_inode(int(p)) in inodes]
    expect(not left, 'processes left in the fleet namespaces: %s' % [(p, comm(int(p))) for p in left])
    m = mounts_mentioning(fleet.dir)
    expect(not m, 'mounts left: %s' % m[:3])
    ok('netns-fleet.sh down: no namespace, process (%d were there) or mount left' % len(pids))


def body(fleet, recorded):
    # Each host sees its own files only, over SSH.
    for h in (fleet.hosts[0], fleet.hosts[-1]):
        r = fleet.ssh(h, 'ls -A %s/hosts; ls /usr/local/stow; hostname -I' % fleet.dir)
        expect(r.returncode == 0, 'ssh to %s: %s' % (h, r.stderr))
        lines = r.stdout.split('\n')
        expect(lines[0] == 'hello-2.12' and lines[1] == 'hello-2.13' and
               lines[2].split() == [fleet.addr(h)],
               '%s over SSH: expected no other host folder, its stow dir, its address; got %r' % (h, r.stdout))
    ok("over SSH a host's only address is its own, the fleet's folders are hidden, /usr/local/stow is its own")

    # The first run, then a second that changes nothing.
    rc, res = fleet.play(SITE)
    expect(rc == 0, 'site run 1 failed (exit %d):\n%s\n%s' % (rc, res.dump(fleet.hosts[0]), res.stderr[-2000:]))
    for t in ("root's dotfiles (dot-x becomes ~/.x)", HELLO, 'vim as the editor'):
        rs = res.results(t)
        expect(sorted(rs) == fleet.hosts and all(r.get('changed') for r in rs.values()),
               'run 1: %s not changed on every host: %s' % (t, dict((h, r.get('changed')) for h, r in rs.items())))
    rs = res.results('grove.farm.install : The grove binary')
    expect(all(r.get('changed') for r in rs.values()) and len(rs) == N, 'install: not changed everywhere')
    rc, res = fleet.play(SITE)
    expect(rc == 0, 'site run 2 failed (exit %d)' % rc)
    changed = dict((h, s.get('changed')) for h, s in res.stats.items())
    expect(changed == dict((h, 0) for h in fleet.hosts), 'site run 2 changed: %s' % changed)
    before = fleet.listings()
    exp = expected_links('2.12')
    for h in fleet.hosts:
        links = dict(l[2:].split(' -> ') for l in before[h] if l.startswith('l '))
        expect(links == exp, '%s after the site run: links %s, expected %s' % (h, links, exp))
    ok('site run over SSH: every grove task changed on all %d hosts, the second run none; the links as '
       'Stow and update-alternatives make them' % N)

    faults(fleet, before)
    rolling(fleet)


def slices(n):
    """rolling.yml's serial [1, 3, 50%, 100%] over n hosts (Ansible: a percentage of the play's
    hosts, rounded down, at least 1; the last size repeats)."""
    sizes = [1, 3, max(1, n * 50 // 100), n]
    out, i = [], 0
    for k in sizes:
        if i >= n:
            break
        out.append(['h%02d' % j for j in range(i + 1, min(n, i + k) + 1)])
        i += k
    return out


def rolling(fleet):
    bad = 'h06'
    # h06's hello 2.12 is broken (a bad build on that host): its health check fails.
    hello = os.path.join(fleet.root(bad), 'usr-local/stow/hello-2.12/bin/hello')
    with open(hello, 'w') as f:
        f.write('#!/bin/sh\necho hello broken\n')
    before = fleet.listings()
    rollout = os.path.join(fleet.dir, 'rollout')
    os.makedirs(rollout)
    rc, res = fleet.play_header('rolling.yml')
    expect(rc != 0, 'the rollout with a bad host succeeded')
    sl = slices(len(fleet.hosts))
    k = [i for i, s in enumerate(sl) if bad in s][0]
    reached = [h for s in sl[:k + 1] for h in s]
    unreached = [h for s in sl[k + 1:] for h in s]
    expect(unreached, 'no slice after the bad host\'s (%s)' % sl)
    after = fleet.listings()
    health = res.results('Health check (the switched hello and editor run)')
    expect(sorted(health) == sorted(reached), 'health checked on %s, expected %s' % (sorted(health), reached))
    expect(health[bad].get('failed') and all(not health[h].get('failed') for h in reached if h != bad),
           'health: expected a failure on %s only: %s' % (bad, dict((h, r.get('failed')) for h, r in health.items())))
    exp = expected_links('2.12')
    exp['etc-alternatives/editor'] = '/usr/local/lib/editors/nano'
    good = [h for h in reached if h != bad]
    for h in reached:
        links = dict(l[2:].split(' -> ') for l in after[h] if l.startswith('l '))
        expect(links == exp, '%s after the rollout: links %s, expected %s' % (h, links, exp))
        expect(after[h] == after[good[0]] or h == bad, '%s differs from %s' % (h, good[0]))
    for h in unreached:
        expect(after[h] == before[h], '%s, in a slice the rollout never reached, changed: %s' % (h, differ(after[h], before[h])))
        expect(not os.path.exists(os.path.join(rollout, h + '.json')), '%s has a rollout record' % h)
    ok('rolling.yml as printed: slices %s; %s failed its health check in slice %d, the rollout stopped '
       'there; %d hosts switched (hello 2.12, nano), the %d of the later slices untouched'
       % ('|'.join(','.join(s) for s in sl), bad, k + 1, len(reached), len(unreached)))

    # The fleet rolled back as one.
    rc, res = fleet.play_header('rollback-fleet.yml')
    expect(rc == 0, 'rollback-fleet.yml failed (exit %d):\n%s' % (rc, res.dump(reached[0])))
    back = fleet.listings()
    for h in fleet.hosts:
        expect(back[h] == before[h], '%s after the fleet rollback is not as before the rollout: %s'
               % (h, differ(back[h], before[h])))
    rs = res.results('/usr/local as before the rollout\'s switch')
    expect(sorted(h for h, r in rs.items() if r.get('changed')) == sorted(reached),
           'rollback changed /usr/local on %s, expected %s' % (sorted(rs), reached))
    # Run again: nothing to revert anywhere, no tree changes.
    rc, res = fleet.play_header('rollback-fleet.yml')
    changed = dict((h, s.get('changed')) for h, s in res.stats.items())
    again = fleet.listings()
    expect(rc == 0 and changed == dict((h, 0) for h in fleet.hosts) and again == back,
           'rollback run 2: exit %d, changed %s, trees changed on %s:\n%s'
           % (rc, changed, [h for h in fleet.hosts if again[h] != back[h]], res.dump(reached[0])))
    for h in fleet.hosts:
        r = fleet.ssh(h, 'grove verify -t /usr/local && grove verify -t /')
        expect(r.returncode == 0, '%s: grove verify exit %d: %s' % (h, r.returncode, r.stdout + r.stderr))
    ok('rollback-fleet.yml as printed: every host exactly as before the rollout (the %d switched, the '
       'failed one, the %d never reached: nothing to do); run again, nothing changes; grove verify 0'
       % (len(reached) - 1, len(unreached)))


def faults(fleet, before):
    # The switch to hello 2.13 (one transaction per host), with four hosts faulted.
    tracers = {}
    for h in (H_SSHD, H_LINK):
        tracers[h] = Tracer(fleet, h)
        fleet.set_host_var(h, grove_bin=tracers[h].wrapper)
    kdir = os.path.join(fleet.dir, 'faults', H_KILL)
    os.makedirs(kdir)
    killer = os.path.join(kdir, 'grove')
    with open(killer, 'w') as f:
        f.write('#!/bin/sh\nexec strace -f -q -o /dev/null -e trace=symlinkat '
                '-e inject=symlinkat:signal=SIGKILL:when=2 /usr/local/bin/grove "$@"\n')
    os.chmod(killer, 0o755)
    fleet.set_host_var(H_KILL, grove_bin=killer)
    # The full disk: H_FULL's state dir is a 1 MiB tmpfs, filled to the last block.
    r = fleet.in_host(H_FULL, 'sh', '-c', 'dd if=/dev/zero of=/var/lib/grove/filler bs=4k 2>/dev/null; '
                      'df --output=avail /var/lib/grove | tail -1')
    expect(r.stdout.strip() == '0', '%s: the state tmpfs is not full: %s %s' % (H_FULL, r.stdout, r.stderr))

    p = fleet.start(SITE, '--tags', 'hello', '-e', 'hello_version=2.13')
    for t in tracers.values():
        t.proc = p
    # The sshd host: grove stopped mid-transaction, every sshd of the host killed, then grove let go.
    t = tracers[H_SSHD]
    gpid = t.stopped()
    sshds = fleet.sshd_pids(H_SSHD)
    expect(sshds, '%s: no sshd' % H_SSHD)
    for pid in sshds:
        os.kill(pid, signal.SIGKILL)
    wait_gone(sshds, H_SSHD + "'s sshd")
    os.kill(gpid, signal.SIGCONT)
    what = t.exited()
    expect(what.startswith('+++ exited with 0'), '%s: grove ended %s' % (H_SSHD, what))
    # The link host: its veth (the bridge's port) down while grove finishes, then up again.
    t = tracers[H_LINK]
    gpid = t.stopped()
    r = run('ip', '-n', fleet.ctl, 'link', 'set', H_LINK, 'down')
    expect(r.returncode == 0, 'link down: %s' % r.stderr)
    os.kill(gpid, signal.SIGCONT)
    what = t.exited()
    expect(what.startswith('+++ exited with 0'), '%s: grove ended %s' % (H_LINK, what))
    r = run('ip', '-n', fleet.ctl, 'link', 'set', H_LINK, 'up')
    expect(r.returncode == 0, 'link up: %s' % r.stderr)
    rc, res = fleet.finish(p)
    for t in tracers.values():
        t.close()
    expect(rc != 0, 'the faulted run succeeded')
    after = fleet.listings()
    rs = res.results(HELLO)
    st = res.stats
    good = [h for h in fleet.hosts if h not in (H_SSHD, H_KILL, H_FULL)]
    for h in good:
        expect(rs.get(h, {}).get('changed') and not rs[h].get('failed'),
               'faulted run: %s not changed: %s' % (h, res.dump(h)))
    expect(st[H_SSHD].get('unreachable') == 1 or st[H_SSHD].get('failures') == 1,
           'faulted run: %s neither unreachable nor failed: %s' % (H_SSHD, st[H_SSHD]))
    expect(st[H_KILL].get('failures') == 1, '%s (grove killed) did not fail: %s' % (H_KILL, res.dump(H_KILL)))
    full = rs.get(H_FULL, {})
    expect(full.get('failed') and 'disk is full' in full.get('msg', ''),
           "%s (state disk full): expected a failure with grove's 'disk is full': %s" % (H_FULL, full))
    clean = after[good[0]]
    exp = expected_links('2.13')
    links = dict(l[2:].split(' -> ') for l in clean if l.startswith('l '))
    expect(links == exp, 'a clean host after the switch: links %s, expected %s' % (links, exp))
    for h in good + [H_SSHD]:
        expect(after[h] == clean, '%s after the faulted run is not the clean-run tree: %s' % (h, differ(after[h], clean)))
    expect(after[H_FULL] == before[H_FULL], '%s (disk full) changed' % H_FULL)
    ok('faulted switch to 2.13: %s (sshd killed mid-transaction, grove let go) unreachable with the '
       'clean-run tree; %s (link cut mid-task, restored) changed; %s (grove SIGKILLed) failed; %s (state '
       "disk full) failed alone with grove's 'disk is full' and its tree as before; %d others changed"
       % (H_SSHD, H_LINK, H_KILL, H_FULL, len(good) - 1))

    # The killed host holds an interrupted transaction: grove verify says so.
    r = fleet.in_host(H_KILL, '/usr/local/bin/grove', 'verify', '-t', '/usr/local')
    expect(r.returncode == 4, '%s: grove verify after the kill: exit %d, expected 4 (interrupted): %s'
           % (H_KILL, r.returncode, r.stdout + r.stderr))

    # The next run, with the faults gone: every host converges.
    for h in (H_SSHD, H_LINK, H_KILL):
        fleet.clear_host_var(h)
    r = run('bash', SCRIPT, 'restart', fleet.dir, H_SSHD)
    expect(r.returncode == 0, 'restart %s: %s' % (H_SSHD, r.stderr))
    r = fleet.in_host(H_FULL, 'rm', '/var/lib/grove/filler')
    expect(r.returncode == 0, 'rm filler: %s' % r.stderr)
    rc, res = fleet.play(SITE, '--tags', 'hello', '-e', 'hello_version=2.13')
    expect(rc == 0, 'the rerun failed (exit %d):\n%s' % (rc, '\n'.join(res.dump(h) for h in (H_KILL, H_FULL, H_SSHD))))
    rs = res.results(HELLO)
    changed = sorted(h for h, r in rs.items() if r.get('changed'))
    expect(changed == sorted([H_KILL, H_FULL]), 'the rerun changed %s, expected %s and %s' % (changed, H_KILL, H_FULL))
    rerun = fleet.listings()
    for h in fleet.hosts:
        expect(rerun[h] == clean, '%s after the rerun is not the clean-run tree: %s' % (h, differ(rerun[h], clean)))
    for h in fleet.hosts:
        r = fleet.ssh(h, 'grove verify -t /usr/local && grove verify -t /root && grove verify -t /')
        expect(r.returncode == 0, '%s: grove verify exit %d: %s' % (h, r.returncode, r.stdout + r.stderr))
    r = fleet.in_host(H_KILL, '/usr/local/bin/grove', '--json', 'log', '-t', '/usr/local')
    states = [x['state'] for x in json.loads(r.stdout)['transactions']]
    expect(states[-2:] == ['rolled-back', 'committed'] and states.count('rolled-back') == 1,
           '%s: the log should hold the killed transaction, rolled back, and the rerun: %s' % (H_KILL, states))
    ok('the rerun converges: %s and %s changed (the killed transaction rolled back first: %s), every '
       "host's tree the clean-run tree, grove verify 0 on all %d" % (H_KILL, H_FULL, states, len(fleet.hosts)))


if __name__ == '__main__':
    main()
