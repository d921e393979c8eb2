#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs a command with its stdout and its stderr each on its own pseudo-terminal, and saves what it
# wrote to each, byte for byte:  pty-run.py OUT ERR CMD...   (exit status: the command's)
import errno
import os
import select
import subprocess
import sys


def main(argv):
    out_path, err_path, cmd = argv[1], argv[2], argv[3:]
    m_out, s_out = os.openpty()
    m_err, s_err = os.openpty()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=s_out, stderr=s_err, close_fds=True)
    os.close(s_out)
    os.close(s_err)
    data = {m_out: bytearray(), m_err: bytearray()}
    open_fds = [m_out, m_err]
    while open_fds:
        ready, _, _ = select.select(open_fds, [], [])
        for fd in ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError as e:
                if e.errno != errno.EIO:  # EIO: the other side closed
                    raise
                chunk = b""
            if chunk:
                data[fd] += chunk
            else:
                open_fds.remove(fd)
    rc = p.wait()
    with open(out_path, "wb") as f:
        f.write(bytes(data[m_out]).replace(b"\r\n", b"\n"))
    with open(err_path, "wb") as f:
        f.write(bytes(data[m_err]).replace(b"\r\n", b"\n"))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
