"""Framing of the warm worker's messages (see worker.py for the messages themselves).

Requests arrive as one JSON object per line on stdin; replies leave as one JSON object
per line on PROTOCOL_FD. A child hands its result to the worker as one line of JSON on a
pipe of its own, read here with a deadline and a size cap.

Imports runner (and so pandas): import this only after hardening.enter_empty_netns().
"""

import json
import os
import select
import time

import runner

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


def parse_child_payload(payload):
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
