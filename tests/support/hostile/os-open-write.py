# A file created with os.open and raw flags.
# expect: PermissionError
# message: writing outside the scratch directory is not allowed
# check: no-files
import os

fd = os.open("{{TMP_FILE}}", os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b"owned")
