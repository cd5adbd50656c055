"""The protections of the local sandbox, applied by interpreter.py (Linux; each layer is
skipped where the kernel or the platform does not offer it, and `probe()` tells which
ones really hold).

Layers, from the outside in:
* the interpreter enters an empty network namespace when it starts (`enter_empty_netns`);
* each child, before it waits for its request (`confine_child`): no-new-privileges,
  a Landlock domain (writes only below its scratch directory, reads only of what
  read_rules.py allows, no TCP, no signals to processes outside the domain),
  all capabilities dropped, rlimits on file size and open files, and a seccomp filter
  that refuses new processes, sockets, namespaces and tracing, changes of a file's
  metadata (mode, owner, times, extended attributes: Landlock does not cover them),
  pidfds, and prlimit on another process;
* with its request (`limit_request`): rlimits on CPU time and address space;
* just before the code runs (`install_audit_hook`): a Python audit hook refusing
  sockets, subprocesses, ctypes, sqlite3, metadata changes, writes outside scratch (a
  dir_fd or a descriptor followed to where it really points), reads outside
  read_rules.py's allow-list and signals to (or limits of) other processes, with messages
  that say why.
"""

import ctypes
import errno
import os
import pathlib
import platform
import posix
import resource
import signal
import socket
import struct
import sys
import tempfile
import types

import read_rules

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
CLONE_THREAD = 0x00010000
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

FILE_SIZE_LIMIT = 64 * 1024 * 1024
OPEN_FILES_LIMIT = 256
STACK_LIMIT = 64 * 1024 * 1024
# With a 64 MB stack, even recursion through C calls (~2 KB a level) stays far from the end.
MAX_RECURSION_DEPTH = 10_000

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int


def _errno_text():
    return os.strerror(ctypes.get_errno())


# --- network namespace (the whole interpreter) ------------------------------------------------


def _write_file(path, text):
    with open(path, "w") as handle:
        handle.write(text)


def enter_empty_netns():
    """Moves this process into a new network namespace with only a loopback that is
    down. As root this needs nothing else; otherwise it goes through a user namespace
    that maps this user onto itself. Must run before any thread starts. Returns
    (entered, how or why not)."""
    if not sys.platform.startswith("linux"):
        return False, "not Linux"
    if _libc.unshare(CLONE_NEWNET) == 0:
        return True, "network namespace"
    first = _errno_text()
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        return False, f"unshare: {first}; with a user namespace: {_errno_text()}"
    try:
        _write_file("/proc/self/setgroups", "deny")
        _write_file("/proc/self/uid_map", f"{uid} {uid} 1")
        _write_file("/proc/self/gid_map", f"{gid} {gid} 1")
    except OSError as exc:
        # The namespace is entered (no network), but files would be created unmapped.
        return True, f"user+network namespace, ids not mapped: {exc}"
    return True, "user+network namespace"


def network_unreachable():
    """True when nothing, not even 127.0.0.1, can be reached from this process."""
    try:
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    except OSError:
        return True
    try:
        probe.connect(("127.0.0.1", 9))
        return False
    except OSError as exc:
        return exc.errno in (errno.ENETUNREACH, errno.EACCES, errno.EPERM)
    finally:
        probe.close()


# --- Landlock ------------------------------------------------------------------------

_LANDLOCK_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
_LL_EXECUTE = 1 << 0
_LL_WRITE_FILE = 1 << 1
_LL_READ_FILE = 1 << 2
_LL_READ_DIR = 1 << 3
_LL_WRITE_TREE = sum(1 << bit for bit in range(4, 13))  # remove/make anything
_LL_REFER = 1 << 13  # ABI 2
_LL_TRUNCATE = 1 << 14  # ABI 3
_LL_NET_TCP = (1 << 0) | (1 << 1)  # ABI 4: bind, connect
_LL_SCOPE = (1 << 0) | (1 << 1)  # ABI 6: abstract unix sockets, signals
_O_PATH = getattr(os, "O_PATH", 0o10000000)


def landlock_abi():
    numbers = _LANDLOCK_SYSCALLS.get(platform.machine())
    if numbers is None:
        return 0
    version = _libc.syscall(numbers[0], None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    return max(0, version)


def _landlock_rule(numbers, ruleset, path, allowed):
    try:
        fd = os.open(path, _O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        attr = struct.pack("=Qi", allowed, fd)  # landlock_path_beneath_attr is packed
        _libc.syscall(numbers[1], ruleset, 1, ctypes.c_char_p(attr), 0)
    finally:
        os.close(fd)


def _create_ruleset(numbers, fields):
    attr = struct.pack(f"={len(fields)}Q", *fields)
    return _libc.syscall(numbers[0], ctypes.c_char_p(attr), len(attr), 0)


class Landlock:
    """Two stacked Landlock layers. The first is built once, in the interpreter, for all its
    children: reads everywhere but in /proc (so not other processes' environment or
    memory), writes only below the interpreter's scratch root, no TCP, no signals or
    abstract sockets leaving the domain. The second, built by each child, narrows
    writes to its own scratch directory and reads to `read_rules` (a ReadRules) plus
    its scratch and inputs directories: a few dozen rules, built while it is parked."""

    def __init__(self, writable_root, read_rules=None, enabled=True):
        self.read_rules = read_rules
        self.abi = landlock_abi() if enabled else 0
        self.numbers = _LANDLOCK_SYSCALLS.get(platform.machine())
        self.base = -1
        # (scratch, descriptor) of the one child layer built ahead of a fork (`prepare`).
        self.prepared = (None, -1)
        if self.abi <= 0 or self.numbers is None:
            return
        self.write_rights = _LL_WRITE_FILE | _LL_WRITE_TREE
        if self.abi >= 2:
            self.write_rights |= _LL_REFER
        if self.abi >= 3:
            self.write_rights |= _LL_TRUNCATE
        self.file_write = _LL_WRITE_FILE | (_LL_TRUNCATE if self.abi >= 3 else 0)
        read_rights = _LL_EXECUTE | _LL_READ_FILE | _LL_READ_DIR
        fields = [read_rights | self.write_rights]
        if self.abi >= 4:
            fields.append(_LL_NET_TCP)
        if self.abi >= 6:
            fields.append(_LL_SCOPE)
        ruleset = _create_ruleset(self.numbers, fields)
        if ruleset < 0:
            return
        for entry in os.listdir("/"):
            if entry == "proc":
                continue
            path = "/" + entry
            if os.path.isdir(path):
                _landlock_rule(self.numbers, ruleset, path, read_rights)
            else:
                _landlock_rule(self.numbers, ruleset, path, _LL_EXECUTE | _LL_READ_FILE)
        for shared in ("/proc/meminfo", "/proc/cpuinfo", "/proc/stat"):
            _landlock_rule(self.numbers, ruleset, shared, _LL_READ_FILE)
        _landlock_rule(self.numbers, ruleset, "/dev/null", _LL_READ_FILE | self.file_write)
        _landlock_rule(self.numbers, ruleset, writable_root, read_rights | self.write_rights)
        self.base = ruleset

    def prepare(self, scratch):
        """In the interpreter, just before it forks the child of `scratch`: builds that child's
        own layer, which the child then only enters (`restrict`), so that the rules cost the
        interpreter a few system calls instead of costing the child page faults. The interpreter calls
        `release_prepared` right after the fork: only that child keeps the descriptor."""
        self.release_prepared()
        if self.base >= 0:
            self.prepared = (scratch, self._own_ruleset(scratch))

    def release_prepared(self):
        scratch, own = self.prepared
        self.prepared = (None, -1)
        if own >= 0:
            os.close(own)

    def _own_ruleset(self, scratch, writable=None):
        reads = _LL_READ_FILE | _LL_READ_DIR if self.read_rules is not None else 0
        own = _create_ruleset(self.numbers, [self.write_rights | reads])
        if own < 0:
            return -1
        try:
            _landlock_rule(self.numbers, own, writable or scratch, self.write_rights | reads)
            _landlock_rule(self.numbers, own, "/dev/null", self.file_write | (reads & _LL_READ_FILE))
            if reads:
                self._read_rules(own, scratch)
        except BaseException:
            os.close(own)
            raise
        return own

    def restrict(self, scratch):
        """In the child (after no-new-privileges): enters both layers, the second as the
        interpreter prepared it for `scratch`, or built here."""
        prepared_for, own = self.prepared
        self.prepared = (None, -1)
        if prepared_for != scratch and own >= 0:
            os.close(own)
            own = -1
        try:
            if self.base < 0 or _libc.syscall(self.numbers[2], self.base, 0) != 0:
                return False
            if own < 0:
                own = self._own_ruleset(scratch)
            return own >= 0 and _libc.syscall(self.numbers[2], own, 0) == 0
        finally:
            if own >= 0:
                os.close(own)

    def run_layer(self, run_dir, scratch):
        """In the child of `scratch`, just before it forks a re-run: the re-run's layer (a
        descriptor, -1 when it cannot be built), with writes and reads of its own `run_dir`
        only, not of `scratch`, where the first run left its files. Built here, where the
        calls are warm, and entered there (`enter`)."""
        if self.numbers is None or self.abi <= 0:
            return -1
        return self._own_ruleset(scratch, run_dir)

    def enter(self, layer):
        """Enters a layer `run_layer` built, and closes it; False when it did not hold."""
        try:
            return layer >= 0 and _libc.syscall(self.numbers[2], layer, 0) == 0
        finally:
            if layer >= 0:
                os.close(layer)

    def _read_rules(self, ruleset, scratch):
        rules = self.read_rules
        for path in (*rules.dirs, read_rules.inputs_dir(scratch)):
            _landlock_rule(self.numbers, ruleset, path, _LL_READ_FILE | _LL_READ_DIR)
        for path in (*rules.files, *read_rules.PROC_FILES):
            _landlock_rule(self.numbers, ruleset, path, _LL_READ_FILE)

    def close(self):
        self.release_prepared()
        if self.base >= 0:
            os.close(self.base)
            self.base = -1


# --- capabilities --------------------------------------------------------------------------


def _drop_capabilities():
    """Empties the effective, permitted and inheritable sets (uid 0 stays uid 0, but
    without CAP_SYS_ADMIN it cannot setns() back into the host network, for one)."""
    header = struct.pack("=Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = bytes(24)  # two empty {effective, permitted, inheritable}
    return _libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(data)) == 0


# --- seccomp --------------------------------------------------------------------------------

# name: (x86_64, aarch64); None where the call does not exist. Calls added since Linux 5.1
# have one number on every architecture.
_SYSCALLS = {
    "socket": (41, 198),
    "fork": (57, None),
    "vfork": (58, None),
    "execve": (59, 221),
    "execveat": (322, 281),
    "unshare": (272, 97),
    "setns": (308, 268),
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "clone": (56, 220),
    "clone3": (435, 435),
    "io_uring_setup": (425, 425),
    # Metadata: Landlock does not cover these, so a file's mode, owner, times and extended
    # attributes could be changed anywhere this user may (the artifact store included).
    "chmod": (90, None),
    "fchmod": (91, 52),
    "fchmodat": (268, 53),
    "fchmodat2": (452, 452),  # Linux 6.6
    "chown": (92, None),
    "fchown": (93, 55),
    "lchown": (94, None),
    "fchownat": (260, 54),
    "utime": (132, None),
    "utimes": (235, None),
    "futimesat": (261, None),
    "utimensat": (280, 88),
    "setxattr": (188, 5),
    "lsetxattr": (189, 6),
    "fsetxattr": (190, 7),
    "removexattr": (197, 14),
    "lremovexattr": (198, 15),
    "fremovexattr": (199, 16),
    "setxattrat": (463, 463),  # Linux 6.13
    "removexattrat": (466, 466),  # Linux 6.13
    "file_setattr": (469, 469),  # Linux 6.17: chattr's flags and project id
    # Other processes: a pidfd signals (or copies descriptors from) a process without kill(),
    # which Landlock scopes only from ABI 6 on.
    "pidfd_open": (434, 434),
    "pidfd_send_signal": (424, 424),
    "pidfd_getfd": (438, 438),
    # Checked on their arguments, below.
    "prlimit64": (302, 261),
    "ioctl": (16, 29),
}
# Refused whatever their arguments.
_REFUSED_SYSCALLS = (
    "socket",
    "fork",
    "vfork",
    "execve",
    "execveat",
    "unshare",
    "setns",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "utime",
    "utimes",
    "futimesat",
    "utimensat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "setxattrat",
    "removexattrat",
    "file_setattr",
    "pidfd_open",
    "pidfd_send_signal",
    "pidfd_getfd",
)
# ioctl requests that set a file's flags (chattr: noatime, nodump, ...) or its generation.
_REFUSED_IOCTLS = (
    0x40086602,  # FS_IOC_SETFLAGS
    0x40046602,  # FS_IOC32_SETFLAGS
    0x401C5820,  # FS_IOC_FSSETXATTR
    0x40087602,  # FS_IOC_SETVERSION
    0x40047602,  # FS_IOC32_SETVERSION
)
_AUDIT_ARCH = {"x86_64": (0xC000003E, 0), "aarch64": (0xC00000B7, 1)}

_BPF_LD_W_ABS = 0x20
_BPF_JEQ_K = 0x15
_BPF_JGE_K = 0x35
_BPF_JSET_K = 0x45
_BPF_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000


_PROCESS_SYSCALLS = ("fork", "vfork")


def _seccomp_program(machine, processes=False, others=True):
    """The filter's program. The child that holds a request (`processes`) may still fork the
    processes its code runs in; each of those stacks `others=False`: no new process."""
    arch, column = _AUDIT_ARCH[machine]
    deny = _RET_ERRNO | errno.EPERM
    # clone3 passes its flags in memory the filter cannot read: callers (glibc's
    # pthread_create) fall back to clone() on ENOSYS, where the flags are checked.
    missing = _RET_ERRNO | errno.ENOSYS
    names = [
        name
        for name in _REFUSED_SYSCALLS
        if (name in _PROCESS_SYSCALLS and not processes) or (name not in _PROCESS_SYSCALLS and others)
    ]
    refused = [_SYSCALLS[name][column] for name in names if _SYSCALLS[name][column] is not None]
    program = [
        (_BPF_LD_W_ABS, 0, 0, 4),  # arch
        (_BPF_JEQ_K, 1, 0, arch),
        (_BPF_RET_K, 0, 0, deny),  # another ABI (e.g. i386 through int 0x80)
        (_BPF_LD_W_ABS, 0, 0, 0),  # syscall number
        (_BPF_JGE_K, 0, 1, 0x40000000),
        (_BPF_RET_K, 0, 0, deny),  # x32
    ]
    for number in refused:
        program += [(_BPF_JEQ_K, 0, 1, number), (_BPF_RET_K, 0, 0, deny)]
    for name in ("clone3", "io_uring_setup"):
        program += [(_BPF_JEQ_K, 0, 1, _SYSCALLS[name][column]), (_BPF_RET_K, 0, 0, missing)]
    if not others:
        return program + _clone_checked(column, processes, deny)
    # prlimit64 on a pid other than 0 (this process) would set another process's limits:
    # the interpreter's, to kill it. glibc's getrlimit and setrlimit always pass 0.
    program += [
        (_BPF_JEQ_K, 0, 4, _SYSCALLS["prlimit64"][column]),
        (_BPF_LD_W_ABS, 0, 0, 16),  # low half of the first argument: the pid
        (_BPF_JEQ_K, 0, 1, 0),
        (_BPF_RET_K, 0, 0, _RET_ALLOW),
        (_BPF_RET_K, 0, 0, deny),
    ]
    # ioctl: the requests that set file flags; `cmd` is an unsigned int, the low half.
    count = len(_REFUSED_IOCTLS)
    program += [(_BPF_JEQ_K, 0, count + 3, _SYSCALLS["ioctl"][column]), (_BPF_LD_W_ABS, 0, 0, 24)]
    program += [(_BPF_JEQ_K, count - index, 0, request) for index, request in enumerate(_REFUSED_IOCTLS)]
    program += [(_BPF_RET_K, 0, 0, _RET_ALLOW), (_BPF_RET_K, 0, 0, deny)]
    return program + _clone_checked(column, processes, deny)


def _clone_checked(column, processes, deny):
    """The end of a program: clone allowed for threads, and for processes if `processes`."""
    if processes:
        return [(_BPF_RET_K, 0, 0, _RET_ALLOW)]
    return [
        (_BPF_JEQ_K, 0, 3, _SYSCALLS["clone"][column]),
        (_BPF_LD_W_ABS, 0, 0, 16),  # low half of the first argument: the flags
        (_BPF_JSET_K, 1, 0, CLONE_THREAD),
        (_BPF_RET_K, 0, 0, deny),  # a new process
        (_BPF_RET_K, 0, 0, _RET_ALLOW),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _compiled_seccomp_filter(**kinds):
    machine = platform.machine()
    if machine not in _AUDIT_ARCH:
        return None
    program = _seccomp_program(machine, **kinds)
    buffer = ctypes.create_string_buffer(b"".join(struct.pack("=HBBI", *op) for op in program))
    return buffer, _SockFprog(len(program), ctypes.addressof(buffer))


# Built once, when the interpreter imports this module; every child only installs them: the
# child's own, then in each process that runs code the one that starts no process.
_SECCOMP_FILTER = _compiled_seccomp_filter(processes=True)
_NO_PROCESSES_FILTER = _compiled_seccomp_filter(processes=False, others=False)


def _apply_seccomp(compiled=_SECCOMP_FILTER):
    if compiled is None:
        return False
    fprog = compiled[1]
    return _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0


# --- the child --------------------------------------------------------------------------------


def _set_limit(kind, soft, hard=None):
    try:
        resource.setrlimit(kind, (soft, soft if hard is None else hard))
        return True
    except (ValueError, OSError):
        return False


def _home_in(folder):
    """HOME and temporary files in `folder`, the one place this process may write."""
    os.environ["TMPDIR"] = folder
    os.environ["HOME"] = folder
    tempfile.tempdir = folder


def confine_child(scratch, landlock):
    """Everything that does not depend on the request; runs in the child before it
    waits for one; `landlock` is the interpreter's Landlock. Returns the layers applied."""
    _home_in(scratch)
    applied = {
        "rlimitFsize": _set_limit(resource.RLIMIT_FSIZE, FILE_SIZE_LIMIT),
        "rlimitNofile": _set_limit(resource.RLIMIT_NOFILE, OPEN_FILES_LIMIT),
    }
    _set_limit(resource.RLIMIT_STACK, STACK_LIMIT, resource.getrlimit(resource.RLIMIT_STACK)[1])
    if not sys.platform.startswith("linux"):
        return applied
    applied["noNewPrivs"] = _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    applied["landlock"] = applied["noNewPrivs"] and landlock.restrict(scratch)
    landlock.close()
    applied["capabilitiesDropped"] = _drop_capabilities()
    applied["seccomp"] = applied["noNewPrivs"] and _apply_seccomp()
    return applied


def die_with_parent():
    """Asks Linux to SIGKILL this process when its parent dies (no-op elsewhere)."""
    try:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except BaseException:
        pass


# Modules that read or write raw memory or call C functions by address: the code cannot
# import them (the audit hook refuses it), and they are taken out of sys.modules.
RAW_MODULES = frozenset(
    (
        "ctypes",
        "_ctypes",
        "_ctypes_test",
        "cffi",
        "_cffi_backend",
        "_testcapi",
        "_testinternalcapi",
        "_testbuffer",
        "_testmultiphase",
        "_testsinglephase",
        "_xxsubinterpreters",
        "_xxinterpchannels",
        "_xxtestfuzz",
    )
)


def forget_raw_modules():
    """RAW_MODULES out of sys.modules: importing one again raises the hook's event."""
    for name in [name for name in sys.modules if name.partition(".")[0] in RAW_MODULES]:
        del sys.modules[name]


def confine_run(applied, keep_libc=False, run_dir=None, landlock=None, layer=-1):
    """In each process forked to run the code (after confine_child in the child it was forked
    from), before anything of the code's: it dies with that child, starts no process (a
    seccomp filter stacked on the child's, or without seccomp an rlimit), and finds no module
    that reaches raw memory in sys.modules, nor this module's handle on libc (`keep_libc`:
    the probe, which needs it). A re-run (`run_dir`, inside scratch) also enters its Landlock
    `layer` (landlock.run_layer's) where the child had one: it neither reads nor writes what
    the first run left in scratch. Updates `applied` with what held."""
    global _libc
    die_with_parent()
    if not sys.platform.startswith("linux"):
        return applied
    if run_dir is not None:
        _home_in(run_dir)
        if landlock is not None and layer >= 0:
            applied["runLayer"] = landlock.enter(layer)
    applied["noNewProcessesFilter"] = bool(applied.get("seccomp")) and _apply_seccomp(_NO_PROCESSES_FILTER)
    # Without seccomp, an rlimit is the only kernel-side stop on new processes (and on
    # threads too; it does not bind root).
    applied["rlimitNproc"] = not applied["noNewProcessesFilter"] and _set_limit(resource.RLIMIT_NPROC, 0)
    forget_raw_modules()
    if not keep_libc:
        _libc = None
    return applied


def limit_request(timeout_ms, memory_mb, already_mapped):
    """CPU time a little over the timeout; `memory_mb` of address space on top of
    `already_mapped` bytes, what the warm interpreter (with its cached tables) maps."""
    cpu_seconds = int(timeout_ms / 1000) + 2
    _set_limit(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1)
    _set_limit(resource.RLIMIT_AS, already_mapped + memory_mb * 1024 * 1024)

    def clamped(limit):
        _original_setrecursionlimit(min(int(limit), MAX_RECURSION_DEPTH))

    sys.setrecursionlimit = clamped


_original_setrecursionlimit = sys.setrecursionlimit


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def mapped_bytes():
    # Read with plain system calls: in a freshly forked child, each object Python's file
    # machinery touches costs a page copy.
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
        try:
            return int(os.read(fd, 256).split()[0]) * _PAGE_SIZE
        finally:
            os.close(fd)
    except (OSError, ValueError, IndexError):
        return 0


# --- the audit hook ---------------------------------------------------------------------------

_REFUSED_EVENTS = {
    "subprocess.Popen": "starting processes is not allowed",
    "os.system": "starting processes is not allowed",
    "os.posix_spawn": "starting processes is not allowed",
    "os.spawn": "starting processes is not allowed",
    "os.exec": "starting processes is not allowed",
    "os.fork": "starting processes is not allowed",
    "os.forkpty": "starting processes is not allowed",
    "pty.spawn": "starting processes is not allowed",
    "os.startfile": "starting processes is not allowed",
    "ctypes.dlopen": "ctypes is not allowed",
    "ctypes.dlsym": "ctypes is not allowed",
    "ctypes.dlsym/handle": "ctypes is not allowed",
    "ctypes.cdata": "ctypes is not allowed",
    "ctypes.cdata/buffer": "ctypes is not allowed",
    "ctypes.call_function": "ctypes is not allowed",
    "gc.get_referrers": "inspecting the sandbox is not allowed",
    "gc.get_referents": "inspecting the sandbox is not allowed",
    "gc.get_objects": "inspecting the sandbox is not allowed",
    "sys._current_frames": "inspecting the sandbox is not allowed",
    # A trace or profile function can rewrite the locals of running frames (the hook's too).
    "sys.settrace": "inspecting the sandbox is not allowed",
    "sys.setprofile": "inspecting the sandbox is not allowed",
    "os.setns": "namespaces are not allowed",
    "os.unshare": "namespaces are not allowed",
    "webbrowser.open": "network access is not allowed",
    "urllib.Request": "network access is not allowed",
    "ftplib.connect": "network access is not allowed",
    "http.client.connect": "network access is not allowed",
    "smtplib.connect": "network access is not allowed",
    # A file's metadata, anywhere (scratch included), as the seccomp filter refuses it below
    # Python: the same code then fails the same way on every machine.
    "os.chmod": "changing a file's mode, owner, times or extended attributes is not allowed",
    "os.chown": "changing a file's mode, owner, times or extended attributes is not allowed",
    "os.utime": "changing a file's mode, owner, times or extended attributes is not allowed",
    "os.chflags": "changing a file's mode, owner, times or extended attributes is not allowed",
    "os.setxattr": "changing a file's mode, owner, times or extended attributes is not allowed",
    "os.removexattr": "changing a file's mode, owner, times or extended attributes is not allowed",
    "shutil.chown": "changing a file's mode, owner, times or extended attributes is not allowed",
    # SQLite opens files itself (ATTACH, `file:` URIs), out of the hook's sight.
    "sqlite3.connect": "sqlite3 is not allowed, use pandas",
}
# Events whose arguments name paths that get changed: (position of the path, position of
# its dir_fd or -1). A path may be a descriptor (an int); both are followed to where they
# really point (`_located`).
_WRITE_EVENTS = {
    "os.remove": ((0, 1),),
    "os.rmdir": ((0, 1),),
    "os.mkdir": ((0, 2),),
    "os.rename": ((0, 2), (1, 3)),
    "os.symlink": ((1, 2),),
    "os.link": ((0, 2), (1, 3)),
    "os.truncate": ((0, -1),),
    "os.mkfifo": ((0, 2),),
    "os.mknod": ((0, 3),),
    "shutil.rmtree": ((0, 1),),
    "shutil.copyfile": ((1, -1),),
    "shutil.copytree": ((1, -1),),
    "shutil.move": ((0, -1), (1, -1)),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


# Events whose arguments name paths that get read, by position (opens have their own case).
_READ_EVENTS = {
    "os.listdir": (0,),
    "os.scandir": (0,),
    "os.getxattr": (0,),
    "os.listxattr": (0,),
    "dbm.open": (0,),
}


def install_audit_hook(scratch, rules=None):
    sys.addaudithook(audit_hook(scratch, rules))


# The hook and its helpers keep every piece of their state in their default arguments:
# immutable values (str, int, tuple, frozenset) and functions implemented in C. They have
# no closure cells (whose `cell_contents` Python can rewrite) and look up no global or
# builtin name (which code could replace in this module or in `builtins`), and replacing
# their `__defaults__` or `__code__` raises an audit event that the hook refuses. So code
# that gets hold of the hook, or of its frame and locals, finds nothing it can change.
# Nor do they call pure-Python library code such as os.path.realpath, which generated
# code could monkeypatch (posixpath, os): paths are resolved with the C functions of
# `posix` below.

_HOOK_GLOBALS = globals()
# Immutable copies of the tables above, made once in the interpreter: what every hook holds.
_REFUSED_EVENT_NAMES = frozenset(_REFUSED_EVENTS)
_REFUSED_REASONS = tuple(_REFUSED_EVENTS.items())
_WRITE_EVENT_NAMES = frozenset(_WRITE_EVENTS)
_WRITE_EVENT_PLACES = tuple(_WRITE_EVENTS.items())
_READ_EVENT_NAMES = frozenset(_READ_EVENTS)
_PATH_CLASSES = frozenset((pathlib.PurePosixPath, pathlib.PosixPath))
_FS_ENCODING = sys.getfilesystemencoding()


def _resolve(
    path,
    getcwd=posix.getcwd,
    lstat=posix.lstat,
    readlink=posix.readlink,
    OSError=OSError,
    ValueError=ValueError,
):
    """os.path.realpath (not strict) of a str, from C functions only."""
    if not path.startswith("/"):
        path = getcwd() + "/" + path
    todo = path.split("/")
    todo.reverse()
    done = ""
    links = 0
    while todo:
        name = todo.pop()
        if name == "" or name == ".":
            continue
        if name == "..":
            done = done[: done.rfind("/")] if done else ""
            continue
        candidate = done + "/" + name
        try:
            mode = lstat(candidate).st_mode
        except (OSError, ValueError):
            done = candidate
            continue
        if mode & 0o170000 != 0o120000 or links >= 40:
            done = candidate
            continue
        links += 1
        try:
            target = readlink(candidate)
        except (OSError, ValueError):
            done = candidate
            continue
        if target.startswith("/"):
            done = ""
        more = target.split("/")
        more.reverse()
        todo += more
    return done or "/"


def _path_text(
    path,
    fspath=posix.fspath,
    join="".join,
    join_bytes=b"".join,
    decode=bytes.decode,
    encoding=_FS_ENCODING,
    path_classes=_PATH_CLASSES,
    type=type,
    isinstance=isinstance,
    str=str,
    bytes=bytes,
    PermissionError=PermissionError,
):
    """A path argument of an audit event as an exact str. Only str, bytes and pathlib's own
    classes are accepted: any other object's __fspath__ could answer the hook differently
    from the call being checked (and a str subclass is copied, never asked)."""
    kind = type(path)
    if kind in path_classes:
        path = fspath(path)
        kind = type(path)
    if kind is str:
        return path
    if kind is bytes:
        return decode(path, encoding, "surrogateescape")
    # A subclass is copied to an exact str without calling any of its methods (a fake that
    # only claims to be one through __class__ makes join raise a TypeError).
    if isinstance(path, str):
        return join((path,))
    if isinstance(path, bytes):
        return decode(join_bytes((path,)), encoding, "surrogateescape")
    raise PermissionError(f"sandbox: only str, bytes and pathlib paths are accepted here, not {kind.__name__}")


def _descriptor_target(fd, readlink=posix.readlink, OSError=OSError, PermissionError=PermissionError):
    """The path an open descriptor stands for, as the kernel tells it (/proc/self/fd)."""
    try:
        target = readlink(f"/proc/self/fd/{fd}")
    except OSError:
        raise PermissionError(f"sandbox: descriptor {fd} cannot be followed to a file") from None
    if not target.startswith("/"):
        raise PermissionError(f"sandbox: descriptor {fd} is not a file or directory ({target})")
    return target


def _located(
    path,
    dir_fd,
    resolve=_resolve,
    path_text=_path_text,
    descriptor_target=_descriptor_target,
    type=type,
    int=int,
    PermissionError=PermissionError,
):
    """Where a path argument of an audit event really points, resolved: a descriptor (an
    int) by what the kernel says it is, a relative path against its `dir_fd` when the call
    got one (the kernel's base then, not the working directory); None and a negative
    dir_fd (CPython passes -1 for none, and for AT_FDCWD) mean the working directory. A
    dir_fd of another type (an int subclass, which the call would still take) is refused."""
    if type(path) is int:
        return resolve(descriptor_target(path))
    text = path_text(path)
    if dir_fd is not None and type(dir_fd) is not int:
        raise PermissionError(f"sandbox: dir_fd must be an int or None here, not {type(dir_fd).__name__}")
    if dir_fd is None or dir_fd < 0 or text.startswith("/"):
        return resolve(text)
    return resolve(descriptor_target(dir_fd) + "/" + text)


def hook_plan(scratch, rules=None, run_dir=None):
    """What `audit_hook` needs that does not depend on the process it runs in, worked out
    by the interpreter before it forks the child of `scratch`: the child then only adds its own
    /proc entry (resolving paths in the child would cost it page copies). A re-run's
    (`run_dir`) writes and reads its own folder instead of `scratch`."""
    own = os.path.realpath(run_dir or scratch)
    shared = rules.shared_paths(scratch, own) if rules is not None else None
    return own, shared


def audit_hook(scratch, rules=None, plan=None):
    """A hook that refuses, with a PermissionError, what generated code has no business
    doing; with `rules` (a ReadRules), reads outside its allow-list too (without them,
    reads of other processes' /proc only). `plan`: hook_plan(scratch, rules), when the
    interpreter worked it out. Once installed (sys.addaudithook), a hook cannot be removed, and
    its state cannot be changed (see above)."""
    scratch_root, shared = plan if plan is not None else hook_plan(scratch, rules)
    own_pid = os.getpid()
    own_proc = f"/proc/{own_pid}"
    if rules is not None:
        read_prefixes, read_exact = read_rules.with_own_proc(shared, own_pid)
    else:
        read_prefixes, read_exact = (), frozenset()
    read_events = _READ_EVENT_NAMES if rules is not None else frozenset()

    def hook(
        event,
        args,
        refused=_REFUSED_EVENT_NAMES,
        reasons=_REFUSED_REASONS,
        raw_modules=RAW_MODULES,
        ModuleNotFoundError=ModuleNotFoundError,
        write_event_names=_WRITE_EVENT_NAMES,
        write_events=_WRITE_EVENT_PLACES,
        read_events=read_events,
        check_reads=rules is not None,
        read_prefixes=read_prefixes,
        read_exact=read_exact,
        scratch_root=scratch_root,
        scratch_prefix=scratch_root + "/",
        own_pid=own_pid,
        own_proc=own_proc,
        own_proc_prefix=own_proc + "/",
        write_flags=_WRITE_FLAGS,
        resolve=_resolve,
        path_text=_path_text,
        located=_located,
        globals_id=id(_HOOK_GLOBALS),
        id=id,
        function_type=types.FunctionType,
        PermissionError=PermissionError,
        type=type,
        int=int,
        len=len,
    ):
        if event in refused:
            for name, reason in reasons:
                if name == event:
                    raise PermissionError(f"sandbox: {reason} ({event})")
        if event == "import":
            # As if not installed: libraries that try such a module optionally go on without it.
            if type(args[0]) is str and args[0].partition(".")[0] in raw_modules:
                raise ModuleNotFoundError(
                    f"sandbox: ctypes and other modules that reach raw memory are not allowed ({args[0]})"
                )
            return
        if event[:7] == "socket.":
            raise PermissionError(f"sandbox: network access is not allowed ({event})")
        if event == "object.__setattr__":
            target = args[0]
            if type(target) is function_type and id(target.__globals__) == globals_id:
                raise PermissionError("sandbox: changing the sandbox's own functions is not allowed")
            return
        if event == "open":
            path, mode, flags = args
            if path is None or type(path) is int:
                return  # an open descriptor: it was checked when it was opened
            text = path_text(path)
            writing = (mode is not None and ("w" in mode or "a" in mode or "x" in mode or "+" in mode)) or (
                mode is None and type(flags) is int and flags & write_flags
            )
            resolved = resolve(text)
            if writing and resolved != scratch_root and not resolved.startswith(scratch_prefix):
                raise PermissionError(f"sandbox: writing outside the scratch directory is not allowed: {text}")
            if (
                resolved.startswith("/proc/")
                and resolved[6:].split("/", 1)[0].isdigit()
                and resolved != own_proc
                and not resolved.startswith(own_proc_prefix)
            ):
                raise PermissionError(f"sandbox: reading other processes is not allowed: {text}")
            # Its own memory may still hold bytes of tables other requests loaded.
            if resolved.startswith(own_proc_prefix) and (resolved.endswith("/mem") or "/map_files" in resolved):
                raise PermissionError(f"sandbox: reading this process's memory is not allowed: {text}")
            if check_reads and resolved not in read_exact and not resolved.startswith(read_prefixes):
                raise PermissionError(
                    f"sandbox: reading outside the scratch directory and the run's tables is not allowed: {text}"
                )
            return
        if event in read_events:
            path = args[0] if args and args[0] is not None else "."
            resolved = located(path, -1)
            if resolved not in read_exact and not resolved.startswith(read_prefixes):
                where = path if type(path) is int else path_text(path)
                raise PermissionError(
                    f"sandbox: reading outside the scratch directory and the run's tables is not allowed: {where}"
                )
            return
        if event in write_event_names:
            for name, places in write_events:
                if name != event:
                    continue
                for position, dir_position in places:
                    if position >= len(args) or args[position] is None:
                        continue
                    dir_fd = args[dir_position] if 0 <= dir_position < len(args) else None
                    resolved = located(args[position], dir_fd)
                    if resolved != scratch_root and not resolved.startswith(scratch_prefix):
                        raise PermissionError(
                            f"sandbox: changing files outside the scratch directory is not allowed ({event})"
                        )
            return
        if event == "resource.prlimit":
            if type(args[0]) is not int or (args[0] != 0 and args[0] != own_pid):
                raise PermissionError(f"sandbox: other processes' limits are out of reach ({event})")
            return
        if event == "os.kill" or event == "os.killpg":
            if type(args[0]) is not int or (args[0] != 0 and args[0] != own_pid):
                raise PermissionError(f"sandbox: signalling other processes is not allowed ({event})")

    return hook


# --- what holds ---------------------------------------------------------------------------------


def _libc_fork_refused():
    """Tries a real fork() below Python (as ctypes code would); True when it failed."""
    pid = _libc.fork()
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
        return False
    return True


def _raw_write_refused(path):
    fd = _libc.open(path.encode(), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    if fd >= 0:
        os.close(fd)
        os.unlink(path)
        return False
    return True


def _raw_read_refused(path):
    fd = _libc.open(path.encode(), os.O_RDONLY)
    if fd >= 0:
        os.close(fd)
        return False
    return True


_AT_FDCWD = -100
_RLIMIT_NOFILE = 7


def _refused_below_python(call):
    """Runs a libc call; True when it failed with EPERM (what the seccomp filter answers)."""
    ctypes.set_errno(0)
    if call() >= 0:
        return False
    return ctypes.get_errno() == errno.EPERM


def _metadata_refused(path):
    """Tries to change the mode, owner, times and extended attributes of a file of the
    child's own scratch, below Python: True when every attempt was refused (Landlock allows
    all of them there, so only seccomp can)."""
    fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    name = path.encode()
    try:
        return all(
            _refused_below_python(call)
            for call in (
                lambda: _libc.chmod(name, 0o644),
                lambda: _libc.fchmod(fd, 0o644),
                lambda: _libc.syscall(_SYSCALLS["fchmodat2"][0], _AT_FDCWD, name, 0o644, 0),
                lambda: _libc.fchown(fd, -1, -1),
                lambda: _libc.utimensat(_AT_FDCWD, name, None, 0),
                lambda: _libc.fsetxattr(fd, b"user.tableminds-probe", b"1", 1, 0),
                lambda: _libc.fremovexattr(fd, b"user.tableminds-probe"),
            )
        )
    finally:
        os.close(fd)
        os.unlink(path)


def _other_process_refused(pid):
    """pidfd_open and prlimit on process `pid` (the interpreter), below Python: True when both
    were refused."""
    old = ctypes.create_string_buffer(16)

    def pidfd_open():
        fd = _libc.syscall(_SYSCALLS["pidfd_open"][0], pid, 0)
        if fd >= 0:
            os.close(fd)
        return fd

    return _refused_below_python(pidfd_open) and _refused_below_python(
        lambda: _libc.prlimit(pid, _RLIMIT_NOFILE, None, old)
    )


def _allocates(megabytes):
    try:
        bytearray(megabytes * 1024 * 1024)
        return True
    except MemoryError:
        return False


def _hook_refuses(action):
    try:
        action()
    except PermissionError as exc:
        return str(exc).startswith("sandbox:")
    except BaseException:
        return False
    return False


SECRET_HINTS = ("API_KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")


def probe(scratch, outside_dir, applied, mapped, rules=None, memory_mb=64):
    """Runs in a throwaway child that was confined like every other: tries what the
    layers should stop, below Python where possible, and reports what held."""
    result = dict(applied)
    root = os.getuid() == 0
    result["rlimitNproc"] = bool(applied.get("rlimitNproc")) and not root
    result["noNewProcesses"] = _libc_fork_refused()
    outside = os.path.join(outside_dir, f"tableminds-probe-{os.getpid()}")
    result["kernelWriteConfinement"] = _raw_write_refused(outside)
    result["procIsolation"] = _raw_read_refused(f"/proc/{os.getppid()}/environ")
    private = os.path.join(outside_dir, read_probe_name())
    result["kernelReadConfinement"] = _raw_read_refused(private)
    result["scrubbedEnv"] = not any(hint in name.upper() for name in os.environ for hint in SECRET_HINTS)
    result["scratchDir"] = os.path.realpath(os.getcwd()) == os.path.realpath(scratch)
    machine_ok = platform.machine() in _AUDIT_ARCH
    result["kernelMetadataConfinement"] = machine_ok and _metadata_refused(os.path.join(scratch, "metadata-probe"))
    result["kernelProcessConfinement"] = machine_ok and _other_process_refused(os.getppid())
    # Opened before the hook: a directory outside scratch and a file there, as descriptors.
    outside_fd = os.open(outside_dir, _O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    private_fd = os.open(private, _O_PATH | os.O_CLOEXEC)
    scratch_fd = os.open(scratch, _O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)

    limit_request(1000, memory_mb, mapped)
    cpu = resource.getrlimit(resource.RLIMIT_CPU)[0]
    result["rlimitCpu"] = cpu != resource.RLIM_INFINITY and cpu <= 3
    result["rlimitAs"] = mapped > 0 and _allocates(memory_mb // 4) and not _allocates(memory_mb * 4)
    sys.setrecursionlimit(10**6)
    result["recursionCap"] = sys.getrecursionlimit() <= MAX_RECURSION_DEPTH

    install_audit_hook(scratch, rules)
    result["auditHook"] = (
        _hook_refuses(lambda: open(outside, "w"))
        and _hook_refuses(lambda: socket.socket())
        and _hook_refuses(lambda: os.system("true"))
        and _hook_refuses(lambda: os.chmod(scratch, 0o700))
    )
    # A relative path is judged against the dir_fd the call got, and a descriptor by the
    # file it stands for; a name in scratch through scratch's own descriptor stays allowed.
    result["hookResolvesDescriptors"] = (
        _hook_refuses(lambda: os.rmdir("tableminds-probe-absent", dir_fd=outside_fd))
        and _hook_refuses(lambda: os.truncate(private_fd, 0))
        and not _hook_refuses(lambda: os.rmdir("tableminds-probe-absent", dir_fd=scratch_fd))
    )
    result["readConfinement"] = (
        rules is not None
        and _hook_refuses(lambda: open(private).close())
        and _hook_refuses(lambda: os.listdir(outside_dir))
        and _readable(os.path.join(scratch, "."))
    )
    return result


def read_probe_name():
    """A file the interpreter leaves next to the probe's scratch for it to fail to read."""
    return "read-probe.txt"


def _readable(directory):
    try:
        os.listdir(directory)
        return True
    except OSError:
        return False
