"""What CPython (and the rouge-score package) say about generated cases, for the scorer
tests: reads {"task": ..., "cases": [...]} as JSON on stdin, writes one JSON answer per case.

  numbers  int(), float(), str.strip(), re.sub(r"\\s+", " ") and str.split() of a string,
           and the amount WikiTQ's NumberValue keeps for it
  squad    the SQuAD-style normalization TableBench scores with
  rouge    rouge_score's ROUGE-L F-measure of [reference, prediction] pairs
  tablebench_em
           TableBench's compute_em and compute_em_with_tolerance (2, 5, 10 percent) of
           [reference, prediction] pairs, on the raw strings and after the SQuAD normalization
           (as QAMetric.compute scores them), by the reimplementation below
  mom_operations
           the operation labels of code strings as the released Mixture-of-Minds code reward
           reads them (extract_operations, rewritten below from its text); run it with the
           sandbox's Python, which reads our labels too
"""

import ast
import contextlib
import io
import json
import math
import warnings
import re
import string
import sys


def encode_float(value):
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def as_int(text):
    try:
        return int(text)
    except ValueError:
        return None


def as_float(text):
    try:
        return float(text)
    except ValueError:
        return None


def number_value_amount(text):
    """NumberValue.parse, then its constructor: near-integers become int(amount)."""
    amount = as_int(text)
    if amount is None:
        amount = as_float(text)
        if amount is None or math.isnan(amount) or math.isinf(amount):
            return None
    if abs(amount - round(amount)) < 1e-6:
        return {"int": str(int(amount))}
    return {"float": amount}


def numbers(text):
    parsed_int = as_int(text)
    parsed_float = as_float(text)
    return {
        "int": None if parsed_int is None else str(parsed_int),
        "float": None if parsed_float is None else encode_float(parsed_float),
        "strip": text.strip(),
        "collapse": re.sub(r"\s+", " ", text),
        "split": text.split(),
        "amount": number_value_amount(text),
    }


PUNCTUATION = set(string.punctuation)


def squad(text):
    text = text.lower()
    text = "".join(c for c in text if c not in PUNCTUATION)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


# --- TableBench's EM (metrics/custom_em_metric.py upstream), reimplemented rule by rule from
# the upstream text, with the same Python operations: re's \d, str.strip/split, and Decimal in
# the default context (28 digits, ROUND_HALF_EVEN, InvalidOperation/DivisionByZero/Overflow
# trapped); any exception scores the item 0, as upstream's bare `except: continue` does.

from decimal import Decimal, ROUND_HALF_UP  # noqa: E402

TB_NUMBER = re.compile(r"^-?\d+(\.\d+)?%?$")


def tb_is_number(text):
    return bool(TB_NUMBER.match(text.strip()))


def tb_number(text):
    if text.endswith("%"):
        value = Decimal(text.strip("%")) / Decimal("100")
        return value.quantize(Decimal("1.0000"), rounding=ROUND_HALF_UP)
    return Decimal(text)


def tb_places(values):
    places = []
    for value in values:
        if value.endswith("%"):
            continue
        places.append(len(value.split(".")[-1]) if "." in value else 0)
    return min(places) if places else 0


def tb_round(value, places):
    return str(value.quantize(Decimal("1." + "0" * places), rounding=ROUND_HALF_UP))


def tb_items(reference, prediction, numeric):
    references = [x.strip() for x in reference.split(",")]
    predictions = [x.strip() for x in prediction.split(",")]
    weight = 1.0 / len(references)
    score = 0.0
    for i, r in enumerate(references):
        if i >= len(predictions):
            continue
        p = predictions[i]
        if tb_is_number(r):
            try:
                if numeric(r, p, references):
                    score += weight
            except Exception:  # upstream: a bare except
                continue
        elif r == p:
            score += weight
    return score


def tb_em_item(r, p, references):
    if r.endswith("%"):
        return tb_number(r) == tb_number(p)
    plain = [x for x in references if tb_is_number(x) and not x.endswith("%")]
    places = tb_places(plain)
    expected = tb_round(tb_number(r), places)
    return expected == tb_round(tb_number(p), places)


def tb_tolerance_item(error_range):
    def item(r, p, references):
        expected = tb_number(r)
        predicted = tb_number(p)
        if expected == Decimal("0"):
            return predicted == expected
        error = abs(expected - predicted) / abs(expected)
        return error <= error_range / 100

    return item


def tablebench_em(pair):
    scores = {}
    for name, (reference, prediction) in (
        ("raw", pair),
        ("normalized", (squad(pair[0]), squad(pair[1]))),
    ):
        scores[name] = {
            "em": tb_items(reference, prediction, tb_em_item),
            **{
                f"em{error}": tb_items(reference, prediction, tb_tolerance_item(error))
                for error in (2, 5, 10)
            },
        }
    return scores


# --- Mixture-of-Minds' extract_operations (reward_functions/table_reasoning_reward.py of
# Tonyzhou98/mixture-of-minds), rewritten from the released text block by block: the same
# checks in the same order, each block in its own try (an exception ends that block only), the
# version switches (ast.Index, ast.Str) as the release has them.


def mom_index(slice_node):
    if isinstance(slice_node, ast.Constant):
        return slice_node.value
    elif isinstance(slice_node, ast.Index):  # Python < 3.9; never true after
        return getattr(slice_node.value, "value", None)
    elif hasattr(slice_node, "value"):
        return getattr(slice_node.value, "value", None)
    return None


def mom_operations_of(code):
    found = set()
    try:
        tree = ast.parse(code)
    except Exception as e:
        print("AST parsing failed:", e)
        return sorted(found)
    for node in ast.walk(tree):
        try:  # DataFrame creation, to_numeric
            if isinstance(node, ast.Call):
                if isinstance(node.func, ast.Attribute) and node.func.attr == "DataFrame":
                    found.add("create_dataframe")
                    for kw in node.keywords:
                        if kw.arg == "columns":
                            found.add("assign_column_names")
                if hasattr(node.func, "attr") and node.func.attr == "to_numeric":
                    found.add("convert_to_numeric")
                    for kw in node.keywords:
                        if kw.arg == "errors" and getattr(kw.value, "value", None) == "coerce":
                            found.add("handle_nulls")
        except Exception as e:
            print("block error:", e)
        try:  # column selection
            if isinstance(node, ast.Subscript):
                index = mom_index(node.slice)
                if isinstance(index, str):
                    found.add("select_column")
                elif isinstance(index, list):
                    found.add("select_columns")
        except Exception as e:
            print("block error:", e)
        try:  # filtering and comparisons
            if isinstance(node, ast.Compare):
                lhs_column = isinstance(node.left, ast.Subscript)
                for comp in node.comparators:
                    if lhs_column:
                        if isinstance(comp, ast.Constant) and isinstance(
                            comp.value, (str, int, float)
                        ):
                            found.add("filter_row_by_value")
                        elif isinstance(comp, ast.Str):  # Python < 3.8
                            found.add("filter_row_by_value")
                    if isinstance(comp, ast.Subscript):
                        found.add("compare_columns")
                for op in node.ops:
                    if isinstance(op, (ast.Gt, ast.Lt, ast.GtE, ast.LtE, ast.NotEq)):
                        if lhs_column:
                            found.add("filter_row_by_condition")
        except Exception as e:
            print("block error:", e)
        try:  # method chains
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                attr = node.func.attr
                if attr == "sort_values":
                    found.add("sort_by_column")
                elif attr == "groupby":
                    found.add("groupby")
                elif attr in ["sum", "mean", "count"]:
                    found.add(f"aggregate_{attr}")
                elif attr == "astype":
                    found.add("change_dtype")
                elif attr == "replace":
                    found.add("replace_values")
                    found.add("string_cleanup")
                elif attr == "dropna":
                    found.add("handle_nulls")
                elif attr == "corr":
                    found.add("compute_correlation")
        except Exception as e:
            print("block error:", e)
        try:  # arithmetic
            if isinstance(node, ast.BinOp):
                if isinstance(node.op, ast.Sub):
                    found.add("compute_difference")
                elif isinstance(node.op, ast.Add):
                    found.add("add_columns")
        except Exception as e:
            print("block error:", e)
        try:  # top and bottom rows
            if isinstance(node, ast.Subscript):
                index = mom_index(node.slice)
                if index == 0:
                    found.add("select_top_row")
                elif index == -1:
                    found.add("select_bottom_row")
        except Exception as e:
            print("block error:", e)
        try:  # casts
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in ["float", "int", "str"]:
                    found.add(f"convert_to_{node.func.id}")
        except Exception as e:
            print("block error:", e)
        try:  # output
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id == "print":
                    found.add("print_result")
            if isinstance(node, ast.JoinedStr):
                found.add("format_output")
        except Exception as e:
            print("block error:", e)
        try:  # the answer
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.lower() in [
                        "answer",
                        "result",
                        "summary",
                    ]:
                        found.add("assign_answer_text")
        except Exception as e:
            print("block error:", e)
    return sorted(found)


def mom_operations(code):
    # The release prints its failures; keep them out of the JSON answer.
    with contextlib.redirect_stdout(io.StringIO()):
        return mom_operations_of(code)


def main():
    request = json.load(sys.stdin)
    task, cases = request["task"], request["cases"]
    if sys.version_info < (3, 11):
        raise SystemExit(f"the reference needs CPython 3.11 or later, not {sys.version}")
    if task == "numbers":
        answers = [numbers(text) for text in cases]
    elif task == "squad":
        answers = [squad(text) for text in cases]
    elif task == "mom_operations":
        # ast.Str and ast.Index are deprecated (3.8, 3.9): the release touches them anyway.
        warnings.simplefilter("ignore", DeprecationWarning)
        answers = [mom_operations(code) for code in cases]
    elif task == "tablebench_em":
        answers = [tablebench_em(pair) for pair in cases]
    elif task == "rouge":
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
        answers = [scorer.score(ref, pred)["rougeL"].fmeasure for ref, pred in cases]
    else:
        raise SystemExit(f"unknown task {task!r}")
    json.dump(answers, sys.stdout)


main()
