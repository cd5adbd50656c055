# A result forged on the child's own result pipe (every descriptor is tried), claiming a
# table whose file is a symlink to /etc/passwd. The line carries no seal of the runner's,
# so the worker refuses the run's result as a whole; the table is never looked at.
# expect: ProtocolError
# message: not sealed by the runner
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
