# The warm interpreter's limits set from its child: no signal is sent, yet a CPU limit of one
# second kills it. Landlock does not cover prlimit.
# expect: PermissionError
# message: other processes' limits are out of reach \(resource.prlimit\)
import os
import resource

resource.prlimit(os.getppid(), resource.RLIMIT_CPU, (1, 1))
print("limited")
