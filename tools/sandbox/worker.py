"""Warm pandas worker of the local sandbox.

Started by tools/sandbox/local.ts (one per pool slot) as `worker.py SCRATCH_ROOT
[--no-fork-ahead]`. Messages arrive as one JSON object per line on stdin; replies
leave as one JSON object per line on fd 3, a descriptor that the forked children
close, so nothing the generated code prints can reach the protocol.

In:   {"type": "run", "id", "code", "tables": [{name, uri, sha256}], "timeout_ms",
       "output_bytes", "memory_mb"}
      {"type": "release", "scratch"}   the caller is done with a run's table files
Out:  {"type": "ready", "pid", "python", "pandas", "numpy", "scratch_root",
       "protections": {name: bool}, "details": {name: str}}
      {"type": "started", "id", "pid"}  the code is about to run in child `pid`
      {"type": "result", "id", "scratch", ...runner.py's result}

Each request runs in a forked child (copy-on-write of this interpreter and of the
cached tables) in its own process group, which is killed as a whole afterwards. The
next child is forked, confined and parked on a pipe ahead of the next request, so the
fork is off the request's path. A parked child reads a small table it lacks itself (the
worker caches it once the reply is out); for a big one it is thrown away for a fresh
child forked after the worker loaded it.
"""

import os
import sys

# Before numpy loads: one BLAS thread per process keeps fork() simple and cheap.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import hardening  # noqa: E402  (next to this file)

# While this process still has a single thread (a user namespace needs that).
_NETNS = hardening.enter_empty_netns()

import json  # noqa: E402
import platform  # noqa: E402
import select  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import OrderedDict  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import runner  # noqa: E402
from pressure import CpuPressure  # noqa: E402

PROTOCOL_FD = 3
CACHED_TABLES = 16
# A parked child reads a table it lacks itself when the file is at most this big: cheaper
# than throwing the child (and the warm-up it paid for) away to fork one that has it.
CHILD_LOADS_BYTES = 1 << 20
# After the soft timeout the child still needs a moment to save its tables.
EXPORT_GRACE_S = 1.0
MAX_CHILD_PAYLOAD = 64 * 1024 * 1024
PROBE_TIMEOUT_S = 10.0
PR_SET_PDEATHSIG = 1
EXIT_ORPHANED = 71
EXIT_SETUP_FAILED = 70

_table_cache = OrderedDict()


# --- protocol ---------------------------------------------------------------


def _dumps(message):
    try:
        return json.dumps(message, ensure_ascii=True, allow_nan=False, default=str)
    except (TypeError, ValueError) as exc:
        fallback = {
            "type": "result",
            "id": message.get("id") if isinstance(message, dict) else None,
            "scratch": message.get("scratch") if isinstance(message, dict) else None,
            **runner.failure("ProtocolError", f"reply could not be encoded: {runner.safe_str(exc)}"),
        }
        return json.dumps(fallback, ensure_ascii=True, default=str)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _send(message):
    _write_all(PROTOCOL_FD, (_dumps(message) + "\n").encode("ascii"))


def _die_with_parent():
    """Asks Linux to SIGKILL this process when its parent dies (no-op elsewhere)."""
    try:
        hardening._libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except BaseException:
        pass


def _read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


# --- the child ----------------------------------------------------------------


def _become_child(worker_pid, scratch, landlock):
    """First steps of every child: its own group, no way to the protocol, confined.
    Returns the layers applied and the bytes mapped before any of the code's own."""
    _die_with_parent()
    if os.getppid() != worker_pid:
        os._exit(EXIT_ORPHANED)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    os.close(PROTOCOL_FD)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the worker's reaper is not for this process
    _graveyard.forget()
    os.chdir(scratch)
    mapped = hardening.mapped_bytes()  # /proc is out of reach once confined
    return hardening.confine_child(scratch, landlock), mapped


# What generated code typically does, on a dummy table, in small steps, so the pages it
# touches are already this child's own when the real code runs.
WARM_UP_STEPS = (
    "print([1], {'a': 1.5})",
    'top = warm[warm["amount"] > 1].sort_values("amount", ascending=False).head(2)',
    'summary = warm.groupby("kind")["amount"].agg(["sum", "mean", "count"]).reset_index()',
    'print(int(warm["amount"].sum()), float(warm["share"].max()), warm["kind"].value_counts().to_dict())',
    "print(warm.to_string())",
)


WARM_UP_AFTER_IDLE_S = 0.003


def _warm_up(scratch, request_fd, warm):
    """A forked child pays a copy-on-write page fault for each page it first writes to
    (refcounts make that most pages it reads, too): this pays them while parked. It
    stops as soon as the request is waiting, when they would be paid anyway, and is
    skipped (`warm` false) while the CPUs are contended: under an evaluation's load it
    cost about 12 ms of CPU a request that other processes were waiting for."""
    # Under a stream of requests the next one comes at once: no CPU spent warming then.
    if not warm or select.select([request_fd], [], [], WARM_UP_AFTER_IDLE_S)[0]:
        return
    warm = pd.DataFrame({"kind": ["a", "b", "a"], "amount": [1, 2, 3], "share": [0.5, 0.25, 0.25]})
    for step in WARM_UP_STEPS:
        if select.select([request_fd], [], [], 0)[0]:
            return
        try:
            result = runner.execute(step, [("warm", warm)], 1000, 10_000, scratch)
            json.loads(runner.dumps(result))
            for table in result["tables"]:
                os.unlink(os.path.join(scratch, table["file"]))
        except Exception:
            return  # only a lost optimisation


def _child_main(request_fd, result_fd, scratch, worker_pid, landlock, warm):
    """Runs in the forked child; never returns."""
    payload = None
    try:
        _, mapped = _become_child(worker_pid, scratch, landlock)
        hook = hardening.audit_hook(scratch)
        _warm_up(scratch, request_fd, warm)
        raw = _read_all(request_fd)
        os.close(request_fd)
        if not raw:
            os._exit(0)  # thrown away unused
        request = json.loads(raw)
        hardening.limit_request(int(request["timeout_ms"]), int(request["memory_mb"]), mapped)
        try:
            own = {digest: runner.load_table(uri) for uri, digest in request.get("load", [])}
        except BaseException as exc:
            payload = runner.dumps(runner.failure_from("TableLoadError", exc))
            return
        named_tables = [(name, own.get(digest, _table_cache.get(digest))) for name, digest in request["tables"]]
        result = runner.execute(
            request["code"],
            named_tables,
            int(request["timeout_ms"]),
            int(request["output_bytes"]),
            scratch,
            before_code=lambda: sys.addaudithook(hook),
        )
        payload = runner.dumps(result)
    except BaseException as exc:
        payload = runner.dumps(runner.failure_from("SandboxError", exc))
    finally:
        try:
            _write_all(result_fd, ((payload or "") + "\n").encode("ascii"))
        finally:
            os._exit(0)


class Child:
    """A forked child parked on its request pipe."""

    def __init__(self, pid, request_fd, result_fd, scratch, digests):
        self.pid = pid
        self.request_fd = request_fd
        self.result_fd = result_fd
        self.scratch = scratch
        self.digests = digests

    def close_pipes(self):
        for fd in (self.request_fd, self.result_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.request_fd = self.result_fd = None

    def discard(self):
        self.close_pipes()
        _graveyard.bury(self.pid, self.scratch)


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(pid):
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return None


class Graveyard:
    """Children that are done with: killed at once, reaped (and their scratch removed)
    whenever they have finished dying, so that nobody waits for an exit, which takes
    milliseconds for a process that maps pandas."""

    def __init__(self):
        self._dying = {}

    def bury(self, pid, scratch):
        _kill_group(pid)
        self._dying[pid] = scratch
        self.collect()

    def collect(self, *_signal_args):
        for pid, scratch in list(self._dying.items()):
            try:
                reaped, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                reaped = pid
            if reaped:
                self._dying.pop(pid, None)
                if scratch is not None:
                    shutil.rmtree(scratch, ignore_errors=True)

    def forget(self):
        self._dying.clear()

    def waiting(self):
        return bool(self._dying)

    def collect_all(self, timeout_s):
        deadline = time.monotonic() + timeout_s
        while self._dying and time.monotonic() < deadline:
            self.collect()
            if self._dying:
                time.sleep(0.002)


_graveyard = Graveyard()


class Worker:
    def __init__(self, scratch_root, fork_ahead):
        self.root = tempfile.mkdtemp(prefix="tableminds-worker-", dir=scratch_root)
        self.fork_ahead = fork_ahead
        self.pid = os.getpid()
        self.ahead = None
        self.runs = 0
        self.landlock = hardening.Landlock(self.root)
        self.to_cache = []  # (uri, digest) a child read itself, cached once its reply is out
        # Warming up pays page faults early, with CPU another process may be waiting for.
        self.pressure = CpuPressure(max_stall=0.35)

    # -- children

    def _spawn(self):
        self.runs += 1
        scratch = os.path.join(self.root, f"run-{self.runs}")
        os.mkdir(scratch, 0o700)
        request_r, request_w = os.pipe()
        result_r, result_w = os.pipe()
        digests = frozenset(_table_cache)
        warm = not self.pressure.busy()
        pid = os.fork()
        if pid == 0:
            try:
                os.setpgid(0, 0)
                os.close(request_w)
                os.close(result_r)
                _child_main(request_r, result_w, scratch, self.pid, self.landlock, warm)
            finally:
                os._exit(EXIT_SETUP_FAILED)
        os.close(request_r)
        os.close(result_w)
        try:
            os.setpgid(pid, pid)  # also from this side, so a kill never races the child
        except OSError:
            pass
        return Child(pid, request_w, result_r, scratch, digests)

    def _child_for(self, tables):
        """The parked child, with the small tables it lacks to read itself; else a fresh
        child forked once the worker has cached every table."""
        child, self.ahead = self.ahead, None
        if child is not None:
            lacking = [(uri, digest) for uri, digest in tables.items() if digest not in child.digests]
            if all(_small_file(uri) for uri, _ in lacking):
                return child, lacking
            child.discard()  # forked before a big table it needs was loaded
        for uri, digest in tables.items():
            _load_table(uri, digest)
        return self._spawn(), []

    def prepare_next(self):
        if self.fork_ahead and self.ahead is None:
            self.ahead = self._spawn()

    # -- requests

    def handle(self, request):
        """Runs one request; returns (reply, child or None). The caller sends the reply,
        then calls `finish(child)` so that cleaning up stays off the request's path."""
        timeout_ms = int(request["timeout_ms"])
        named = [(str(t["name"]), str(t["sha256"])) for t in request["tables"]]
        tables = {str(t["uri"]): str(t["sha256"]) for t in request["tables"]}
        if _import_for(str(request["code"])) and self.ahead is not None:
            self.ahead.discard()  # forked without what was just imported
            self.ahead = None
        try:
            child, lacking = self._child_for(tables)
        except BaseException as exc:
            return runner.failure_from("TableLoadError", exc), None
        self.to_cache = lacking
        message = json.dumps(
            {
                "code": request["code"],
                "tables": named,
                "load": lacking,
                "timeout_ms": timeout_ms,
                "output_bytes": int(request["output_bytes"]),
                "memory_mb": int(request.get("memory_mb", 2048)),
            }
        ).encode("utf-8")
        try:
            return self._run_in(child, request["id"], message, timeout_ms)
        except BaseException:
            child.discard()
            raise

    def _run_in(self, child, request_id, message, timeout_ms):
        try:
            _write_all(child.request_fd, message)
        except BrokenPipeError:
            child.discard()  # it died while parked: a fresh one gets the request
            child = self._spawn()
            _write_all(child.request_fd, message)
        os.close(child.request_fd)
        child.request_fd = None
        _send({"type": "started", "id": request_id, "pid": child.pid})
        deadline = time.monotonic() + timeout_ms / 1000 + EXPORT_GRACE_S
        result = _parse_child_payload(_read_line(child.result_fd, deadline))
        if result is not None:
            result["scratch"] = child.scratch
            return result, child
        child.close_pipes()
        if time.monotonic() >= deadline:
            _graveyard.bury(child.pid, child.scratch)
            return runner.failure("Timeout", f"execution exceeded {timeout_ms} ms"), None
        # The child closed its end without a result: end its group, then tell why it ended.
        _kill_group(child.pid)
        status = _reap(child.pid)
        shutil.rmtree(child.scratch, ignore_errors=True)
        if status is None:
            return runner.failure("Crashed", "the code's process ended before returning a result"), None
        return runner.failure("Crashed", _crash_message(status)), None

    def finish(self, child, keep_scratch):
        if child is not None:
            # Whatever the code started lives in the child's group: end all of it.
            child.close_pipes()
            _graveyard.bury(child.pid, None if keep_scratch else child.scratch)
        # Off the request's path, so that the next parked child has what this one read.
        to_cache, self.to_cache = self.to_cache, []
        for uri, digest in to_cache:
            try:
                _load_table(uri, digest)
            except BaseException:
                pass  # the child said what was wrong with it; the next request reads it again
        # Trimmed between requests, never while one needs all of its tables.
        while len(_table_cache) > CACHED_TABLES:
            _table_cache.popitem(last=False)
        self.prepare_next()

    def release(self, scratch):
        path = os.path.realpath(str(scratch))
        if os.path.dirname(path) == os.path.realpath(self.root):
            shutil.rmtree(path, ignore_errors=True)

    def close(self):
        if self.ahead is not None:
            self.ahead.discard()
            self.ahead = None
        _graveyard.collect_all(5.0)
        self.landlock.close()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- what holds here

    def probe(self):
        """Confines a throwaway child like every other and lets it test the layers."""
        scratch = os.path.join(self.root, "probe")
        os.mkdir(scratch, 0o700)
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            payload = "{}"
            try:
                os.setpgid(0, 0)
                os.close(read_fd)
                applied, mapped = _become_child(self.pid, scratch, self.landlock)
                payload = json.dumps(hardening.probe(scratch, self.root, applied, mapped))
            except BaseException as exc:
                payload = json.dumps({"error": runner.safe_str(exc)})
            finally:
                try:
                    _write_all(write_fd, (payload + "\n").encode("ascii"))
                finally:
                    os._exit(0)
        os.close(write_fd)
        try:
            raw = _read_line(read_fd, time.monotonic() + PROBE_TIMEOUT_S)
        finally:
            os.close(read_fd)
            _kill_group(pid)
            _reap(pid)
            shutil.rmtree(scratch, ignore_errors=True)
        try:
            found = json.loads(raw)
        except ValueError:
            found = {}
        details = {
            "netns": _NETNS[1],
            "landlockAbi": str(self.landlock.abi),
            "uid": str(os.getuid()),
        }
        if "error" in found:
            details["probeError"] = str(found["error"])
        protections = {name: value for name, value in found.items() if isinstance(value, bool)}
        protections["netns"] = _NETNS[0] and hardening.network_unreachable()
        protections["wallClockKill"] = True
        protections["outputCap"] = True
        protections["forkAhead"] = self.fork_ahead
        return protections, details


def _read_line(fd, deadline):
    """Reads a one-line payload before `deadline`; whatever arrived by then."""
    chunks = []
    size = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        if size + len(chunk) > MAX_CHILD_PAYLOAD:
            return b""
        chunks.append(chunk)
        size += len(chunk)
        # The result is one line; a process the code forked may hold the pipe open.
        if b"\n" in chunk:
            break
    return b"".join(chunks)


def _parse_child_payload(payload):
    """The result is the first line the child wrote (anything after it is ignored)."""
    line, newline, _ = payload.partition(b"\n")
    if not newline:
        return None
    try:
        result = json.loads(line)
    except ValueError:
        return None
    if not isinstance(result, dict) or not all(k in result for k in runner.RESULT_KEYS):
        return None
    return result


def _crash_message(status):
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        reason = {
            signal.SIGSEGV: " (a crash of the interpreter, e.g. from too deep recursion)",
            signal.SIGXCPU: " (its CPU-time limit was reached)",
            signal.SIGXFSZ: " (its file-size limit was reached)",
        }.get(number, "")
        return f"the code's process was killed by {name} ({number}){reason} before returning a result"
    if os.WIFEXITED(status):
        return f"the code's process exited with code {os.WEXITSTATUS(status)} before returning a result"
    return f"the code's process ended (status {status}) before returning a result"


def _import_for(code):
    """Imports matplotlib here the first time code uses it, so that every later child
    inherits it: importing pyplot costs a child 0.3-0.5 s of CPU. True when it did."""
    if "matplotlib" not in code or "matplotlib.pyplot" in sys.modules:
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401
    except Exception:
        return False  # the code meets the same error itself, and reports it
    return True


def _small_file(uri):
    try:
        return os.path.getsize(uri) <= CHILD_LOADS_BYTES
    except OSError:
        return True  # the child reports the error, as it would any unreadable table


def _load_table(uri, digest):
    frame = _table_cache.get(digest)
    if frame is not None:
        _table_cache.move_to_end(digest)
        return frame
    frame = runner.load_table(uri)
    _table_cache[digest] = frame
    return frame


# While children are dying, how often the idle worker looks for them itself, in case their
# SIGCHLD came at a moment it could not reap them.
REAP_POLL_S = 0.05


def _request_lines(fd):
    """The lines of the request stream, read so that, while waiting for the next one, the
    children still dying are reaped every REAP_POLL_S."""
    pending = b""
    while True:
        if b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            yield line
            continue
        if not select.select([fd], [], [], REAP_POLL_S if _graveyard.waiting() else None)[0]:
            _graveyard.collect()
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            if pending:
                yield pending
            return
        pending += chunk


def main():
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, _graveyard.collect)
    scratch_root = sys.argv[1] if len(sys.argv) > 1 else None
    worker = Worker(scratch_root, fork_ahead="--no-fork-ahead" not in sys.argv[2:])
    try:
        protections, details = worker.probe()
        _send(
            {
                "type": "ready",
                "pid": os.getpid(),
                "python": platform.python_version(),
                "pandas": pd.__version__,
                "numpy": np.__version__,
                "scratch_root": worker.root,
                "protections": protections,
                "details": details,
            }
        )
        worker.prepare_next()
        for raw in _request_lines(sys.stdin.fileno()):
            if not raw.strip():
                continue
            request_id = None
            child = None
            reply = None
            try:
                message = json.loads(raw)
                if message.get("type") == "release":
                    worker.release(message.get("scratch"))
                    continue
                request_id = message.get("id")
                reply, child = worker.handle(message)
            except BaseException as exc:
                reply = runner.failure_from("WorkerError", exc)
            try:
                _send({"type": "result", "id": request_id, **reply})
            except OSError:
                return  # nobody is listening any more
            worker.finish(child, keep_scratch=bool(reply.get("tables")))
    finally:
        worker.close()


if __name__ == "__main__":
    main()
