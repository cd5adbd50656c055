# A symlink planted in scratch that points outside, then written through.
# expect: PermissionError
# message: writing outside the scratch directory is not allowed
# check: no-files
import os

os.symlink("{{TMP_FILE}}", "innocent.txt")
with open("innocent.txt", "w") as handle:
    handle.write("owned")
