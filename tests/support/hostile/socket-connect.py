# A TCP connection to a server of the test on 127.0.0.1; the server must see nothing.
# expect: PermissionError
# message: network access is not allowed
# check: no-connection
import socket

connection = socket.create_connection(("127.0.0.1", {{PORT}}), timeout=2)
connection.sendall(b"hello")
