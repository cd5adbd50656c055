# The run's own table, overwritten through the link scratch has to it (a hard link of the artifact).
# expect: PermissionError
# message: writing outside the scratch directory is not allowed
# check: own-intact
# tables: own
with open("own.csv", "w") as handle:
    handle.write("x\n666\n")
