"""The values a matplotlib figure plots, read as TableBench's Visualization parser reads them.

The one reader of drawn values: the sandbox (figures.py) reads every figure a run leaves with
it, and the evaluation's chart script (evals/metrics/chart.ts puts this text above the parser)
gives the chart code upstream's helper names, which call the same functions.

Upstream reads `plt.gca()` by the chart type it is told: bar heights, horizontal bar widths,
pie wedge shares rounded to 2 places, each line's y data, each collection's points. A reading
that raises (a pie read off bars: a Rectangle has no theta) fails the chart as upstream's does.

No matplotlib import at the top: the sandbox imports this module before any code asks for
matplotlib, and only figures that exist are read.
"""

import math

import numpy as np

CHART_KINDS = ("line", "bar", "hbar", "pie", "area", "radar", "scatter", "waterfall")
# A reading of more values than this is not kept (no TableBench chart comes near it): a
# figure's values stay in the run's state, which should not grow with the table.
MAX_READING_VALUES = 5_000
# Points described per axes, for evidence.
MAX_POINTS = 500
# A label (a category, a tick's text) is cut to this many characters.
LABEL_CHARS = 200
# Two positions closer than this are the same tick.
SAME_PLACE = 1e-6


class NotNumber(Exception):
    """A drawn value that is no real number: upstream's rounding of it would raise."""


# --- upstream's readings, of one axes ----------------------------------------------------------


def line_heights(ax):
    return [list(line.get_ydata()) for line in ax.get_lines()]


def bar_heights(ax):
    return [patch.get_height() for patch in ax.patches]


def bar_widths(ax):
    return [patch.get_width() for patch in ax.patches]


def pie_shares(ax):
    return [round((wedge.theta2 - wedge.theta1) / 360.0, 2) for wedge in ax.patches]


def area_heights(ax):
    # get_paths()[0] raises on an empty collection, which fails the chart as upstream's does.
    return [[y for y in c.get_paths()[0].vertices[:, 1] if y != 0] for c in ax.collections]


def radar_heights(ax):
    return [list(line.get_ydata())[:-1] for line in ax.get_lines()]


def scatter_heights(ax):
    return [[point[1] for point in c.get_offsets()] for c in ax.collections]


READERS = {
    "line": line_heights,
    "bar": bar_heights,
    "hbar": bar_widths,
    "pie": pie_shares,
    "area": area_heights,
    "radar": radar_heights,
    "scatter": scatter_heights,
    "waterfall": bar_heights,
}


# Upstream's names (its chart_metric_utils), which chart code may call itself.
def get_line_y_predictions(plt):
    return line_heights(plt.gca())


def get_bar_y_predictions(plt):
    return bar_heights(plt.gca())


def get_hbar_y_predictions(plt):
    return bar_widths(plt.gca())


def get_pie_y_predictions(plt):
    return pie_shares(plt.gca())


def get_area_y_predictions(plt):
    return area_heights(plt.gca())


def get_radar_y_predictions(plt):
    return radar_heights(plt.gca())


def get_scatter_y_predictions(plt):
    return scatter_heights(plt.gca())


get_waterfall_y_predictions = get_bar_y_predictions


# --- readings as JSON holds them ---------------------------------------------------------------


def plot_value(value):
    """A drawn number as JSON holds it: NaN as null, infinities as "inf" / "-inf"; a truth
    value as 0 or 1 (Python rounds it as an int). Anything else raises NotNumber."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)):
        number = int(value)
        return number if abs(number) < 2**53 else float(number)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if math.isnan(number):
            return None
        if math.isinf(number):
            return "inf" if number > 0 else "-inf"
        return number
    raise NotNumber(type(value).__name__)


def encode_reading(reading, rounded=False):
    """A reading (values, or lists of them, as upstream's helpers return) as JSON holds it;
    None when a value is no number or there are more than MAX_READING_VALUES. `rounded`:
    each value as upstream's std_digit leaves it, `round(v, 2)` on the value's own type,
    which for a numpy float is numpy's rounding (103.255 becomes 103.26; Python's own gives
    103.25): once in JSON, which it was is lost."""
    shape = (lambda v: plot_value(round(v, 2))) if rounded else plot_value
    encoded = []
    count = 0
    try:
        for item in reading:
            if isinstance(item, (list, tuple, np.ndarray)):
                values = [shape(v) for v in item]
                count += len(values)
                encoded.append(values)
            else:
                encoded.append(shape(item))
                count += 1
            if count > MAX_READING_VALUES:
                return None
    except (NotNumber, TypeError, ValueError, OverflowError):
        return None
    return encoded


def read_axes(ax):
    """Every reading upstream's parser can take of `ax`, by chart type, rounded as its
    comparison rounds it; None where it raises (waterfall is read as bar, and left out)."""
    readings = {}
    for kind, reader in READERS.items():
        if kind == "waterfall":
            continue
        try:
            readings[kind] = encode_reading(reader(ax), rounded=True)
        except Exception:
            readings[kind] = None
    return readings


EMPTY_READINGS = {kind: [] for kind in CHART_KINDS if kind != "waterfall"}


# --- what an axes shows, for evidence ----------------------------------------------------------


def kind_of(ax):
    """The chart type that fits what `ax` draws, or None when it draws nothing readable."""
    from matplotlib.collections import PathCollection, PolyCollection
    from matplotlib.container import BarContainer
    from matplotlib.patches import Rectangle, Wedge

    patches = list(ax.patches)
    if patches and all(isinstance(p, Wedge) for p in patches):
        return "pie"
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    if bars:
        return "hbar" if getattr(bars[0], "orientation", "vertical") == "horizontal" else "bar"
    if patches and all(isinstance(p, Rectangle) for p in patches):
        return "bar"
    collections = list(ax.collections)
    if any(isinstance(c, PolyCollection) for c in collections):
        return "area"
    if any(isinstance(c, PathCollection) for c in collections):
        return "scatter"
    if ax.get_lines():
        return "radar" if getattr(ax, "name", "") == "polar" else "line"
    return None


def _category_names(axis):
    """{position: name} of a categorical axis (strings plotted), else None."""
    mapping = getattr(getattr(axis, "units", None), "_mapping", None)
    if not mapping:
        return None
    return {float(position): str(name) for name, position in mapping.items()}


def _fixed_names(axis):
    """[(position, text)] of an axis whose tick labels were given as text (set_xticklabels,
    or a function: pandas' bar plots), else None."""
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    formatter = axis.get_major_formatter()
    if not isinstance(formatter, (FixedFormatter, FuncFormatter)):
        return None
    try:
        places = [float(p) for p in axis.get_majorticklocs()]
        if isinstance(formatter, FixedFormatter):
            return [(p, str(t)) for p, t in zip(places, formatter.seq)]
        return [(p, str(formatter(p, i))) for i, p in enumerate(places)]
    except Exception:
        return None


class _Labeller:
    """Names a position on an axis as its reader would: a category, a tick's text, else the
    number itself."""

    def __init__(self, axis):
        self.categories = _category_names(axis) if axis is not None else None
        self.fixed = None if self.categories or axis is None else _fixed_names(axis)

    def __call__(self, position):
        try:
            place = float(position)
        except (TypeError, ValueError):
            return _label_value(position)
        if self.categories is not None:
            name = self.categories.get(float(round(place)))
            if name is not None and abs(place - round(place)) < SAME_PLACE:
                return name
        if self.fixed is not None:
            for tick, text in self.fixed:
                if abs(tick - place) < SAME_PLACE and text:
                    return text
        return _label_value(position)


def _label_value(value):
    """A label as JSON holds it: text (at most LABEL_CHARS), a finite number, else its text."""
    if isinstance(value, (str, np.str_)):
        return str(value)[:LABEL_CHARS]
    try:
        number = plot_value(value)
    except NotNumber:
        return str(value)[:LABEL_CHARS]
    return number if isinstance(number, (int, float)) else str(value)[:LABEL_CHARS]


def _series_of(ax):
    """{id(patch): index of its bar container} for the bars of an axes."""
    from matplotlib.container import BarContainer

    owner = {}
    for index, container in enumerate(c for c in ax.containers if isinstance(c, BarContainer)):
        for patch in container.patches:
            owner[id(patch)] = index
    return owner


def _bar_points(ax, horizontal):
    name = _Labeller(ax.yaxis if horizontal else ax.xaxis)
    owner = _series_of(ax)
    points = []
    for patch in ax.patches:
        if horizontal:
            value, place = patch.get_width(), patch.get_y() + patch.get_height() / 2
        else:
            value, place = patch.get_height(), patch.get_x() + patch.get_width() / 2
        points.append((owner.get(id(patch), 0), name(place), value))
    return points


def _line_points(ax, radar):
    name = _Labeller(ax.xaxis)
    points = []
    for index, line in enumerate(ax.get_lines()):
        xs, ys = list(line.get_xdata(orig=True)), list(line.get_ydata())
        if radar:
            xs, ys = xs[:-1], ys[:-1]
        points.extend((index, name(x), y) for x, y in zip(xs, ys))
    return points


def _collection_points(ax, area):
    name = _Labeller(ax.xaxis)
    points = []
    for index, collection in enumerate(ax.collections):
        if area:
            vertices = collection.get_paths()[0].vertices
            pairs = [(x, y) for x, y in vertices if y != 0]
        else:
            pairs = [(p[0], p[1]) for p in collection.get_offsets()]
        points.extend((index, name(x), y) for x, y in pairs)
    return points


def _pie_points(ax):
    # A wedge drawn without a label is named by its place.
    return [
        (0, _label_value(w.get_label()) or i, round((w.theta2 - w.theta1) / 360.0, 2))
        for i, w in enumerate(ax.patches)
    ]


def points(ax, kind):
    """The values `ax` plots for its kind, as upstream's reading of that kind takes them,
    each with its series and the category (or x) it stands at: [(series, label, value)].
    Empty when the reading raises or holds a value that is no number."""
    if kind is None:
        return []
    try:
        if kind in ("bar", "hbar", "waterfall"):
            raw = _bar_points(ax, kind == "hbar")
        elif kind in ("line", "radar"):
            raw = _line_points(ax, kind == "radar")
        elif kind in ("scatter", "area"):
            raw = _collection_points(ax, kind == "area")
        elif kind == "pie":
            raw = _pie_points(ax)
        else:
            return []
        return [(series, label, plot_value(value)) for series, label, value in raw[:MAX_POINTS]]
    except Exception:
        return []
