"""What CPython (and the rouge-score package) say about generated cases, for the scorer
tests: reads {"task": ..., "cases": [...]} as JSON on stdin, writes one JSON answer per case.

  numbers  int(), float(), str.strip(), re.sub(r"\\s+", " ") and str.split() of a string,
           and the amount WikiTQ's NumberValue keeps for it
  squad    the SQuAD-style normalization TableBench scores with
  rouge    rouge_score's ROUGE-L F-measure of [reference, prediction] pairs
"""

import json
import math
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


def main():
    request = json.load(sys.stdin)
    task, cases = request["task"], request["cases"]
    if sys.version_info < (3, 11):
        raise SystemExit(f"the reference needs CPython 3.11 or later, not {sys.version}")
    if task == "numbers":
        answers = [numbers(text) for text in cases]
    elif task == "squad":
        answers = [squad(text) for text in cases]
    elif task == "rouge":
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
        answers = [scorer.score(ref, pred)["rougeL"].fmeasure for ref, pred in cases]
    else:
        raise SystemExit(f"unknown task {task!r}")
    json.dump(answers, sys.stdout)


main()
