"""Whether this machine's CPUs are contended, for work that is only worth doing on idle ones."""

import os
import time

PSI_CPU = "/proc/pressure/cpu"
# Shorter looks say little: the window is kept until it is at least this long.
MIN_WINDOW_S = 0.005


class CpuPressure:
    """Busy when, since the last look, some runnable task waited for a CPU for more than
    `max_stall` of the wall time (Linux PSI, `some total`); where the kernel has no PSI,
    when the load average exceeds the number of CPUs."""

    def __init__(self, max_stall, path=PSI_CPU, clock=time.monotonic, loadavg=os.getloadavg):
        self.max_stall = max_stall
        self.path = path
        self.clock = clock
        self.loadavg = loadavg
        self._last = None
        self._busy = False

    def _stall_us(self):
        # Plain system calls: the interpreter asks before each fork, when its pages are shared
        # with the child that just ran, and each object Python's file machinery touches
        # would cost it a page copy.
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                fields = os.read(fd, 512).split(b"\n", 1)[0].split()
            finally:
                os.close(fd)
            return int(next(f for f in fields if f.startswith(b"total=")).split(b"=", 1)[1])
        except (OSError, StopIteration, ValueError):
            return None

    def busy(self):
        stall = self._stall_us()
        if stall is None:
            return self.loadavg()[0] > (os.cpu_count() or 1)
        now = self.clock()
        if self._last is None:
            self._last = (now, stall)
        elif now - self._last[0] >= MIN_WINDOW_S:
            then, stalled = self._last
            self._busy = (stall - stalled) / 1e6 / (now - then) > self.max_stall
            self._last = (now, stall)
        return self._busy
