"""One request inside an E2B sandbox: runner.py's one-shot run, hardened like the local
sandbox's children with hardening.py's audit hook (no sockets, no new processes, no
ctypes, writes only in scratch, reads only of Python, the system files pandas needs and
scratch; read_rules.py's allow-list, with this workspace left out).

    python3 e2b_runner.py REQUEST.json RESULT.partial WORKSPACE

RESULT.partial is opened before the code runs (the hook refuses writes outside scratch
afterwards) and filled once the code has finished; the shell renames it. The code runs, once
and for each re-run, in a process forked for it that closes RESULT.partial first (runner.py's
`fork`): this process writes what they report. The result is
runner.py's, with `file_bytes` added: the size of each exported table and figure file.
"""

import os
import sys

sys.dont_write_bytecode = True

import hardening  # noqa: E402
import read_rules  # noqa: E402
import runner  # noqa: E402


def main(request_path, result_path, workspace):
    try:
        request = runner._read_request(request_path)
    except BaseException as exc:
        sys.stderr.write(f"e2b_runner.py: bad request {request_path}: {runner.describe(exc)}\n")
        return 2
    out = os.open(result_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    scratch = os.path.realpath(request["scratch"])
    try:
        named_tables = [(t["name"], runner.load_table(t["path"])) for t in request["tables"]]
        named_tables = runner.with_dates(named_tables, runner.dates_of(request["tables"]))
    except BaseException as exc:
        os.write(out, runner.dumps(runner.failure_from("TableLoadError", exc)).encode("ascii"))
        return 0
    try:
        rules = read_rules.ReadRules(excluded=[os.path.realpath(workspace)])

        def confine(run_dir=None, _made=None):
            # Each run in a process of its own, with the result file out of its reach; a
            # re-run in a folder of its own, out of reach of what the first run left.
            os.close(out)
            hardening.forget_raw_modules()
            plan = hardening.hook_plan(scratch, rules, run_dir)
            sys.addaudithook(hardening.audit_hook(run_dir or scratch, rules, plan))

        result = runner.execute(
            request["code"],
            named_tables,
            request["timeout_ms"],
            request["output_bytes"],
            scratch,
            lineage=request["lineage"],
            table_files={t["name"]: t["path"] for t in request["tables"]},
            fork=confine,
        )
        sizes = {}
        files = [table["file"] for table in result["tables"]]
        files += [name for figure in result.get("figures", []) for name in figure["files"].values()]
        for name in files:
            try:
                sizes[name] = os.stat(os.path.join(scratch, name)).st_size
            except OSError:
                pass
        result["file_bytes"] = sizes
        text = runner.dumps(result)
    except BaseException as exc:
        text = runner.dumps(runner.failure_from("SandboxError", exc))
    data = (text + "\n").encode("ascii")
    while data:
        data = data[os.write(out, data):]
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.stderr.write("usage: python3 e2b_runner.py REQUEST.json RESULT.partial WORKSPACE\n")
        sys.exit(2)
    code = main(*sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # Not sys.exit: threads the code left running must not keep the process alive.
    os._exit(code)
