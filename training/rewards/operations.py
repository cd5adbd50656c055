"""The pandas operations a piece of Python code performs, read from its syntax tree.

Run in the sandbox with the placeholder below replaced by the code in base64; prints the sorted
labels as a JSON list ([] when the code does not parse). training/rewards/operations.ts lists
the same labels.

The labels and the rules are those of the released Mixture-of-Minds code reward
(`extract_operations` in reward_functions/table_reasoning_reward.py of
Tonyzhou98/mixture-of-minds), quirks included, as it runs on Python 3.9 to 3.13:
- only `x.DataFrame(...)` and `x.to_numeric(...)` count (not a bare `DataFrame(...)`); the
  methods are sort_values, groupby, sum, mean, count, astype, replace (two labels), dropna and
  corr, called as `x.method(...)`; casts and print only as bare `float(...)`, `print(...)`;
- a subscript's key is a literal (`df['a']`, `df.iloc[0]`) or a literal one level inside
  another expression (`df[(k := 'a')]`, `df['a'.strip]`); so `df[['a', 'b']]` (a list) and
  `df.iloc[-1]` (a unary minus) have none, and select_columns and select_bottom_row, though
  labels of the release, never occur; a key equal to 0 (also False and 0.0) is the top row;
- a comparison filters by value when its left side is a subscript and some comparator is a
  str, int or float literal (True and False are ints); by condition when its left side is a
  subscript and an operator is >, <, >=, <= or !=; compares columns when any comparator is a
  subscript, whatever the left side;
- `a - b` is compute_difference and `a + b` is add_columns, whatever a and b are (not `+=`);
- assign_answer_text: `answer = ...`, `result = ...` or `summary = ...` (any letter case),
  a plain name target of a plain assignment.
"""

import ast
import base64
import json

SOURCE = base64.b64decode("CODE_B64").decode("utf-8", "replace")

METHOD_LABELS = {
    "sort_values": ("sort_by_column",),
    "groupby": ("groupby",),
    "sum": ("aggregate_sum",),
    "mean": ("aggregate_mean",),
    "count": ("aggregate_count",),
    "astype": ("change_dtype",),
    "replace": ("replace_values", "string_cleanup"),
    "dropna": ("handle_nulls",),
    "corr": ("compute_correlation",),
}
CASTS = {"float": "convert_to_float", "int": "convert_to_int", "str": "convert_to_str"}
ANSWER_NAMES = {"answer", "result", "summary"}
RANGE_OPS = (ast.Gt, ast.Lt, ast.GtE, ast.LtE, ast.NotEq)
NO_KEY = object()


def subscript_key(index):
    """The value the release reads as a subscript's key, or NO_KEY."""
    if isinstance(index, ast.Constant):
        return index.value
    inner = getattr(index, "value", None)
    return inner.value if isinstance(inner, ast.Constant) else NO_KEY


def call_labels(call):
    func = call.func
    keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
    if isinstance(func, ast.Name):
        if func.id in CASTS:
            yield CASTS[func.id]
        if func.id == "print":
            yield "print_result"
        return
    if not isinstance(func, ast.Attribute):
        return
    if func.attr == "DataFrame":
        yield "create_dataframe"
        if "columns" in keywords:
            yield "assign_column_names"
    if func.attr == "to_numeric":
        yield "convert_to_numeric"
        errors = keywords.get("errors")
        if isinstance(errors, ast.Constant) and errors.value == "coerce":
            yield "handle_nulls"
    yield from METHOD_LABELS.get(func.attr, ())


def subscript_labels(node):
    key = subscript_key(node.slice)
    if key is NO_KEY:
        return
    if isinstance(key, str):
        yield "select_column"
    elif isinstance(key, list):  # a literal's value is never a list: kept as the release has it
        yield "select_columns"
    if key == 0:
        yield "select_top_row"
    elif key == -1:
        yield "select_bottom_row"


def compare_labels(node):
    on_column = isinstance(node.left, ast.Subscript)
    for other in node.comparators:
        literal = isinstance(other, ast.Constant) and isinstance(other.value, (str, int, float))
        if on_column and literal:
            yield "filter_row_by_value"
        if isinstance(other, ast.Subscript):
            yield "compare_columns"
    if on_column and any(isinstance(op, RANGE_OPS) for op in node.ops):
        yield "filter_row_by_condition"


def node_labels(node):
    if isinstance(node, ast.Call):
        yield from call_labels(node)
    elif isinstance(node, ast.Subscript):
        yield from subscript_labels(node)
    elif isinstance(node, ast.Compare):
        yield from compare_labels(node)
    elif isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Sub):
            yield "compute_difference"
        elif isinstance(node.op, ast.Add):
            yield "add_columns"
    elif isinstance(node, ast.JoinedStr):
        yield "format_output"
    elif isinstance(node, ast.Assign):
        names = (t.id.lower() for t in node.targets if isinstance(t, ast.Name))
        if any(name in ANSWER_NAMES for name in names):
            yield "assign_answer_text"


def labels(source):
    try:
        tree = ast.parse(source)
    except Exception:  # the release gives code it cannot parse no operations
        return []
    return sorted({label for node in ast.walk(tree) for label in node_labels(node)})


print(json.dumps(labels(SOURCE)))
