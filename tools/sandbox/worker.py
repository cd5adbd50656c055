"""Warm pandas worker of the local sandbox.

Started once by tools/sandbox/local.ts. Requests arrive as one JSON object per line
on stdin; replies leave as one JSON object per line on fd 3, a descriptor that the
forked children close, so nothing the generated code prints can reach the protocol.

Each request runs in a forked child (copy-on-write of this interpreter and of the
cached tables) in its own process group, which is killed as a whole afterwards.
"""

import os

# Before numpy loads: one BLAS thread per process keeps fork() simple and cheap.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import ast  # noqa: E402
import builtins  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import select  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import OrderedDict  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

PROTOCOL_FD = 3
GENERATED = "<generated>"
MAX_TABLES = 20
MAX_ROWS = 10_000
MAX_MESSAGE_CHARS = 2_000
CACHED_TABLES = 16
# After the soft timeout the child still needs a moment to save its tables.
EXPORT_GRACE_S = 1.0
MAX_CHILD_PAYLOAD = 64 * 1024 * 1024
PR_SET_PDEATHSIG = 1

_table_cache = OrderedDict()


# --- protocol ---------------------------------------------------------------


def _dumps(message):
    try:
        return json.dumps(message, ensure_ascii=True, allow_nan=False, default=str)
    except (TypeError, ValueError) as exc:
        fallback = {
            "type": "result",
            "id": message.get("id") if isinstance(message, dict) else None,
            **_failure("ProtocolError", f"reply could not be encoded: {_safe_str(exc)}"),
        }
        return json.dumps(fallback, ensure_ascii=True, default=str)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _send(message):
    _write_all(PROTOCOL_FD, (_dumps(message) + "\n").encode("ascii"))


def _failure(error_type, message, line=None):
    return {
        "ok": False,
        "stdout": "",
        "stderr": "",
        "error": {"type": error_type, "message": message, "line": line},
        "spans": [],
        "truncated": False,
        "tables": [],
    }


def _safe_str(value):
    try:
        text = str(value)
    except BaseException:
        try:
            text = repr(value)
        except BaseException:
            text = f"<unprintable {type(value).__name__}>"
    return text[:MAX_MESSAGE_CHARS]


def _die_with_parent():
    """Asks Linux to SIGKILL this process when its parent dies (no-op elsewhere)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except BaseException:
        pass


# --- output capture ---------------------------------------------------------


def _utf16_len(text):
    # Offsets are for JavaScript strings, which count UTF-16 code units.
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _generated_line():
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == GENERATED:
            return frame.f_lineno
        frame = frame.f_back
    return None


class _Capture(io.TextIOBase):
    """A text stream that keeps at most `limit` UTF-8 bytes and, optionally,
    which line of the generated code wrote each piece."""

    def __init__(self, limit, with_spans):
        super().__init__()
        self._parts = []
        self._bytes = 0
        self._units = 0
        self._limit = limit
        self.truncated = False
        self.spans = [] if with_spans else None

    @property
    def encoding(self):
        return "utf-8"

    def writable(self):
        return True

    def isatty(self):
        return False

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self.truncated or not text:
            return len(text)
        data = text.encode("utf-8", "surrogatepass")
        kept = text
        if self._bytes + len(data) > self._limit:
            room = self._limit - self._bytes
            kept = data[:room].decode("utf-8", "ignore")
            data = kept.encode("utf-8", "surrogatepass")
            self.truncated = True
        if kept:
            self._record(kept)
            self._bytes += len(data)
        return len(text)

    def _record(self, kept):
        units = _utf16_len(kept)
        if self.spans is not None:
            line = _generated_line()
            last = self.spans[-1] if self.spans else None
            if line is None:
                pass
            elif last and last["line"] == line and last["end"] == self._units:
                last["end"] += units
            else:
                self.spans.append({"line": line, "start": self._units, "end": self._units + units})
        self._parts.append(kept)
        self._units += units

    def getvalue(self):
        return "".join(self._parts)


# --- running the code (in the child) -----------------------------------------


class _SoftTimeout(BaseException):
    """Raised into the generated code when its time is up; not an Exception, so
    `except Exception` in generated code does not swallow it."""


def _traceback_line(exc):
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == GENERATED:
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None and isinstance(exc, SyntaxError) and exc.filename == GENERATED:
        line = exc.lineno
    return line


def _run_code(code_obj, namespace, timeout_ms):
    armed = [True]

    def on_alarm(signum, frame):
        if armed[0]:
            armed[0] = False
            raise _SoftTimeout()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout_ms / 1000)
    try:
        try:
            exec(code_obj, namespace)
        finally:
            armed[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _SoftTimeout as exc:
        return {
            "type": "Timeout",
            "message": f"execution exceeded {timeout_ms} ms",
            "line": _traceback_line(exc),
        }
    except SystemExit as exc:
        if exc.code is None or exc.code == 0:
            return None
        return {
            "type": "SystemExit",
            "message": f"exit code {_safe_str(exc.code)}",
            "line": _traceback_line(exc),
        }
    except BaseException as exc:
        return {"type": type(exc).__name__, "message": _safe_str(exc), "line": _traceback_line(exc)}
    return None


def _compile(code):
    try:
        return compile(code, GENERATED, "exec"), None
    except SyntaxError as exc:
        return None, {"type": type(exc).__name__, "message": _safe_str(exc.msg), "line": exc.lineno}
    except (ValueError, TypeError) as exc:  # e.g. null bytes in the source
        return None, {"type": "SyntaxError", "message": _safe_str(exc), "line": None}


# --- intermediate tables -----------------------------------------------------


def _assignment_lines(code):
    """The last line that assigns each plain name, from the code's syntax tree."""
    try:
        tree = ast.parse(code)
    except BaseException:
        return {}
    lines = {}

    def visit(target, lineno):
        if isinstance(target, ast.Name):
            lines[target.id] = max(lines.get(target.id, 0), lineno)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                visit(element, lineno)
        elif isinstance(target, ast.Starred):
            visit(target.value, lineno)

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                visit(target, node.lineno)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
            visit(node.target, node.lineno)
    return lines


def _unique_name(taken, wanted):
    name = wanted
    n = 1
    while name in taken:
        name = f"{wanted}_{n}"
        n += 1
    return name


def _as_plain_frame(name, value):
    if isinstance(value, pd.Series):
        value = value.to_frame() if value.name is not None else value.to_frame(name=name)
    frame = value
    index = frame.index
    if not (isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1):
        try:
            frame = frame.reset_index()
        except ValueError:  # an index level is named like a column
            taken = {str(c) for c in frame.columns}
            frame = frame.copy(deep=False)
            frame.index.names = [
                _unique_name(taken, str(level) if level is not None else f"level_{i}")
                for i, level in enumerate(frame.index.names)
            ]
            frame = frame.reset_index()
    if isinstance(frame.columns, pd.MultiIndex) or any(isinstance(c, tuple) for c in frame.columns):
        frame = frame.copy(deep=False)
        frame.columns = [
            " / ".join(str(p) for p in c if str(p) != "") if isinstance(c, tuple) else str(c)
            for c in frame.columns
        ]
    return frame


def _write_csv(frame, path):
    # Generated code ran in this directory: never follow a file it may have planted.
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    with open(fd, "w", encoding="utf-8", newline="") as handle:
        frame.to_csv(handle, index=False)


def _export_tables(namespace, inputs, code, scratch):
    lines = _assignment_lines(code)
    tables = []
    notes = []
    for name, value in list(namespace.items()):
        if not isinstance(name, str) or name.startswith("_"):
            continue
        if not isinstance(value, (pd.DataFrame, pd.Series)):
            continue
        if any(value is table for table in inputs):
            continue
        if len(tables) == MAX_TABLES:
            notes.append(f"note: only the first {MAX_TABLES} tables were kept; {name} and later ones were not")
            break
        try:
            frame = _as_plain_frame(name, value)
            total = len(frame)
            if total > MAX_ROWS:
                frame = frame.head(MAX_ROWS)
                notes.append(f"note: table {name} has {total} rows; only the first {MAX_ROWS} were kept")
            file_name = f"_tableminds_table_{len(tables)}.csv"
            _write_csv(frame, os.path.join(scratch, file_name))
            tables.append(
                {
                    "variable": name,
                    "line": lines.get(name),
                    "file": file_name,
                    "rows": len(frame),
                    "columns": [
                        {"name": str(column), "dtype": str(dtype)}
                        for column, dtype in zip(frame.columns, frame.dtypes)
                    ],
                }
            )
        except BaseException as exc:
            notes.append(f"note: table {name} could not be saved: {type(exc).__name__}: {_safe_str(exc)}")
    return tables, notes


def _execute(request, named_tables):
    scratch = request["scratch"]
    os.chdir(scratch)
    limit = int(request["output_bytes"])
    stdout = _Capture(limit, with_spans=True)
    stderr = _Capture(limit, with_spans=False)
    sys.stdout = stdout
    sys.stderr = stderr
    sys.stdin = io.StringIO()

    namespace = {"__name__": "__main__", "__builtins__": builtins}
    for name, frame in named_tables:
        namespace[name] = frame
    if len(named_tables) == 1:
        namespace["df"] = named_tables[0][1]
    namespace["pd"] = pd
    namespace["np"] = np
    inputs = [frame for _, frame in named_tables]

    code = request["code"]
    code_obj, error = _compile(code)
    if code_obj is not None:
        error = _run_code(code_obj, namespace, int(request["timeout_ms"]))
    tables, notes = _export_tables(namespace, inputs, code, scratch)

    sys.stdout = sys.__stdout__
    sys.stderr = sys.__stderr__
    stderr_text = stderr.getvalue()
    if notes:
        stderr_text += ("" if not stderr_text or stderr_text.endswith("\n") else "\n") + "\n".join(notes) + "\n"
    return {
        "ok": error is None,
        "stdout": stdout.getvalue(),
        "stderr": stderr_text,
        "error": error,
        "spans": stdout.spans,
        "truncated": stdout.truncated or stderr.truncated,
        "tables": tables,
    }


def _child_main(request, named_tables, result_fd, worker_pid):
    """Runs in the forked child; never returns."""
    payload = None
    try:
        _die_with_parent()
        if os.getppid() != worker_pid:
            os._exit(71)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.close(devnull)
        os.close(PROTOCOL_FD)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        result = _execute(request, named_tables)
        payload = _dumps(result)
    except BaseException as exc:
        payload = _dumps(_failure("SandboxError", f"{type(exc).__name__}: {_safe_str(exc)}"))
    finally:
        try:
            _write_all(result_fd, ((payload or "") + "\n").encode("ascii"))
        finally:
            os._exit(0)


# --- the worker (parent) ------------------------------------------------------


def _load_table(uri, digest):
    frame = _table_cache.get(digest)
    if frame is not None:
        _table_cache.move_to_end(digest)
        return frame
    if uri.endswith(".parquet"):
        frame = pd.read_parquet(uri)
    else:
        frame = pd.read_csv(uri)
    _table_cache[digest] = frame
    while len(_table_cache) > CACHED_TABLES:
        _table_cache.popitem(last=False)
    return frame


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _collect(pid, read_fd, deadline):
    """Reads the child's one-line result and reaps the child, both before `deadline`.
    Returns (payload bytes, wait status or None when the deadline passed)."""
    chunks = []
    size = 0
    eof = False
    while not eof:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        ready, _, _ = select.select([read_fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(read_fd, 1 << 16)
        if not chunk:
            eof = True
        elif size + len(chunk) > MAX_CHILD_PAYLOAD:
            break
        else:
            chunks.append(chunk)
            size += len(chunk)
            # The result is one line; a process the code forked may hold the pipe open.
            eof = chunk.endswith(b"\n")
    status = None
    if eof:
        while True:
            reaped, wait_status = os.waitpid(pid, os.WNOHANG)
            if reaped:
                status = wait_status
                break
            if time.monotonic() >= deadline:
                break
            time.sleep(0.002)
    timed_out = status is None and time.monotonic() >= deadline
    # Whatever the code started lives in the child's group: end all of it.
    _kill_group(pid)
    if status is None:
        _, status = os.waitpid(pid, 0)
    return b"".join(chunks), None if timed_out else status


def _parse_child_payload(payload):
    try:
        result = json.loads(payload)
    except ValueError:
        return None
    keys = ("ok", "stdout", "stderr", "error", "spans", "truncated", "tables")
    if not isinstance(result, dict) or not all(k in result for k in keys):
        return None
    return result


def _crash_message(status):
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"the code's process was killed by {name} ({number}) before returning a result"
    if os.WIFEXITED(status):
        return f"the code's process exited with code {os.WEXITSTATUS(status)} before returning a result"
    return f"the code's process ended (status {status}) before returning a result"


def _handle(request):
    timeout_ms = int(request["timeout_ms"])
    try:
        named_tables = [
            (str(t["name"]), _load_table(str(t["uri"]), str(t["sha256"]))) for t in request["tables"]
        ]
    except BaseException as exc:
        return _failure("TableLoadError", f"{type(exc).__name__}: {_safe_str(exc)}")

    read_fd, write_fd = os.pipe()
    worker_pid = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            os.close(read_fd)
            _child_main(request, named_tables, write_fd, worker_pid)
        finally:
            os._exit(70)
    os.close(write_fd)
    try:
        os.setpgid(pid, pid)  # also from this side, so a kill never races the child
    except OSError:
        pass
    _send({"type": "started", "id": request["id"], "pid": pid})
    try:
        deadline = time.monotonic() + timeout_ms / 1000 + EXPORT_GRACE_S
        payload, status = _collect(pid, read_fd, deadline)
    finally:
        os.close(read_fd)
    result = _parse_child_payload(payload)
    if result is not None:
        return result
    if status is None:
        return _failure("Timeout", f"execution exceeded {timeout_ms} ms")
    return _failure("Crashed", _crash_message(status))


def main():
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _send(
        {
            "type": "ready",
            "pid": os.getpid(),
            "python": platform.python_version(),
            "pandas": pd.__version__,
            "numpy": np.__version__,
        }
    )
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        request_id = None
        try:
            request = json.loads(raw)
            request_id = request.get("id")
            reply = _handle(request)
        except BaseException as exc:
            reply = _failure("WorkerError", f"{type(exc).__name__}: {_safe_str(exc)}")
        try:
            _send({"type": "result", "id": request_id, **reply})
        except OSError:
            return  # nobody is listening any more


if __name__ == "__main__":
    main()
