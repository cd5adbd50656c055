# Issue 22: the code walks up its Python frames to the child's result descriptor, writes a
# forged success naming a FIFO it made in scratch as a table it left, and exits at once.
# Before the seal, the worker passed the line on and Node opened the FIFO, waiting for a
# writer for ever (four such runs took every libuv file thread). The line is not sealed:
# the worker refuses it, and nobody opens the FIFO.
# expect: ProtocolError
# message: not sealed by the runner
import json
import os
import sys

os.mkfifo("_tableminds_table_0.csv")
forged = {
    "ok": True,
    "stdout": "forged\n",
    "stderr": "",
    "error": None,
    "spans": [],
    "truncated": False,
    "tables": [
        {
            "variable": "loot",
            "line": 1,
            "file": "_tableminds_table_0.csv",
            "rows": 1,
            "columns": [{"name": "x", "dtype": "int64"}],
            "lineage": [],
        }
    ],
    "result": None,
}
descriptor = None
frame = sys._getframe()
while frame is not None and descriptor is None:
    descriptor = frame.f_locals.get("result_fd")
    frame = frame.f_back
if descriptor is None:
    raise SystemExit("the result descriptor was not found in any frame")
os.write(descriptor, (json.dumps(forged) + "\n").encode())
os._exit(0)
