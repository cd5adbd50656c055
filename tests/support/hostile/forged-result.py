# A result forged on the child's own result pipe, claiming a table whose file is a
# symlink to /etc/passwd: the code may say what it likes about itself, but the symlink
# is not followed when the table is stored.
# expect: ok
# stdout: ^forged\n$
# check: no-table-leak
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
