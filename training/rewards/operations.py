"""The pandas operations a piece of Python code performs, read from its syntax tree.

Run in the sandbox with the placeholder below replaced by the code in base64; prints the sorted
labels as a JSON list ([] when the code does not parse). training/rewards/operations.ts
documents the labels and must list the same ones.
"""

import ast
import base64
import json

SOURCE = base64.b64decode("CODE_B64").decode("utf-8", "replace")

METHODS = {
    "sort_values": ["sort_by_column"],
    "sort_index": ["sort_by_column"],
    "nlargest": ["sort_by_column"],
    "nsmallest": ["sort_by_column"],
    "groupby": ["groupby"],
    "sum": ["aggregate_sum"],
    "mean": ["aggregate_mean"],
    "count": ["aggregate_count"],
    "astype": ["change_dtype"],
    "replace": ["replace_values", "string_cleanup"],
    "strip": ["string_cleanup"],
    "dropna": ["handle_nulls"],
    "fillna": ["handle_nulls"],
    "corr": ["compute_correlation"],
    "to_numeric": ["convert_to_numeric"],
}
CASTS = {"float": "convert_to_float", "int": "convert_to_int", "str": "convert_to_str"}
ANSWER_NAMES = {"answer", "result", "summary", "final_answer"}
RANGE_OPS = (ast.Gt, ast.Lt, ast.GtE, ast.LtE, ast.NotEq)


def called_name(call):
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    if isinstance(call.func, ast.Name):
        return call.func.id
    return None


def constant_index(node):
    """The value of a literal subscript: "a", 0, -1, or a list of literals."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = constant_index(node.operand)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else None
    if isinstance(node, ast.List) and all(isinstance(e, ast.Constant) for e in node.elts):
        return [e.value for e in node.elts]
    return None


def is_scalar(node):
    return isinstance(node, ast.Constant) and type(node.value) in (str, int, float)


def labels_of(tree):
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = called_name(node)
            keywords = {k.arg: k.value for k in node.keywords}
            if name == "DataFrame":
                found.add("create_dataframe")
                if "columns" in keywords:
                    found.add("assign_column_names")
            if name == "to_numeric":
                errors = keywords.get("errors")
                if isinstance(errors, ast.Constant) and errors.value == "coerce":
                    found.add("handle_nulls")
            if name == "print" and isinstance(node.func, ast.Name):
                found.add("print_result")
            if isinstance(node.func, ast.Name) and name in CASTS:
                found.add(CASTS[name])
            if isinstance(node.func, ast.Attribute) or name == "to_numeric":
                found.update(METHODS.get(name, []))
        elif isinstance(node, ast.Subscript):
            index = constant_index(node.slice)
            if isinstance(index, str):
                found.add("select_column")
            elif isinstance(index, list):
                found.add("select_columns")
            elif index == 0 and not isinstance(index, bool):
                found.add("select_top_row")
            elif index == -1:
                found.add("select_bottom_row")
        elif isinstance(node, ast.Compare):
            on_column = isinstance(node.left, ast.Subscript)
            if on_column and any(is_scalar(c) for c in node.comparators):
                found.add("filter_row_by_value")
            if on_column and any(isinstance(op, RANGE_OPS) for op in node.ops):
                found.add("filter_row_by_condition")
            if any(isinstance(c, ast.Subscript) for c in node.comparators):
                found.add("compare_columns")
        elif isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Sub):
                found.add("compute_difference")
            elif isinstance(node.op, ast.Add):
                found.add("add_values")
        elif isinstance(node, ast.JoinedStr):
            found.add("format_output")
        elif isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id.lower() in ANSWER_NAMES for t in node.targets):
                found.add("assign_answer")
    return found


try:
    TREE = ast.parse(SOURCE)
except (SyntaxError, ValueError, RecursionError, MemoryError):
    TREE = None
print(json.dumps(sorted(labels_of(TREE)) if TREE is not None else []))
