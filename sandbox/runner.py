"""Runs one piece of generated pandas code in this process and reports what happened.

Used two ways:

* imported by interpreter.py (the local sandbox), whose forked children call `execute()` with `fork`;
* as a one-shot command (the E2B sandbox, or by hand):

      python3 runner.py REQUEST.json RESULT.json

REQUEST.json:

    {
      "code": str,                                # the generated Python code
      "tables": [{"name": str, "path": str}],     # CSV files (or .parquet), read with pandas
      "timeout_ms": int,                          # soft limit: a Timeout error is raised into the code
      "output_bytes": int,                        # cap on each of stdout and stderr (UTF-8 bytes)
      "scratch": str,                             # existing directory; the code runs there (cwd)
      "lineage": bool                             # optional (true): trace the result's lineage
    }

The code sees each table by its name, the first table also as `df`, and `pd` / `np`.

RESULT.json (written once, atomically, also when the code fails):

    {
      "ok": bool,                                 # true when the code ran to its end
      "stdout": str,                              # at most output_bytes UTF-8 bytes
      "stderr": str,                              # same cap; notes about tables are appended
      "error": null | {"type": str,               # exception class name, "SyntaxError",
                       "message": str,            #   "Timeout", "SystemExit", ...
                       "line": int | null},       # line of the generated code, when known
      "tables": [{"variable": str,                # DataFrames/Series the code left in its globals
                  "line": int | null,             # last line that assigns that name
                  "file": str,                    # plain file name of the CSV inside scratch
                  "rows": int,
                  "columns": [{"name": str, "dtype": str}],
                  "lineage": [LINEAGE]}],         # off its index: see lineage.py
      "spans": [{"line": int, "start": int, "end": int}],  # which line printed which part
                                                  # of stdout (offsets in UTF-16 code units)
      "truncated": bool,                          # stdout or stderr hit the cap
      "result": null | {                          # what the code computed (null: it failed,
                                                  #   or declared nothing and printed nothing)
          "from": "declared" | "printed",         # its global `result`, else its last printed line
          "kind": "scalar" | "list" | "series" | "frame",
          "values": [scalar],                     # JSON scalars, at most 1000; a frame row by row
          "labels": [scalar],                     # index labels, when not positions
          "text": str,                            # short text form (<= 500 characters)
          "line": int | null,                     # the line that assigned (or printed) it
          "derived": "yes" | "no" | "unknown",    # whether perturbing the tables changes it
          "derivation": str,                      # why, in words
          "lineage": [LINEAGE]},                  # one per input table
      "figures": [FIGURE],                        # only when the code drew: see figures.py
      "trace": {"key": str, "complete": bool}     # only for a traced result: its result_key,
    }                                             #   and whether its tracing finished

LINEAGE is {"table": str, "rows": [int] | null, "columns": [str] | null}: the source row ids
(0-based) and columns it rests on, null where that was not traced.

The exit status is 0 whenever RESULT.json was written, 2 when the request could not be read.
This module keeps no state between runs. Given `fork` (the local sandbox, E2B), `execute`
runs the code, and each re-run of it, in a process forked for that run alone, and compares
their reports itself (`run_forked`); otherwise (the one-shot command, the warm-up) all of it
runs in this process. The limits that need a supervisor (rlimits, network, the confinement
`fork` applies) are the caller's business, except that a one-shot run lets the code read only
its scratch, its own tables and what Python needs (`read_guard`; the local sandbox has its
own, hardening.py with read_rules.py).
"""

import _signal
import ast
import builtins
import gc
import hashlib
import hmac
import io
import json
import os
import pickle
import select
import signal
import sys
import tempfile
import time

import numpy as np
import pandas as pd

# Next to this file: on sys.path whether it runs as a script or interpreter.py imports it.
import figures as figure_capture
import lineage as result_lineage

GENERATED = "<generated>"
MAX_TABLES = 20
MAX_ROWS = 10_000
MAX_MESSAGE_CHARS = 2_000


# --- small helpers -------------------------------------------------------------


def safe_str(value):
    try:
        text = str(value)
    except BaseException:
        try:
            text = repr(value)
        except BaseException:
            text = f"<unprintable {type(value).__name__}>"
    return text[:MAX_MESSAGE_CHARS]


def describe(exc):
    """`Type: message` of an exception, safe to print whatever it is."""
    return f"{type(exc).__name__}: {safe_str(exc)}"


def failure_from(error_type, exc):
    """A failure whose message describes the exception that caused it."""
    return failure(error_type, describe(exc))


def failure(error_type, message, line=None):
    """A result for a run that produced nothing but an error."""
    return {
        "ok": False,
        "stdout": "",
        "stderr": "",
        "error": {"type": error_type, "message": message, "line": line},
        "spans": [],
        "truncated": False,
        "tables": [],
        "result": None,
    }


def dumps(result):
    """The result as one line of ASCII JSON; an unencodable result becomes an error."""
    try:
        return json.dumps(result, ensure_ascii=True, allow_nan=False, default=str)
    except (TypeError, ValueError) as exc:
        return json.dumps(failure("ProtocolError", f"result could not be encoded: {safe_str(exc)}"))


def load_table(path):
    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    return pd.read_csv(path)


def with_dates(named_tables, dates):
    """The tables with the columns the reader read as dates ({table name: [column]}) parsed
    as datetimes. A table is copied before its columns change: the interpreter's cached frame stays
    as loaded."""
    if not dates:
        return named_tables
    out = []
    for name, frame in named_tables:
        columns = [c for c in dates.get(name) or () if isinstance(frame, pd.DataFrame) and c in frame.columns]
        if columns:
            frame = frame.copy(deep=False)
            for column in columns:
                frame[column] = pd.to_datetime(frame[column], errors="coerce")
        out.append((name, frame))
    return out


def dates_of(tables):
    """{table name: [date column]} of a request's table entries."""
    return {str(t["name"]): list(t["dates"]) for t in tables if t.get("dates")}


# Tables at least this big get a pickled copy beside them, which pandas loads ~8x faster.
PICKLE_MIN_BYTES = 4 << 20
PICKLE_KEY_BYTES = 32
_MAC_BYTES = 32
# The key that signs the pickles, once read: {keys directory: key or None}.
_pickle_keys = {}


def _pickle_path(path):
    return f"{os.path.splitext(path)[0]}.pandas-{pd.__version__}.signed.pkl"


def _keys_dir(path):
    """Where the key lives: `keys/` next to the artifact store, i.e. `$TABLEMINDS_HOME/keys`
    for `$TABLEMINDS_HOME/artifacts/<sha256>.csv`. Outside the store, so that being able to
    write the store is not enough to forge a pickle; and outside what children may read."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(path))), "keys")


def _pickle_key(path):
    """This machine's key for the pickles of the store of `path`: made once (random, 0600,
    in a 0700 directory), None when it cannot be made or read safely."""
    directory = _keys_dir(path)
    if directory in _pickle_keys:
        return _pickle_keys[directory]
    key = None
    file = os.path.join(directory, "pickle-hmac.key")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        try:
            fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(os.urandom(PICKLE_KEY_BYTES))
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            # A key others could read or write, or someone else's, signs nothing.
            if info.st_uid == os.getuid() and not info.st_mode & 0o077:
                data = handle.read(PICKLE_KEY_BYTES + 1)
                key = data if len(data) == PICKLE_KEY_BYTES else None
    except OSError:
        key = None
    _pickle_keys[directory] = key
    return key


def _signer(key, name):
    # The file's name is signed too: a valid pickle of one table cannot stand in for another.
    return hmac.new(key, name.encode("utf-8") + b"\0", hashlib.sha256)


def _mac(key, name, data):
    signer = _signer(key, name)
    signer.update(data)
    return signer.digest()


def forget_secrets():
    """In a child, before generated code runs: no pickle key left in reach."""
    _pickle_keys.clear()


def load_table_cached(path, aside=None):
    """load_table for the trusted interpreter only, never for a child running generated code: a
    large CSV artifact is read once and pickled next to it (named by its hash and this
    pandas version), and later interpreters, in this process or another, load the pickle.
    Loading a pickle runs code, and the store may be writable by others than this interpreter,
    so each pickle carries an HMAC-SHA256 under a key kept outside the store
    (`_pickle_key`); one that does not verify is never unpickled: the CSV is read again.
    `aside(write)`: runs the writing of a new pickle off the critical path (the interpreter
    forks a process for it); without it, the pickle is written before this returns."""
    if not path.endswith(".csv"):
        return load_table(path)
    key = _pickle_key(path)
    if key is None:
        return load_table(path)  # nothing to verify a pickle with: no pickles at all
    cache = _pickle_path(path)
    name = os.path.basename(cache)
    try:
        with open(cache, "rb") as handle:
            data = handle.read()
        if len(data) > _MAC_BYTES and hmac.compare_digest(data[:_MAC_BYTES], _mac(key, name, data[_MAC_BYTES:])):
            frame = pickle.loads(data[_MAC_BYTES:])
            if isinstance(frame, pd.DataFrame):
                os.utime(cache)  # used now, for `tableminds prune`
                return frame
    except FileNotFoundError:
        pass
    except Exception:
        pass  # unreadable, or from another pandas: made again below
    frame = load_table(path)
    try:
        big = os.path.getsize(path) >= PICKLE_MIN_BYTES
    except OSError:
        big = False
    if big:
        if aside is None:
            write_pickle(frame, key, cache)
        else:
            aside(lambda: write_pickle(frame, key, cache))
    return frame


class _Signing:
    """A file that signs what is written to it (the pickle streams through, never whole in memory)."""

    def __init__(self, handle, mac):
        self.handle = handle
        self.mac = mac

    def write(self, data):
        self.mac.update(data)
        return self.handle.write(data)


def write_pickle(frame, key, cache):
    """`frame` pickled to `cache`, signed (`_mac`'s MAC ahead of the pickle), whole or not at all.
    A pickle that cannot be written only loses the speed-up."""
    name = os.path.basename(cache)
    partial = f"{cache}.pid{os.getpid()}.tmp"  # `prune` frees it once this process is gone
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(bytes(_MAC_BYTES))
            signing = _Signing(handle, _signer(key, name))
            pickle.dump(frame, signing, protocol=pickle.HIGHEST_PROTOCOL)
            handle.seek(0)
            handle.write(signing.mac.digest())
        os.replace(partial, cache)
    except Exception:  # a full disk, a read-only store, a frame that will not pickle
        try:
            os.unlink(partial)
        except OSError:
            pass


# --- output capture ---------------------------------------------------------------


# Offsets are for JavaScript strings, which count UTF-16 code units.
_utf16_len = result_lineage.utf16_len


def _generated_line():
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == GENERATED:
            return frame.f_lineno
        frame = frame.f_back
    return None


class Capture(io.TextIOBase):
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


# --- running the code ----------------------------------------------------------------


class SoftTimeout(BaseException):
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


def _describe(exc):
    if isinstance(exc, RecursionError):
        return {
            "type": "RecursionError",
            "message": f"{safe_str(exc)} (the recursion was stopped before it could crash the process)",
            "line": _traceback_line(exc),
        }
    if isinstance(exc, MemoryError):
        return {
            "type": "MemoryError",
            "message": "the code ran out of memory (its address-space limit was reached)",
            "line": _traceback_line(exc),
        }
    return {"type": type(exc).__name__, "message": safe_str(exc), "line": _traceback_line(exc)}


def _run_code(code_obj, namespace, timeout_ms):
    armed = [True]

    def on_alarm(signum, frame):
        if armed[0]:
            armed[0] = False
            raise SoftTimeout()

    _set_handler(signal.SIGALRM, on_alarm)
    _set_timer(signal.ITIMER_REAL, timeout_ms / 1000)
    try:
        try:
            exec(code_obj, namespace)
        finally:
            armed[0] = False
            _set_timer(signal.ITIMER_REAL, 0)
    except SoftTimeout as exc:
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
            "message": f"exit code {safe_str(exc.code)}",
            "line": _traceback_line(exc),
        }
    except BaseException as exc:
        return _describe(exc)
    return None


def _compile(code):
    try:
        return compile(code, GENERATED, "exec"), None
    except SyntaxError as exc:
        return None, {"type": type(exc).__name__, "message": safe_str(exc.msg), "line": exc.lineno}
    except (ValueError, TypeError) as exc:  # e.g. null bytes in the source
        return None, {"type": "SyntaxError", "message": safe_str(exc), "line": None}


# --- intermediate tables ----------------------------------------------------------------


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


def _export_tables(namespace, inputs, code, scratch, sources=()):
    tables = []
    notes = []
    candidates = [
        (name, value)
        for name, value in list(namespace.items())
        if isinstance(name, str)
        and not name.startswith("_")
        and isinstance(value, (pd.DataFrame, pd.Series))
        and not any(value is table for table in inputs)
    ]
    if not candidates:
        return tables, notes
    lines = _assignment_lines(code)
    for name, value in candidates:
        if len(tables) == MAX_TABLES:
            notes.append(f"note: only the first {MAX_TABLES} tables were kept; {name} and later ones were not")
            break
        try:
            frame = _as_plain_frame(name, value)
            total = len(frame)
            if total > MAX_ROWS:
                frame = frame.head(MAX_ROWS)
                value = value.iloc[:MAX_ROWS]
                notes.append(f"note: table {name} has {total} rows; only the first {MAX_ROWS} were kept")
            try:
                lineage = result_lineage.produced_lineage(value, frame.columns, sources)
            except Exception:
                lineage = []
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
                    "lineage": lineage,
                }
            )
        except BaseException as exc:
            notes.append(f"note: table {name} could not be saved: {describe(exc)}")
    return tables, notes


# --- the result and its lineage --------------------------------------------------------------

# Captured at import, before any generated code could replace them in the signal module;
# the C functions themselves, without signal.py's conversions of what they return to enums
# (in a freshly forked child, each object those touch costs a page copy).
_set_handler = _signal.signal
_set_timer = _signal.setitimer
_unblock = getattr(_signal, "pthread_sigmask", None)
# Once the budget is spent the timer fires again this often until it is heeded, so code
# that swallows one SoftTimeout (a bare `except:`) meets the next.
RETRY_ALARM_S = 0.05
# Reading the result has at least this long, even when the run used up its time.
MIN_CAPTURE_S = 0.05
_REDIRECTED_READERS = ("read_csv", "read_table")


def _namespace(named_tables):
    """What the code sees: each table by its name, the first also as `df` (the one the question
    is about; the others are its totals, the tables of earlier questions or other files), pd
    and np. A table named `df` keeps its own name."""
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    if named_tables:
        namespace["df"] = named_tables[0][1]
    for name, frame in named_tables:
        namespace[name] = frame
    namespace["pd"] = pd
    namespace["np"] = np
    return namespace


def _snapshot(named_tables):
    """lineage.snapshot(), or None when the copies cannot be made."""
    try:
        return result_lineage.snapshot(named_tables)
    except Exception:
        return None


class _Rerun:
    """Runs the code again on other tables: a fresh namespace, output to a throwaway capture,
    nothing exported. The code's own reads of its table files (`pd.read_csv("medals.csv")`)
    get the re-run's table instead, written next to them. SoftTimeout passes through."""

    def __init__(self, code_obj, output_bytes, scratch, table_files, sources):
        self.code_obj = code_obj
        self.output_bytes = output_bytes
        self.scratch = scratch
        self.runs = 0
        self.files = {}
        for name, path in (table_files or {}).items():
            try:
                self.files[os.path.realpath(path)] = name
            except (OSError, ValueError, TypeError):
                pass
        self.names = [source.name for source in sources]
        self.readers = {name: getattr(pd, name) for name in _REDIRECTED_READERS} if self.files else {}

    def restore(self):
        """pandas' readers as they were (also when a timeout cut a re-run short)."""
        for name, reader in self.readers.items():
            setattr(pd, name, reader)

    def __call__(self, named_tables):
        self.runs += 1
        # The figures of the run before (collected, or a re-run's): each re-run draws anew.
        figure_capture.close_all()
        stdout = Capture(self.output_bytes, with_spans=False)
        sys.stdout = stdout
        sys.stderr = Capture(self.output_bytes, with_spans=False)
        sys.stdin = io.StringIO()
        os.chdir(self.scratch)
        namespace = _namespace(named_tables)
        for name, reader in self.readers.items():
            setattr(pd, name, self._redirect(reader, dict(named_tables)))
        error = None
        try:
            exec(self.code_obj, namespace)
        except SoftTimeout:
            raise
        except SystemExit as exc:
            if not (exc.code is None or exc.code == 0):
                error = "SystemExit"
        except MemoryError:
            raise result_lineage.OutOfBudget("no memory left for another re-run") from None
        except BaseException as exc:
            error = type(exc).__name__
        finally:
            self.restore()
        return namespace, stdout.getvalue(), stdout.truncated, error

    def _redirect(self, reader, tables):
        written = {}

        def read(path, *args, **kwargs):
            name = None
            if isinstance(path, (str, os.PathLike)):
                try:
                    name = self.files.get(os.path.realpath(path))
                except (OSError, ValueError, TypeError):
                    name = None
            if name is None or name not in tables:
                return reader(path, *args, **kwargs)
            if name not in written:
                target = os.path.join(self.scratch, f"_tableminds_rerun_{self.names.index(name)}.csv")
                _write_csv(tables[name], target)
                written[name] = target
            return reader(written[name], *args, **kwargs)

        return read


def safe_file_name(name):
    """A plain name of a file in a run's folder: not empty, no "/" or NUL, not hidden."""
    return bool(name) and "/" not in name and "\0" not in name and not name.startswith(".")


def table_file_aliases(name, file_name):
    """The names the file `file_name` of table `name` goes by in a run's folder: its own, and
    the table's with the file's extension (table_files.py's hand_over); plain names only."""
    extension = os.path.splitext(file_name)[1] or ".csv"
    aliases = (file_name, name if name.endswith(extension) else name + extension)
    return [alias for alias in aliases if safe_file_name(alias)]


def _alias_table_files(folder, table_files):
    """In a re-run's own folder, the names its table files go by in scratch, so code that
    reads `medals.csv` finds it there too. Names that exist are left alone."""
    for name, path in table_files.items():
        for alias in table_file_aliases(name, os.path.basename(path)):
            try:
                os.symlink(path, os.path.join(folder, alias))
            except OSError:
                pass


def _arm(armed, seconds):
    """SoftTimeout raised into this process after `seconds`, and again every RETRY_ALARM_S,
    while `armed[0]`; `_disarm(armed)` ends it (the caller holds `armed` before the timer is
    set, so that an alarm that comes at once is still disarmed)."""

    def on_alarm(signum, frame):
        if armed[0]:
            raise SoftTimeout()

    _set_handler(signal.SIGALRM, on_alarm)
    if _unblock is not None:
        _unblock(signal.SIG_UNBLOCK, {signal.SIGALRM})
    _set_timer(signal.ITIMER_REAL, seconds, RETRY_ALARM_S)


def _disarm(armed):
    while True:
        try:
            armed[0] = False
            _set_timer(signal.ITIMER_REAL, 0)
            return
        except SoftTimeout:
            pass


def _capture(code, namespace, stdout, budget_s):
    """lineage.capture's (result, the object it came from), under a timer of `budget_s` (at
    least MIN_CAPTURE_S); (None, None) when reading it ran out of time or failed."""
    armed = [True]
    try:
        try:
            _arm(armed, max(budget_s, MIN_CAPTURE_S))
            # The syntax tree only where a declared `result` needs its line: parsing costs a
            # freshly forked child a couple of hundred page copies.
            assigned = _assignment_lines(code).get("result") if "result" in namespace else None
            return result_lineage.capture(namespace, stdout.getvalue(), stdout.spans, stdout.truncated, assigned)
        finally:
            _disarm(armed)
    except BaseException:
        return None, None


def _trace_budget(started, timeout_ms):
    """What tracing may take: min(3 s, half the time the run left)."""
    left_s = timeout_ms / 1000 - (time.monotonic() - started)
    return min(result_lineage.MAX_TRACE_S, max(0.0, left_s) / 2)


def run_once(code, code_obj, named_tables, timeout_ms, output_bytes, scratch, before_code, started):
    """Runs the code once, in this process: the run as JSON data (its result read but not
    traced, with the source rows its index holds, and its figures not traced)."""
    os.chdir(scratch)
    stdout = Capture(output_bytes, with_spans=True)
    stderr = Capture(output_bytes, with_spans=False)
    sys.stdout = stdout
    sys.stderr = stderr
    sys.stdin = io.StringIO()
    namespace = _namespace(named_tables)
    inputs = [frame for _, frame in named_tables]
    sources = result_lineage.sources_of(named_tables)
    if before_code is not None:
        before_code()
    error = _run_code(code_obj, namespace, timeout_ms)
    result = from_index = None
    figures, notes = [], []
    if error is None:
        # Read and saved before any re-run draws figures of its own.
        figures, notes = figure_capture.collect(scratch, started, timeout_ms)
        result, original = _capture(code, namespace, stdout, _trace_budget(started, timeout_ms))
        from_index = result_lineage.index_rows(original, sources)
        original = None
        sys.stdout, sys.stderr = stdout, stderr
        os.chdir(scratch)
    tables, table_notes = _export_tables(namespace, inputs, code, scratch, sources)
    notes += table_notes
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
        "result": result,
        "from_index": from_index,
        "figures": figures,
    }


class _HereObserver:
    """Re-runs in this process (the one-shot command, the warm-up, a lineage run): each
    re-run's namespace is fresh, the interpreter is not."""

    forked = False

    def __init__(self, code_obj, output_bytes, scratch, table_files, sources):
        self.make = lambda: _Rerun(code_obj, output_bytes, scratch, table_files, sources)  # noqa: E731
        self.reruns = []

    def __call__(self, key, deadline):
        rerun = self.make()
        self.reruns.append(rerun)

        def observe(tables):
            namespace, stdout, truncated, error = rerun(tables)
            try:
                return result_lineage.frozen(key(namespace, stdout, truncated, error))
            finally:
                # Functions the code defined hold the namespace (and its tables) in a cycle.
                namespace.clear()
                figure_capture.close_all()

        return observe

    def restore(self):
        for rerun in self.reruns:
            rerun.restore()


class _ForkedObserver:
    """Each re-run that decides a derivation in a process forked from this one for it alone,
    after `prepare` (its confinement): none shares interpreter state with the first run or
    another, and what each reports is only compared here. The many re-runs that find
    columns and rows run together in one more such process (`together`)."""

    forked = True

    def __init__(self, code_obj, output_bytes, scratch, table_files, sources, prepare):
        self.args = (code_obj, output_bytes, scratch, table_files, sources)
        self.prepare = prepare

    def together(self, fn, deadline):
        """`fn(here)` in one process forked for it, `here` an observer of re-runs in that
        process, under a timer that ends just before `deadline`; its JSON report."""

        def in_child(run_dir):
            left = deadline - time.monotonic() - LINEAGE_RUN_MARGIN_S
            if left <= 0:
                raise result_lineage.OutOfBudget("out of time")
            armed = [True]
            gc.disable()
            try:
                _arm(armed, left)
                code_obj, output_bytes, _, table_files, sources = self.args
                return fn(_HereObserver(code_obj, output_bytes, run_dir, table_files, sources))
            finally:
                _disarm(armed)

        return self._forked(in_child, deadline)

    def _forked(self, fn, deadline):
        """`fn(run_dir)` in a process forked for it, in a folder of its own inside scratch
        (`prepare(run_dir)` keeps it there): what the first run left is out of its reach."""
        run_dir = tempfile.mkdtemp(prefix="rerun-", dir=self.args[2])
        _alias_table_files(run_dir, self.args[3] or {})
        # What the confinement builds for the run before the fork (interpreter_child.Confinement).
        ahead = getattr(self.prepare, "ahead", None)
        made = ahead(run_dir) if ahead is not None else None
        try:
            return run_forked(lambda: fn(run_dir), deadline, lambda: self.prepare(run_dir, made))
        except ForkedTimeout:
            raise result_lineage.OutOfBudget("out of time") from None
        finally:
            if ahead is not None:
                self.prepare.release(made)

    def _rerun(self, run_dir):
        code_obj, output_bytes, _, table_files, sources = self.args
        return _Rerun(code_obj, output_bytes, run_dir, table_files, sources)

    def __call__(self, key, deadline):
        def observe(tables):
            def in_child(run_dir):
                namespace, stdout, truncated, error = self._rerun(run_dir)(tables)
                return key(namespace, stdout, truncated, error)

            return result_lineage.frozen(self._forked(in_child, deadline))

        return observe

    def restore(self):
        pass


def _traced(result, from_index, copies, sources, budget_s, observer):
    """`result` (lineage.capture's) with its derivation and lineage, found by re-running the
    code through `observer` within `budget_s`; and whether the tracing finished."""
    deadline = time.monotonic() + budget_s
    armed = [True]
    tracer = None
    stopped = None
    if copies:
        try:
            try:
                _arm(armed, max(budget_s, MIN_CAPTURE_S))
                tables, sampled = copies
                origin = result["from"]
                key = lambda ns, out, truncated, error: result_lineage.observation(  # noqa: E731
                    origin, ns, out, truncated, error
                )
                base = result_lineage.frozen(result_lineage.canonical(result))
                observe = observer(key, deadline)
                tracer = result_lineage.Tracer(origin, base, tables, observe, deadline, sampled=sampled)
                # No full collections between re-runs (each would touch the whole heap); the
                # re-runs' namespaces are cleared, which frees what they made.
                collecting = gc.isenabled()
                gc.disable()
                try:
                    if not observer.forked:
                        tracer.run()
                    elif tracer.derive():
                        report = observer.together(lambda here: _lineage_run(tracer, here, key, deadline), deadline)
                        tracer.adopt(report, observe)
                        if report.get("stopped"):
                            stopped = str(report["stopped"])
                finally:
                    if collecting:
                        gc.enable()
            finally:
                _disarm(armed)
                observer.restore()
        except SoftTimeout:
            stopped = "out of time"
        except result_lineage.OutOfBudget as exc:
            stopped = str(exc)
        except BaseException as exc:
            stopped = f"tracing failed: {describe(exc)}"
    if tracer is not None:
        if stopped:
            tracer.stopped(stopped)
        traced = result_lineage.finish(result, tracer.derived, tracer.derivation, tracer.lineage(from_index, sources))
        return traced, not stopped
    why = "not traced: the tables could not be copied" if copies is None else f"not traced: {stopped or 'no time was left'}"
    return result_lineage.finish(result, "unknown", why, result_lineage.untraced_lineage(from_index, sources)), False


def _lineage_run(tracer, here, key, deadline):
    """In the process forked for a result's columns and rows: `tracer` (as it stood after
    `derive`, forked with this process) traces them here."""
    tracer.observe = here(key, deadline)
    tracer.changes = []
    stopped = result_lineage.stopped_short(tracer.trace_lineage, SoftTimeout)
    return {**tracer.lineage_report(), "stopped": stopped}


def _untraced(result, from_index, sources, lineage):
    why = "not traced: lineage was turned off for this run" if not lineage else "no table to perturb"
    return result_lineage.finish(result, "unknown", why, result_lineage.untraced_lineage(from_index, sources))


# --- one request ----------------------------------------------------------------------


def execute(
    code,
    named_tables,
    timeout_ms,
    output_bytes,
    scratch,
    before_code=None,
    lineage=True,
    table_files=None,
    fork=None,
    first_run=None,
    known=None,
):
    """Runs `code` with `named_tables` ([(name, DataFrame)]) in `scratch`; returns the
    result dict described at the top of this file. `before_code` is called just before
    the code runs (the local sandbox installs its audit hook there). `lineage`: trace the
    result's derivation and lineage by re-running the code (see lineage.py), within at most
    min(3 s, half the time the run left). `table_files` ({name: path}): where the tables'
    files are, so that re-runs can hand the code its re-run's table when it reads one.

    `fork` (a function, e.g. the sandbox's confinement and audit hook): the code never runs
    in this process. Its first run and each re-run run in a process forked from this one for
    it alone, which calls `fork(run_dir, made)` first (`None` for the first run, a folder of
    its own inside `scratch` for a re-run; `made`: what `fork.ahead(run_dir)` built here
    before the fork, when `fork` has it, released after with `fork.release(made)`) and
    `before_code` never; this process only reads
    what they report (as data) and compares it, so what the code does to its own
    interpreter (or memory) reaches neither the other runs nor the derivation and lineage.
    `first_run(started, deadline)`, with `fork`: the first run's report from a process
    forked and confined ahead (interpreter_child.py's ParkedRun), instead of one forked now.
    `known`: a trace made before for this code on these tables (finish's derived, derivation
    and lineage, with result_key's `key` of its result): when the result is the same, it is
    taken and the code is not re-run for it. The report's `trace` gives the result's key and
    whether its tracing finished (a trace worth keeping)."""
    started = time.monotonic()
    sources = result_lineage.sources_of(named_tables)
    code_obj, error = _compile(code)
    if code_obj is None:
        return failure(error["type"], error["message"], error["line"])
    trace = lineage and bool(sources)
    # Copied before the code runs: run here, it may change its tables in place.
    copies = _snapshot(named_tables) if trace else None
    if fork is None:
        run = run_once(code, code_obj, named_tables, timeout_ms, output_bytes, scratch, before_code, started)
        observer = _HereObserver(code_obj, output_bytes, scratch, table_files, sources)
    else:
        deadline = started + timeout_ms / 1000 + FIRST_RUN_GRACE_S
        try:
            if first_run is not None:
                report = first_run(started, deadline)
            else:
                report = run_forked(
                    lambda: run_once(code, code_obj, named_tables, timeout_ms, output_bytes, scratch, None, started),
                    deadline,
                    fork,
                )
            run = _checked_run(report)
        except ForkedTimeout:
            return failure("Timeout", f"execution exceeded {timeout_ms} ms")
        except ForkedRunEnded as exc:
            return failure("Crashed", str(exc))
        observer = _ForkedObserver(code_obj, output_bytes, scratch, table_files, sources, fork)
    result, from_index, figures = run.pop("result"), run.pop("from_index"), run.pop("figures")
    if result is not None:
        if trace:
            key = result_lineage.result_key(result)
            reused = result_lineage.known_trace(known, key)
            if reused is not None:
                result = result_lineage.finish(result, *reused)
                complete = False
            else:
                budget_s = _trace_budget(started, timeout_ms)
                result, complete = _traced(result, from_index, copies, sources, budget_s, observer)
            # Whether this trace is one to keep for the same code on the same tables.
            run["trace"] = {"key": key, "complete": complete}
        else:
            result = _untraced(result, from_index, sources, lineage)
    if figures:
        options = {"budget_s": _trace_budget(started, timeout_ms), "trace": lineage}
        figure_capture.trace(figures, copies, sources, options, observer, SoftTimeout, started, timeout_ms)
        run["figures"] = figures
    os.chdir(scratch)
    run["result"] = result
    return run


# --- the code's runs in processes of their own ----------------------------------------------

# A forked first run has this long past the timeout to save its tables and figures.
FIRST_RUN_GRACE_S = 0.8
# A lineage run stops this long before the tracing deadline, to report what it found.
LINEAGE_RUN_MARGIN_S = 0.05
# The most a forked run may report.
MAX_FORKED_BYTES = 64 * 1024 * 1024


class ForkedRunEnded(Exception):
    """A forked run ended without a readable report; the message says how."""


class ForkedTimeout(ForkedRunEnded):
    pass


def run_forked(fn, deadline, prepare=None):
    """`fn()` run in a process forked for it, after `prepare()`, and what it returned (sent
    back as JSON). The process is killed once it has reported, or at `deadline`
    (ForkedTimeout). lineage.OutOfBudget raised in it is raised here too."""
    return collect_forked(*start_forked(fn, prepare), deadline)


def start_forked(fn, prepare=None):
    """Forks the process of run_forked; (its pid, the pipe its report comes on), for
    collect_forked, or discard_forked if it is not needed after all."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        report = b""
        try:
            os.close(read_fd)
            # A fresh process's randomness (Python reseeds `random` after a fork itself).
            np.random.seed()
            if prepare is not None:
                prepare()
            report = dumps({"value": fn()}).encode("ascii")
        except result_lineage.OutOfBudget as exc:
            report = dumps({"budget": safe_str(exc)}).encode("ascii")
        except BaseException as exc:
            report = dumps({"failed": describe(exc)}).encode("ascii")
        finally:
            try:
                view = memoryview(report)
                while view:
                    view = view[os.write(write_fd, view) :]
            finally:
                os._exit(0)
    os.close(write_fd)
    return pid, read_fd


def discard_forked(pid, read_fd):
    os.close(read_fd)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _ended.append(pid)


def collect_forked(pid, read_fd, deadline):
    """What the process of start_forked reported, read by `deadline` (see run_forked)."""
    _reap_ended()
    chunks, size, timed_out = [], 0, False
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            if not select.select([read_fd], [], [], remaining)[0]:
                continue
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_FORKED_BYTES:
                chunks = []
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if timed_out:
        _ended.append(pid)
        raise ForkedTimeout("out of time")
    if not chunks:
        raise ForkedRunEnded(crash_message(os.waitpid(pid, 0)[1]))
    # A process that maps pandas takes milliseconds to end: collected later, not waited for.
    _ended.append(pid)
    try:
        report = json.loads(b"".join(chunks))
    except ValueError:
        report = None
    if type(report) is not dict:
        raise ForkedRunEnded("the code's process sent a report that is not one")
    if "budget" in report:
        raise result_lineage.OutOfBudget(str(report["budget"]))
    if "value" not in report:
        raise ForkedRunEnded(f"the code's process failed: {safe_str(report.get('failed'))}")
    return report["value"]


# Forked runs killed and not yet collected.
_ended = []


def _reap_ended():
    for pid in list(_ended):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _ended.remove(pid)


def _holds(value, **types):
    """Whether `value` is a dict whose keys hold values of these types."""
    return type(value) is dict and all(type(value.get(key)) is kind for key, kind in types.items())


def _checked_run(run):
    """A forked first run's report, with the form this process relies on (the interpreter and
    Node check every field again); ForkedRunEnded otherwise."""
    ok = _holds(run, stdout=str, stderr=str, tables=list, figures=list, spans=list)
    result = run.get("result") if ok else None
    if result is not None:
        ok = _holds(result, values=list, labels=list, kind=str, total=int)
        ok = ok and result.get("from") in ("declared", "printed")
    index = run.get("from_index") if ok else None
    if index is not None:
        ok = (
            type(index) is list
            and len(index) == 2
            and type(index[0]) is str
            and type(index[1]) is list
            and all(type(row) is int for row in index[1])
        )
    if not ok:
        raise ForkedRunEnded("the code's process sent a report that is not one")
    return run


def crash_message(status):
    """Why a process ended without a result, from its wait status."""
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


# --- one-shot command ----------------------------------------------------------------------

# Kept in step with read_rules.py, which this file (uploaded alone to E2B) cannot import.
_SYSTEM_READ_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/usr/share/zoneinfo",
                     "/usr/share/matplotlib", "/usr/share/fonts", "/etc/fonts", "/sys/devices/system/cpu")
_SYSTEM_READ_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/timezone", "/etc/matplotlibrc",
                      "/dev/null", "/dev/urandom", "/proc/meminfo", "/proc/cpuinfo", "/proc/stat")
_READ_EVENTS = ("os.listdir", "os.scandir", "os.getxattr", "os.listxattr", "sqlite3.connect", "dbm.open")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def read_guard(scratch, table_paths):
    """An audit hook refusing reads (opens, directory listings) of anything but scratch,
    the given table files, Python's own directories and the system files pandas needs.
    The directory of this file is left out: on E2B it holds every run's uploads."""
    realpath = os.path.realpath
    own_dir = realpath(os.path.dirname(os.path.abspath(__file__)))
    python_dirs = [realpath(p) for p in sys.path if p and os.path.isdir(p)]
    python_dirs = [p for p in python_dirs if not (own_dir + "/").startswith(p.rstrip("/") + "/")]
    roots = [*python_dirs, *map(realpath, _SYSTEM_READ_DIRS), realpath(scratch), f"/proc/{os.getpid()}"]
    prefixes = tuple(root.rstrip("/") + "/" for root in roots)
    exact = frozenset([*roots, *map(realpath, _SYSTEM_READ_FILES), *map(realpath, table_paths)])

    def refuse(path):
        if isinstance(path, int):
            return
        resolved = realpath(os.fsdecode(path))
        if resolved not in exact and not resolved.startswith(prefixes):
            raise PermissionError(
                f"sandbox: reading outside the scratch directory and the run's tables is not allowed: {path}"
            )

    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            writing = any(c in mode for c in "wax+") if mode else isinstance(flags, int) and flags & _WRITE_FLAGS
            if path is not None and not writing:
                refuse(path)
        elif event in _READ_EVENTS:
            refuse(args[0] if args and args[0] is not None else ".")

    return hook



def _read_request(path):
    with open(path, encoding="utf-8") as handle:
        request = json.load(handle)
    if not isinstance(request, dict) or not isinstance(request.get("code"), str):
        raise ValueError("the request needs a string `code`")
    tables = request.get("tables", [])
    if not isinstance(tables, list) or not all(
        isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("path"), str) for t in tables
    ):
        raise ValueError("`tables` must be a list of {name, path}")
    for key in ("timeout_ms", "output_bytes"):
        if not isinstance(request.get(key), int) or request[key] <= 0:
            raise ValueError(f"`{key}` must be a positive integer")
    if not isinstance(request.get("scratch"), str) or not os.path.isdir(request["scratch"]):
        raise ValueError("`scratch` must be an existing directory")
    if not isinstance(request.setdefault("lineage", True), bool):
        raise ValueError("`lineage` must be a boolean")
    return request


def _write_result(path, text):
    partial = f"{path}.partial"
    with open(partial, "w", encoding="ascii") as handle:
        handle.write(text + "\n")
    os.replace(partial, path)


def run_one_shot(request_path, result_path):
    try:
        request = _read_request(request_path)
    except BaseException as exc:
        sys.stderr.write(f"runner.py: bad request {request_path}: {describe(exc)}\n")
        return 2
    result_path = os.path.abspath(result_path)
    try:
        named_tables = [(t["name"], load_table(t["path"])) for t in request["tables"]]
        named_tables = with_dates(named_tables, dates_of(request["tables"]))
    except BaseException as exc:
        _write_result(result_path, dumps(failure_from("TableLoadError", exc)))
        return 0
    try:
        result = execute(
            request["code"],
            named_tables,
            request["timeout_ms"],
            request["output_bytes"],
            os.path.abspath(request["scratch"]),
            before_code=lambda: sys.addaudithook(
                read_guard(request["scratch"], [t["path"] for t in request["tables"]])
            ),
            lineage=request["lineage"],
            table_files={t["name"]: t["path"] for t in request["tables"]},
        )
        text = dumps(result)
    except BaseException as exc:
        text = dumps(failure_from("SandboxError", exc))
    _write_result(result_path, text)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.stderr.write("usage: python3 runner.py REQUEST.json RESULT.json\n")
        sys.exit(2)
    code = run_one_shot(sys.argv[1], sys.argv[2])
    sys.stdout.flush()
    sys.stderr.flush()
    # Not sys.exit: non-daemon threads the code left running must not keep the process alive.
    os._exit(code)
