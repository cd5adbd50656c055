# TableBench's Visualization parser, rewritten to behave as upstream's
# parse_tablebench_instruction_response_script.py does for one chart question.
# chart.ts puts `_REQUEST = {"code", "answer", "chart_type", "columns", "data"}` above
# this text and runs the whole in the sandbox.
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


# --- reading the drawn values back (upstream's chart helpers) ---------------------------


def get_line_y_predictions(plt):
    return [list(line.get_ydata()) for line in plt.gca().get_lines()]


def get_bar_y_predictions(plt):
    return [patch.get_height() for patch in plt.gca().patches]


def get_hbar_y_predictions(plt):
    return [patch.get_width() for patch in plt.gca().patches]


def get_pie_y_predictions(plt):
    return [round((wedge.theta2 - wedge.theta1) / 360.0, 2) for wedge in plt.gca().patches]


def get_area_y_predictions(plt):
    # get_paths()[0] raises on an empty collection, which fails the chart as upstream's does.
    return [[y for y in c.get_paths()[0].vertices[:, 1] if y != 0] for c in plt.gca().collections]


def get_radar_y_predictions(plt):
    return [list(line.get_ydata())[:-1] for line in plt.gca().get_lines()]


def get_scatter_y_predictions(plt):
    return [[point[1] for point in c.get_offsets()] for c in plt.gca().collections]


get_waterfall_y_predictions = get_bar_y_predictions


def _flatten_once(values):
    flat = []
    for value in values:
        if isinstance(value, list):
            flat.extend(value)
        else:
            flat.append(value)
    return flat


def std_digit(values):
    return [round(v, 2) for v in values]


def compare(left, right):
    # Sorted in place with Python's own ordering (NaN included), then compared pairwise:
    # NaN matches only NaN.
    left.sort()
    right.sort()
    if len(left) != len(right):
        return False
    for a, b in zip(left, right):
        if np.isnan(a):
            if not np.isnan(b):
                return False
        elif a != b:
            return False
    return True


def compute_general_chart_metric(references, predictions):
    return compare(std_digit(_flatten_once(references)), std_digit(_flatten_once(predictions)))


def compute_pie_chart_metric(references, predictions):
    flat = _flatten_once(references)
    total = 0
    for value in flat:
        total += value
    shares = [round(v / total, 2) for v in flat]
    return compare(std_digit(shares), std_digit(_flatten_once(predictions)))


# What upstream appends to the chart code for its second run.
READ_AND_COMPARE = """
if chart_type == 'line':
    y_predictions = get_line_y_predictions(plt)
if chart_type == 'bar':
    y_predictions = get_bar_y_predictions(plt)
if chart_type == 'hbar':
    y_predictions = get_hbar_y_predictions(plt)
if chart_type == 'pie':
    y_predictions = get_pie_y_predictions(plt)
if chart_type == 'area':
    y_predictions = get_area_y_predictions(plt)
if chart_type == 'radar':
    y_predictions = get_radar_y_predictions(plt)
if chart_type == 'scatter':
    y_predictions = get_scatter_y_predictions(plt)
if chart_type == 'waterfall':
    y_predictions = get_waterfall_y_predictions(plt)
if chart_type == 'pie':
    print(compute_pie_chart_metric(y_references, y_predictions))
else:
    print(compute_general_chart_metric(y_references, y_predictions))
"""


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
    # and (before Python 3.12) the comprehensions it defines.
    exec(c, UPSTREAM_GLOBALS, {"c": c})


def _expire(signum, frame):
    raise TimeoutError(f"the chart code ran for more than {RUN_SECONDS} s")


def _execute_with_limit(code):
    """execute() under upstream's 15 s limit (a TimeoutError raised into the code). The
    sandbox's own timer is put back afterwards with the time it had left."""
    previous = signal.signal(signal.SIGALRM, _expire)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, RUN_SECONDS)
    started = time.monotonic()
    try:
        execute(code)
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
    the code again, the references, the chart type, and the reading code. The verdict is
    what it printed, stripped: exactly "True" passes; anything else printed with it fails."""
    source = (
        f"from metrics.chart_metric_utils import *\n{preamble}{code}\n{answer}\n"
        f'chart_type="{chart_type}"\n{READ_AND_COMPARE}'
    )
    captured = io.StringIO()
    real = sys.stdout
    try:
        sys.stdout = captured
        try:
            _execute_with_limit(_as_main(source))
        finally:
            sys.stdout = real
        printed = captured.getvalue()
    except (Exception, SystemExit):
        printed = ""
    return {"True": True, "False": False}.get(printed.strip())


def _preamble(code):
    """Ours, not upstream's: code written for this project's sandbox uses `df` without
    reading table.csv. It gets the read as a first line, so that it runs as code written
    for upstream does. Code that names table.csv, or no `df`, runs exactly as upstream's."""
    if "table.csv" in code or not re.search(r"\bdf\b", code):
        return ""
    return "df = pd.read_csv('table.csv')\n"


def _parse_chart(request):
    _write_table(request["columns"], request["data"])
    code, preamble = request["code"], _preamble(request["code"])
    ecr = _first_run(code, preamble)
    verdict = _second_run(code, preamble, request["answer"], request["chart_type"])
    plt.close("all")
    return {"ecr": ecr, "verdict": verdict}


print(VERDICT_MARKER + json.dumps(_parse_chart(_REQUEST)))  # noqa: F821 (set by chart.ts)
