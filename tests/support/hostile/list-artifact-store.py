# The artifact store, every user's tables, listed and then read file by file.
# expect: PermissionError
# message: reading outside the scratch directory and the run's tables is not allowed
# check: no-secret
# tables: own
import os

for entry in os.listdir("{{ARTIFACT_DIR}}"):
    with open(os.path.join("{{ARTIFACT_DIR}}", entry)) as handle:
        print(handle.read())
