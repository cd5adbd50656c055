# fork() called through ctypes, below the audit events of the os module.
# expect: ModuleNotFoundError
# message: ctypes and other modules that reach raw memory are not allowed
import ctypes

libc = ctypes.CDLL(None)
print(libc.fork())
