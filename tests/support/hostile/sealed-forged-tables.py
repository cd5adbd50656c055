# The code's process reports its run to the child that forked it, and the code can write
# that report itself, with what it chose: here tables whose files are a FIFO, a symlink to
# /etc/passwd, a directory and a hard link. Each file is opened without blocking or
# following a link and checked through its descriptor (by the interpreter, and by Node again):
# all four are refused with a note, and the run completes.
# expect: ok
# stdout: ^forged\n$
# check: no-table-leak
import json
import os
import sys

os.mkfifo("_tableminds_table_0.csv")
os.symlink("/etc/passwd", "_tableminds_table_1.csv")
os.mkdir("_tableminds_table_2.csv")
with open("plain.csv", "w") as handle:
    handle.write("x\n1\n")
os.link("plain.csv", "_tableminds_table_3.csv")


def table(variable, index):
    return {
        "variable": variable,
        "line": 1,
        "file": f"_tableminds_table_{index}.csv",
        "rows": 1,
        "columns": [{"name": "x", "dtype": "int64"}],
        "lineage": [],
    }


forged = {
    "ok": True,
    "stdout": "forged\n",
    "stderr": "",
    "error": None,
    "spans": [],
    "truncated": False,
    "tables": [table("loot", 0), table("passwd", 1), table("folder", 2), table("linked", 3)],
    "result": None,
}
frame = sys._getframe()
while "write_fd" not in frame.f_locals:
    frame = frame.f_back
report = {"value": {**forged, "from_index": None, "figures": []}}
os.write(frame.f_locals["write_fd"], json.dumps(report).encode())
os._exit(0)
