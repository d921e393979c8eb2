#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# The fleet test (issue 19): the grove.farm collection, built and installed with ansible-galaxy, run
# by real ansible-playbook against 9 hosts of this machine - 8 with ansible_connection=local, each its
# own root, and 1 reached over real SSH on 127.0.0.1 (sshd started here with throwaway keys, stopped
# at the end). Checks check mode (tree hashes), diff, idempotence on every host, one transaction per
# changed task in every host's grove log, --limit, forks, a conflict on one host, a locked target
# (rc 75 without wait; with wait, through once the holder lets go), undo and rollback in all their
# forms, and the install role by its binary (over SSH), source (a real build) and deb methods.
# Prints TAP-like "ok N - ..." lines; any failure exits 1 (a missing tool is a failure, not a skip).
import fcntl
import hashlib
import json
import os
import queue
import shutil
import socket
import subprocess
import tempfile
import threading

import fleettap  # the test's own stdin, and its TAP lines


GROVE = os.environ.get('GROVE')
SRC = os.environ.get('GROVE_SOURCE_ROOT') or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
N_LOCAL = 8
SSH_HOST = 'h09'
GROVE_TASKS = ("The user's dotfiles (dot-x becomes ~/.x)",
               "hello in /usr/local, the version this host's group wants",
               'vim, with its man page, as an editor',
               'nano too, and the editor on the servers',
               "ripgrep and fd in the user's profile")

_tap = fleettap.Tap('test-fleet')
ok, fail, expect = _tap.ok, _tap.fail, _tap.expect



class Inetd(object):
    """sshd on 127.0.0.1, a port the kernel picks: this process listens (so the port is ready
    before any client starts, with no polling) and runs one 'sshd -i' per connection."""

    def __init__(self, sshd, config, log):
        self.sshd, self.config, self.log = sshd, config, log
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.procs = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with open(self.log, 'ab') as log:
                p = subprocess.Popen([self.sshd, '-i', '-e', '-f', self.config], stdin=conn,
                                     stdout=conn, stderr=log, close_fds=True)
            conn.close()
            with self.lock:
                self.procs.append(p)

    def stop(self):
        self.sock.close()
        with self.lock:
            for p in self.procs:
                if p.poll() is None:
                    p.terminate()
            for p in self.procs:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()


def tree_listing(root):
    """Every entry beneath root: type, path, link text or content hash, mode. grove's own database
    and lock files are left out (grove -n may open, even create, its log; it records nothing)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if rel.startswith('state/grove.db') or rel.startswith('state/locks'):
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


def tree_hash(root):
    return hashlib.sha256('\n'.join(tree_listing(root)).encode()).hexdigest()


class Fleet(object):
    def __init__(self, top):
        self.top = top
        self.dir = os.path.join(top, 'fleet')
        self.hosts = ['h%02d' % i for i in range(1, N_LOCAL + 2)]
        self.env = dict(os.environ)
        self.env.update({
            'ANSIBLE_CONFIG': os.path.join(self.dir, 'ansible.cfg'),
            'ANSIBLE_HOME': os.path.join(top, 'ansible-home'),
            'ANSIBLE_LOCAL_TEMP': os.path.join(top, 'ansible-local'),
            'ANSIBLE_REMOTE_TMP': os.path.join(top, 'ansible-remote'),
            'ANSIBLE_SSH_CONTROL_PATH_DIR': os.path.join(top, 'cp'),
            'ANSIBLE_STDOUT_CALLBACK': 'fleet_json',
            'ANSIBLE_CALLBACK_PLUGINS': os.path.join(HERE, 'callback'),
            'ANSIBLE_NOCOLOR': '1',
            'ANSIBLE_DEPRECATION_WARNINGS': '0',
            'ANSIBLE_PIPELINING': '1',
        })
        for k in ('ANSIBLE_COLLECTIONS_PATH', 'ANSIBLE_COLLECTIONS_PATHS', 'ANSIBLE_INVENTORY'):
            self.env.pop(k, None)

    def root(self, h):
        return os.path.join(self.dir, 'hosts', h)

    def hashes(self):
        return dict((h, tree_hash(self.root(h))) for h in self.hosts)

    def listings(self):
        return dict((h, tree_listing(self.root(h))) for h in self.hosts)

    def grove_json(self, h, *args):
        r = subprocess.run([GROVE, '--state', os.path.join(self.root(h), 'state'), '--json'] +
                           list(args), capture_output=True, text=True)
        expect(r.returncode == 0, 'grove %s on %s: exit %d: %s' % (args, h, r.returncode, r.stderr))
        return json.loads(r.stdout)

    def txns(self, h):
        """Every committed transaction in the host's log, by target."""
        r = self.root(h)
        out = {}
        for t in (r + '/home', r + '/usr/local', r, r + '/state/profiles/default.generations'):
            if not os.path.exists(t):
                continue
            d = self.grove_json(h, 'log', '-t', t)
            for x in d['transactions']:
                expect(x['state'] == 'committed', '%s: transaction %s is %s' % (h, x['id'], x['state']))
                out[x['id']] = t
        return out

    def start(self, playbook, *args, prefix=()):
        """ansible-playbook started (prefix: a command it runs under, e.g. unshare); finish() it."""
        p = subprocess.Popen(list(prefix) + ['ansible-playbook', playbook] + list(args),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=self.env, cwd=self.top)
        p.what = '%s %s' % (playbook, ' '.join(args))
        return p

    def finish(self, p):
        out, err = p.communicate()
        try:
            doc = json.loads(out)
        except ValueError:
            fail('ansible-playbook %s printed no JSON (exit %d):\n%s\n%s' % (
                p.what, p.returncode, out[-3000:], err[-3000:]))
        return p.returncode, Run(doc, err)

    def play(self, playbook, *args, prefix=()):
        return self.finish(self.start(playbook, *args, prefix=prefix))


class Run(object):
    def __init__(self, doc, stderr):
        self.doc = doc
        self.stderr = stderr
        self.stats = doc.get('stats', {})

    def results(self, task):
        for play in self.doc.get('plays', []):
            for t in play.get('tasks', []):
                if t['task']['name'] == task:
                    return t['hosts']
        return {}

    def tasks(self):
        for play in self.doc.get('plays', []):
            for t in play.get('tasks', []):
                yield t['task']['name'], t['hosts']

    def dump(self, host):
        out = []
        for name, hosts in self.tasks():
            if host in hosts:
                r = hosts[host]
                out.append('%s: changed=%s failed=%s %s' % (name, r.get('changed'), r.get('failed'),
                                                             r.get('msg', '')))
        return '\n'.join(out)


def diff_links(diff):
    """The link lines of a grove.farm diff's 'after' text: {path: text}."""
    out = {}
    for line in (diff or {}).get('after', '').splitlines():
        if ' -> ' in line:
            p, t = line.split(' -> ', 1)
            out[p] = t
    return out


def hold_locks(lockdir):
    fds = []
    for name in sorted(os.listdir(lockdir)):
        fd = os.open(os.path.join(lockdir, name), os.O_RDWR | os.O_CLOEXEC)
        fcntl.flock(fd, fcntl.LOCK_EX)
        fds.append(fd)
    return fds


def wait_check(fleet, top):
    h = 'h04'
    lockdir = os.path.join(fleet.root(h), 'state/locks')
    fifo = os.path.join(top, 'wait.fifo')
    os.mkfifo(fifo)
    wrapper = os.path.join(top, 'grove-traced')
    with open(wrapper, 'w') as f:
        # Traced once (the fifo has one reader); any later grove of the play runs untraced.
        f.write('#!/bin/sh\nif mkdir %s.once 2>/dev/null; then\n'
                '  exec strace -qq -f -y -e trace=flock -o %s %s "$@"\nfi\nexec %s "$@"\n' % (
                    fifo, fifo, GROVE, GROVE))
    os.chmod(wrapper, 0o755)
    events = queue.Queue()
    trace = []

    def reader():
        with open(fifo) as f:   # blocks until strace opens it (or the test does, below)
            for line in f:
                trace.append(line)
                if 'flock(' in line and lockdir in line and 'EAGAIN' in line:
                    events.put('waiting')
        events.put('trace closed')

    threading.Thread(target=reader, daemon=True).start()
    fds = hold_locks(lockdir)
    logs = fleet.txns(h)
    try:
        proc = fleet.start(os.path.join(HERE, 'wait.yml'), '--limit', h, '-e',
                           json.dumps({'grove_exe': wrapper, 'wait_s': 60}))
        threading.Thread(target=lambda: (proc.wait(), events.put('play ended')), daemon=True).start()
        first = events.get(timeout=300)
        held = fleet.txns(h) == logs
    finally:
        for fd in fds:
            os.close(fd)
    if first == 'play ended':
        try:    # lets the reader go if strace never opened the fifo
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    rc, run = fleet.finish(proc)
    expect(first == 'waiting', 'wait: the play ended (exit %d) before grove met the lock: %s\n%s' % (
        rc, run.dump(h), ''.join(trace)[-2000:]))
    expect(held, 'wait: a transaction was logged while the lock was held')
    r = run.results('tmux out, waiting for the lock').get(h, {})
    expect(rc == 0 and r.get('changed') and not r.get('failed') and r.get('transaction', 0) > 0,
           'wait: the task did not go through after the lock was let go (exit %d): %s' % (rc, r))
    expect(not os.path.lexists(os.path.join(fleet.root(h), 'home/.tmux.conf')), 'wait: tmux still on %s' % h)
    new = sorted(set(fleet.txns(h)) - set(logs))
    expect(new == [r['transaction']], 'wait: %s logged %s, the task reported %s' % (h, new, r['transaction']))
    ok('wait 60 on a locked target: grove met the lock (flock EAGAIN), the test let go, the task '
       'went through: changed, one transaction')


def undo_forms(fleet, hosts):
    for h in hosts:
        forms = os.path.join(fleet.root(h), 'forms')
        for pkg in 'abcd':
            os.makedirs(os.path.join(forms, 'stow', pkg))
            with open(os.path.join(forms, 'stow', pkg, 'f' + pkg), 'w') as f:
                f.write(pkg + '\n')
        os.makedirs(os.path.join(forms, 't'))
        os.makedirs(os.path.join(forms, 'empty'))
    rc, run = fleet.play(os.path.join(HERE, 'undo-forms.yml'), '--limit', ','.join(hosts))
    expect(rc == 0, 'undo forms: exit %d: %s' % (rc, run.stats))
    for h in hosts:
        def res(task):
            return run.results(task)[h]
        t = os.path.join(fleet.root(h), 'forms/t')
        ta, tb, tc, td = [x['transaction'] for x in res('stow a, b, c, d, one transaction each')['results']]
        expect(0 < ta < tb < tc < td, 'undo forms on %s: stow transactions %s' % (h, (ta, tb, tc, td)))
        u1, u2 = res('undo'), res('undo again')
        expect(u1['changed'] and u1['reverts'] == [td] and u1['transaction'] > td,
               'undo on %s: %s' % (h, u1))
        expect(u2['changed'] and u2['reverts'] == [tc] and u2['transaction'] > u1['transaction'],
               'undo again on %s: %s' % (h, u2))
        r1, r2 = res('rollback to a'), res('rollback to a again')
        expect(r1['changed'] and r1['transaction'] > u2['transaction'] and tb in r1['reverts'] and
               ta not in r1['reverts'], 'rollback to a on %s: %s' % (h, r1))
        expect(not r2['changed'] and r2['transaction'] == 0 and r2['reverts'] == [] and
               not r2.get('failed'), 'rollback to a again on %s: %s' % (h, r2))
        tb2 = res('stow b again')['transaction']
        bc, b1, b2 = (res('rollback before b, check mode'), res('rollback before b'),
                      res('rollback before b again'))
        expect(tb2 > r1['transaction'], 'stow b again on %s: transaction %d' % (h, tb2))
        expect(bc['changed'] and bc['transaction'] == 0 and
               [o['path'] for o in bc['ops']] == ['fb'],
               'rollback before b, check mode, on %s: %s' % (h, bc))
        expect(b1['changed'] and b1['reverts'] == [tb2] and b1['transaction'] > tb2,
               'rollback before b on %s: %s' % (h, b1))
        expect(not b2['changed'] and b2['transaction'] == 0 and b2['reverts'] == [] and
               not b2.get('failed'), 'rollback before b again on %s: %s' % (h, b2))
        for task in ('undo with nothing to undo, check mode', 'undo with nothing to undo'):
            n = res(task)
            expect(not n['changed'] and not n.get('failed') and n['transaction'] == 0 and
                   n['reverts'] == [] and n['msg'] == 'nothing to undo' and n['grove_rc'] == 1,
                   '%s on %s: %s' % (task, h, n))
        links = dict((n, os.readlink(os.path.join(t, n))) for n in os.listdir(t))
        expect(links == {'fa': '../stow/a/fa'}, 'undo forms on %s: the target has %s' % (h, links))
        d = fleet.grove_json(h, 'log', '-t', t)
        got = sorted(x['id'] for x in d['transactions'])
        want = sorted([ta, tb, tc, td, u1['transaction'], u2['transaction'], r1['transaction'],
                       tb2, b1['transaction']])
        expect(got == want, 'undo forms on %s: the log has %s, the tasks reported %s' % (h, got, want))
        expect(not os.listdir(os.path.join(fleet.root(h), 'forms/empty')), 'the empty target changed')
    ok('undo forms on %s: undo twice (one more each, changed), rollback --to a (changed), again (ok, '
       'nothing reverted), rollback --before a later b (check mode, changed, again ok), undo with '
       'nothing to undo (ok, "nothing to undo", check mode too)' % ', '.join(hosts))


def DEB_VERSION(version):
    """The .deb version the install test builds: grove's own, marked as the test's."""
    return version.split()[-1] + '+fleettest'


def make_deb(top, version):
    """A .deb of the grove just built, the cheap way: dpkg-deb --build of a staged tree."""
    stage = os.path.join(top, 'deb', 'grove')
    os.makedirs(os.path.join(stage, 'DEBIAN'))
    os.makedirs(os.path.join(stage, 'usr/bin'))
    shutil.copy(GROVE, os.path.join(stage, 'usr/bin/grove'))
    arch = subprocess.run(['dpkg', '--print-architecture'], capture_output=True, text=True,
                          check=True).stdout.strip()
    with open(os.path.join(stage, 'DEBIAN/control'), 'w') as f:
        f.write('Package: grove\nVersion: %s\nArchitecture: %s\nMaintainer: grove tests <t@localhost>\n'
                'Depends: libc6, libyaml-0-2, libsqlite3-0, libpcre2-8-0\nSection: utils\n'
                'Priority: optional\nDescription: grove, staged by the fleet test\n' % (version, arch))
    deb = os.path.join(top, 'deb', 'grove_%s_%s.deb' % (version, arch))
    subprocess.run(['dpkg-deb', '--root-owner-group', '-Zgzip', '--build', stage, deb], check=True,
                   capture_output=True)
    return deb


def machine_grove():
    """This machine's own record of a grove package and /usr/bin/grove (the deb play must not change them)."""
    q = subprocess.run(['dpkg-query', '--showformat=${Version} ${db:Status-Abbrev}', '--show', 'grove'],
                       capture_output=True, text=True)
    return q.returncode, q.stdout, os.path.lexists('/usr/bin/grove')


# The deb play's namespace: /usr, /var and /etc overlaid with folders of the test, so apt-get and
# dpkg write there; the machine's own are untouched, and the overlay goes when the play ends.
OVERLAY_SH = r"""set -e
for d in usr var etc; do
    mkdir -p "$OV/$d/upper" "$OV/$d/work"
    mount -t overlay overlay -o "lowerdir=/$d,upperdir=$OV/$d/upper,workdir=$OV/$d/work" "/$d"
done
exec "$@"
"""


def start_installs(fleet, top):
    """The install role's source method (a real meson build on h06, into a prefix outside the
    host's folder) and deb method (a staged .deb on h07, installed by apt-get in a mount namespace
    with /usr, /var and /etc overlaid), started at once and left running beside the other checks
    (they touch no host's folder): the build mostly uses a core the rest of the test leaves idle."""
    expect(shutil.which('unshare') and shutil.which('dpkg-deb'), 'unshare or dpkg-deb not found')
    version = subprocess.run([GROVE, '--version'], capture_output=True, text=True).stdout.strip()
    play = os.path.join(HERE, 'install.yml')
    prefix = os.path.join(top, 'src-prefix')
    src = fleet.start(play, '--limit', 'h06', '-e', json.dumps({
        'grove_install_method': 'source', 'grove_install_source': SRC,
        'grove_install_prefix': prefix, 'grove_install_deps': False}))
    # A version of the test's own: a grove package this machine has installed (the same version,
    # seen through the overlay) must not make the role skip the install the test checks.
    deb = make_deb(top, DEB_VERSION(version))
    machine = machine_grove()
    ov = os.path.join(top, 'overlay')
    debp = fleet.start(play, '--limit', 'h07', '-e', json.dumps({
        'grove_install_method': 'deb', 'grove_install_deb': deb, 'grove_install_deps': False}),
        prefix=['unshare', '--mount', '--propagation', 'private', 'env', 'OV=' + ov,
                'sh', '-c', OVERLAY_SH, 'sh'])
    return dict(version=version, prefix=prefix, src=src, deb=debp, machine=machine, ov=ov)


def finish_installs(fleet, st):
    version = st['version']
    rc, run = fleet.finish(st['deb'])
    expect(machine_grove() == st['machine'], 'the deb play changed this machine: %s, was %s' % (
        machine_grove(), st['machine']))
    expect(rc == 0, 'install role, deb (exit %d):\n%s\n%s' % (rc, run.dump('h07'), run.stderr[-2000:]))
    inst = [hosts['h07'] for name, hosts in run.tasks()
            if name == 'grove.farm.install : Install it with apt-get (its dependencies from Debian)']
    expect(len(inst) == 2 and inst[0].get('changed') and not inst[1].get('changed') and
           inst[1].get('skipped'), 'install role, deb: apt-get ran %s' % inst)
    v = run.results("grove's version")['h07']
    d = run.results("dpkg's record")['h07']
    expect(v['stdout'] == version and d['stdout'].split() == ['grove', DEB_VERSION(version), 'ii'],
           'install role, deb: grove --version %r, dpkg %r' % (v['stdout'], d['stdout']))
    expect(os.path.exists(os.path.join(st['ov'], 'usr/upper/bin/grove')), 'the deb did not land in the overlay')
    ok('grove.farm.install, deb method: a .deb (dpkg-deb --build of the built grove) installed by apt-get '
       '(in an overlaid mount namespace; this machine untouched), /usr/bin/grove runs, dpkg has it; '
       'the second run installs nothing')
    rc, run = fleet.finish(st['src'])
    expect(rc == 0, 'install role, source (exit %d):\n%s\n%s' % (rc, run.dump('h06'), run.stderr[-3000:]))
    b = run.results('grove.farm.install : Configure, build and install')['h06']
    v = run.results("grove's version")['h06']
    expect(b.get('changed') and v['stdout'] == version and
           os.access(os.path.join(st['prefix'], 'bin/grove'), os.X_OK),
           'install role, source: %s; --version %r' % (b, v.get('stdout')))
    ok('grove.farm.install, source method: git archive of this tree, built by meson and ninja on h06, '
       'installed into its prefix; that grove runs')


def main():
    expect(GROVE and os.access(GROVE, os.X_OK), 'GROVE must name the grove binary')
    for tool in ('ansible-playbook', 'ansible-galaxy', 'ssh', 'ssh-keygen'):
        expect(shutil.which(tool), '%s not found (bash scripts/install-deps.sh installs it)' % tool)
    sshd = '/usr/sbin/sshd'
    expect(os.access(sshd, os.X_OK), 'sshd not found at %s (openssh-server)' % sshd)
    expect(os.geteuid() == 0, 'the fleet test logs in over SSH as root (sshd -i): run it as root')

    top = tempfile.mkdtemp(prefix='grove-fleet.')
    os.chmod(top, 0o755)
    inetd = installs = None
    try:
        fleet = Fleet(top)
        # The fleet, and the collection built and installed with ansible-galaxy.
        r = subprocess.run(['bash', os.path.join(SRC, 'examples/fleet/make-fleet.sh'), fleet.dir,
                            str(N_LOCAL + 1), GROVE], capture_output=True, text=True, env=fleet.env)
        expect(r.returncode == 0, 'make-fleet.sh failed:\n%s\n%s' % (r.stdout, r.stderr))
        expect(os.path.isdir(os.path.join(fleet.dir, 'collections/ansible_collections/grove/farm/plugins')),
               'the collection was not installed')
        ok('ansible-galaxy builds and installs the collection; a fleet of %d hosts' % len(fleet.hosts))
        installs = start_installs(fleet, top)

        # h09 over SSH: a throwaway host key and user key, sshd on 127.0.0.1.
        ssh = os.path.join(top, 'ssh')
        os.makedirs(ssh, mode=0o700)
        for k in ('host', 'user'):
            subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', os.path.join(ssh, k)],
                           check=True)
        shutil.copy(os.path.join(ssh, 'user.pub'), os.path.join(ssh, 'authorized_keys'))
        with open(os.path.join(ssh, 'sshd_config'), 'w') as f:
            f.write('HostKey %s/host\nAuthorizedKeysFile %s/authorized_keys\nPidFile none\n'
                    'UsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n'
                    'PasswordAuthentication no\nKbdInteractiveAuthentication no\n'
                    'ListenAddress 127.0.0.1\nSubsystem sftp /usr/lib/openssh/sftp-server\n'
                    'LogLevel ERROR\n' % (ssh, ssh))
        os.makedirs('/run/sshd', mode=0o755, exist_ok=True)  # sshd's privilege separation folder
        inetd = Inetd(sshd, os.path.join(ssh, 'sshd_config'), os.path.join(ssh, 'sshd.log'))
        os.makedirs(os.path.join(fleet.dir, 'host_vars'))
        with open(os.path.join(fleet.dir, 'host_vars', SSH_HOST + '.yml'), 'w') as f:
            json.dump({'ansible_connection': 'ssh', 'ansible_host': '127.0.0.1',
                       'ansible_port': inetd.port, 'ansible_user': 'root',
                       'ansible_ssh_private_key_file': os.path.join(ssh, 'user'),
                       'ansible_ssh_common_args': '-o StrictHostKeyChecking=no '
                       '-o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes'}, f)
        # The SSH host gets grove from the install role, over SSH.
        os.unlink(os.path.join(fleet.root(SSH_HOST), 'bin/grove'))
        site = os.path.join(SRC, 'examples/fleet/site.yml')

        rc, run = fleet.play(site, '--tags', 'install', '--limit', 'h01,' + SSH_HOST)
        expect(rc == 0, 'the install play failed (exit %d):\n%s\n%s' % (rc, run.dump(SSH_HOST), run.stderr[-2000:]))
        res = run.results('grove.farm.install : The grove binary')
        expect(res.get(SSH_HOST, {}).get('changed') and not res.get('h01', {}).get('changed'),
               'install role: expected changed on %s only: %s' % (SSH_HOST, res))
        expect(os.access(os.path.join(fleet.root(SSH_HOST), 'bin/grove'), os.X_OK), 'no grove on the SSH host')
        expect(os.path.getsize(os.path.join(ssh, 'sshd.log')) >= 0 and inetd.procs,
               'no SSH connection reached sshd')
        ok('grove.farm.install puts grove on the SSH host (over sshd on 127.0.0.1:%d), ok where it is' % inetd.port)

        # Check mode with --diff: every grove task changed on every host, nothing on disk.
        before = fleet.listings()
        rc, check = fleet.play(site, '--skip-tags', 'install', '--check', '--diff', '--forks', '8')
        expect(rc == 0, 'check run failed (exit %d)' % rc)
        for h in fleet.hosts:
            for t in GROVE_TASKS:
                r = check.results(t).get(h)
                expect(r and r.get('changed') and not r.get('failed'),
                       'check mode: %s on %s: %s' % (t, h, r))
                expect(r.get('transaction', 0) == 0, 'check mode reported a transaction: %s' % r)
        after = fleet.listings()
        for h in fleet.hosts:
            expect(before[h] == after[h], 'check mode changed %s: %s' % (
                h, sorted(set(before[h]) ^ set(after[h]))))
            expect(fleet.txns(h) == {}, 'check mode logged a transaction on %s' % h)
        ok('--check --diff: every grove task of every host changed, no tree changed, no transaction logged')

        # For real, with --diff, forks 8.
        rc, real = fleet.play(site, '--skip-tags', 'install', '--diff', '--forks', '8')
        expect(rc == 0, 'real run failed (exit %d): %s' % (rc, real.stats))
        for h in fleet.hosts:
            expect(real.stats[h]['changed'] == len(GROVE_TASKS) and real.stats[h]['failures'] == 0,
                   'first run on %s: %s' % (h, real.stats[h]))
        ok('first run: all %d grove tasks changed on every host (forks 8)' % len(GROVE_TASKS))

        # The diff shows the links made, in check mode as for real.
        task = GROVE_TASKS[0]
        for h in fleet.hosts:
            home = os.path.join(fleet.root(h), 'home')
            want = diff_links(check.results(task)[h].get('diff'))
            got = diff_links(real.results(task)[h].get('diff'))
            disk = dict((n, os.readlink(os.path.join(home, n))) for n in os.listdir(home)
                        if os.path.islink(os.path.join(home, n)) and n != '.grove-profile')
            expect(want == got == disk and len(disk) == 4,
                   'diff on %s: check %s, real %s, disk %s' % (h, want, got, disk))
            want = diff_links(check.results(GROVE_TASKS[1])[h].get('diff'))
            ul = os.path.join(fleet.root(h), 'usr/local')
            disk = dict((n, os.readlink(os.path.join(ul, n))) for n in ('bin', 'share'))
            ver = '2.13' if h <= 'h05' else '2.12'
            expect(want == disk and disk['bin'] == 'stow/hello-%s/bin' % ver,
                   'apply diff on %s: %s vs disk %s' % (h, want, disk))
        ok('--diff: the links shown (check mode and for real) are the links on disk, on every host')

        # One transaction per changed task (grove alt: one per command), each the one the task reported.
        for h in fleet.hosts:
            log = fleet.txns(h)
            reported = []
            for t in GROVE_TASKS:
                r = real.results(t)[h]
                if 'transactions' in r and isinstance(r['transactions'], list) and r['transactions'] \
                        and isinstance(r['transactions'][0], dict):
                    reported += [x['txn'] for x in r['transactions']]
                elif 'commands' in r:
                    expect(len(r['transactions']) == len(r['commands']),
                           'alternative on %s: %s transactions for %s' % (h, r['transactions'], r['commands']))
                    reported += r['transactions']
                else:
                    reported.append(r['transaction'])
            expect(sorted(reported) == sorted(log) and 0 not in reported,
                   '%s: tasks reported transactions %s, the log has %s' % (h, reported, log))
        ok('grove log on every host: exactly the transactions the changed tasks reported, one per task (per alt command)')

        # Again: all ok, nothing changed, no new transaction, no tree changed (forks 2).
        before = fleet.hashes()
        logs = dict((h, fleet.txns(h)) for h in fleet.hosts)
        rc, again = fleet.play(site, '--skip-tags', 'install', '--forks', '2')
        expect(rc == 0, 'second run failed (exit %d)' % rc)
        for h in fleet.hosts:
            expect(again.stats[h]['changed'] == 0 and again.stats[h]['failures'] == 0 and
                   again.stats[h]['ok'] == len(GROVE_TASKS), 'second run on %s: %s' % (h, again.stats[h]))
            expect(fleet.txns(h) == logs[h], 'second run logged a transaction on %s' % h)
        expect(fleet.hashes() == before, 'the second run changed a tree')
        ok('second run (forks 2): every task ok on every host, no transaction, no tree changed')

        # grove.farm.alternative's check mode is grove alt --dry-run: for a new choice installed and
        # selected (two commands, the --set decided on the --install's prediction), for a switch
        # of a manual selection, and for a priority raised with a return to auto mode (--install
        # then --auto, whose choice is the one rule still computed in Python), the check changes no tree and logs nothing, and predicts exactly
        # the real run's changed, commands, diff and group after. h01 is a server (manual nano),
        # h06 and the SSH host are in auto mode (vim).
        hosts = ['h01', 'h06', SSH_HOST]
        for h in hosts:
            for f in ('usr/bin/mg', 'usr/share/man/man1/mg.1.gz'):
                with open(os.path.join(fleet.root(h), f), 'w') as fh:
                    fh.write(os.path.basename(f) + '\n')
        alt_yml = os.path.join(HERE, 'alt.yml')
        cases = (('new', 'mg as a new choice, selected', '/usr/bin/mg', 'manual', 2),
                 ('switch', 'back to vim, in manual mode', '/usr/bin/vim.basic', 'manual', 1),
                 ('auto', 'mg at priority 70, auto mode', '/usr/bin/mg', 'auto', 2))
        for case, task, want, mode, n_cmds in cases:
            args = ['--limit', ','.join(hosts), '-e', 'case=' + case, '--diff']
            before = fleet.hashes()
            logs = dict((h, fleet.txns(h)) for h in hosts)
            rc, chk = fleet.play(alt_yml, '--check', *args)
            expect(rc == 0, 'alternative %s, check mode: exit %d: %s' % (case, rc, chk.stats))
            expect(fleet.hashes() == before, 'alternative %s: check mode changed a tree' % case)
            for h in hosts:
                expect(fleet.txns(h) == logs[h], 'alternative %s: check mode logged on %s' % (case, h))
            rc, real = fleet.play(alt_yml, *args)
            expect(rc == 0, 'alternative %s: exit %d: %s' % (case, rc, real.stats))
            for h in hosts:
                c = chk.results(task)[h]
                r = real.results(task)[h]
                cafter = dict(c.get('after') or {}, best=None)
                rafter = dict(r.get('after') or {}, best=None)
                expect(c.get('changed') is True and r.get('changed') is True and
                       c.get('commands') == r.get('commands') and len(r['commands']) == n_cmds and
                       len(r['transactions']) == n_cmds and c.get('transaction') == 0,
                       'alternative %s on %s: check %s, real %s' % (case, h, c, r))
                expect(c.get('diff') == r.get('diff') and cafter == rafter,
                       'alternative %s on %s: check predicted %s, the real run reported %s' % (
                           case, h, c.get('diff'), r.get('diff')))
                expect(('%s (%s)' % (want, mode)) in r['diff']['after'].splitlines()[0] and
                       os.readlink(os.path.join(fleet.root(h), 'etc/alternatives/editor')) == want,
                       'alternative %s on %s: the editor is not %s: %s' % (case, h, want, r['diff']))
        ok('grove.farm.alternative check mode (grove alt --dry-run): a new choice selected, a manual '
           'switch and a return to auto mode change no tree, log nothing, and predict the real run\'s changed, commands and diff')

        # --limit: switch hello on two hosts only, in one transaction each.
        before = fleet.hashes()
        rc, lim = fleet.play(site, '--skip-tags', 'install', '--limit', 'h07,h08', '-e', 'hello_version=2.13')
        expect(rc == 0 and sorted(lim.stats) == ['h07', 'h08'], '--limit run: exit %d, hosts %s' % (rc, sorted(lim.stats)))
        for h in fleet.hosts:
            if h in ('h07', 'h08'):
                r = lim.results(GROVE_TASKS[1])[h]
                expect(lim.stats[h]['changed'] == 1 and len(r['transactions']) == 1 and
                       r['targets'][0]['unstow'] == ['hello-2.12'] and r['targets'][0]['stow'] == ['hello-2.13'],
                       '--limit on %s: %s' % (h, r))
                expect(os.readlink(os.path.join(fleet.root(h), 'usr/local/bin')) == 'stow/hello-2.13/bin',
                       'hello not switched on %s' % h)
            else:
                expect(before[h] == fleet.hashes()[h], '--limit h07,h08 changed %s' % h)
        ok('--limit h07,h08: hello switched there in one transaction each, no other host touched')

        # A conflict on one host fails that host only, lists the conflict, changes nothing there.
        mine = os.path.join(fleet.root('h03'), 'home/.tmux.conf')
        with open(mine, 'w') as f:
            f.write('my own tmux.conf\n')
        before = fleet.hashes()
        logs = dict((h, fleet.txns(h)) for h in fleet.hosts)
        rc, con = fleet.play(os.path.join(HERE, 'tmux.yml'), '--forks', '8')
        expect(rc != 0, 'the conflict run succeeded')
        res = con.results('tmux')
        for h in fleet.hosts:
            r = res[h]
            if h == 'h03':
                expect(r.get('failed') and r['conflicts'] and r['conflicts'][0]['path'] == '.tmux.conf'
                       and '.tmux.conf' in r['msg'], 'h03 conflict result: %s' % r)
                expect(fleet.hashes()['h03'] == before['h03'] and fleet.txns('h03') == logs['h03'],
                       'the conflict changed h03')
                with open(mine) as f:
                    expect(f.read() == 'my own tmux.conf\n', 'the user\'s file changed')
            else:
                expect(r.get('changed') and not r.get('failed') and r['transaction'] > 0,
                       'tmux on %s: %s' % (h, r))
        ok('a conflict on h03: only h03 fails, with the conflict in msg and conflicts; its tree and log untouched; the others changed')

        # A target locked by another run: exit 75, reported as locked, nothing changed.
        locks = []
        lockdir = os.path.join(fleet.root('h01'), 'state/locks')
        for name in sorted(os.listdir(lockdir)):
            fd = os.open(os.path.join(lockdir, name), os.O_RDWR | os.O_CLOEXEC)
            fcntl.flock(fd, fcntl.LOCK_EX)
            locks.append(fd)
        try:
            before = fleet.hashes()['h01']
            rc, lk = fleet.play(os.path.join(HERE, 'tmux.yml'), '--limit', 'h01')
        finally:
            for fd in locks:
                os.close(fd)
        r = lk.results('tmux').get('h01', {})
        expect(rc != 0 and r.get('failed') and r.get('rc') == 75 and r.get('locked') and
               'locked' in r.get('msg', ''), 'locked target: %s' % r)
        expect(fleet.hashes()['h01'] == before, 'the locked run changed h01')
        ok('a target locked by another run: the task fails with rc 75 and locked=true, nothing changed')

        # wait: the same lock held on h04, the task with wait 60 blocks, and goes through when the
        # holder lets go. The event is grove's own: the module's grove is a wrapper that runs grove
        # under strace (flock calls only) into a fifo; the test lets go of the locks at the first
        # flock of h04's lock folder that fails with EAGAIN, so grove has met the lock and waits.
        wait_check(fleet, top)

        # Undo (check mode, real, then rollback with nothing to do) and profile rollback, on the others.
        # Three hosts (one over SSH) are enough here, and keep the test's CI time down.
        hosts = ['h01', 'h02', SSH_HOST]
        before = fleet.hashes()
        rc, und = fleet.play(os.path.join(HERE, 'undo.yml'), '--limit', ','.join(hosts), '--forks', '8')
        expect(rc == 0, 'undo run failed: %s' % und.stats)
        for h in hosts:
            c = und.results('undo, check mode')[h]
            u = und.results('undo')[h]
            t = res[h]['transaction']
            expect(c['changed'] and c['transaction'] == 0 and c['reverts'] == [t], 'undo check on %s: %s' % (h, c))
            expect(u['changed'] and u['transaction'] > t and u['reverts'] == [t], 'undo on %s: %s' % (h, u))
            expect(not und.results('rollback to the undo, nothing to do')[h]['changed'], 'rollback on %s changed' % h)
            expect(not os.path.lexists(os.path.join(fleet.root(h), 'home/.tmux.conf')), 'tmux still on %s' % h)
            p = und.results('fd out of the profile')[h]
            expect(p['changed'] and p['generation'] == 2 and p['previous'] == 1 and p['transaction'] > 0,
                   'profile remove on %s: %s' % (h, p))
            expect(und.results('the profile one generation back')[h]['changed'], 'profile rollback on %s' % h)
            expect(not und.results('switch to the generation it was on, nothing to do')[h]['changed'],
                   'profile switch on %s changed' % h)
            d = fleet.grove_json(h, 'profile', 'list')
            expect(d['current'] == 1, 'profile on %s is at %s' % (h, d['current']))
        after = fleet.hashes()
        for h in fleet.hosts:
            expect(h in hosts or after[h] == before[h], 'the undo play touched %s' % h)
        ok('undo (check mode, real, then rollback --to with nothing to do) and profile remove/rollback/switch on h01, h02 and the SSH host')

        undo_forms(fleet, ['h04'])
        finish_installs(fleet, installs)
        installs = None
    finally:
        for p in (installs or {}).get('src'), (installs or {}).get('deb'):
            if p and p.poll() is None:
                p.kill()
                p.wait()
        if inetd:
            inetd.stop()
        shutil.rmtree(top, ignore_errors=True)
    _tap.done()


if __name__ == '__main__':
    main()
