import { mkdirSync } from "node:fs";
import path from "node:path";
import { writeJsonl } from "../mining/journal.js";
import { MINE_STAGES, type MinedQuestion, type MineStage } from "../mining/records.js";
import { selectPseudoGold } from "../mining/select.js";
import { turnRecords } from "../mining/turns.js";
import { writeVerlParquet } from "./parquet.js";
import { dpoRow, roleSamples, type Split, sftRow, type VerlRow, verlRow } from "./rows.js";

/** The files `writeExports` leaves in a mining directory, relative to it. */
export const EXPORT_FILES = {
  trajectories: "trajectories.jsonl",
  pseudoGold: "pseudo-gold.jsonl",
  sft: (role: MineStage) => path.join("sft", `${role}.jsonl`),
  verl: (role: MineStage, split: Split) => path.join("verl", role, `${split}.parquet`),
  dpo: path.join("dpo", "planner.jsonl"),
};

export interface ExportCounts {
  questions: number;
  turns: number;
  sft: Record<MineStage, number>;
  verl: Record<MineStage, Record<Split, number>>;
  dpo: number;
}

const perRole = <T>(make: () => T) =>
  Object.fromEntries(MINE_STAGES.map((r) => [r, make()])) as Record<MineStage, T>;

/**
 * Writes every export of the mined questions into `dir`, each file replaced whole, so running
 * it again (after a resume) gives the same files. `heldOut` names the questions of the test split.
 */
export async function writeExports(
  dir: string,
  questions: readonly MinedQuestion[],
  options: { heldOut: ReadonlySet<string>; dataSource: string },
): Promise<ExportCounts> {
  for (const sub of ["sft", "dpo", ...MINE_STAGES.map((r) => path.join("verl", r))]) {
    mkdirSync(path.join(dir, sub), { recursive: true });
  }
  const turns = questions.flatMap(turnRecords);
  writeJsonl(path.join(dir, EXPORT_FILES.trajectories), turns);
  const sft = perRole<ReturnType<typeof sftRow>[]>(() => []);
  const verl = perRole<Record<Split, VerlRow[]>>(() => ({ train: [], test: [] }));
  const dpo: NonNullable<ReturnType<typeof dpoRow>>[] = [];
  const golds = questions.map((question) => {
    const gold = selectPseudoGold(question);
    const split: Split = options.heldOut.has(question.id) ? "test" : "train";
    for (const sample of roleSamples(question, gold)) {
      sft[sample.role].push(sftRow(question, sample, split));
      const rows = verl[sample.role][split];
      rows.push(
        verlRow(question, sample, { split, index: rows.length, dataSource: options.dataSource }),
      );
    }
    const pair = dpoRow(question, gold, split);
    if (pair) dpo.push(pair);
    return {
      questionId: question.id,
      split,
      plan: gold.plan && {
        branch: gold.plan.node.id,
        correctness: gold.plan.correctness,
        text: gold.plan.node.text,
      },
      code: gold.code && {
        branch: gold.code.node.id,
        correctness: gold.code.correctness,
        text: gold.code.node.text,
      },
      answers: gold.answers.map((a) => ({
        branch: a.node.id,
        correctness: a.correctness,
        target: question.gold,
      })),
    };
  });
  writeJsonl(path.join(dir, EXPORT_FILES.pseudoGold), golds);
  writeJsonl(path.join(dir, EXPORT_FILES.dpo), dpo);
  for (const role of MINE_STAGES) {
    writeJsonl(path.join(dir, EXPORT_FILES.sft(role)), sft[role]);
    for (const split of ["train", "test"] as const) {
      await writeVerlParquet(path.join(dir, EXPORT_FILES.verl(role, split)), verl[role][split]);
    }
  }
  return {
    questions: questions.length,
    turns: turns.length,
    sft: Object.fromEntries(MINE_STAGES.map((r) => [r, sft[r].length])) as Record<
      MineStage,
      number
    >,
    verl: Object.fromEntries(
      MINE_STAGES.map((r) => [r, { train: verl[r].train.length, test: verl[r].test.length }]),
    ) as Record<MineStage, Record<Split, number>>,
    dpo: dpo.length,
  };
}
