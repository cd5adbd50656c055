# A symlink planted in scratch that points outside, then read through.
# expect: PermissionError
# message: reading outside the scratch directory and the run's tables is not allowed
# check: no-secret
import os

os.symlink("{{PRIVATE_FILE}}", "notes.txt")
with open("notes.txt") as handle:
    print(handle.read())
