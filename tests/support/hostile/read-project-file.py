# The project's own files (package.json here; a .env with API keys elsewhere).
# expect: PermissionError
# message: reading outside the scratch directory and the run's tables is not allowed
import json

with open("{{PACKAGE_JSON}}") as handle:
    print(json.load(handle)["name"])
