"""A class arriving at once: room in the kernel's queue for every new connection (pages, votes).

Bokeh's server listens with Tornado's default backlog of 128 pending
connections. When 200 learners submit within a few milliseconds, each POST on
a new connection, the connections past 128 are dropped and retried by the
client's TCP one second later: that second is what those learners wait.
Listening again with a larger backlog (the kernel caps it at
``net.core.somaxconn``) keeps every one of them in the queue.
"""

from __future__ import annotations

import contextlib
import os
import socket

#: Pending connections each listening socket holds (Tornado's default is 128).
BACKLOG = 1024


def raise_listen_backlog(backlog: int = BACKLOG) -> int:
    """Listen again with ``backlog`` on every listening TCP socket of this process.

    Returns how many sockets were changed. Call once the server has bound them.
    """
    changed = 0
    for name in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else []:
        fd = int(name)
        with contextlib.suppress(OSError):
            sock = socket.socket(fileno=fd)
            try:
                listening = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
                if (
                    listening
                    and sock.type == socket.SOCK_STREAM
                    and sock.family
                    in (
                        socket.AF_INET,
                        socket.AF_INET6,
                    )
                ):
                    sock.listen(backlog)
                    changed += 1
            finally:
                sock.detach()  # the fd stays the server's
    return changed
