# A shell command through os.system, which would create a file outside scratch.
# expect: PermissionError
# message: starting processes is not allowed \(os\.system\)
# check: no-files
import os

os.system("touch {{TMP_FILE}}")
