# A file outside scratch created by SQLite itself (ATTACH opens it in C, out of the audit
# hook's sight), from an in-memory database the hook would have let through.
# expect: PermissionError
# message: sqlite3 is not allowed
# check: no-files
import sqlite3

connection = sqlite3.connect(":memory:")
connection.execute("ATTACH DATABASE '{{TMP_FILE}}' AS outside")
connection.execute("CREATE TABLE outside.loot (x)")
connection.commit()
print("attached")
