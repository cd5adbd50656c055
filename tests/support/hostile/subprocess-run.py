# A subprocess through the subprocess module.
# expect: PermissionError
# message: starting processes is not allowed \(subprocess\.Popen\)
import subprocess

print(subprocess.run(["ls", "/"], capture_output=True).stdout)
