"""The forked children of the warm interpreter (see interpreter.py): how a child confines itself,
warms up while parked, runs its one request and reports; and how the interpreter gets rid of
children it is done with.

Imports runner (and so pandas): import this only after hardening.enter_empty_netns().
"""

import _signal
import gc
import json
import os
import select
import signal
import sys
import time
import weakref

import hardening
import pandas as pd
import runner
from table_files import remove_run_dirs
from interpreter_protocol import PROTOCOL_FD, read_all, write_all

EXIT_ORPHANED = 71
EXIT_SETUP_FAILED = 70

# The path every request takes (the runner, a pandas reduction, printing, the result's
# JSON), taken once by every parked child whatever the load: what it initialises lazily is
# then the child's, and every process it forks for a run starts with it.
WARM_UP_FIRST = 'print(int(warm["amount"].sum()))'
# What generated code typically does, on a dummy table, in small steps, so the pages it
# touches are already this child's own when the real code runs.
WARM_UP_STEPS = (
    "print([1], {'a': 1.5})",
    'top = warm[warm["amount"] > 1].sort_values("amount", ascending=False).head(2)',
    'summary = warm.groupby("kind")["amount"].agg(["sum", "mean", "count"]).reset_index()',
    'print(int(warm["amount"].sum()), float(warm["share"].max()), warm["kind"].value_counts().to_dict())',
    "print(warm.to_string())",
)
# Then once with the result traced (lineage.py re-runs it on perturbed copies of the table).
WARM_UP_TRACED = 'result = warm.loc[warm["amount"].idxmax(), "kind"]'

# The steps past the first wait for the child to have been idle this long: under a stream of
# requests the next one comes at once, and the CPU goes to it.
WARM_UP_AFTER_IDLE_S = 0.003


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def reap(pid):
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
        kill_group(pid)
        self._dying[pid] = scratch
        self.collect()

    def reap_when_done(self, pid):
        """A child left to finish its work (not killed), reaped once it has."""
        self._dying[pid] = None
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
                    remove_run_dirs(scratch)

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


graveyard = Graveyard()


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
        graveyard.bury(self.pid, self.scratch)


def become_child(interpreter_pid, scratch, landlock):
    """First steps of every child: its own group, no way to the protocol, confined.
    Returns the layers applied and the bytes mapped before any of the code's own.
    Every object the steps touch costs the child a copy of its page: they keep to system
    calls and C functions where they can."""
    hardening.die_with_parent()
    if os.getppid() != interpreter_pid:
        os._exit(EXIT_ORPHANED)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    os.close(PROTOCOL_FD)
    _signal.signal(signal.SIGTERM, _signal.SIG_DFL)
    _signal.signal(signal.SIGCHLD, _signal.SIG_DFL)  # the interpreter's reaper is not for this process
    graveyard.forget()
    os.chdir(scratch)
    mapped = hardening.mapped_bytes()  # /proc is out of reach once confined
    return hardening.confine_child(scratch, landlock), mapped


# Made once in the interpreter, so that no child spends its own pages building it.
_WARM_TABLE = pd.DataFrame({"kind": ["a", "b", "a"], "amount": [1, 2, 3], "share": [0.5, 0.25, 0.25]})


def _warm_up(scratch, request_fd, warm):
    """A forked child pays a copy-on-write page fault for each page it first writes to
    (refcounts make that most pages it reads, too): this pays them while parked. It
    stops as soon as the request is waiting, when they would be paid anyway. Past the
    first step, which takes the path of every request, it is skipped (`warm` false) while
    the CPUs are contended: under an evaluation's load the whole of it cost about 12 ms of
    CPU a request that other processes were waiting for."""
    if select.select([request_fd], [], [], 0)[0] or not _warm_up_step(WARM_UP_FIRST, scratch, False):
        return
    if not warm or select.select([request_fd], [], [], WARM_UP_AFTER_IDLE_S)[0]:
        return
    for step in (*WARM_UP_STEPS, WARM_UP_TRACED):
        if select.select([request_fd], [], [], 0)[0] or not _warm_up_step(step, scratch, step == WARM_UP_TRACED):
            return


def _warm_up_step(step, scratch, lineage):
    """Runs one step as a request would run; False when it failed (only an optimisation lost)."""
    try:
        result = runner.execute(step, [("warm", _WARM_TABLE)], 1000, 10_000, scratch, lineage=lineage)
        json.loads(runner.dumps(result).encode("ascii"))
        for table in result["tables"]:
            os.unlink(os.path.join(scratch, table["file"]))
    except Exception:
        return False
    return True


def keep_own_tables(table_cache, digests):
    """In the child, once it knows its request: the cached tables it needs (by sha256),
    after every other one was dropped. The cache is the interpreter's (a module global of
    interpreter.py, so reachable as `sys.modules["__main__"]._table_cache`) and holds the tables
    of earlier requests, other users' included. Emptying it and collecting garbage leaves
    no Python object of theirs behind; this child's own tables stay shared with the interpreter
    copy-on-write."""
    own = {digest: table_cache[digest] for digest in digests if digest in table_cache}
    foreign = [weakref.ref(frame) for digest, frame in table_cache.items() if digest not in own]
    table_cache.clear()
    # Reference counting frees them at once. A full collection costs ~20 ms and, touching
    # every object, copies much of the heap from the interpreter: only when one is still alive.
    if any(ref() is not None for ref in foreign):
        gc.collect()
    return own




class ParkedRun:
    """The process of a request's first run, forked and confined while the child is parked,
    that warms itself up and waits: when the request comes and it holds the request's tables,
    it runs the code at once, and nothing is forked on the request's path."""

    def __init__(self, confine, table_cache, scratch, warm, mapped, child_request_fd):
        self.digests = frozenset(table_cache)
        request_fd, self.request_fd = os.pipe()

        def run():
            os.close(self.request_fd)
            os.close(child_request_fd)
            _warm_up(scratch, request_fd, warm)
            fields = json.loads(read_all(request_fd))
            os.close(request_fd)
            named_tables = _named_tables(fields, _take_request(fields, table_cache, mapped))
            code = fields["code"]
            code_obj = compile(code, runner.GENERATED, "exec")
            timeout_ms, output_bytes = int(fields["timeout_ms"]), int(fields["output_bytes"])
            return runner.run_once(
                code, code_obj, named_tables, timeout_ms, output_bytes, scratch, None, float(fields["started"])
            )

        self.pid, self.report_fd = runner.start_forked(run, confine)
        os.close(request_fd)

    def serves(self, request):
        """Whether it holds every table of `request` (none was loaded after it was forked)."""
        return not request.get("load") and all(digest in self.digests for _, digest in request["tables"])

    def first_run(self, request):
        """runner.execute's `first_run` for `request`."""

        def first(started, deadline):
            fields = {key: request[key] for key in ("code", "tables", "dates", "timeout_ms", "output_bytes", "memory_mb")}
            write_all(self.request_fd, json.dumps({**fields, "started": started}).encode("utf-8"))
            os.close(self.request_fd)
            return runner.collect_forked(self.pid, self.report_fd, deadline)

        return first

    def discard(self):
        os.close(self.request_fd)
        runner.discard_forked(self.pid, self.report_fd)


def _take_request(request, table_cache, mapped):
    """What a process does once it knows its request, before the code comes: drops the other
    requests' tables (the cached ones it keeps are returned) and the interpreter's secrets, and
    takes the request's limits."""
    cached = keep_own_tables(table_cache, [digest for _, digest in request["tables"]])
    runner.forget_secrets()
    hardening.limit_request(int(request["timeout_ms"]), int(request["memory_mb"]), mapped)
    return cached


def _named_tables(request, cached):
    """The request's tables as the code sees them: by name, dates read as dates."""
    named_tables = [(name, cached.get(digest)) for name, digest in request["tables"]]
    return runner.with_dates(named_tables, request.get("dates"))


def _run_request(request, cached, scratch, confine, first_run=None):
    """The request's code run, and its result as the JSON bytes of the line; never raises
    an Exception (a failure becomes a failed result)."""
    try:
        result = runner.execute(
            request["code"],
            _named_tables(request, cached),
            int(request["timeout_ms"]),
            int(request["output_bytes"]),
            scratch,
            lineage=request.get("lineage", True) is not False,
            table_files=dict(request.get("files", [])),
            known=request.get("known_trace"),
            fork=confine,
            first_run=first_run,
        )
        payload = runner.dumps(result)
    except BaseException as exc:
        payload = runner.dumps(runner.failure_from("SandboxError", exc))
    return payload.encode("ascii")


class Confinement:
    """What each process forked to run the code does first (runner.execute's `fork`): no way
    to the result pipe (nor to anything but its own report), the confinement of
    confine_run, and an audit hook of its own (it knows the process's own pid). A re-run's
    (`run_dir`) keep to that folder, behind a Landlock layer this child builds for it
    (`ahead`) before it forks it."""

    def __init__(self, result_fd, scratch, landlock, hook_plan, applied):
        self.result_fd = result_fd
        self.scratch = scratch
        self.landlock = landlock
        self.hook_plan = hook_plan
        self.applied = applied

    def ahead(self, run_dir):
        return self.landlock.run_layer(run_dir, self.scratch) if self.applied.get("landlock") else -1

    def release(self, layer):
        if layer >= 0:
            os.close(layer)

    def __call__(self, run_dir=None, layer=-1):
        # /dev/null (the child's stdin) over the result pipe: the number is not reused, and a
        # write to it goes nowhere.
        os.dup2(0, self.result_fd)
        hardening.confine_run(dict(self.applied), run_dir=run_dir, landlock=self.landlock, layer=layer)
        rules = self.landlock.read_rules
        plan = self.hook_plan if run_dir is None else hardening.hook_plan(self.scratch, rules, run_dir)
        sys.addaudithook(hardening.audit_hook(run_dir or self.scratch, rules, plan))


def child_main(request_fd, result_fd, scratch, interpreter_pid, landlock, warm, table_cache, keep, hook_plan):
    """Runs in the forked child; never returns. `table_cache` holds the tables the interpreter
    had loaded (by sha256) when it forked this child: all but those in `keep` (the ones the
    next request most likely needs) are dropped while the child waits for its request, and
    all but the request's own before the code runs. `hook_plan`: hardening.hook_plan for
    `scratch`, worked out by the interpreter.

    This process never runs the request's code. runner.execute runs it, and each re-run of
    it on perturbed tables, in a process forked from this one for that run alone, which
    first closes its copy of `result_fd` and confines itself further (`Confinement`); this
    process reads what each reports as data, compares it (derivation and lineage are worked
    out here), and writes the result line. So no process the code ran in holds the result
    pipe or a secret, and no run shares interpreter state with another."""
    line = b""
    try:
        applied, mapped = become_child(interpreter_pid, scratch, landlock)
        # Dropping a large table costs milliseconds (each of its Python objects is let go):
        # paid here, before the request comes, for the tables it will most likely not need.
        table_cache = keep_own_tables(table_cache, keep)
        _warm_up(scratch, request_fd, warm)
        confine = Confinement(result_fd, scratch, landlock, hook_plan, applied)
        try:
            parked = ParkedRun(confine, table_cache, scratch, warm, mapped, request_fd)
        except OSError:
            parked = None
        raw = read_all(request_fd)
        os.close(request_fd)
        if not raw:
            os._exit(0)  # thrown away unused
        request = json.loads(raw)
        raw = None
        cached = _take_request(request, table_cache, mapped)
        table_cache = None
        try:
            for uri, digest in request.get("load", []):
                cached[digest] = runner.load_table(uri)
        except BaseException as exc:
            line = _failure_line("TableLoadError", exc)
            return
        first_run = None
        if parked is not None and parked.serves(request):
            first_run = parked.first_run(request)
        elif parked is not None:
            parked.discard()
        line = _run_request(request, cached, scratch, confine, first_run) + b"\n"
    except BaseException as exc:
        line = _failure_line("SandboxError", exc)
    finally:
        try:
            if line:
                write_all(result_fd, line)
        finally:
            os._exit(0)


def _failure_line(error_type, exc):
    return (runner.dumps(runner.failure_from(error_type, exc)) + "\n").encode("ascii")


def probe_main(read_fd, write_fd, scratch, interpreter_pid, landlock, outside_dir):
    """Runs in a throwaway child confined like every other: tests the layers, reports
    what held as one line of JSON; never returns."""
    payload = "{}"
    try:
        os.setpgid(0, 0)
        os.close(read_fd)
        applied, mapped = become_child(interpreter_pid, scratch, landlock)
        # What the code's own processes add to the child's confinement.
        applied = hardening.confine_run(applied, keep_libc=True)
        rules = landlock.read_rules
        payload = json.dumps(hardening.probe(scratch, outside_dir, applied, mapped, rules))
    except BaseException as exc:
        payload = json.dumps({"error": runner.safe_str(exc)})
    finally:
        try:
            write_all(write_fd, (payload + "\n").encode("ascii"))
        finally:
            os._exit(0)

