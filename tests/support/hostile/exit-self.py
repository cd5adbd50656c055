# The process ended with os._exit before it could report.
# expect: Crashed
# message: exited with code 7
import os

os._exit(7)
