"""Warm pandas interpreter of the local sandbox.

Started by sandbox/local-interpreter.ts (one per pool slot) as `interpreter.py SCRATCH_ROOT
[--no-fork-ahead] [--no-landlock]` (the latter for tests). Messages arrive as one JSON object per line on stdin; replies
leave as one JSON object per line on fd 3, a descriptor that the forked children
close, so nothing the generated code prints can reach the protocol.

In:   {"type": "run", "id", "code", "tables": [{name, uri, sha256, dates (optional: columns
       handed to the code as datetimes)}], "timeout_ms",
       "output_bytes", "memory_mb", "lineage" (optional, default true: trace the result's
       derivation and lineage by re-running the code, see lineage.py), "table_bytes"
       (optional, default 64 MB: the largest table file a run may leave)}
      {"type": "release", "scratch"}   the caller is done with a run's table files
Out:  {"type": "ready", "pid", "python", "pandas", "numpy", "scratch_root",
       "protections": {name: bool}, "details": {name: str}}
      {"type": "started", "id", "pid"}  the code is about to run in child `pid`
      {"type": "result", "id", "scratch", ...runner.py's result}
      The result is the child's line (the child forks the processes the code runs in and
      holds the only write end of its result pipe: interpreter_protocol.py), passed on with
      none but a result's keys, with its tables' and figures' files checked
      (`_check_table_files`, `_check_figure_files`);
      the envelope (`type`, `id`, `scratch`) is always the interpreter's own. Node validates the
      rest (local-protocol.ts).

Each request runs in a forked child (copy-on-write of this interpreter and of the
cached tables) in its own process group, which is killed as a whole afterwards. The
next child is forked, confined and parked on a pipe ahead of the next request, so the
fork is off the request's path. While it waits it drops the cached tables the latest
requests did not use and warms up. A parked child reads a small table it lacks itself (the
interpreter caches it once the reply is out); for a big one it is thrown away for a fresh
child forked after the interpreter loaded it. The interpreter builds what each child's confinement
needs (its Landlock layer, its audit hook's paths) before the fork, so that the child
only enters it.

This file holds the interpreter's own loop and its table cache; interpreter_protocol.py frames the
messages, interpreter_child.py is what runs in the forked children.
"""

import os
import sys

# Before numpy loads: one BLAS thread per process keeps fork() simple and cheap.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# The modules next to this file, whatever the working directory and however Python was started.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hardening  # noqa: E402

# While this process still has a single thread (a user namespace needs that).
_NETNS = hardening.enter_empty_netns()

import json  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import OrderedDict, deque  # noqa: E402

import figures  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import runner  # noqa: E402
import table_files  # noqa: E402
from pressure import CpuPressure  # noqa: E402
from read_rules import ReadRules, inputs_dir  # noqa: E402
from interpreter_child import (  # noqa: E402
    EXIT_SETUP_FAILED,
    Child,
    child_main,
    graveyard,
    kill_group,
    probe_main,
    reap,
)
from interpreter_protocol import (  # noqa: E402
    RefusedResult,
    parse_child_payload,
    read_line,
    request_lines,
    send,
    write_all,
)

CACHED_TABLES = 16
# A parked child keeps only the cached tables of this many latest requests (the next one
# most likely needs them again) and drops the others while it waits, off the request's path.
RECENT_REQUESTS = 2
# A parked child reads a table it lacks itself when the file is at most this big: cheaper
# than throwing the child (and the warm-up it paid for) away to fork one that has it.
CHILD_LOADS_BYTES = 1 << 20
# After the soft timeout the child still needs a moment to save its tables.
EXPORT_GRACE_S = 1.0
# A figure file (PNG or SVG) a run leaves may be at most this big.
MAX_FIGURE_FILE_BYTES = 16 * 1024 * 1024
PROBE_TIMEOUT_S = 10.0
# While children are dying, how often the idle interpreter looks for them itself, in case their
# SIGCHLD came at a moment it could not reap them.
REAP_POLL_S = 0.05

_table_cache = OrderedDict()


class Interpreter:
    def __init__(self, scratch_root, fork_ahead, landlock=True):
        # The pid in the name lets a later start reclaim the folder if this interpreter is killed.
        self.root = tempfile.mkdtemp(prefix=f"tableminds-interpreter-{os.getpid()}-", dir=scratch_root)
        self.fork_ahead = fork_ahead
        self.pid = os.getpid()
        self.ahead = None
        self.runs = 0
        # The modules next to this file are the project's, not the Python installation's.
        here = os.path.dirname(os.path.abspath(__file__))
        self.landlock = hardening.Landlock(self.root, ReadRules(excluded=(here, os.getcwd())), enabled=landlock)
        # Hard links into the store only where the probe found the children under Landlock.
        self.link_inputs = False
        self.to_cache = []  # (uri, digest) a child read itself, cached once its reply is out
        self.recent = deque(maxlen=RECENT_REQUESTS)  # the sha256s of the latest requests' tables
        # Warming up pays page faults early, with CPU another process may be waiting for.
        self.pressure = CpuPressure(max_stall=0.35)

    # -- children

    def _spawn(self, keep):
        """A child keeping the cached tables among `keep` (sha256s), parked on its request pipe."""
        self.runs += 1
        scratch = os.path.join(self.root, f"run-{self.runs}")
        os.mkdir(scratch, 0o700)
        os.mkdir(inputs_dir(scratch), 0o700)
        request_r, request_w = os.pipe()
        result_r, result_w = os.pipe()
        digests = frozenset(digest for digest in _table_cache if digest in keep)
        warm = not self.pressure.busy()
        hook_plan = hardening.hook_plan(scratch, self.landlock.read_rules)
        self.landlock.prepare(scratch)
        try:
            pid = os.fork()
        except BaseException:
            self.landlock.release_prepared()
            raise
        if pid == 0:
            try:
                os.setpgid(0, 0)
                os.close(request_w)
                os.close(result_r)
                child_main(
                    request_r, result_w, scratch, self.pid, self.landlock, warm, _table_cache, digests, hook_plan
                )
            finally:
                os._exit(EXIT_SETUP_FAILED)
        self.landlock.release_prepared()
        os.close(request_r)
        os.close(result_w)
        try:
            os.setpgid(pid, pid)  # also from this side, so a kill never races the child
        except OSError:
            pass
        return Child(pid, request_w, result_r, scratch, digests)

    def _child_for(self, tables):
        """The parked child, with the small tables it lacks to read itself; else a fresh
        child forked once the interpreter has cached every table."""
        child, self.ahead = self.ahead, None
        if child is not None:
            lacking = [(uri, digest) for uri, digest in tables.items() if digest not in child.digests]
            if all(_small_file(uri) for uri, _ in lacking):
                return child, lacking
            child.discard()  # forked before a big table it needs was loaded
        for uri, digest in tables.items():
            _load_table(uri, digest)
        return self._spawn(frozenset(tables.values())), []

    def prepare_next(self):
        if self.fork_ahead and self.ahead is None:
            self.ahead = self._spawn(frozenset().union(*self.recent))

    # -- requests

    def handle(self, request):
        """Runs one request; returns (reply, child or None). The caller sends the reply,
        then calls `finish(child)` so that cleaning up stays off the request's path."""
        timeout_ms = int(request["timeout_ms"])
        named = [(str(t["name"]), str(t["sha256"])) for t in request["tables"]]
        tables = {str(t["uri"]): str(t["sha256"]) for t in request["tables"]}
        self.recent.append(frozenset(tables.values()))
        if _import_for(str(request["code"])) and self.ahead is not None:
            self.ahead.discard()  # forked without what was just imported
            self.ahead = None
        try:
            child, lacking = self._child_for(tables)
        except BaseException as exc:
            return runner.failure_from("TableLoadError", exc), None
        placed, errors = table_files.hand_over(child.scratch, request["tables"], link=self.link_inputs)
        failed = [errors[uri] for uri, _ in lacking if uri in errors]
        if failed:
            child.discard()
            return runner.failure_from("TableLoadError", failed[0]), None
        self.to_cache = lacking
        fields = {
            "code": request["code"],
            "tables": named,
            "dates": runner.dates_of(request["tables"]),
            "load": [(placed[uri], digest) for uri, digest in lacking],
            "timeout_ms": timeout_ms,
            "output_bytes": int(request["output_bytes"]),
            "memory_mb": int(request["memory_mb"]),
            "lineage": request.get("lineage", True) is not False,
            "known_trace": request.get("known_trace"),
            # Where the child finds each table's file, for re-runs of code that reads it.
            "files": [
                (str(t["name"]), placed[str(t["uri"])]) for t in request["tables"] if str(t["uri"]) in placed
            ],
        }
        table_bytes = int(request.get("table_bytes", table_files.MAX_TABLE_FILE_BYTES))
        try:
            return self._run_in(child, request["id"], fields, timeout_ms, table_bytes)
        except BaseException:
            child.discard()
            raise

    def _run_in(self, child, request_id, fields, timeout_ms, table_bytes):
        try:
            write_all(child.request_fd, _request_message(fields))
        except BrokenPipeError:
            child.discard()  # it died while parked: a fresh one gets the request
            child = self._spawn(frozenset(digest for _, digest in fields["tables"]))
            write_all(child.request_fd, _request_message(fields))
        os.close(child.request_fd)
        child.request_fd = None
        send({"type": "started", "id": request_id, "pid": child.pid})
        deadline = time.monotonic() + timeout_ms / 1000 + EXPORT_GRACE_S
        try:
            result = parse_child_payload(read_line(child.result_fd, deadline))
        except RefusedResult as refused:
            child.discard()  # it may still be running: nothing it left is looked at
            return runner.failure("ProtocolError", f"the run's result was refused: {refused}"), None
        if result is not None:
            _check_table_files(result, child.scratch, table_bytes)
            _check_figure_files(result, child.scratch)
            result["scratch"] = child.scratch
            return result, child
        child.close_pipes()
        if time.monotonic() >= deadline:
            graveyard.bury(child.pid, child.scratch)
            return runner.failure("Timeout", f"execution exceeded {timeout_ms} ms"), None
        # The child closed its end without a result: end its group, then tell why it ended.
        kill_group(child.pid)
        status = reap(child.pid)
        table_files.remove_run_dirs(child.scratch)
        if status is None:
            return runner.failure("Crashed", "the code's process ended before returning a result"), None
        return runner.failure("Crashed", runner.crash_message(status)), None

    def finish(self, child, keep_scratch):
        if child is not None:
            # Whatever the code started lives in the child's group: end all of it.
            child.close_pipes()
            graveyard.bury(child.pid, None if keep_scratch else child.scratch)
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

    def release(self, scratch):
        path = os.path.realpath(str(scratch))
        if os.path.dirname(path) == os.path.realpath(self.root):
            table_files.remove_run_dirs(path)

    def close(self):
        if self.ahead is not None:
            self.ahead.discard()
            self.ahead = None
        graveyard.collect_all(5.0)
        self.landlock.close()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- what holds here

    def probe(self):
        """Confines a throwaway child like every other and lets it test the layers."""
        scratch = os.path.join(self.root, "probe")
        os.mkdir(scratch, 0o700)
        private = os.path.join(self.root, hardening.read_probe_name())
        with open(private, "w") as handle:
            handle.write("not for the code\n")
        read_fd, write_fd = os.pipe()
        self.landlock.prepare(scratch)
        pid = os.fork()
        if pid == 0:
            probe_main(read_fd, write_fd, scratch, self.pid, self.landlock, self.root)
        self.landlock.release_prepared()
        os.close(write_fd)
        try:
            raw = read_line(read_fd, time.monotonic() + PROBE_TIMEOUT_S)
        finally:
            os.close(read_fd)
            kill_group(pid)
            reap(pid)
            shutil.rmtree(scratch, ignore_errors=True)
            os.unlink(private)
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
        self.link_inputs = bool(protections.get("landlock") and protections.get("kernelWriteConfinement"))
        return protections, details


def _request_message(fields):
    return json.dumps(fields).encode("utf-8")


def _check_table_files(result, scratch, max_bytes):
    """Keeps the tables whose file is a regular file of at most `max_bytes` in `scratch`
    (table_files.table_file_problem); each other one becomes a note in stderr."""
    kept = []
    notes = []
    for table in result["tables"]:
        problem = table_files.table_file_problem(scratch, table["file"], max_bytes)
        if problem is None:
            kept.append(table)
        else:
            notes.append(f"note: table {table['variable']} could not be stored: {problem}")
    if notes:
        stderr = result["stderr"]
        result["stderr"] = stderr + ("" if not stderr or stderr.endswith("\n") else "\n") + "\n".join(notes) + "\n"
        result["tables"] = kept


def _append_notes(result, notes):
    if notes:
        stderr = result["stderr"]
        result["stderr"] = stderr + ("" if not stderr or stderr.endswith("\n") else "\n") + "\n".join(notes) + "\n"


def _check_figure_files(result, scratch):
    """Keeps the figure files (figures.py) that are regular files of at most
    MAX_FIGURE_FILE_BYTES in `scratch`, under the names the runner gives; each other one
    becomes a note in stderr. Figures that are not as the runner makes them are dropped."""
    found = result.get("figures")
    if found is None:
        return
    if type(found) is not list or len(found) > figures.MAX_FIGURES or not all(type(f) is dict for f in found):
        del result["figures"]
        _append_notes(result, ["note: the run's figures were refused: they are not as the runner reports them"])
        return
    notes = []
    for figure in found:
        files = figure.get("files")
        if type(files) is not dict:
            figure["files"] = {}
            continue
        for fmt, name in list(files.items()):
            problem = table_files.table_file_problem(scratch, name, MAX_FIGURE_FILE_BYTES, figures.FIGURE_FILE_NAME)
            if problem is not None:
                del files[fmt]
                notes.append(f"note: figure {figure.get('number')} ({fmt}) could not be stored: {problem}")
    _append_notes(result, notes)


def _has_files(reply):
    """Whether a run left files for Node to read: tables or figures."""
    return bool(reply.get("tables")) or any(
        type(f) is dict and f.get("files") for f in reply.get("figures") or ()
    )


def _import_for(code):
    """Imports matplotlib here the first time code uses it, so that every later child
    inherits it: importing pyplot costs a child 0.3-0.5 s of CPU, and its first saved figure
    (loading the fonts) as much again. True when it did."""
    if "matplotlib" not in code or "matplotlib.pyplot" in sys.modules:
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return False  # the code meets the same error itself, and reports it
    try:
        import io

        figure, ax = plt.subplots()
        ax.bar(["a"], [1])
        ax.set_title("a")
        for fmt in figures.FORMATS:
            figure.savefig(io.BytesIO(), format=fmt)
    except Exception:
        pass  # only the speed-up is lost
    finally:
        plt.close("all")
    return True


def _small_file(uri):
    try:
        return os.path.getsize(uri) <= CHILD_LOADS_BYTES
    except OSError:
        return True  # the child reports the error, as it would any unreadable table


def _aside(work):
    """`work()` in a process forked for it, at the lowest priority, which the graveyard reaps:
    the first load of a large table returns as soon as the table is read, and its pickle is
    written meanwhile. Done here when no process can be forked."""
    try:
        pid = os.fork()
    except OSError:
        work()
        return
    if pid == 0:
        code = 1
        try:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            # Only the CPU the runs leave: this work is for later ones.
            os.nice(19)
            work()
            code = 0
        finally:
            os._exit(code)
    graveyard.reap_when_done(pid)


def _load_table(uri, digest):
    frame = _table_cache.get(digest)
    if frame is not None:
        _table_cache.move_to_end(digest)
        return frame
    frame = runner.load_table_cached(uri, aside=_aside)
    _table_cache[digest] = frame
    return frame


def main():
    hardening.die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, graveyard.collect)
    scratch_root = sys.argv[1] if len(sys.argv) > 1 else None
    options = sys.argv[2:]
    # --no-landlock is for tests: what holds on a kernel without Landlock.
    interpreter = Interpreter(scratch_root, fork_ahead="--no-fork-ahead" not in options, landlock="--no-landlock" not in options)
    try:
        protections, details = interpreter.probe()
        send(
            {
                "type": "ready",
                "pid": os.getpid(),
                "python": platform.python_version(),
                "pandas": pd.__version__,
                "numpy": np.__version__,
                "scratch_root": interpreter.root,
                "protections": protections,
                "details": details,
            }
        )
        interpreter.prepare_next()
        for raw in request_lines(sys.stdin.fileno(), graveyard, REAP_POLL_S):
            if not raw.strip():
                continue
            request_id = None
            child = None
            reply = None
            try:
                message = json.loads(raw)
                if message.get("type") == "release":
                    interpreter.release(message.get("scratch"))
                    continue
                request_id = message.get("id")
                reply, child = interpreter.handle(message)
            except BaseException as exc:
                reply = runner.failure_from("InterpreterError", exc)
            try:
                # The envelope's fields last: a reply never names its own type or id.
                send({**reply, "type": "result", "id": request_id})
            except OSError:
                return  # nobody is listening any more
            keep_scratch = _has_files(reply)
            # The next child is forked below: nothing of this request may be left in these
            # frames, which it inherits (its code and output were another run's).
            raw = message = reply = None
            interpreter.finish(child, keep_scratch)
            child = None
            interpreter.prepare_next()
    finally:
        interpreter.close()


if __name__ == "__main__":
    main()
    # Tearing down an interpreter with pandas loaded takes most of a second, and nothing is left
    # to flush or remove (close() did): a stopped interpreter ends at once.
    sys.stdout.flush()
    os._exit(0)
