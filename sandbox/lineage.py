"""What a run computed, and what it rests on (DESIGN.md, "Evidence that proves").

runner.py calls this after a successful run:

* `capture()` reads the code's result: the value it assigned to the global name `result`,
  else the last line it printed, as a typed value (`result` in runner.py's RESULT.json);
* `Tracer` re-runs the code on copies of its tables: once unchanged (is it deterministic?),
  then on perturbed copies (does it depend on the tables' values at all?), then with one
  column perturbed at a time and one row removed at a time (which columns and rows it rests
  on), within a budget of re-runs and of time;
* `index_rows()` and `produced_lineage()` read lineage off a pandas index, where pandas
  kept the source row ids (tables enter with their row ids 0..n-1 as their index).

The re-running itself (each re-run in a process forked for it in the local sandbox, a fresh
namespace, a throwaway output capture, the timer) belongs to runner.py, which hands a Tracer
its `observe` function; this module decides what to run and what the answers mean. Where
lineage was not traced it is null, never guessed.
"""

import ast
import datetime
import decimal
import hashlib
import json
import math
import re
import time
import types

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

# At most this many values (and labels) of a result are kept.
MAX_VALUES = 1000
MAX_TEXT_CHARS = 500
# A text value longer than this is cut (it is evidence, not a document).
MAX_STRING_CHARS = 10_000
# Rows and columns shown in a Series' or DataFrame's text.
TEXT_ROWS = 20
TEXT_COLUMNS = 10
# The budget of derivation and lineage together.
MAX_RERUNS = 200
MAX_TRACE_S = 3.0
# A lineage run in another process reports changes that upgrade the derivation: at most
# this many are checked again in fresh processes.
MAX_CONFIRMED_CHANGES = 3
PERTURBED_COPIES = 3
# Columns are traced one by one in tables at most this wide; a wider one's by perturbing
# blocks of them and halving the blocks that change the result (a wide election file).
MAX_TRACED_COLUMNS = 16
# Rows are traced one by one (leave one out) in tables at most this long.
MAX_TRACED_ROWS = 64
# A longer table's rows are traced by removing blocks of them and halving the blocks whose
# removal changes the result, in at most this many re-runs (a result resting on a few rows: a
# lookup, an extreme, a small group's sum); past it they stay unknown, never half listed.
ROW_BLOCK_RERUNS = 120
# A longer table is traced on a random sample of this many of its rows (ids kept), so that
# re-runs cost what they cost on a small table.
SAMPLE_ROWS = 5_000
# A result (or produced table) whose index names more rows than this gets no row lineage.
MAX_INDEX_ROWS = 10_000
# Text columns longer than this are not checked for numbers written as text.
MAX_NUMBER_TEXT_ROWS = 100_000
SEED = 20_261_125
# Appended to text cells of a perturbed copy: no value the code looks for survives it.
TEXT_MARK = "~"
# JSON numbers past this become Infinity in JavaScript: kept as text instead.
MAX_JSON_NUMBER = 1e300

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
NUMBER_LINE = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
# A number written as text: sign, currency, thousands separators, decimals, percent.
NUMBER_TEXT = re.compile(r"^(\s*[-+(]?\s*[$€£¥]?\s*)(\d{1,3}(?:,\d{3})+|\d+)?(\.\d+)?(\s*%?\s*\)?\s*)$")
STABLE = "unchanged when the table's values were perturbed: a literal or metadata, not a computation over the table"
NOT_DETERMINISTIC = "not deterministic: a re-run on the unchanged tables gave a different result"
_NOT_VALUES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, type)


class OutOfBudget(Exception):
    """No re-run left, no time left, or no memory for one more."""


def utf16_len(text):
    """Length in UTF-16 code units, as JavaScript counts string offsets."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _text(value):
    try:
        return str(value)
    except BaseException:
        return f"<unprintable {type(value).__name__}>"


def _short(text):
    return text if len(text) <= MAX_TEXT_CHARS else text[: MAX_TEXT_CHARS - 3] + "..."


# --- typed values -------------------------------------------------------------------------


def _iso(value):
    stamp = pd.Timestamp(value)
    if stamp is pd.NaT:
        return None
    if stamp.tz is None and stamp == stamp.normalize():
        return stamp.date().isoformat()
    return stamp.isoformat()


def scalar(value):
    """One value as JSON can hold it: a number, a boolean, text, or null for what is missing."""
    if value is None or value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        number = int(value)
        return number if abs(number) < MAX_JSON_NUMBER else str(number)
    if isinstance(value, (float, np.floating, decimal.Decimal)):
        try:
            number = float(value)
        except (OverflowError, ValueError):
            return _text(value)
        if math.isnan(number):
            return None
        if math.isinf(number):
            return "inf" if number > 0 else "-inf"
        return number
    if isinstance(value, str):
        return value[:MAX_STRING_CHARS]
    if isinstance(value, (pd.Timestamp, datetime.datetime, np.datetime64)):
        return _iso(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, (pd.Timedelta, datetime.timedelta, np.timedelta64)):
        delta = pd.Timedelta(value)
        return None if delta is pd.NaT else str(delta)
    if isinstance(value, bytes):
        return value[:MAX_STRING_CHARS].decode("utf-8", "replace")
    if isinstance(value, tuple):
        return " / ".join(_text(scalar(part)) for part in value)[:MAX_STRING_CHARS]
    # An object's default repr names its address, which differs from run to run.
    return ADDRESS.sub("", _text(value))[:MAX_STRING_CHARS]


def _is_default_index(index):
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def _labels(index, count):
    return [] if _is_default_index(index) else [scalar(label) for label in index[:count]]


def _result(kind, values, labels, text, total):
    return {"kind": kind, "values": values, "labels": labels, "text": _short(text), "total": total}


def _series_like(series, text):
    head = series.iloc[:MAX_VALUES]
    return _result("series", [scalar(v) for v in head.tolist()], _labels(series.index, MAX_VALUES), text, len(series))


def _list(items, total):
    values = [scalar(v) for v in items]
    return _result("list", values, [], _text(values[:60]) + (" ..." if total > 60 else ""), total)


def _frame_text(frame):
    try:
        return frame.to_string(max_rows=TEXT_ROWS, max_cols=TEXT_COLUMNS)
    except BaseException:
        return _text(type(frame).__name__)


def typed(value):
    """A value as kind, values, labels and a short text (plus `total`, the number of values
    before any were cut, which the comparisons use and the result leaves out)."""
    if isinstance(value, pd.DataFrame):
        rows, width = value.shape
        if rows == 1 and width == 1:
            return _result("scalar", [scalar(value.iat[0, 0])], [], _frame_text(value), 1)
        if width == 1:
            return _series_like(value.iloc[:, 0], _frame_text(value))
        head = value.iloc[: max(1, math.ceil(MAX_VALUES / max(width, 1)))]
        cells = [scalar(v) for row in head.itertuples(index=False, name=None) for v in row][:MAX_VALUES]
        return _result("frame", cells, _labels(value.index, len(head)), _frame_text(value), rows * width)
    if isinstance(value, pd.Series):
        try:
            text = value.to_string(max_rows=TEXT_ROWS)
        except BaseException:
            text = "Series"
        return _series_like(value, text)
    if isinstance(value, dict):
        keys = list(value)[:MAX_VALUES]
        values = [scalar(value[k]) for k in keys]
        labels = [scalar(k) for k in keys]
        text = _text(dict(zip(labels[:60], values[:60])))
        return _result("series", values, labels, text, len(value))
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return typed(value.item())
        flat = value.ravel()
        return _list(flat[:MAX_VALUES].tolist(), len(flat))
    if isinstance(value, (pd.Index, pd.api.extensions.ExtensionArray)):
        return _list(list(value[:MAX_VALUES]), len(value))
    if isinstance(value, (list, tuple, range)):
        return _list(list(value[:MAX_VALUES]), len(value))
    if isinstance(value, (set, frozenset)):
        values = sorted((scalar(v) for v in value), key=_key)
        return _list(values[:MAX_VALUES], len(value))
    one = scalar(value)
    return _result("scalar", [one], [], one if isinstance(one, str) else _text(value), 1)


def printed_value(line):
    """A printed line as a value: a number when the whole line is one, else its trimmed text."""
    text = line.strip()
    if NUMBER_LINE.match(text):
        number = float(text)
        if math.isfinite(number) and abs(number) < MAX_JSON_NUMBER:
            if re.fullmatch(r"[-+]?\d+", text) and abs(number) < 2**53:
                return int(text)
            return number
    return text[:MAX_STRING_CHARS]


def last_printed(stdout):
    """The last non-empty line of `stdout`: (text, start, end) in characters, or None."""
    end = len(stdout)
    while end > 0:
        start = stdout.rfind("\n", 0, end) + 1
        if stdout[start:end].strip():
            return stdout[start:end], start, end
        end = start - 1
    return None


def _printed_result(line):
    """A printed line as a result: a printed list, tuple or set (`['a', 'b']`, `(1, 2)`) is
    its items; anything else one value."""
    text = line.strip()
    if len(text) >= 2 and text[0] + text[-1] in ("[]", "()", "{}") and len(text) <= MAX_STRING_CHARS:
        try:
            items = ast.literal_eval(text.replace("np.float64(", "(").replace("np.int64(", "("))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            items = None
        if isinstance(items, (list, tuple, set)) and not isinstance(items, str):
            listed = _list(list(items)[:MAX_VALUES] if not isinstance(items, set) else sorted(items, key=_key), len(items))
            return {**listed, "text": _short(text)}
    return _result("scalar", [printed_value(line)], [], text, 1)


def _line_of(stdout, spans, line, start):
    """The code line that wrote the first visible character of a printed line."""
    offset = start + (len(line) - len(line.lstrip()))
    unit = utf16_len(stdout[:offset])
    for span in spans or []:
        if span["start"] <= unit < span["end"]:
            return span["line"]
    return None


def declared(namespace):
    """The value the code assigned to `result`, or _MISSING when it assigned none (a
    function, class or module named `result` is not a value)."""
    value = namespace.get("result", _MISSING)
    if value is _MISSING or isinstance(value, _NOT_VALUES):
        return _MISSING
    return value


_MISSING = object()


def capture(namespace, stdout, spans, truncated, assigned_line):
    """The code's result as (result, the object it came from), or (None, None) when it
    declared none and printed nothing (or its output was cut: its last line is not whole)."""
    value = declared(namespace)
    if value is not _MISSING:
        return {"from": "declared", **typed(value), "line": assigned_line}, value
    printed = None if truncated else last_printed(stdout)
    if printed is None:
        return None, None
    line, start, _ = printed
    return {"from": "printed", **_printed_result(line), "line": _line_of(stdout, spans, line, start)}, None


# --- comparing results ---------------------------------------------------------------------


def _key(value):
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", format(value, ".9g"))
    if value is None:
        return ("z", "")
    return ("s", str(value))


def canonical(result):
    """What two results must share to be the same: floats to 9 significant digits."""
    return (
        result["kind"],
        tuple(_key(v) for v in result["values"]),
        tuple(_key(v) for v in result["labels"]),
        result["total"],
    )


def result_key(result):
    """A digest of what the result is (`canonical`, and where it was read from): a trace made
    for one run holds for another of the same code on the same tables only under this key."""
    data = json.dumps([result["from"], canonical(result)], ensure_ascii=True, default=str)
    return hashlib.sha256(data.encode("ascii")).hexdigest()


def known_trace(known, key):
    """(derived, derivation, lineage) of a trace made before (`known`: the request's, as
    `finish` wrote them, with the `key` of its result), when it is this result's; else None."""
    if not isinstance(known, dict) or known.get("key") != key:
        return None
    derived, derivation, lineage = known.get("derived"), known.get("derivation"), known.get("lineage")
    if derived not in ("yes", "no", "unknown") or not isinstance(derivation, str) or not isinstance(lineage, list):
        return None
    return derived, derivation, lineage


def stopped_short(trace, timeout_exc):
    """Runs `trace()`; why it stopped short (out of time, or of its budget of re-runs), or
    None when it finished."""
    try:
        trace()
    except timeout_exc:
        return "out of time"
    except OutOfBudget as exc:
        return str(exc)
    return None


def frozen(value):
    """Lists as tuples, all the way down: what a re-run reports compares equal however it
    travelled (JSON from a forked process has no tuples)."""
    if isinstance(value, (list, tuple)):
        return tuple(frozen(item) for item in value)
    return value


def observation(origin, namespace, stdout, truncated, error):
    """The canonical result of a re-run, taken as the original was taken (`origin`)."""
    if error is not None:
        return ("error", error)
    if origin == "declared":
        value = declared(namespace)
        return ("absent",) if value is _MISSING else canonical(typed(value))
    if truncated:
        return ("truncated",)
    printed = last_printed(stdout)
    return ("nothing",) if printed is None else canonical(_printed_result(printed[0]))


# --- perturbed copies ---------------------------------------------------------------------


def _number_text(values, rng, scale):
    """Numbers written as text, each scaled by its factor, written back in the same style."""
    out = values.copy()
    for i, cell in enumerate(values):
        if not isinstance(cell, str):
            continue
        match = NUMBER_TEXT.match(cell)
        if not match or not (match.group(2) or match.group(3)):
            continue
        head, whole, fraction, tail = match.groups()
        number = float((whole or "0").replace(",", "") + (fraction or ""))
        number = number * scale[i] if number else float(rng.integers(1, 10))
        places = len(fraction) - 1 if fraction else 0
        comma = "," if whole and "," in whole else ""
        out[i] = f"{head}{number:{comma}.{places}f}{tail}"
    return out


def _numbers_as_text(series):
    """Whether most of an object column's values are numbers written as text."""
    if len(series) > MAX_NUMBER_TEXT_ROWS:
        return False
    cells = [v for v in series.iloc[:200].tolist() if isinstance(v, str) and v.strip()]
    numbers = sum(1 for v in cells if (m := NUMBER_TEXT.match(v)) and (m.group(2) or m.group(3)))
    return bool(cells) and numbers * 2 >= len(cells)


def _scaled(series, rng, reflect):
    """A numeric column with each cell multiplied by a factor in [0.5, 2] (zeros moved off
    zero; integers also stepped up by 0-3), or reflected (max + min - x); integers stay
    integers."""
    dtype = series.dtype
    if isinstance(dtype, np.dtype):
        values = series.to_numpy().astype("float64")
    else:
        values = series.to_numpy(dtype="float64", na_value=np.nan)
    if reflect:
        present = values[~np.isnan(values)]
        low, high = (present.min(), present.max()) if len(present) else (0.0, 0.0)
        new = (high + low) - values if high > low else values + 1
    else:
        new = values * np.exp(rng.uniform(math.log(0.5), math.log(2.0), len(values)))
        zeros = values == 0
        if zeros.any():
            integer = ptypes.is_integer_dtype(dtype)
            offsets = rng.integers(1, 10, len(values)) if integer else rng.uniform(0.5, 2.0, len(values))
            new = np.where(zeros, offsets, new)
    if ptypes.is_integer_dtype(dtype):
        info = np.iinfo(dtype.numpy_dtype if hasattr(dtype, "numpy_dtype") else dtype)
        # Small counts barely move when scaled and rounded (a minimum of 1 held by five rows
        # stays 1): each cell also gets a random step of 0-3.
        steps = 0 if reflect else rng.integers(0, 4, len(values))
        new = np.clip(np.rint(new) + steps, info.min, info.max)
    if isinstance(dtype, np.dtype):
        return new.astype(dtype)
    return pd.array(new, dtype=dtype)


def _perturbed(series, rng, trial):
    """One column of a perturbed copy. Trial 0, used for the derivation too: numbers scaled
    cell by cell, datetimes shifted, text shuffled among rows and marked, booleans and
    categories shuffled. Trial 1, tried for lineage when trial 0 changed nothing: numbers
    and datetimes reflected, booleans negated, text collapsed to one value, others reversed."""
    dtype = series.dtype
    count = len(series)
    order = rng.permutation(count) if trial == 0 else np.arange(count)[::-1]
    if isinstance(dtype, pd.CategoricalDtype):
        return series.array.take(order)
    if ptypes.is_bool_dtype(dtype):
        return (~series).array if trial else series.array.take(order)
    if ptypes.is_numeric_dtype(dtype) and not ptypes.is_complex_dtype(dtype):
        return _scaled(series, rng, reflect=trial == 1)
    if ptypes.is_datetime64_any_dtype(dtype):
        if trial == 0:
            days = rng.integers(1, 366, count) * rng.choice([-1, 1], count)
            return (series + pd.to_timedelta(days, unit="D")).array
        low, high = series.min(), series.max()
        return (low + (high - series)).array if high > low else (series + pd.Timedelta(days=1)).array
    if ptypes.is_timedelta64_dtype(dtype) and trial == 0:
        return (series * np.exp(rng.uniform(math.log(0.5), math.log(2.0), count))).array
    if dtype == object or ptypes.is_string_dtype(dtype):
        values = series.to_numpy(dtype=object)
        if _numbers_as_text(series):
            if trial == 0:
                values = _number_text(values, rng, np.exp(rng.uniform(math.log(0.5), math.log(2.0), count)))
            else:
                values = values[order]
        elif trial == 0:
            values = np.array([v + TEXT_MARK if isinstance(v, str) else v for v in values[order]], dtype=object)
        else:
            present = series.dropna()
            values = np.array([present.iloc[0] if len(present) else None] * count, dtype=object)
        return values if dtype == object else pd.array(values, dtype=dtype)
    return series.array.take(order)


def _column(series, rng, trial):
    try:
        return _perturbed(series, rng, trial)
    except Exception:
        return series.array.take(rng.permutation(len(series)))


def _with_columns(frame, replaced):
    """A copy of a table with the columns at the positions `replaced` names ({position: values})
    replaced, made in one go (setting columns one at a time re-arranges pandas' blocks each time,
    which on a wide table costs more than the code's run); the index and names are kept."""
    data = {
        position: replaced[position] if position in replaced else frame.iloc[:, position].array
        for position in range(frame.shape[1])
    }
    out = pd.DataFrame(data, index=frame.index, copy=True)
    out.columns = frame.columns
    out.attrs = dict(frame.attrs)
    return out


def _without(frame, position):
    return frame.take(np.flatnonzero(np.arange(len(frame)) != position))


def _without_block(frame, lo, hi):
    """A copy of a table without rows lo..hi-1; the others keep their index."""
    return frame.take(np.r_[0:lo, hi : len(frame)])


def perturb_all(frame, rng):
    """A perturbed copy of a table: every column perturbed (trial 0), one random row dropped
    when there are two or more; the remaining rows keep their index (their source row ids)."""
    out = _with_columns(frame, {position: _column(series, rng, 0) for position, (_, series) in enumerate(frame.items())})
    return _without(out, rng.integers(len(out))) if len(out) >= 2 else out


def perturb_numbers(frame, rng):
    """A perturbed copy with only its numeric columns perturbed (trial 0): text, dates and
    categories kept, so that code picking rows by a literal label still finds them."""
    replaced = {}
    for position, (_, series) in enumerate(frame.items()):
        dtype = series.dtype
        if ptypes.is_numeric_dtype(dtype) and not ptypes.is_bool_dtype(dtype) and not ptypes.is_complex_dtype(dtype):
            replaced[position] = _column(series, rng, 0)
        elif (dtype == object or ptypes.is_string_dtype(dtype)) and _numbers_as_text(series):
            replaced[position] = _column(series, rng, 0)
    return _with_columns(frame, replaced)


def perturb_column(frame, position, rng, trial):
    """A copy of a table with one column perturbed."""
    return perturb_columns(frame, [position], rng, trial)


def perturb_columns(frame, positions, rng, trial):
    """A copy of a table with some columns perturbed."""
    return _with_columns(frame, {position: _column(frame.iloc[:, position], rng, trial) for position in positions})


def without_row(frame, position):
    """A copy of a table without one row; the others keep their index."""
    return _without(frame, position)


# --- lineage off the index ------------------------------------------------------------------


class Source:
    """An input table as it entered: its name, length, columns and whether its index holds
    its source row ids (the default 0..n-1)."""

    def __init__(self, name, frame):
        self.name = name
        self.rows = len(frame)
        self.columns = [str(c) for c in frame.columns]
        self.ids = _is_default_index(frame.index)


def snapshot(named_tables):
    """Copies of the tables as they enter, for the re-runs (the code may change its own in
    place): whole, or for a table longer than SAMPLE_ROWS a random sample of its rows, in
    their order, with their ids. Returns (copies, whether any table was sampled)."""
    copies = []
    sampled = False
    for name, frame in named_tables:
        if not isinstance(frame, pd.DataFrame):
            continue
        if len(frame) > SAMPLE_ROWS:
            rng = np.random.default_rng(SEED)
            copies.append((name, frame.take(np.sort(rng.choice(len(frame), SAMPLE_ROWS, replace=False)))))
            sampled = True
        else:
            copies.append((name, frame.copy(deep=True)))
    return copies, sampled


def sources_of(named_tables):
    return [Source(name, frame) for name, frame in named_tables if isinstance(frame, pd.DataFrame)]


def index_rows(value, sources):
    """(table, row ids) when `value` is a Series/DataFrame whose index is an integer index of
    source row ids of exactly one table; else None. A RangeIndex from 0 by 1 may as well be
    a reset index (positions, not ids): never read; one that starts elsewhere or steps by
    more comes from a slice (pandas 3 keeps a RangeIndex for contiguous selections)."""
    if not isinstance(value, (pd.Series, pd.DataFrame)):
        return None
    index = value.index
    if _is_default_index(index) or isinstance(index, pd.MultiIndex) or not ptypes.is_integer_dtype(index.dtype):
        return None
    if len(index) == 0 or len(index) > MAX_INDEX_ROWS or index.hasnans:
        return None
    labels = np.unique(index.to_numpy(dtype="int64"))
    low, high = int(labels[0]), int(labels[-1])
    fits = [s for s in sources if s.ids and low >= 0 and high < s.rows]
    if len(fits) != 1:
        return None
    return fits[0].name, [int(v) for v in labels]


def produced_lineage(value, columns, sources):
    """Lineage of a table the code left: rows off its index where it holds one table's row
    ids, and its columns that are that table's (or, rows unknown, each table's) columns."""
    names = [str(c) for c in columns]
    found = index_rows(value, sources)
    if found is not None:
        table, rows = found
        source = next(s for s in sources if s.name == table)
        return [{"table": table, "rows": rows, "columns": [c for c in names if c in source.columns]}]
    lineage = []
    for source in sources:
        shared = [c for c in names if c in source.columns]
        if shared:
            lineage.append({"table": source.name, "rows": None, "columns": shared})
    return lineage


# --- derivation and lineage by re-running -----------------------------------------------------


class Tracer:
    """Re-runs the code on copies of `tables` ([(name, DataFrame)], copies of the tables as
    they entered) through `observe(tables) -> what the re-run's result was` (`observation`
    of it, lists as tuples) and compares each with the original's canonical form `base`.
    When the budget runs out (OutOfBudget, or the caller's timer), what is not done stays
    unknown."""

    def __init__(self, origin, base, tables, observe, deadline, max_runs=MAX_RERUNS, sampled=False):
        self.origin = origin
        self.base = base
        self.tables = tables
        self.sampled = sampled
        self.observe = observe
        self.deadline = deadline
        self.runs_left = max_runs
        self.runs = 0
        self.derived = "unknown"
        self.derivation = "not re-run: no time was left for it"
        self.deterministic = False
        self.columns = {}
        self.rows = {}
        # Changes that showed derivation while tracing columns and rows: (what, spec).
        self.changes = []

    def _differs(self, tables):
        return self._observe(tables) != self.base

    def _observe(self, tables):
        if self.runs_left <= 0:
            raise OutOfBudget(f"the budget of {self.runs} re-runs was used up")
        if time.monotonic() >= self.deadline:
            raise OutOfBudget("out of time")
        self.runs_left -= 1
        self.runs += 1
        return self.observe(tables)

    def _with(self, position=None, replacement=None):
        return [
            (name, replacement if i == position else frame.copy(deep=True))
            for i, (name, frame) in enumerate(self.tables)
        ]

    def run(self):
        """Derivation, then columns, then rows."""
        if self.derive():
            self.trace_lineage()

    def derive(self):
        """Whether the result is computed from the tables; True when its columns and rows
        are worth tracing next (the code is deterministic)."""
        if not any(len(frame) and frame.shape[1] for _, frame in self.tables):
            self.derivation = "the tables have no values to perturb"
            return False
        if self.sampled:
            # What is compared is what the code computes on the sample, not the original.
            self.base = self._observe(self._with())
            if self.base[0] == "error":
                self.derivation = f"not traced: the code fails on a sample of {SAMPLE_ROWS} rows ({self.base[1]})"
                return False
        self._derive()
        return self.deterministic

    def trace_lineage(self):
        """The columns and rows the result rests on (after `derive`)."""
        tables = list(enumerate(self.tables))
        if len(tables) > 1:
            # A workbook's many sheets: the budget goes to the tables the result rests on.
            tables = [(position, table) for position, table in tables if self._rests_on(position, *table)]
        for position, (name, frame) in tables:
            self._trace_columns(position, name, frame)
        for position, (name, frame) in tables:
            if len(frame) <= MAX_TRACED_ROWS:
                self._trace_rows(position, name, frame)
            elif not self.sampled:
                self._trace_row_blocks(position, name, frame)

    def _derive(self):
        if self._differs(self._with()):
            self.derived, self.derivation = "no", NOT_DETERMINISTIC
            return
        self.deterministic = True
        self.derivation = "not known: the re-runs on perturbed copies of the tables did not finish"
        failed = None
        for copy in range(PERTURBED_COPIES):
            rng = np.random.default_rng([SEED, copy])
            seen = self._observe([(name, perturb_all(frame, rng)) for name, frame in self.tables])
            if seen[0] == "error":
                # A run that fails says nothing about dependence (a filter on a literal text
                # value matches no marked row): try the copy with its numbers moved and its
                # text kept.
                failed = seen[1]
                rng = np.random.default_rng([SEED, copy])
                seen = self._observe([(name, perturb_numbers(frame, rng)) for name, frame in self.tables])
                if seen[0] == "error":
                    continue
            if seen != self.base:
                self.derived = "yes"
                self.derivation = "changed when the tables' values were perturbed: computed from the table"
                break
        else:
            if failed is None:
                self.derived, self.derivation = "no", STABLE
            else:
                self.derived = "unknown"
                self.derivation = (
                    f"not known: the code failed on perturbed copies of the tables ({failed}) "
                    "and did not change on the others"
                )
        if self.sampled:
            self.derivation += f" (traced on a sample of {SAMPLE_ROWS} rows of each longer table)"

    def _rests_on(self, position, name, frame):
        """Whether the result changes when this table alone is perturbed (or fails then); a
        table it does not rest on gets no columns and no rows."""
        if not len(frame) or not frame.shape[1]:
            return False
        rng = np.random.default_rng([SEED, 50 + position])
        if self._observe(self._with(position, perturb_all(frame, rng))) != self.base:
            return True
        self.columns[name] = []
        self.rows[name] = []
        return False

    def _trace_columns(self, position, name, frame):
        if frame.shape[1] > MAX_TRACED_COLUMNS:
            self._trace_column_blocks(position, name, frame)
            return
        found = []
        if len(frame):
            for column in range(frame.shape[1]):
                for trial in (0, 1):
                    spec = ("column", position, column, trial)
                    seen = self._observe(self.perturbed(spec))
                    if seen != self.base:
                        # The result rests on the column even where the run fails without it
                        # (a filter on its values); only a result that changes shows derivation.
                        found.append(str(frame.columns[column]))
                        if seen[0] != "error":
                            self._changed(f"column {frame.columns[column]} of {name} was perturbed", spec)
                        break
        self.columns[name] = list(dict.fromkeys(found))

    def _trace_rows(self, position, name, frame):
        found = []
        for row in range(len(frame)):
            spec = ("rows", position, row, row + 1)
            seen = self._observe(self.perturbed(spec))
            if seen != self.base:
                found.append(row)
                if seen[0] != "error":
                    self._changed(f"row {row} of {name} was removed", spec)
        self.rows[name] = found

    def _bisect(self, size, observe, limit=None):
        """Positions 0..size-1 that change the result on their own, found by blocks: a block
        whose change leaves the result as it was (`observe(lo, hi)` gives None) holds none, one
        that changes it is halved. [(position, what was seen)] in order, or None past `limit`
        blocks. Halved a level at a time: a level holding more blocks than the limit leaves is
        given up before any of them is run, since each needs a run whatever it shows."""
        found = []
        level = [block for block in ((0, size // 2), (size // 2, size)) if block[0] < block[1]]
        tried = 0
        while level:
            if limit is not None and tried + len(level) > limit:
                return None
            halves = []
            for lo, hi in level:
                tried += 1
                seen = observe(lo, hi)
                if seen is None:
                    continue
                if hi - lo > 1:
                    mid = (lo + hi) // 2
                    halves += [(lo, mid), (mid, hi)]
                else:
                    found.append((lo, seen))
            level = halves
        return sorted(found, key=lambda position_seen: position_seen[0])

    def _trace_column_blocks(self, position, name, frame):
        """The columns one by one tracing would find, by perturbing blocks of them, each block
        twice as a column is."""

        def observe(lo, hi):
            for trial in (0, 1):
                spec = ("columns", position, lo, hi, trial)
                seen = self._observe(self.perturbed(spec))
                if seen != self.base:
                    return seen, spec
            return None

        found = self._bisect(frame.shape[1], observe) if len(frame) else []
        for column, (seen, spec) in found:
            if seen[0] != "error":
                self._changed(f"column {frame.columns[column]} of {name} was perturbed", spec)
        self.columns[name] = list(dict.fromkeys(str(frame.columns[column]) for column, _ in found))

    def _trace_row_blocks(self, position, name, frame):
        """The rows leave-one-out would find, by removing blocks (rows that change the result
        only together, as tied extremes, are not found one by one either); unknown past
        ROW_BLOCK_RERUNS blocks."""

        def observe(lo, hi):
            seen = self._observe(self.perturbed(("rows", position, lo, hi)))
            return None if seen == self.base else seen

        found = self._bisect(len(frame), observe, ROW_BLOCK_RERUNS)
        if found is None:
            return
        for row, seen in found:
            if seen[0] != "error":
                self._changed(f"row {row} of {name} was removed", ("rows", position, row, row + 1))
        self.rows[name] = sorted(row for row, _ in found)

    def perturbed(self, spec):
        """The tables with one change, as `spec` names it: ("column", table, column, trial),
        ("columns", table, first, end, trial) or ("rows", table, first, end) removed. The
        same spec makes the same tables, in whichever process."""
        kind, position, *rest = spec
        _, frame = self.tables[position]
        if kind == "column":
            column, trial = rest
            rng = np.random.default_rng([SEED, 100 + position, column, trial])
            return self._with(position, perturb_column(frame, column, rng, trial))
        if kind == "columns":
            lo, hi, trial = rest
            rng = np.random.default_rng([SEED, 100 + position, lo, hi, trial])
            return self._with(position, perturb_columns(frame, range(lo, hi), rng, trial))
        if kind == "rows":
            lo, hi = rest
            return self._with(position, without_row(frame, lo) if hi == lo + 1 else _without_block(frame, lo, hi))
        raise ValueError(f"not a change of a table: {kind!r}")

    def lineage_report(self):
        """What `trace_lineage` found, as JSON data for the process that forked this one."""
        return {"columns": self.columns, "rows": self.rows, "changes": self.changes}

    def adopt(self, report, confirm):
        """The columns and rows a lineage run in another process found (`report`, its
        lineage_report: the code's word, as it ran there), and the first change it saw that
        upgrades the derivation, once `confirm(tables)` (a run in a fresh process) shows it."""
        self.columns = {str(name): [str(c) for c in found] for name, found in dict(report["columns"]).items()}
        self.rows = {str(name): [int(r) for r in found] for name, found in dict(report["rows"]).items()}
        for what, spec in list(report["changes"])[:MAX_CONFIRMED_CHANGES]:
            if self.derived == "yes" or not self.deterministic:
                return
            kind, position, *rest = spec
            spec = (str(kind), int(position), *(int(n) for n in rest))
            seen = confirm(self.perturbed(spec))
            if seen != self.base and seen[0] != "error":
                self._upgrade(str(what))

    def _changed(self, what, spec):
        # A result the perturbed copies left alone (or failed on) that one column or row
        # changes after all.
        self.changes.append((what, spec))
        self._upgrade(what)

    def _upgrade(self, what):
        if self.derived in ("no", "unknown") and self.deterministic:
            self.derived = "yes"
            self.derivation = f"changed when {what}: computed from the table"
            if self.sampled:
                self.derivation += f" (traced on a sample of {SAMPLE_ROWS} rows of each longer table)"

    def stopped(self, reason):
        """The budget ran out (`reason`): what is not done stays unknown."""
        if self.derived == "unknown":
            self.derivation = f"{self.derivation} ({reason})"

    def lineage(self, from_index, sources):
        """Per source table: the rows and columns traced; rows off the result's index
        (`from_index`: index_rows of the object it came from) where they were not traced and
        the index holds them; null where neither."""
        entries = []
        for source in sources:
            rows = self.rows.get(source.name)
            if rows is None and from_index is not None and from_index[0] == source.name:
                rows = from_index[1]
            entries.append({"table": source.name, "rows": rows, "columns": self.columns.get(source.name)})
        return entries


def untraced_lineage(from_index, sources):
    """Lineage without re-runs: rows off the index (`from_index`: index_rows of the object the
    result came from) where it holds them, the rest null."""
    return [
        {
            "table": source.name,
            "rows": from_index[1] if from_index is not None and from_index[0] == source.name else None,
            "columns": None,
        }
        for source in sources
    ]


def finish(result, derived, derivation, lineage):
    """The result as RESULT.json carries it."""
    out = {key: value for key, value in result.items() if key != "total"}
    out.update({"derived": derived, "derivation": derivation, "lineage": lineage})
    return out
