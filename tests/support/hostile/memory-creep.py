# Memory taken 64 MB at a time, each chunk touched: stopped near memory_mb.
# expect: MemoryError
# message: address-space limit
# memory-mb: 256
chunks = []
while True:
    chunks.append(bytearray(64 * 1024**2))
