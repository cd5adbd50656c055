# A socket made by hand, without name resolution.
# expect: PermissionError
# message: network access is not allowed \(socket\.__new__\)
# check: no-connection
import socket

probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
probe.connect(("127.0.0.1", {{PORT}}))
