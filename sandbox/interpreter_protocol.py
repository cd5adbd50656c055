"""Framing of the warm interpreter's messages (see interpreter.py for the messages themselves).

Requests arrive as one JSON object per line on stdin; replies leave as one JSON object
per line on PROTOCOL_FD. A child hands its result to the interpreter as one line of JSON on a
pipe of its own, read here with a deadline and a size cap. The child never runs the code
(its runs are processes it forks, which close their copy of the pipe before anything else:
see `child_main` in interpreter_child.py), so the line is the runner's; what the code computed
in it is still only the code's word: the interpreter keeps only the keys of a result, checks
what it relies on itself (`checked_result`) and puts it in its own envelope, and Node
validates every field (`refusedResult` in local-protocol.ts).

Imports runner (and so pandas): import this only after hardening.enter_empty_netns().
"""

import json
import os
import select
import time

import runner
from table_files import TABLE_FILE_NAME

PROTOCOL_FD = 3
MAX_CHILD_PAYLOAD = 64 * 1024 * 1024


def dumps(message):
    """A reply as one line of ASCII JSON; one that cannot be encoded becomes an error reply."""
    try:
        return json.dumps(message, ensure_ascii=True, allow_nan=False, default=str)
    except (TypeError, ValueError) as exc:
        fallback = {
            "type": "result",
            "id": message.get("id") if isinstance(message, dict) else None,
            **runner.failure("ProtocolError", f"reply could not be encoded: {runner.safe_str(exc)}"),
        }
        scratch = message.get("scratch") if isinstance(message, dict) else None
        if scratch is not None:
            fallback["scratch"] = scratch
        return json.dumps(fallback, ensure_ascii=True, default=str)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def send(message):
    write_all(PROTOCOL_FD, (dumps(message) + "\n").encode("ascii"))


def read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def read_line(fd, deadline):
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


class RefusedResult(Exception):
    """The child's line is not a result the interpreter accepts; the message says why."""


# Work done here after the interpreter forked a child pays a copy-on-write fault for each page
# it first writes to (allocations and reference counts included), a few microseconds each:
# the parse and the checks below copy and touch as little as they can.


def parse_child_payload(payload):
    """The checked result in the first line the child wrote (anything after it is
    ignored); None when it wrote no whole line. Raises RefusedResult for a line that is
    not a well-formed result."""
    end = payload.find(b"\n")
    if end < 0:
        return None
    try:
        result = json.loads(payload[:end])
    except (ValueError, RecursionError) as exc:
        raise RefusedResult(f"the result is not JSON: {runner.safe_str(exc)}") from None
    return checked_result(result)


# --- what the interpreter itself checks of a result ------------------------------------------------

# What a runner result holds; whatever else the child put in is dropped.
_RESULT_KEYS = frozenset(
    ("ok", "stdout", "stderr", "error", "spans", "truncated", "tables", "result", "figures", "trace")
)


def _refuse(what):
    raise RefusedResult(f"the result does not have the expected form: {what}")


def checked_result(value):
    """`value` (parsed JSON) with only the keys of a runner result, checked where the
    interpreter relies on it: its table files (plain names the runner gives, at most
    runner.MAX_TABLES; the files themselves are checked by `_check_table_files` in
    interpreter.py) and stderr (which gets notes appended). Raises RefusedResult otherwise.
    Node validates every field against RunnerResultSchema (results.ts) and refuses a
    result that does not match; not validating it all twice keeps the interpreter's share of a
    request small (each object it touches after a fork costs a copy-on-write fault)."""
    if type(value) is not dict:
        _refuse("it is not an object")
    if not value.keys() <= _RESULT_KEYS:
        # The interpreter's envelope (`type`, `id`, `scratch`) among them.
        for key in [key for key in value if key not in _RESULT_KEYS]:
            del value[key]
    if type(value.get("stderr")) is not str:
        _refuse("stderr is not a string")
    tables = value.get("tables")
    if type(tables) is not list or len(tables) > runner.MAX_TABLES:
        _refuse(f"tables is not a list of at most {runner.MAX_TABLES}")
    for table in tables:
        if type(table) is not dict or type(table.get("variable")) is not str:
            _refuse("a table is not an object with a variable name")
        file_name = table.get("file")
        if type(file_name) is not str or not TABLE_FILE_NAME.fullmatch(file_name):
            _refuse(f"table file {str(file_name)[:80]!r} is not a name the runner gives")
    return value


def request_lines(fd, reaper, poll_s):
    """The lines of the request stream, read so that, while waiting for the next one, the
    processes `reaper` still waits for are collected every `poll_s`."""
    pending = b""
    while True:
        if b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            yield line
            continue
        if not select.select([fd], [], [], poll_s if reaper.waiting() else None)[0]:
            reaper.collect()
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            if pending:
                yield pending
            return
        pending += chunk
