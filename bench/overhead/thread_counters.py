"""thread_counters.h from Python (ctypes): counters of the calling thread.

    import thread_counters as tc
    c = tc.Counters()          # opens them for this thread (None values: not available)
    a = c.read(); ...; d = c.delta(a)   # {'instructions': ..., 'cycles': ..., ...}
    c.status()                 # {'instructions': 'ok' | errno text, ...}

The library: $THREAD_COUNTERS_LIB, else libthread_counters.so beside this
file, else built there from thread_counters.c with cc.
"""
import ctypes
import os
import subprocess

_here = os.path.dirname(os.path.abspath(__file__))
_lib = None


def load():
    global _lib
    if _lib is None:
        path = os.environ.get("THREAD_COUNTERS_LIB") or os.path.join(_here, "libthread_counters.so")
        if not os.path.exists(path):
            subprocess.run(["cc", "-O2", "-shared", "-fPIC", os.path.join(_here, "thread_counters.c"), "-o", path],
                           check=True)
        lib = ctypes.CDLL(path)
        lib.tc_name.restype = ctypes.c_char_p
        lib.tc_status.restype = ctypes.c_char_p
        _lib = lib
    return _lib


N = 5
NAMES = ["instructions", "cycles", "task_clock_ns", "context_switches", "migrations"]


class Counters:
    def __init__(self):
        self.lib = load()
        self.lib.tc_open()
        self._buf = (ctypes.c_longlong * N)()

    def read(self):
        self.lib.tc_read(self._buf)
        return [v if v >= 0 else None for v in self._buf]

    def delta(self, before):
        now = self.read()
        return {n: (b - a if a is not None and b is not None else None) for n, a, b in zip(NAMES, before, now)}

    def status(self):
        return {NAMES[i]: self.lib.tc_status(i).decode() for i in range(N)}


if __name__ == "__main__":
    c = Counters()
    print(c.status())
    a = c.read()
    s = sum(i * i for i in range(100000))
    print(c.delta(a), s > 0)
