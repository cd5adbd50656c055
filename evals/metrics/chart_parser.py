# TableBench's Visualization parser, rewritten to behave as upstream's
# parse_tablebench_instruction_response_script.py does for one chart question.
# chart.ts puts `_REQUEST = {"code", "answer", "chart_type", "columns", "data"}`, then
# sandbox/chart_reading.py (upstream's readings of a figure) and chart_compare.py
# (its comparison) above this text, and runs the whole in the sandbox.
#
# The drawn values are not read here: upstream reads `plt.gca()` at the end of its second run,
# and the sandbox reads every figure the run leaves open (the same reader), so this script
# leaves its figures open and reports what the second run printed and its references; chart.ts
# compares the sandbox's reading of the current axes with them (chart_compare.py).
import ast
import builtins
import io
import json
import os
import re
import signal
import sys
import time
import types

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

plt.show = lambda *args, **kwargs: None

RUN_SECONDS = 15
VERDICT_MARKER = "__TABLEMINDS_CHART__"


# --- running the code as upstream does ---------------------------------------------------


def _as_main(code):
    """The code stripped, each line indented under `if __name__ == '__main__':`."""
    body = "".join(f"    {line}\n" for line in code.strip().split("\n"))
    return "\nif __name__ == '__main__':\n" + body


HELPERS = (
    "compare",
    "std_digit",
    "compute_general_chart_metric",
    "compute_pie_chart_metric",
    "get_line_y_predictions",
    "get_bar_y_predictions",
    "get_hbar_y_predictions",
    "get_pie_y_predictions",
    "get_area_y_predictions",
    "get_radar_y_predictions",
    "get_scatter_y_predictions",
    "get_waterfall_y_predictions",
)


def _upstream_globals():
    """What the chart code sees as its globals: upstream's parser module's (less its file
    and parsing helpers), and `metrics.chart_metric_utils` importable, as the second run
    begins with `from metrics.chart_metric_utils import *`."""
    helpers = types.ModuleType("metrics.chart_metric_utils")
    helpers.np = np
    for name in HELPERS:
        setattr(helpers, name, globals()[name])
    package = types.ModuleType("metrics")
    package.__path__ = []
    package.chart_metric_utils = helpers
    sys.modules.update({"metrics": package, "metrics.chart_metric_utils": helpers})
    names = {"__name__": "__main__", "__builtins__": builtins}
    names.update(re=re, os=os, sys=sys, pd=pd, plt=plt, ast=ast, np=np)
    names.update({name: getattr(helpers, name) for name in HELPERS})
    return names


UPSTREAM_GLOBALS = _upstream_globals()


def execute(c):
    # Upstream's bare exec() inside a function: the module's globals, and the call's own
    # locals (holding `c`), so the code's top-level names are not seen by the functions
    # and (before Python 3.12) the comprehensions it defines. The locals are returned.
    names = {"c": c}
    exec(c, UPSTREAM_GLOBALS, names)
    return names


def _expire(signum, frame):
    raise TimeoutError(f"the chart code ran for more than {RUN_SECONDS} s")


def _execute_with_limit(code):
    """execute() under upstream's 15 s limit (a TimeoutError raised into the code). The
    sandbox's own timer is put back afterwards with the time it had left."""
    previous = signal.signal(signal.SIGALRM, _expire)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, RUN_SECONDS)
    started = time.monotonic()
    try:
        return execute(code)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer > 0:
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - started), 0.001))


class _Discard(io.TextIOBase):
    def writable(self):
        return True

    def write(self, text):
        return len(text)


def _write_table(columns, data):
    """table.csv as upstream writes it: one dict per row, so a repeated column name keeps
    its first place and its last value."""
    rows = []
    for cells in data:
        row = {}
        for i, name in enumerate(columns):
            row[name] = cells[i]
        rows.append(row)
    pd.DataFrame(rows).to_csv("table.csv", index=False)


def _first_run(code, preamble):
    """Upstream's ECR@1 run: the code alone. Its prints went to upstream's terminal."""
    real = sys.stdout
    sys.stdout = _Discard()
    try:
        _execute_with_limit(_as_main(preamble + code.strip()))
        return True
    except (Exception, SystemExit):
        return False
    finally:
        sys.stdout = real


def _second_run(code, preamble, answer, chart_type):
    """Upstream's Pass@1 run, in the same process with the first run's figures still open:
    the code again, the references and the chart type (upstream then reads `plt.gca()` and
    prints the comparison; here the sandbox reads the figures once the script ends). Its
    verdict is all it printed, stripped, so whether the code printed anything decides too.
    `ran`: it raised nothing; `references`: y_references as JSON holds drawn values (null
    when one is no number: upstream's rounding raises on it)."""
    source = f"from metrics.chart_metric_utils import *\n{preamble}{code}\n{answer}\nchart_type=\"{chart_type}\"\n"
    captured = io.StringIO()
    real = sys.stdout
    try:
        sys.stdout = captured
        try:
            names = _execute_with_limit(_as_main(source))
        finally:
            sys.stdout = real
    except (Exception, SystemExit):
        return {"ran": False, "printed": False, "references": None}
    try:
        references = encode_reading(names["y_references"])  # noqa: F821 (chart_reading.py)
    except Exception:
        references = None
    return {"ran": True, "printed": captured.getvalue().strip() != "", "references": references}


def _preamble(code):
    """Ours, not upstream's: code written for this project's sandbox uses `df` without
    reading table.csv. It gets the read as a first line, so that it runs as code written
    for upstream does. Code that names table.csv, or no `df`, runs exactly as upstream's."""
    if "table.csv" in code or not re.search(r"\bdf\b", code):
        return ""
    return "df = pd.read_csv('table.csv')\n"


def _parse_chart(request):
    """Both runs; the figures stay open for the sandbox to read."""
    _write_table(request["columns"], request["data"])
    code, preamble = request["code"], _preamble(request["code"])
    ecr = _first_run(code, preamble)
    second = _second_run(code, preamble, request["answer"], request["chart_type"])
    return {"ecr": ecr, "second": second}


print(VERDICT_MARKER + json.dumps(_parse_chart(_REQUEST)))  # noqa: F821 (set by chart.ts)
