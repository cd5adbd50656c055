# One allocation of 50 GB: refused at once by the address-space limit.
# expect: MemoryError
# message: address-space limit
import numpy as np

hoard = np.ones(50 * 1024**3 // 8)
print(len(hoard))
