# The mode of the run's own table changed through a descriptor opened for reading: where
# Landlock holds, the table is a hard link to the artifact store's file, and Landlock does
# not cover a file's mode.
# expect: PermissionError
# message: changing a file's mode, owner, times or extended attributes is not allowed \(os.chmod\)
# check: own-intact
# tables: own
import os

fd = os.open("{{OWN_FILE}}", os.O_RDONLY)
os.chmod(fd, 0o666)
print("changed")
