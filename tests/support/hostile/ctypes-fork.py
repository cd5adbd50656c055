# fork() called through ctypes, below the audit events of the os module.
# expect: PermissionError
# message: ctypes is not allowed
import ctypes

libc = ctypes.CDLL(None)
print(libc.fork())
