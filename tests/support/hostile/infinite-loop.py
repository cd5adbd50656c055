# An endless loop: stopped at its timeout by the soft alarm.
# expect: Timeout
# message: ^execution exceeded 500 ms$
# timeout-ms: 500
print("looping")
while True:
    pass
