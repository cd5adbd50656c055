# Another run's table, read by its content address while this run has a table of its own.
# expect: PermissionError
# message: reading outside the scratch directory and the run's tables is not allowed
# check: no-secret
# tables: own
import pandas as pd

print(pd.read_csv("{{OTHER_TABLE}}").to_string())
