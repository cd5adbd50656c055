# A DataFrame saved by pandas into /tmp, outside scratch.
# expect: PermissionError
# message: writing outside the scratch directory is not allowed
# check: no-files
import pandas as pd

pd.DataFrame({"a": [1, 2]}).to_csv("{{TMP_FILE}}")
