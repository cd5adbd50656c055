# A private file read through os.open's dir_fd: CPython's "open" audit event does not carry
# dir_fd, so the hook judges the path against the working directory (inside scratch) while
# the kernel reads it against the descriptor. Only Landlock stops this: without it the local
# pool refuses generated code unless the operator opted in.
# expect: PermissionError
# message: Permission denied
# check: no-secret
import os

scratch = os.getcwd()
depth = scratch.count("/")
below = "sub/" * (depth + 1)
os.makedirs(below)
top = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
os.chdir(below)
fd = os.open("../" * depth + "{{PRIVATE_FILE}}".lstrip("/"), os.O_RDONLY, dir_fd=top)
print(os.read(fd, 4096).decode())
