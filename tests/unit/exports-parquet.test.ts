import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  parquetSchema,
  readVerlParquet,
  writeVerlParquet,
} from "../../training/exports/parquet.js";
import { EXPORT_FILES, writeExports } from "../../training/exports/write.js";
import type { MinedNode, MinedQuestion } from "../../training/mining/records.js";

const TABLE = {
  id: "t1",
  name: "df",
  uri: "artifacts/x.parquet",
  sha256: "a".repeat(64),
  rows: 3,
  columns: [{ name: "n", dtype: "int64" }],
};

function turn(role: "planner" | "coder" | "answerer", output: string) {
  return {
    role,
    messages: [
      { role: "system" as const, content: `# ${role}` },
      { role: "user" as const, content: "Question: it's 'quoted'?" },
    ],
    output,
    execution: role === "coder" ? "3" : null,
  };
}

function question(id: string, scores: [number, number]): MinedQuestion {
  const nodes: MinedNode[] = [1, 2].flatMap((p, i) => [
    {
      id: `p${p}`,
      parent: null,
      stage: "plan",
      turns: [turn("planner", `<plan>\n1. plan ${p}\n</plan>`)],
      text: `1. plan ${p}`,
      execution: "",
      score: null,
      derived: null,
    },
    {
      id: `p${p}.c1`,
      parent: `p${p}`,
      stage: "code",
      turns: [turn("coder", "```python\nprint(3)\n```")],
      text: "print(3)",
      execution: "3",
      score: null,
      derived: "yes",
    },
    {
      id: `p${p}.c1.a1`,
      parent: `p${p}.c1`,
      stage: "answer",
      turns: [turn("answerer", "Final Answer: 3")],
      text: "3",
      execution: "",
      score: scores[i] ?? 0,
      derived: null,
    },
  ]);
  return {
    id,
    stage: "planner",
    question: "How many?",
    gold: "3",
    qtype: "NumericalReasoning",
    qsubtype: "Counting",
    tables: [TABLE],
    nodes,
    finishedAt: "2025-01-01T00:00:00.000Z",
  };
}

const jsonl = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe("exports of mined questions", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-exports-"));
  const questions = [question("q1", [1, 0]), question("q2", [0, 0.8]), question("q3", [0, 0])];

  it("writes verl parquet with its columns, read back through DuckDB", async () => {
    const counts = await writeExports(dir, questions, {
      heldOut: new Set(["q2"]),
      dataSource: "tableminds/tablebench",
    });
    expect(counts.verl.planner).toEqual({ train: 1, test: 1 });
    const schema = await parquetSchema(path.join(dir, EXPORT_FILES.verl("planner", "train")));
    expect(schema.map((c) => c.name)).toEqual([
      "data_source",
      "prompt",
      "ability",
      "reward_model",
      "extra_info",
    ]);
    expect(schema[1]?.type).toBe('STRUCT("role" VARCHAR, "content" VARCHAR)[]');
    expect(schema[3]?.type).toBe("STRUCT(style VARCHAR, ground_truth VARCHAR)");
    const train = await readVerlParquet(path.join(dir, EXPORT_FILES.verl("planner", "train")));
    expect(train).toEqual([
      {
        data_source: "tableminds/tablebench",
        prompt: question("q1", [1, 0]).nodes[0]?.turns[0]?.messages,
        ability: "planning",
        reward_model: { style: "rule", ground_truth: "<plan>\n1. plan 1\n</plan>" },
        extra_info: {
          split: "train",
          index: 0,
          question_id: "q1",
          branch: "p1",
          qtype: "NumericalReasoning",
          qsubtype: "Counting",
          question: "How many?",
          answer: "3",
          tables: JSON.stringify([TABLE]),
          role: "plan",
        },
      },
    ]);
    const test = await readVerlParquet(path.join(dir, EXPORT_FILES.verl("planner", "test")));
    expect(
      test.map((r) => [r.extra_info.question_id, r.extra_info.split, r.extra_info.branch]),
    ).toEqual([["q2", "test", "p2"]]);
    const coder = await readVerlParquet(path.join(dir, EXPORT_FILES.verl("coder", "train")));
    expect(coder.map((r) => [r.ability, r.reward_model.ground_truth, r.extra_info.role])).toEqual([
      ["coding", "print(3)", "code"],
    ]);
    const answerer = await readVerlParquet(path.join(dir, EXPORT_FILES.verl("answerer", "train")));
    expect(answerer.map((r) => [r.ability, r.reward_model.ground_truth])).toEqual([
      ["answering", "3"],
    ]);
    const coderTest = await readVerlParquet(path.join(dir, EXPORT_FILES.verl("coder", "test")));
    expect(coderTest.map((r) => r.extra_info.question_id)).toEqual(["q2"]);
    // An empty split is still a readable file.
    const empty = path.join(dir, "empty.parquet");
    await writeVerlParquet(empty, []);
    expect(await readVerlParquet(empty)).toEqual([]);
  });

  it("writes SFT chats, DPO plan pairs, turn records and the pseudo-gold", () => {
    const sft = jsonl(path.join(dir, EXPORT_FILES.sft("answerer")));
    expect(sft).toHaveLength(2);
    expect(sft[0]).toMatchObject({ questionId: "q1", split: "train" });
    expect((sft[0]?.messages as { role: string; content: string }[] | undefined)?.at(-1)).toEqual({
      role: "assistant",
      content: "Final Answer: 3",
    });
    const dpo = jsonl(path.join(dir, EXPORT_FILES.dpo));
    expect(
      dpo.map((d) => [d.questionId, d.chosen, d.rejected, d.chosenScore, d.rejectedScore]),
    ).toEqual([
      ["q1", "<plan>\n1. plan 1\n</plan>", "<plan>\n1. plan 2\n</plan>", 1, 0],
      ["q2", "<plan>\n1. plan 2\n</plan>", "<plan>\n1. plan 1\n</plan>", 0.8, 0],
    ]);
    const turns = jsonl(path.join(dir, EXPORT_FILES.trajectories));
    // Three questions, two trajectories each, three turns each.
    expect(turns).toHaveLength(18);
    expect(
      turns
        .slice(0, 3)
        .map((t) => [t.trajectory, t.turn, (t.agent as { role: string }).role, t.reward]),
    ).toEqual([
      ["p1.c1.a1", 0, "planner", 1],
      ["p1.c1.a1", 1, "coder", 1],
      ["p1.c1.a1", 2, "answerer", 1],
    ]);
    // Quality shaping: Q = 1, R = 1 -> d = 1, R' = 1.5.
    expect(turns[1]?.shapedReward).toBe(1.5);
    const gold = jsonl(path.join(dir, EXPORT_FILES.pseudoGold));
    expect(
      gold.map((g) => [
        g.questionId,
        g.split,
        (g.plan as { branch: string } | null)?.branch ?? null,
      ]),
    ).toEqual([
      ["q1", "train", "p1"],
      ["q2", "test", "p2"],
      ["q3", "train", null],
    ]);
  });
});
