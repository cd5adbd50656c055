# A SIGKILL aimed at the parent (the warm interpreter).
# expect: PermissionError
# message: signalling other processes is not allowed
import os

os.kill(os.getppid(), 9)
