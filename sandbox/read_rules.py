"""What generated code in the local pool may read (see hardening.py, which enforces it with
Landlock where the kernel allows and with the audit hook in every case).

Allowed: the Python installation (its standard library and site-packages), the system
libraries and data pandas/numpy/matplotlib need, /dev/null and /dev/urandom, the child's
own /proc entry, its scratch directory, and the directory next to it where the interpreter
puts the run's table files (`inputs_dir`). Nothing else: not the artifact store, the
project, $HOME or /tmp.
"""

import os
import site
import sys

# Found by tracing a child through pandas, time zones and a matplotlib figure.
SYSTEM_DIRS = (
    "/lib",
    "/lib64",
    "/usr/lib",
    "/usr/lib64",
    "/usr/local/lib",
    "/usr/share/zoneinfo",
    "/usr/share/matplotlib",
    "/usr/share/fonts",
    "/etc/fonts",
    "/sys/devices/system/cpu",
)
SYSTEM_FILES = (
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/matplotlibrc",
    "/dev/null",
    "/dev/urandom",
)
# Read by Python or numpy at start-up; Landlock's first layer already allows them.
PROC_FILES = ("/proc/meminfo", "/proc/cpuinfo", "/proc/stat")


def inputs_dir(scratch):
    """Where the interpreter hands a run's table files to the child: read-only for it."""
    return scratch.rstrip("/") + ".in"


def _python_dirs(excluded):
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    lib = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    candidates = [os.path.join(prefix, "lib", lib) for prefix in candidates]
    candidates += [entry for entry in sys.path if entry]
    try:
        candidates += site.getsitepackages()
    except AttributeError:  # some virtualenvs
        pass
    dirs = []
    for entry in candidates:
        path = os.path.realpath(entry)
        if os.path.isdir(path) and not _covers(path, excluded) and path not in dirs:
            dirs.append(path)
    return dirs


def _covers(path, excluded):
    """True when `path` is one of `excluded` or a directory above one."""
    return any(other == path or other.startswith(path.rstrip("/") + "/") for other in excluded)


def _existing(paths, want_dir):
    found = []
    for entry in paths:
        path = os.path.realpath(entry)
        if (os.path.isdir(path) if want_dir else os.path.isfile(path) or entry.startswith("/dev/")) and (
            path not in found
        ):
            found.append(path)
    return found


def with_own_proc(paths, pid):
    """(prefixes, exact paths) of `shared_paths`, plus the /proc entry of process `pid`."""
    prefixes, exact = paths
    own_proc = f"/proc/{pid}"
    return (*prefixes, own_proc + "/"), exact | {own_proc}


class ReadRules:
    """Built once in the interpreter; `dirs` and `files` hold resolved paths."""

    def __init__(self, excluded=()):
        excluded = {os.path.realpath(path) for path in excluded}
        self.dirs = _python_dirs(excluded) + [
            path for path in _existing(SYSTEM_DIRS, True) if not _covers(path, excluded)
        ]
        self.files = _existing(SYSTEM_FILES, False)

    def allowed_paths(self, scratch, pid=None):
        """For the child of `scratch` whose process id is `pid` (default: this process's):
        (directory prefixes, exact paths), both immutable, of what it may read; a resolved
        path is allowed when it is one of the exact paths or starts with a prefix."""
        return with_own_proc(self.shared_paths(scratch), os.getpid() if pid is None else pid)

    def shared_paths(self, scratch, own=None):
        """allowed_paths without the child's own /proc entry: what the interpreter can work out
        before it forks the child (`with_own_proc` adds the entry). `own`: the folder the
        process works in, when not `scratch` (a re-run's)."""
        scratch_root = os.path.realpath(scratch)
        roots = [*self.dirs, own or scratch_root, inputs_dir(scratch_root)]
        prefixes = tuple(path.rstrip("/") + "/" for path in roots)
        return prefixes, frozenset([*roots, *self.files, *PROC_FILES])

    def checker(self, scratch):
        """A function telling whether a path may be read by the child of `scratch`."""
        prefixes, exact = self.allowed_paths(scratch)
        realpath = os.path.realpath
        fspath = os.fsdecode

        def allowed(path):
            if isinstance(path, int):
                return True  # an open descriptor: it was checked when it was opened
            resolved = realpath(fspath(path))
            return resolved in exact or resolved.startswith(prefixes)

        return allowed
