# The directories above scratch, where other runs' scratch and table files live.
# expect: PermissionError
# message: reading outside the scratch directory and the run's tables is not allowed
import os

print(os.listdir(".."))
