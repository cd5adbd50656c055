# A file written into the project directory.
# expect: PermissionError
# message: writing outside the scratch directory is not allowed
# check: no-files
with open("{{PROJECT_FILE}}", "w") as handle:
    handle.write("owned")
