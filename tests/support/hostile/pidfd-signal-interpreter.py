# A SIGKILL for the warm interpreter sent through a pidfd, without os.kill (which the audit hook
# sees): nothing in Python raises an audit event for pidfd_open or pidfd_send_signal.
# expect: PermissionError
# message: Operation not permitted
import os
import signal

pidfd = os.pidfd_open(os.getppid())
signal.pidfd_send_signal(pidfd, signal.SIGKILL)
print("sent")
