"""The cell index of a table, computed from the DataFrame the sandbox loaded (frame-index.ts).

Run as the code of a sandbox request, in a forked child of the warm interpreter: `df` is the table
the interpreter parsed and keeps for the run that follows, so the index costs no parse of its own.
frame-index.ts puts `MAX_CELLS` and `TOP_VALUES` in front of this text; the child prints one
line of JSON, the TableIndex of cell-index.ts without its first rows (Node reads those from the
file as written).

Same rules as the Node and DuckDB builds: missing cells are pandas' NaN, values counted most
frequent first (ties: first seen), the global cap most frequent first, then by column, then by
value in JavaScript's order (UTF-16 code units). Values are as pandas holds them: numbers are
written as Python writes them, which may spell a number otherwise than the file does.
"""

import json
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

# Columns are counted on two threads from this many rows (pandas' factorizing lets go of the GIL
# for much of its work: about 1.7x on two cores); below it, threads cost more than they save.
THREADED_ROWS = 50_000


def _text(value):
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return str(value)


def _js_order(text):
    return text.encode("utf-16-be", "surrogatepass")


def _counted(series):
    """(distinct values in order of first appearance, their counts, missing cells)."""
    codes, uniques = pd.factorize(series, sort=False)
    # Missing cells are code -1: counted in bin 0, the values from bin 1 on.
    bins = np.bincount(codes + 1, minlength=len(uniques) + 1)
    return uniques, bins[1:].astype(np.int64), int(bins[0])


def _all_counted(frame):
    """`_counted` of each column: on two threads where there are two cores and rows enough, one
    after the other where a thread cannot start (the run's address space is bounded)."""
    columns = [frame.iloc[:, position] for position in range(frame.shape[1])]
    if len(frame) >= THREADED_ROWS and (os.cpu_count() or 1) > 1 and len(columns) > 1:
        try:
            with ThreadPoolExecutor(2) as pool:
                return list(pool.map(_counted, columns))
        except (RuntimeError, MemoryError):
            pass
    return [_counted(series) for series in columns]


def _most_frequent(counts, limit):
    """Positions of the `limit` most frequent values, most frequent first, ties first seen."""
    if len(counts) > limit:
        kth = len(counts) - limit
        threshold = np.partition(counts, kth)[kth]
        above = np.flatnonzero(counts > threshold)
        tied = np.flatnonzero(counts == threshold)[: limit - len(above)]
        chosen = np.concatenate([above, tied])
    else:
        chosen = np.arange(len(counts))
    return chosen[np.lexsort((chosen, -counts[chosen]))]


def _range(series):
    """The lowest and highest number of a numeric column (the first one on a tie)."""
    values = series.to_numpy()
    if values.dtype.kind == "f":
        kept = np.flatnonzero(~np.isnan(values))
        if len(kept) == 0:
            return None
        values = values[kept]
    low, high = int(np.argmin(values)), int(np.argmax(values))
    return {"low": _text(values[low]), "high": _text(values[high])}


def _capped(columns, limit):
    """The global cap over each column's (values as text, counts), both most frequent first."""
    counts = np.concatenate([c for _, c in columns]) if columns else np.zeros(0, np.int64)
    threshold = -1 if len(counts) <= limit else np.partition(counts, len(counts) - limit)[len(counts) - limit]
    above = []
    tied = []
    for position, (values, column_counts) in enumerate(columns):
        more = int(np.count_nonzero(column_counts > threshold))
        same = int(np.count_nonzero(column_counts == threshold))
        above.extend(zip(column_counts[:more].tolist(), [position] * more, values[:more]))
        tied.append(values[more : more + same])
    above.sort(key=lambda e: (-e[0], e[1], _js_order(e[2])))
    # Ties at the cut: by column, then by value; only as many as there is room for.
    for position, values in enumerate(tied):
        room = limit - len(above)
        if room <= 0:
            break
        texts = sorted(values, key=_js_order)[:room]
        above.extend((int(threshold), position, text) for text in texts)
    return [{"column": position, "value": text, "count": count} for count, position, text in above[:limit]]


def frame_index(frame, max_cells, top_values):
    stats = []
    kept = []
    for position, (uniques, counts, missing) in enumerate(_all_counted(frame)):
        series = frame.iloc[:, position]
        order = _most_frequent(counts, max(max_cells, top_values))
        values = [_text(v) for v in uniques.take(order).tolist()]
        column_counts = counts[order]
        column = {
            "name": str(frame.columns[position]),
            "dtype": str(series.dtype),
            "missing": missing,
            "distinct": int(len(uniques)),
            "top": [{"value": v, "count": int(n)} for v, n in zip(values[:top_values], column_counts[:top_values])],
        }
        if series.dtype == bool:
            true_count = int(series.sum())
            column["booleans"] = {"trueCount": true_count, "falseCount": len(series) - missing - true_count}
        elif series.dtype.kind in "iuf" and len(uniques) > 0:
            found = _range(series)
            if found:
                column["range"] = found
        stats.append(column)
        kept.append((values[:max_cells], column_counts[:max_cells]))
    cells = _capped(kept, max(max_cells, 0))
    shown = [0] * len(stats)
    for cell in cells:
        shown[cell["column"]] += 1
    return {
        "rowCount": int(len(frame)),
        "columns": stats,
        "cells": cells,
        "complete": [shown[i] >= column["distinct"] for i, column in enumerate(stats)],
    }


if __name__ == "__main__":
    print(json.dumps(frame_index(df, MAX_CELLS, TOP_VALUES), ensure_ascii=True, allow_nan=False))  # noqa: F821
