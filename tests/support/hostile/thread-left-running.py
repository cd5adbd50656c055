# A non-daemon thread that never ends: the run still ends, and the thread with it.
# expect: ok
# stdout: ^started\n$
import threading


def spin():
    while True:
        pass


threading.Thread(target=spin, daemon=False).start()
print("started")
