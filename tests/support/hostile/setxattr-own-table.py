# An extended attribute set on the run's own table (a hard link to the artifact store's file
# where Landlock holds) through a descriptor opened for reading.
# expect: PermissionError
# message: changing a file's mode, owner, times or extended attributes is not allowed \(os.setxattr\)
# check: own-intact
# tables: own
import os

fd = os.open("{{OWN_FILE}}", os.O_RDONLY)
os.setxattr(fd, "user.tableminds-hostile", b"planted")
print("changed")
