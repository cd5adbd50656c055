# The secrets read from the environment of an ancestor process through /proc.
# expect: PermissionError
# message: reading other processes is not allowed
# check: no-secret
import os

pid = os.getppid()
while pid > 1:
    with open(f"/proc/{pid}/environ", "rb") as handle:
        print(handle.read())
    with open(f"/proc/{pid}/stat") as handle:
        pid = int(handle.read().rsplit(")", 1)[1].split()[1])
