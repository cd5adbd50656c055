import { describe, expect, it } from "vitest";
import { pythonFloat, pythonInt } from "../../evals/metrics/python-numbers.js";
import { numberValueAmount } from "../../evals/metrics/wikitq.js";
import { pyCollapseSpace, pySplit, pyStrip } from "../../grounding/python-text.js";
import { numberTexts } from "../support/generated-cases.js";
import { askReference } from "../support/reference-python.js";

/*
 * WikiTQ's evaluator reads numbers with Python's int() and float() and cleans text with
 * str.strip() and \s: our ports against CPython itself, on 3000 seeded strings in many
 * scripts, with Python's whitespace and JavaScript's.
 */
interface Answer {
  int: string | null;
  float: number | "nan" | "inf" | "-inf" | null;
  strip: string;
  collapse: string;
  split: string[];
  amount: { int: string } | { float: number } | null;
}

const texts = numberTexts(3000, 20_240_611);
const answers = askReference<Answer>("python3", "numbers", texts);

function encodeFloat(value: number | null): Answer["float"] {
  if (value === null) return null;
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

/** The cases where `ours` differs from CPython's answer, quoted so that every character shows. */
function differences<T>(ours: (text: string) => T, theirs: (answer: Answer) => T) {
  return texts.flatMap((text, i) => {
    const answer = answers[i] as Answer;
    const [mine, python] = [ours(text), theirs(answer)];
    return JSON.stringify(mine) === JSON.stringify(python)
      ? []
      : [{ text: JSON.stringify(text), ours: mine, python }];
  });
}

describe("Python's numbers and whitespace, against CPython", () => {
  it("generates enough numbers of each kind to mean something", () => {
    const ints = answers.filter((a) => a.int !== null);
    expect(ints.length).toBeGreaterThan(500);
    expect(ints.filter((a) => (a.int ?? "").replace("-", "").length > 16).length).toBeGreaterThan(
      50,
    );
    expect(answers.filter((a) => a.int === null && a.float !== null).length).toBeGreaterThan(300);
    expect(
      texts.filter((t, i) => /[^\p{ASCII}]/u.test(t) && answers[i]?.int).length,
    ).toBeGreaterThan(200);
    expect(answers.filter((a) => a.int === null && a.float === null).length).toBeGreaterThan(200);
  });

  it("int(): digits of any script, exact at any size", () => {
    expect(
      differences(
        (t) => pythonInt(t)?.toString() ?? null,
        (a) => a.int,
      ),
    ).toEqual([]);
  });

  it("float(): digits of any script, Python's spaces only", () => {
    expect(
      differences(
        (t) => encodeFloat(pythonFloat(t)),
        (a) => a.float,
      ),
    ).toEqual([]);
  });

  it("the amount WikiTQ's NumberValue keeps: an exact int, or a float", () => {
    const encode = (amount: bigint | number | null) =>
      amount === null
        ? null
        : typeof amount === "bigint"
          ? { int: `${amount}` }
          : { float: amount };
    expect(
      differences(
        (t) => encode(numberValueAmount(t)),
        (a) => a.amount,
      ),
    ).toEqual([]);
  });

  it("str.strip(), re.sub(r'\\s+', ' ') and str.split()", () => {
    expect(differences(pyStrip, (a) => a.strip)).toEqual([]);
    expect(
      differences(
        (t) => pyCollapseSpace(t),
        (a) => a.collapse,
      ),
    ).toEqual([]);
    expect(differences(pySplit, (a) => a.split)).toEqual([]);
  });
});
