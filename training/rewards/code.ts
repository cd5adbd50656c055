import type { ExecResult } from "../../blackboard/schemas.js";
import { normalizeAnswer } from "../../evals/metrics/squad.js";
import { getSandbox } from "../../sandbox/index.js";
import { sentenceBleu } from "./bleu.js";
import { executesByOutput, outputText, run, runReference } from "./execution.js";
import { codeOf } from "./format.js";
import { operationF1, operationLabels } from "./operations.js";
import { type RewardFunction, type RewardResult, total } from "./types.js";

/*
 * Code rewards: 0.1 format + 0.2 executes + 0.2 operation F1 + 0.5 BLEU(output, pseudo-gold
 * output), both programs run in the sandbox on the question's tables. Without exactly one
 * ```python block the reply scores 0 (nothing to run, no operations).
 *   paper:   executes = the run raised no error; BLEU over what each printed, as it is
 *   release: executes = some output and no "Error" in it (output = what it printed, then
 *            the error); BLEU over the SQuAD-normalized outputs, 0 when either is empty
 */

type Flavor = {
  executes: (run: ExecResult) => number;
  bleu: (predicted: ExecResult, reference: ExecResult) => number;
};

const PAPER: Flavor = {
  executes: (result) => (result.ok && result.error === null ? 1 : 0),
  bleu: (predicted, reference) => sentenceBleu(reference.stdout, predicted.stdout),
};

const RELEASE: Flavor = {
  executes: (result) => executesByOutput(outputText(result)),
  bleu: (predicted, reference) => {
    const p = normalizeAnswer(outputText(predicted));
    const r = normalizeAnswer(outputText(reference));
    return p.trim() && r.trim() ? sentenceBleu(r, p) : 0;
  },
};

function codeReward(flavor: Flavor): RewardFunction {
  return async (sample, context): Promise<RewardResult> => {
    const code = codeOf(sample.response);
    if (code === null) return total({ format: 0, executes: 0, operations: 0, output: 0 });
    const sandbox = context.sandbox ?? (await getSandbox("local"));
    const [predicted, reference, ops, referenceOps] = await Promise.all([
      run(code, sample.tables, sandbox),
      runReference(sample.reference, sample.tables, sandbox),
      operationLabels(code, sandbox),
      operationLabels(sample.reference, sandbox),
    ]);
    return total({
      format: 0.1,
      executes: 0.2 * flavor.executes(predicted),
      operations: 0.2 * operationF1(ops, referenceOps),
      output: 0.5 * flavor.bleu(predicted, reference),
    });
  };
}

export const paperCodeReward = codeReward(PAPER);
export const releaseCodeReward = codeReward(RELEASE);
