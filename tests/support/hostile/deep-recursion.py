# A recursion limit raised to a million, then recursion through C calls that would
# overflow the C stack: capped, so it ends as a RecursionError instead of a crash.
# expect: RecursionError
# message: maximum recursion depth exceeded
import sys

sys.setrecursionlimit(10**6)


def dive(depth):
    return sorted([depth], key=lambda _: dive(depth + 1))


dive(0)
