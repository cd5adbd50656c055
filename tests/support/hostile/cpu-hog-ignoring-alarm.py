# A busy loop that ignores the soft alarm: the wall-clock kill (or RLIMIT_CPU) ends it.
# expect: Timeout
# message: ^execution exceeded 500 ms$
# timeout-ms: 500
import signal

signal.signal(signal.SIGALRM, signal.SIG_IGN)
while True:
    pass
