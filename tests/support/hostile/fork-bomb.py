# A fork bomb: os.fork is refused before the first process exists.
# expect: PermissionError
# message: starting processes is not allowed \(os\.fork\)
import os

while True:
    os.fork()
