# Secrets of the runtime's environment are not in the code's environment.
# expect: ok
# stdout: ^no secrets\n$
# check: no-secret
import os

leaked = {name: value for name, value in os.environ.items() if "KEY" in name or "sk-" in value}
print(leaked or "no secrets")
