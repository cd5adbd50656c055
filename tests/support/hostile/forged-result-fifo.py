# Issue 22: the code walks up its Python frames to the child's result descriptor, writes a
# forged success naming a FIFO it made in scratch as a table it left, and exits at once.
# Once, the interpreter passed the line on and Node opened the FIFO, waiting for a writer for
# ever (four such runs took every libuv file thread). The code runs in a process of its
# own whose copy of that descriptor leads to /dev/null: the line goes nowhere, the run ends
# without a report, and nobody opens the FIFO.
# expect: Crashed
# message: exited with code 0 before returning a result
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
