"""NLTK's sentence BLEU for the reward tests: reads {"cases": [[reference, hypothesis], ...]}
as JSON on stdin and writes one score per case, with whitespace tokens, the default weights
and SmoothingFunction().method4, as Mixture-of-Minds' released reward calls it."""

import json
import sys

import nltk
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

smooth = SmoothingFunction().method4
cases = json.load(sys.stdin)["cases"]
scores = [
    float(sentence_bleu([reference.split()], hypothesis.split(), smoothing_function=smooth))
    for reference, hypothesis in cases
]
json.dump({"version": nltk.__version__, "scores": scores}, sys.stdout)
