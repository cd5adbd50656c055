# The soft alarm and SIGTERM ignored, then a long sleep (no CPU, so no CPU limit
# either): the interpreter's wall-clock kill ends it.
# expect: Timeout
# message: ^execution exceeded 500 ms$
# timeout-ms: 500
import signal
import time

signal.signal(signal.SIGALRM, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
time.sleep(1000)
