# The process killed itself with SIGKILL.
# expect: Crashed
# message: killed by SIGKILL
import os

os.kill(os.getpid(), 9)
