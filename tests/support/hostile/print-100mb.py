# 100 MB printed: kept up to the output cap, the rest dropped.
# expect: ok
# check: truncated
# output-bytes: 65536
for _ in range(100):
    print("x" * 1_000_000)
