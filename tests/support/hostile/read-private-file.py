# A private file outside scratch (a stand-in for ~/.aws/credentials), read and printed.
# expect: PermissionError
# message: reading outside the scratch directory and the run's tables is not allowed
# check: no-secret
with open("{{PRIVATE_FILE}}") as handle:
    print(handle.read())
