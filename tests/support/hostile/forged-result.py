# A result forged on every descriptor the code's process has, claiming a table whose file
# is a symlink to /etc/passwd. The result pipe is not among them (the code's process has
# /dev/null in its place); the pipe of its own report is, and the forged line spoils that
# report: the run fails as a whole, and the table is never looked at.
# expect: Crashed
# message: sent a report that is not one
# check: no-secret
import json
import os

os.symlink("/etc/passwd", "_tableminds_table_0.csv")
forged = {
    "ok": True,
    "stdout": "forged\n",
    "stderr": "",
    "error": None,
    "spans": [],
    "truncated": False,
    "tables": [{"variable": "loot", "line": 1, "file": "_tableminds_table_0.csv", "rows": 1, "columns": []}],
}
line = (json.dumps(forged) + "\n").encode()
for fd in range(3, 64):
    try:
        os.write(fd, line)
    except OSError:
        pass
