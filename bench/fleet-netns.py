#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# The fleet benchmark over SSH (issue 42 item 5), run by hand as root: `bench/fleet.sh --netns
# [HOSTS...]` (default 10 25 50). For each size, with forks 10 and 25, a fresh fleet of
# examples/fleet/netns-fleet.sh (every host its own network and mount namespace and sshd), grove
# installed by the install role, then timed: the first apply of net-site.yml's farm play (3 grove
# tasks), a no-op run of it, a play of 3 ansible.builtin.ping tasks on the same hosts, and the
# rolling switch (rolling.yml, hello 2.13 and nano). Each is measured as wall time, the
# controller's CPU (ansible-playbook and its ssh clients), the hosts' CPU (every process of the
# hosts' namespaces: sshd, the modules' python, grove), grove's own CPU (a wrapper reads each grove
# run's rusage) and each host's summed task time (a callback), whose slowest is printed
# against the median. The ratios compare figures of the same run.
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(SRC, 'examples/fleet/netns-fleet.sh')
GROVE = os.environ.get('GROVE') or os.path.join(SRC, 'build/grove')
TICK = os.sysconf('SC_CLK_TCK')

# grove run as a child, its rusage (microseconds, where /usr/bin/time rounds to 10 ms) appended
# to the host's /root/.grove-times.
WRAPPER = '''#!/usr/bin/python3 -S
import os, sys, time
t = time.monotonic()
pid = os.posix_spawn('/usr/local/bin/grove', ['grove'] + sys.argv[1:], os.environ)
_, status, ru = os.wait4(pid, 0)
with open('/root/.grove-times', 'a') as f:
    f.write('%.6f %.6f %.6f\\n' % (time.monotonic() - t, ru.ru_utime, ru.ru_stime))
sys.exit(os.waitstatus_to_exitcode(status))
'''

PING = '''- hosts: fleet
  gather_facts: false
  tasks:
    - ansible.builtin.ping:
    - ansible.builtin.ping:
    - ansible.builtin.ping:
'''


def ns_cpu(prefix, hosts):
    """CPU seconds of every process in the hosts' namespaces, with their reaped children."""
    total = 0
    for h in hosts:
        pids = subprocess.run(['ip', 'netns', 'pids', '%s-%s' % (prefix, h)], capture_output=True,
                              text=True).stdout.split()
        for pid in pids:
            try:
                with open('/proc/%s/stat' % pid) as f:
                    fields = f.read().rsplit(')', 1)[1].split()
            except OSError:
                continue
            total += sum(int(x) for x in fields[11:15])
    return total / TICK


def grove_cpu(fleet, hosts):
    total = 0.0
    for h in hosts:
        p = os.path.join(fleet, 'hosts', h, 'root/.grove-times')
        if os.path.exists(p):
            for line in open(p):
                w = line.split()
                if len(w) == 3:
                    total += float(w[1]) + float(w[2])
    return total


def run(fleet, prefix, hosts, env, forks, *args):
    c0 = os.times()
    h0 = ns_cpu(prefix, hosts)
    g0 = grove_cpu(fleet, hosts)
    t0 = time.monotonic()
    r = subprocess.run(['bash', SCRIPT, 'exec', fleet, 'ansible-playbook', '--forks', str(forks)] +
                       list(args), capture_output=True, text=True, env=env, cwd=SRC)
    wall = time.monotonic() - t0
    c1 = os.times()
    if r.returncode != 0:
        sys.exit('bench: ansible-playbook %s failed (exit %d):\n%s\n%s' % (
            ' '.join(args), r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
    doc = json.loads(r.stdout.strip().splitlines()[-1])
    per_host = list(doc['hosts'].values())
    med = statistics.median(per_host)
    return {
        'wall': wall,
        'ctl': (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system),
        'hosts': ns_cpu(prefix, hosts) - h0,
        'grove': grove_cpu(fleet, hosts) - g0,
        'slowest': max(per_host) / med if med else 0.0,
        'changed': doc['changed'],
    }


def main():
    sizes = [int(x) for x in sys.argv[1:]] or [10, 25, 50]
    if os.geteuid() != 0:
        sys.exit('bench: run as root (namespaces)')
    work = tempfile.mkdtemp(prefix='grove-bench-netns.')
    os.chmod(work, 0o755)
    wrapper = os.path.join(work, 'grove-timed')
    with open(wrapper, 'w') as f:
        f.write(WRAPPER)
    os.chmod(wrapper, 0o755)
    ping = os.path.join(work, 'ping.yml')
    with open(ping, 'w') as f:
        f.write(PING)
    site = os.path.join(SRC, 'examples/fleet/net-site.yml')
    rolling = os.path.join(SRC, 'examples/fleet/rolling.yml')
    print('wall and CPU in seconds (ctl: the controller; hosts: every process in the hosts\' '
          'namespaces; grove: grove\'s own);\nslowest: the slowest host\'s summed task time over '
          'the median host\'s; noop/ping: CPU (ctl + hosts) of the no-op farm play over 3 pings')
    fmt = '%-5s %-5s %-8s %7s %7s %7s %7s %7s %8s %8s'
    print(fmt % ('hosts', 'forks', 'run', 'wall', 'ctl', 'hosts', 'grove', 'grove%', 'slowest', 'per-host'))
    rows = []
    try:
        for n in sizes:
            for forks in (10, 25):
                if forks > n and forks != 10:
                    continue
                fleet = os.path.join(work, 'f%d-%d' % (n, forks))
                env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(fleet, 'ansible.cfg'),
                           ANSIBLE_HOME=os.path.join(work, 'ah'),
                           ANSIBLE_LOCAL_TEMP=os.path.join(work, 'lt'),
                           ANSIBLE_STDOUT_CALLBACK='host_times',
                           ANSIBLE_CALLBACK_PLUGINS=os.path.join(SRC, 'bench/callback'))
                r = subprocess.run(['bash', SCRIPT, 'up', fleet, str(n), GROVE], capture_output=True,
                                   text=True)
                if r.returncode != 0:
                    sys.exit('bench: netns-fleet.sh up: %s' % r.stderr)
                try:
                    with open(os.path.join(fleet, 'prefix')) as f:
                        prefix = f.read().strip()
                    hosts = ['h%02d' % i for i in range(1, n + 1)]
                    g = ['-e', 'grove_bin=' + wrapper]
                    run(fleet, prefix, hosts, env, forks, site, '--tags', 'install')
                    res = {}
                    res['first'] = run(fleet, prefix, hosts, env, forks, site, '--skip-tags', 'install', *g)
                    res['no-op'] = run(fleet, prefix, hosts, env, forks, site, '--skip-tags', 'install', *g)
                    res['ping'] = run(fleet, prefix, hosts, env, forks, ping)
                    res['rolling'] = run(fleet, prefix, hosts, env, forks, rolling, '-e', 'hello_version=2.13', *g)
                    if res['first']['changed'] != 3 * n or res['no-op']['changed'] or \
                            res['rolling']['changed'] != 2 * n:
                        sys.exit('bench: unexpected changes: %s' % dict((k, v['changed']) for k, v in res.items()))
                    for k in ('first', 'no-op', 'ping', 'rolling'):
                        v = res[k]
                        cpu = v['ctl'] + v['hosts']
                        print(fmt % (n, forks, k, '%.1f' % v['wall'], '%.1f' % v['ctl'], '%.1f' % v['hosts'],
                                     '%.2f' % v['grove'], '%.1f' % (100 * v['grove'] / cpu) if cpu else '-',
                                     '%.2f' % v['slowest'], '%.3f' % (cpu / n)), flush=True)
                    noop = res['no-op']['ctl'] + res['no-op']['hosts']
                    pg = res['ping']['ctl'] + res['ping']['hosts']
                    print('%-5s %-5s noop/ping CPU %.2f, wall %.2f' % (
                        n, forks, noop / pg, res['no-op']['wall'] / res['ping']['wall']), flush=True)
                    rows.append((n, forks, res))
                finally:
                    subprocess.run(['bash', SCRIPT, 'down', fleet])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for forks in (10, 25):
        walls = [(n, res['first']['wall']) for n, f, res in rows if f == forks]
        if len(walls) > 1:
            print('forks %d: first apply wall per host %s' % (
                forks, ', '.join('%d hosts %.2f s' % (n, w / n) for n, w in walls)))
    print('(ansible-core %s; %d CPUs; load %s)' % (
        subprocess.run(['ansible', '--version'], capture_output=True, text=True).stdout.split('\n')[0],
        os.cpu_count(), ' '.join(open('/proc/loadavg').read().split()[:3])))


if __name__ == '__main__':
    main()
