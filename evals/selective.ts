import type { ResultRecord } from "./results-file.js";
import type { QuestionScore } from "./types.js";

/*
 * What the checker's verdicts are worth, measured against the official scores: selective
 * prediction (answer the most confident questions first: how accurate is each share of them),
 * the pass verdict as a detector of right answers, and the calibration of the confidence.
 *
 * Only results that carry a verdict count here. A result without one (checking off, a run
 * that failed before its check, a file of an older version) is counted and left out; a
 * question that failed on the model endpoint has no result at all (it is never recorded, see
 * endpoint-failures.ts), so it is never a wrong answer here.
 */

/** ROUGE-L-like metrics (graded text overlap): an answer at least this good counts as right. */
export const ROUGE_RIGHT_AT = 0.5;

/** The rule, in words, for reports. */
export const RIGHT_RULE =
  "an answer counts as right when its official score is full marks (1 for EM, EM within 10%, Pass@1, FinQA's exact, accuracy), or at least 0.5 for ROUGE-L";

/** Whether a question's official score makes its answer right (see RIGHT_RULE). */
export function isRight(score: Pick<QuestionScore, "metric" | "score">): boolean {
  return /rouge/i.test(score.metric) ? score.score >= ROUGE_RIGHT_AT : score.score >= 1;
}

/** One result with a verdict, as the figures see it. */
export interface CheckedOutcome {
  id: string;
  right: boolean;
  pass: boolean;
  confidence: number;
  sure: boolean;
  support: string;
}

/** The results that carry a verdict, each with whether its answer is right. */
export function checkedOutcomes(records: readonly ResultRecord[]): CheckedOutcome[] {
  return records.flatMap((r) =>
    r.verdict
      ? [
          {
            id: r.id,
            right: isRight(r.score),
            pass: r.verdict.pass,
            confidence: r.verdict.confidence,
            sure: r.verdict.sure,
            support: r.verdict.support,
          },
        ]
      : [],
  );
}

/** One point of a risk-coverage curve: the k most confident answers. */
export interface CoveragePoint {
  /** Answers taken, and their share of all answers with a verdict (percent). */
  k: number;
  coverage: number;
  /** The lowest confidence among them. */
  confidence: number;
  /** Expected number of right answers among them (ties in confidence in random order). */
  right: number;
  /** Percent right among them, and its complement, the selective risk (percent). */
  accuracy: number;
  risk: number;
}

/**
 * Accuracy at every coverage when answers are taken in decreasing confidence. Answers of equal
 * confidence cannot be told apart, so within a run of ties the right ones are spread evenly
 * (the expectation over every order of the ties): a confidence that is the same for every
 * answer gives the overall accuracy at every coverage.
 */
export function riskCoverage(outcomes: readonly CheckedOutcome[]): CoveragePoint[] {
  const sorted = [...outcomes].sort((a, b) => b.confidence - a.confidence);
  const n = sorted.length;
  const points: CoveragePoint[] = [];
  let start = 0;
  let rightBefore = 0;
  while (start < n) {
    const confidence = sorted[start]?.confidence ?? 0;
    let end = start;
    while (end < n && sorted[end]?.confidence === confidence) end += 1;
    const size = end - start;
    const rightHere = sorted.slice(start, end).filter((o) => o.right).length;
    for (let j = 1; j <= size; j++) {
      const k = start + j;
      const right = rightBefore + (rightHere * j) / size;
      points.push({
        k,
        coverage: (100 * k) / n,
        confidence,
        right,
        accuracy: (100 * right) / k,
        risk: 100 - (100 * right) / k,
      });
    }
    rightBefore += rightHere;
    start = end;
  }
  return points;
}

/** The curve of the best possible ranking: every right answer before every wrong one. */
export function optimalRiskCoverage(outcomes: readonly CheckedOutcome[]): CoveragePoint[] {
  const ranked = outcomes.map((o) => ({ ...o, confidence: o.right ? 1 : 0 }));
  return riskCoverage(ranked);
}

/** Area under the risk-coverage curve: the mean selective risk over k = 1..n, as a fraction. */
export function aurc(points: readonly CoveragePoint[]): number | null {
  if (points.length === 0) return null;
  return points.reduce((sum, p) => sum + p.risk / 100, 0) / points.length;
}

/** The answers taken at a coverage (percent): the ceil(coverage × n / 100) most confident. */
export function atCoverage(points: readonly CoveragePoint[], percent: number): CoveragePoint {
  const k = Math.max(1, Math.ceil((percent * points.length) / 100));
  const point = points[k - 1];
  if (!point) throw new Error(`no answers at coverage ${percent}%`);
  return point;
}

/** One bin of the reliability table. */
export interface ReliabilityBin {
  /** Confidence range [from, to); the last bin includes 1. */
  from: number;
  to: number;
  n: number;
  /** Mean confidence in the bin (0-1), and the share of right answers (0-1); null when empty. */
  confidence: number | null;
  accuracy: number | null;
}

export const CALIBRATION_BINS = 10;

/** The answers binned by confidence into equal-width bins over [0, 1]. */
export function reliability(
  outcomes: readonly CheckedOutcome[],
  bins = CALIBRATION_BINS,
): ReliabilityBin[] {
  const members: CheckedOutcome[][] = Array.from({ length: bins }, () => []);
  for (const o of outcomes) {
    const at = Math.min(bins - 1, Math.max(0, Math.floor(o.confidence * bins)));
    members[at]?.push(o);
  }
  return members.map((inBin, i) => ({
    from: i / bins,
    to: (i + 1) / bins,
    n: inBin.length,
    confidence: inBin.length ? inBin.reduce((s, o) => s + o.confidence, 0) / inBin.length : null,
    accuracy: inBin.length ? inBin.filter((o) => o.right).length / inBin.length : null,
  }));
}

/**
 * Expected calibration error: the bins' |accuracy − mean confidence|, weighted by their share
 * of the answers (a fraction, 0 = calibrated).
 */
export function expectedCalibrationError(bins: readonly ReliabilityBin[]): number | null {
  const total = bins.reduce((s, b) => s + b.n, 0);
  if (total === 0) return null;
  return bins.reduce(
    (sum, b) =>
      b.accuracy === null || b.confidence === null
        ? sum
        : sum + (b.n / total) * Math.abs(b.accuracy - b.confidence),
    0,
  );
}

const percentOf = (part: number, whole: number) => (whole === 0 ? null : (100 * part) / whole);

/** A count and the percent of it that is right. */
export interface Share {
  n: number;
  right: number;
  /** Percent right; null when n is 0. */
  accuracy: number | null;
}

const share = (outcomes: readonly CheckedOutcome[]): Share => {
  const right = outcomes.filter((o) => o.right).length;
  return { n: outcomes.length, right, accuracy: percentOf(right, outcomes.length) };
};

/** The coverages the report gives accuracy at, in percent. */
export const REPORTED_COVERAGES = [100, 90, 80, 50] as const;

/** Every figure of the checker's verdicts; percentages in percent, AURC and ECE as fractions. */
export interface CheckerFigures {
  /** The rule that makes an answer right. */
  rightWhen: string;
  /** Results with a verdict (the figures' questions), results without one. */
  checked: number;
  withoutVerdict: number;
  right: number;
  wrong: number;
  /** The pass verdict against the official score. */
  pass: {
    passed: number;
    /** Percent of the passed answers that are right; null when none passed. */
    precision: number | null;
    /** Percent of the right answers that passed; null when none is right. */
    recall: number | null;
    /** Wrong answers the checker passed, and their percent of the wrong answers. */
    wrongPassed: number;
    wrongPassedRate: number | null;
    /** Right answers the checker failed. */
    rightFailed: number;
  };
  /** Answers above the run's confidence threshold and below it. */
  sure: Share;
  notSure: Share;
  /** Answers by their weakest support. */
  support: ({ kind: string } & Share)[];
  selective: {
    /** Area under the risk-coverage curve (0-1, lower is better). */
    aurc: number | null;
    /** The AURC of the best possible ranking (every right answer first). */
    optimalAurc: number | null;
    /** The AURC of no ranking (a constant confidence): the error rate. */
    randomAurc: number | null;
    atCoverage: { coverage: number; k: number; confidence: number; accuracy: number }[];
  };
  calibration: {
    /** Expected calibration error over equal-width bins (0-1). */
    ece: number | null;
    bins: ReliabilityBin[];
  };
}

const SUPPORT_ORDER = ["derived", "looked-up", "coincidental", "none"];

/** The checker's figures over a run's results. */
export function checkerFigures(records: readonly ResultRecord[]): CheckerFigures {
  const outcomes = checkedOutcomes(records);
  const right = outcomes.filter((o) => o.right).length;
  const wrong = outcomes.length - right;
  const passed = outcomes.filter((o) => o.pass);
  const passedRight = passed.filter((o) => o.right).length;
  const curve = riskCoverage(outcomes);
  const bins = reliability(outcomes);
  const kinds = [...new Set(outcomes.map((o) => o.support))].sort(
    (a, b) =>
      (SUPPORT_ORDER.indexOf(a) + 1 || 99) - (SUPPORT_ORDER.indexOf(b) + 1 || 99) ||
      a.localeCompare(b),
  );
  return {
    rightWhen: RIGHT_RULE,
    checked: outcomes.length,
    withoutVerdict: records.length - outcomes.length,
    right,
    wrong,
    pass: {
      passed: passed.length,
      precision: percentOf(passedRight, passed.length),
      recall: percentOf(passedRight, right),
      wrongPassed: passed.length - passedRight,
      wrongPassedRate: percentOf(passed.length - passedRight, wrong),
      rightFailed: right - passedRight,
    },
    sure: share(outcomes.filter((o) => o.sure)),
    notSure: share(outcomes.filter((o) => !o.sure)),
    support: kinds.map((kind) => ({ kind, ...share(outcomes.filter((o) => o.support === kind)) })),
    selective: {
      aurc: aurc(curve),
      optimalAurc: aurc(optimalRiskCoverage(outcomes)),
      randomAurc: outcomes.length ? wrong / outcomes.length : null,
      atCoverage:
        curve.length === 0
          ? []
          : REPORTED_COVERAGES.map((coverage) => {
              const p = atCoverage(curve, coverage);
              return { coverage, k: p.k, confidence: p.confidence, accuracy: p.accuracy };
            }),
    },
    calibration: { ece: expectedCalibrationError(bins), bins },
  };
}
