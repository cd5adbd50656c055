# A private file's mode and times changed through dir_fd: the same relative path names a file
# in scratch when read against the working directory and the private file when read against
# the descriptor, which is what the kernel uses. Landlock does not cover a file's metadata.
# expect: PermissionError
# message: changing a file's mode, owner, times or extended attributes is not allowed \(os.chmod\)
import os

scratch = os.getcwd()
depth = scratch.count("/")
below = "sub/" * (depth + 1)
os.makedirs(below)
top = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
os.chdir(below)
# From `top` (scratch) this climbs to / and then down to the private file; from the working
# directory, depth + 1 levels below scratch, it climbs only to scratch/sub.
path = "../" * depth + "{{PRIVATE_FILE}}".lstrip("/")
os.chmod(path, 0o644, dir_fd=top)
os.utime(path, (0, 0), dir_fd=top)
print("changed")
