# The times of the run's own table (a hard link to the artifact store's file where Landlock
# holds) set through a descriptor opened for reading; `tableminds prune` goes by them.
# expect: PermissionError
# message: changing a file's mode, owner, times or extended attributes is not allowed \(os.utime\)
# check: own-intact
# tables: own
import os

fd = os.open("{{OWN_FILE}}", os.O_RDONLY)
os.utime(fd, (0, 0))
print("changed")
