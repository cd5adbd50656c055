"""The figures a run drew: read, saved and traced to the tables (runner.py calls this).

After the code ran, `collect()` takes every open matplotlib figure (pyplot's): what each of
its axes plots, read by chart_reading.py as TableBench's parser reads it, and the figure
saved as PNG and SVG in the run's scratch directory (names FIGURE_FILE_NAME gives). Then
`trace()` re-runs the code as lineage.py does for a result, and reads the figures each re-run
draws: on copies of the tables with every value perturbed (rows kept), with one column
perturbed at a time, and without one row at a time. A figure is derived when a re-run that
succeeded drew other values (labels alone do not count: typed-in numbers over the table's
names are not computed); a plotted point is typed in when re-runs changed the points beside
it and never it. Each figure and point gets the source rows and columns it rests on.

Nothing here runs unless pyplot was imported: a run that draws nothing pays one lookup.
"""

import os
import re
import signal
import sys
import time

import _signal
import chart_reading
import lineage as result_lineage
import numpy as np

# At most this many figures of a run are read and saved.
MAX_FIGURES = 10
FIGURE_FILE_NAME = re.compile(r"_tableminds_figure_[0-9]{1,2}\.(?:png|svg)")
FORMATS = ("png", "svg")
# Reading and saving the figures may take this share of the time the run left, at most
# MAX_SAVE_S and at least MIN_SAVE_S.
SAVE_SHARE = 0.5
MAX_SAVE_S = 5.0
MIN_SAVE_S = 0.25
TITLE_CHARS = 300
STABLE = "unchanged when the tables' values were perturbed: not computed from the table"
NOT_DETERMINISTIC = "not deterministic: a re-run on the unchanged tables drew other values"
DERIVED = "changed when the tables' values were perturbed: computed from the table"
UNCONFIRMED = "not known: only re-runs that shared one process changed it, not one on its own"

_WRITE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def _pyplot():
    return sys.modules.get("matplotlib.pyplot")


def close_all():
    """Closes every pyplot figure (re-runs draw their own)."""
    plt = _pyplot()
    if plt is not None:
        try:
            plt.close("all")
        except Exception:
            pass


def _managers():
    """pyplot's figure managers, oldest figure first, and the current one."""
    from matplotlib._pylab_helpers import Gcf

    managers = sorted(Gcf.get_all_fig_managers(), key=lambda m: m.num)
    return managers, Gcf.get_active()


def _kept(managers, active):
    """The first MAX_FIGURES figures, and always the current one: it is what `plt.gca()` reads."""
    kept = managers[:MAX_FIGURES]
    if active is not None and active not in kept:
        kept[-1] = active
    return kept


def _text(value):
    return str(value or "")[:TITLE_CHARS]


def _title(figure):
    suptitle = getattr(figure, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        return _text(suptitle.get_text())
    for ax in figure.axes:
        if ax.get_title():
            return _text(ax.get_title())
    return ""


def _describe(figure, current):
    """A figure's axes: titles, the kind each draws, what each kind's reading gives, and the
    points of its own kind."""
    active = figure.gca() if current and figure.axes else None
    axes = []
    for ax in figure.axes:
        kind = chart_reading.kind_of(ax)
        axes.append(
            {
                "title": _text(ax.get_title()),
                "xlabel": _text(ax.get_xlabel()),
                "ylabel": _text(ax.get_ylabel()),
                "kind": kind,
                "current": ax is active,
                "readings": chart_reading.read_axes(ax),
                "points": [
                    {"series": series, "label": label, "value": value}
                    for series, label, value in chart_reading.points(ax, kind)
                ],
            }
        )
    return axes


class _Expired(BaseException):
    pass


# Once the time is up the alarm fires again this often until it is heeded, so code that
# swallows one (a bare `except:` in a re-run) meets the next (as runner.py's timer does).
RETRY_ALARM_S = 0.05


class _Alarm:
    """Raises `exception` into whatever runs once `seconds` have passed, until disarmed."""

    def __init__(self, seconds, exception):
        self.armed = True

        def on_alarm(signum, frame):
            if self.armed:
                raise exception()

        _signal.signal(signal.SIGALRM, on_alarm)
        _signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001), RETRY_ALARM_S)

    def disarm(self, exception):
        while True:
            try:
                self.armed = False
                _signal.setitimer(signal.ITIMER_REAL, 0)
                return
            except exception:
                pass


def _save(figure, scratch, name, fmt):
    # Generated code ran in this directory: never follow a file it may have planted.
    path = os.path.join(scratch, name)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    import matplotlib

    # No date and fixed ids in an SVG: the same chart is the same file (the store keys by hash).
    with matplotlib.rc_context({"svg.hashsalt": "tableminds"}):
        with open(os.open(path, _WRITE_NEW, 0o600), "wb") as handle:
            figure.savefig(handle, format=fmt, metadata={"Date": None} if fmt == "svg" else None)


def collect(scratch, started, timeout_ms):
    """The open figures, read and saved: ([figure], [note]). Each figure is {number, title,
    current, axes, files: {format: file name}}; the figures stay open."""
    if _pyplot() is None:
        return [], []
    managers, active = _managers()
    if not managers:
        return [], []
    left = timeout_ms / 1000 - (time.monotonic() - started)
    deadline = time.monotonic() + min(MAX_SAVE_S, max(MIN_SAVE_S, left * SAVE_SHARE))
    notes = []
    kept = _kept(managers, active)
    if len(managers) > MAX_FIGURES:
        notes.append(f"note: the code drew {len(managers)} figures; only {MAX_FIGURES} were kept")
    figures = []
    for index, manager in enumerate(kept):
        figure = manager.canvas.figure
        try:
            axes = _describe(figure, manager is active)
        except Exception as exc:
            notes.append(f"note: figure {manager.num} could not be read: {type(exc).__name__}: {exc}"[:500])
            continue
        files = {}
        for fmt in FORMATS:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                notes.append(f"note: figure {manager.num} was not saved as {fmt.upper()}: no time was left")
                continue
            name = f"_tableminds_figure_{index}.{fmt}"
            try:
                alarm = _Alarm(remaining, _Expired)
                try:
                    _save(figure, scratch, name, fmt)
                finally:
                    alarm.disarm(_Expired)
                files[fmt] = name
            except _Expired:
                notes.append(f"note: figure {manager.num} was not saved as {fmt.upper()}: it took too long")
            except Exception as exc:
                notes.append(f"note: figure {manager.num} could not be saved as {fmt.upper()}: {exc}"[:500])
        figures.append(
            {
                "number": int(manager.num),
                "title": _title(figure),
                "current": manager is active,
                "axes": axes,
                "files": files,
            }
        )
    return figures, notes


# --- tracing ---------------------------------------------------------------------------------


def _key(value):
    if value is None:
        return "nan"
    if isinstance(value, float):
        return format(value, ".9g")
    return str(value)


def _observe_figures(kinds):
    """What the open figures plot, by figure and axes, as the base run's kinds read them:
    [[[(label key, value key)] per axes] per figure]."""
    if _pyplot() is None:
        return []
    managers, active = _managers()
    seen = []
    for index, manager in enumerate(_kept(managers, active)[: len(kinds)]):
        axes = manager.canvas.figure.axes
        seen.append(
            [
                [(_label_key(series, label), _key(value)) for series, label, value in chart_reading.points(ax, kind)]
                for ax, kind in zip(axes, kinds[index])
            ]
        )
    return seen


def _label_key(series, label):
    # Two lines may share their categories: a point is its series' label.
    return f"{series}\x1f{_key(label)}"


def _values(figure):
    return [value for axes in figure for _, value in axes]


def _unique_labels(points):
    labels = [label for label, _ in points]
    return len(set(labels)) == len(labels)


class _Point:
    """What the re-runs found about one plotted point."""

    def __init__(self, tables):
        self.varied = False
        self.flagged = False
        self.rows = {name: set() for name in tables}
        self.columns = {name: set() for name in tables}


class FigureTracer:
    """Re-runs the code through `observe(tables) -> what its figures plot` (None when it
    failed; lists as tuples) and compares that with `base` (the first run's, the same way)."""

    def __init__(self, base, kinds, tables, observe, deadline, sampled):
        self.base = base
        self.kinds = kinds
        self.tables = tables
        self.observe = observe
        self.deadline = deadline
        self.sampled = sampled
        self.runs_left = result_lineage.MAX_RERUNS
        self.deterministic = False
        self.derived = ["unknown"] * len(base)
        self.derivation = ["not re-run: no time was left for it"] * len(base)
        names = [name for name, _ in tables]
        self.rows = [{name: set() for name in names} for _ in base]
        self.columns = [{name: set() for name in names} for _ in base]
        # Tables whose columns (rows) were all tried: only their lineage is known.
        self.traced_columns = set()
        self.traced_rows = set()
        self.partial = False
        self.points = self._fresh_points()

    def _fresh_points(self):
        names = [name for name, _ in self.tables]
        return [[[_Point(names) for _ in axes] for axes in figure] for figure in self.base]

    # -- one re-run

    def _observe(self, tables):
        if self.runs_left <= 0:
            raise result_lineage.OutOfBudget("the budget of re-runs was used up")
        if time.monotonic() >= self.deadline:
            raise result_lineage.OutOfBudget("out of time")
        self.runs_left -= 1
        close_all()
        return self.observe(tables)

    def _with(self, position=None, replacement=None):
        return [
            (name, replacement if i == position else frame.copy(deep=True))
            for i, (name, frame) in enumerate(self.tables)
        ]

    # -- comparing one re-run with the base

    def _compare(self, seen, table=None, column=None, row=None):
        """Records what changed in `seen` against the base: "none", "some" (points that
        could be compared one by one changed beside points that did not) or "all". A re-run
        on copies with every value perturbed (no table, column or row named) is the one whose
        unchanged points beside changed ones are typed in."""
        any_change = False
        self.partial = False
        for f, figure in enumerate(self.base):
            other = seen[f] if f < len(seen) else None
            if other is None or _values(figure) != _values(other):
                self._value_changed(f)
            if other != figure:
                any_change = True
                if table is not None and column is not None:
                    self.columns[f][table].add(column)
                if table is not None and row is not None:
                    self.rows[f][table].add(row)
            for j, points in enumerate(figure):
                run = other[j] if other is not None and j < len(other) else None
                self._compare_points(self.points[f][j], points, run, table, column, row)
        if not any_change:
            return "none"
        return "some" if self.partial else "all"

    def _value_changed(self, f):
        if self.derived[f] != "yes" and self.deterministic:
            self.derived[f] = "yes"
            self.derivation[f] = DERIVED + self._sample_note()

    def _compare_points(self, found, points, run, table, column, row):
        if run is None:
            return
        if len(run) == len(points):
            changed = [points[i][1] != run[i][1] for i in range(len(points))]
            moved = [points[i] != run[i] for i in range(len(points))]
            self.partial = self.partial or (any(changed) and not all(changed))
            everything = table is None
            for i, point in enumerate(found):
                if changed[i]:
                    point.varied = True
                elif everything and any(changed):
                    point.flagged = True
            for i, point in enumerate(found):
                if moved[i] and table is not None:
                    if column is not None:
                        point.columns[table].add(column)
                    if row is not None:
                        point.rows[table].add(row)
            return
        if row is None or not (_unique_labels(points) and _unique_labels(run)):
            return
        # A row left out: the points that vanished or moved rest on it.
        now = dict(run)
        for i, (label, value) in enumerate(points):
            if now.get(label) != value:
                found[i].rows[table].add(row)
                if label in now:
                    found[i].varied = True

    # -- the phases

    def run(self):
        if self.derive():
            self.trace_lineage()

    def derive(self):
        """Whether each figure is drawn from the tables; True when the columns and rows are
        worth tracing next (the code is deterministic)."""
        if not any(len(frame) and frame.shape[1] for _, frame in self.tables):
            self.derivation = ["the tables have no values to perturb"] * len(self.base)
            return False
        if self.sampled:
            sample = self._observe(self._with())
            if sample is None:
                rows = result_lineage.SAMPLE_ROWS
                self.derivation = [f"not traced: the code fails on a sample of {rows} rows"] * len(self.base)
                return False
            # What is compared is what the code draws from the sample, not from the table.
            self.base = sample[: len(self.base)]
            self.points = self._fresh_points()
        again = self._observe(self._with())
        if again is None or again[: len(self.base)] != self.base:
            self.derived = ["no"] * len(self.base)
            self.derivation = [NOT_DETERMINISTIC] * len(self.base)
            return False
        self.deterministic = True
        self.derivation = ["not known: the re-runs on perturbed copies of the tables did not finish"] * len(self.base)
        for copy in range(result_lineage.PERTURBED_COPIES):
            rng = np.random.default_rng([result_lineage.SEED, copy])
            seen = self._observe([(name, _perturb_values(frame, rng)) for name, frame in self.tables])
            if seen is not None:
                self._compare(seen)
        for f in range(len(self.base)):
            if self.derived[f] == "unknown":
                self.derived[f], self.derivation[f] = "no", STABLE + self._sample_note()
        return True

    def trace_lineage(self):
        """The columns and rows each figure and point rests on (after `derive`)."""
        for position, (name, frame) in enumerate(self.tables):
            self._trace_columns(position, name, frame)
        for position, (name, frame) in enumerate(self.tables):
            if len(frame) <= result_lineage.MAX_TRACED_ROWS:
                self._trace_rows(position, name, frame)

    def _trace_columns(self, position, name, frame):
        if not len(frame):
            return
        for column in range(frame.shape[1]):
            # The second trial also when the first left some points as they were: a random
            # step may leave one value unchanged that the column still makes.
            for trial in (0, 1):
                rng = np.random.default_rng([result_lineage.SEED, 100 + position, column, trial])
                copy = result_lineage.perturb_column(frame, column, rng, trial)
                seen = self._observe(self._with(position, copy))
                if seen is not None and self._compare(seen, table=name, column=str(frame.columns[column])) == "all":
                    break
        self.traced_columns.add(name)

    def _trace_rows(self, position, name, frame):
        for row in range(len(frame)):
            seen = self._observe(self._with(position, result_lineage.without_row(frame, row)))
            if seen is not None:
                self._compare(seen, table=name, row=row)
        self.traced_rows.add(name)

    def _sample_note(self):
        rows = result_lineage.SAMPLE_ROWS
        return f" (traced on a sample of {rows} rows of each longer table)" if self.sampled else ""

    # -- what is known

    def stopped(self, reason):
        for f, derived in enumerate(self.derived):
            if derived == "unknown":
                self.derivation[f] = f"{self.derivation[f]} ({reason})"

    def _lineage(self, rows, columns):
        known = self.deterministic
        return [
            {
                "table": name,
                "rows": sorted(rows[name]) if known and name in self.traced_rows else None,
                "columns": (
                    [str(c) for c in frame.columns if str(c) in columns[name]]
                    if known and name in self.traced_columns
                    else None
                ),
            }
            for name, frame in self.tables
        ]

    def apply(self, figures):
        """Writes derivation and lineage into the figures `collect` made."""
        unknown = [{"table": name, "rows": None, "columns": None} for name, _ in self.tables]
        for f, figure in enumerate(figures):
            if f >= len(self.base):
                _untraced(figure, "not traced: the sample of the tables drew fewer figures", unknown)
                continue
            figure["derived"] = self.derived[f]
            figure["derivation"] = self.derivation[f]
            figure["lineage"] = self._lineage(self.rows[f], self.columns[f])
            for j, axes in enumerate(figure["axes"]):
                found = self.points[f][j] if j < len(self.points[f]) else []
                # Point by point only where the compared points are the ones described.
                same = len(found) == len(axes["points"])
                for i, point in enumerate(axes["points"]):
                    state = found[i] if same else None
                    point["derived"] = self._point_derived(f, state)
                    point["lineage"] = unknown if state is None else self._lineage(state.rows, state.columns)

    def _point_derived(self, f, state):
        if state is None or not self.deterministic:
            return "unknown" if self.derived[f] != "no" else "no"
        if state.varied:
            return "yes"
        if state.flagged or self.derived[f] == "no":
            return "no"
        return "yes" if self.derived[f] == "yes" else "unknown"


def _perturb_values(frame, rng):
    """A copy of a table with every column perturbed as lineage.perturb_all does, rows kept:
    a figure of one bar per row then compares point by point."""
    out = frame
    for position in range(frame.shape[1]):
        out = result_lineage.perturb_column(out, position, rng, 0)
    return out


def _untraced(figure, why, lineage):
    figure["derived"] = "unknown"
    figure["derivation"] = why
    figure["lineage"] = lineage
    for axes in figure["axes"]:
        for point in axes["points"]:
            point["derived"] = "unknown"
            point["lineage"] = lineage


def trace(figures, copies, sources, options, observer, timeout_exc, started, timeout_ms):
    """Traces `figures` (collect's, in place) by re-running the code on `copies`
    (lineage.snapshot's); `observer(key, deadline)` gives runner.py's way of re-running (here
    or in forked processes), which lets `timeout_exc` through (raised here when the time is
    up). Within min(lineage.MAX_TRACE_S, half the time the run left)."""
    if not figures:
        return
    unknown = [{"table": source.name, "rows": None, "columns": None} for source in sources]
    if not options["trace"]:
        return _each_untraced(figures, "not traced: lineage was turned off for this run", unknown)
    if not sources:
        return _each_untraced(figures, "no table to perturb", unknown)
    if copies is None:
        return _each_untraced(figures, "not traced: the tables could not be copied", unknown)
    left = timeout_ms / 1000 - (time.monotonic() - started)
    budget = min(result_lineage.MAX_TRACE_S, max(0.0, left) / 2)
    tables, sampled = copies
    kinds = [[axes["kind"] for axes in figure["axes"]] for figure in figures]
    base = result_lineage.frozen(
        [
            [[(_label_key(p["series"], p["label"]), _key(p["value"])) for p in axes["points"]] for axes in figure["axes"]]
            for figure in figures
        ]
    )
    close_all()
    deadline = time.monotonic() + budget
    key = lambda namespace, stdout, truncated, error: None if error is not None else _observe_figures(kinds)  # noqa: E731
    tracer = FigureTracer(base, kinds, tables, None, deadline, sampled)
    alarm = None
    stopped = None
    applied = False
    try:
        try:
            tracer.observe = observer(key, deadline)
            alarm = _Alarm(max(budget, 0.05), timeout_exc)
            if not observer.forked:
                tracer.run()
            elif tracer.derive():
                confirmed = list(tracer.derived)
                report = observer.together(
                    lambda here: _lineage_run(tracer, figures, here, key, deadline, timeout_exc), deadline
                )
                _adopt(figures, report, confirmed)
                applied = True
        finally:
            if alarm is not None:
                alarm.disarm(timeout_exc)
            observer.restore()
            close_all()
    except timeout_exc:
        stopped = "out of time"
    except result_lineage.OutOfBudget as exc:
        stopped = str(exc)
    except BaseException as exc:
        stopped = f"tracing failed: {type(exc).__name__}: {exc}"[:300]
    if stopped:
        tracer.stopped(stopped)
    if not applied:
        tracer.apply(figures)


def _lineage_run(tracer, figures, here, key, deadline, timeout_exc):
    """In the process forked for the figures' columns and rows: `tracer` (as it stood after
    `derive`, forked with this process) traces them here and writes them into `figures`."""
    tracer.observe = here(key, deadline)
    try:
        stopped = result_lineage.stopped_short(tracer.trace_lineage, timeout_exc)
    finally:
        close_all()
    if stopped:
        tracer.stopped(stopped)
    tracer.apply(figures)
    return {"figures": figures}


def _adopt(figures, report, confirmed):
    """The figures a lineage run wrote (the code's word, as it ran there), with a derivation
    that only its re-runs showed, which shared one interpreter, not taken as shown."""
    reported = report.get("figures")
    if type(reported) is not list or len(reported) != len(figures) or not all(type(f) is dict for f in reported):
        raise ValueError("the lineage run reported figures of another form")
    for f, figure in enumerate(reported):
        if f < len(confirmed) and figure.get("derived") == "yes" and confirmed[f] != "yes":
            figure["derived"] = "unknown"
            figure["derivation"] = UNCONFIRMED
            for axes in figure.get("axes") or []:
                for point in axes.get("points") or []:
                    if point.get("derived") == "yes":
                        point["derived"] = "unknown"
    figures[:] = reported


def _each_untraced(figures, why, lineage):
    for figure in figures:
        _untraced(figure, why, lineage)
