# TableBench's Visualization comparison, rewritten to behave as upstream's chart_metric_utils:
# the references and the values read off the figure, each flattened once, rounded to 2 places
# and sorted with Python's own ordering (NaN included), then compared pairwise.
#
# Two uses (chart.ts): above chart_parser.py, so the chart code sees upstream's helper names;
# and alone, with `_COMPARE = {"chart_type", "references", "predictions"}` above it, to judge
# the values the sandbox read off a figure (JSON: NaN as null, infinities as "inf"/"-inf").
import json

import numpy as np

COMPARE_MARKER = "__TABLEMINDS_CHART_COMPARE__"


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


_SPECIAL = {None: float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def _decoded(values):
    """Values as JSON carried them, back to Python's numbers."""
    out = []
    for value in values:
        if isinstance(value, list):
            out.append(_decoded(value))
        else:
            out.append(_SPECIAL.get(value, value) if value is None or isinstance(value, str) else value)
    return out


def _judge(request):
    """What upstream's second run prints for the comparison: True or False; None when it
    raises (its verdict then is no verdict). The predictions come rounded already, each as
    std_digit rounds its own type (chart_reading.py): they are compared as they are."""
    references = _decoded(request["references"])
    predictions = _flatten_once(_decoded(request["predictions"]))
    try:
        if request["chart_type"] == "pie":
            flat = _flatten_once(references)
            total = 0
            for value in flat:
                total += value
            return bool(compare(std_digit([round(v / total, 2) for v in flat]), predictions))
        return bool(compare(std_digit(_flatten_once(references)), predictions))
    except Exception:
        return None


if "_COMPARE" in globals():
    print(COMPARE_MARKER + json.dumps({"verdict": _judge(_COMPARE)}))  # noqa: F821 (set by chart.ts)
