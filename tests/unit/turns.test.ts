import { Overwrite } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { EMPTY_BUDGET } from "../../blackboard/reducers.js";
import type { Answer, ProducedTable, TableRef } from "../../blackboard/schemas.js";
import { openTurn, type Turn, type TurnView } from "../../blackboard/turns.js";
import { renderConversation } from "../../nodes/prompts.js";
import { ranAttempt } from "../support/evidence.js";

const SHA = "a".repeat(64);

function table(name: string): TableRef {
  return {
    id: `table:${name}`,
    name,
    uri: `/store/${SHA}.csv`,
    sha256: SHA,
    rows: 3,
    columns: [{ name: "nation", dtype: "object" }],
  };
}

function produced(variable: string): ProducedTable {
  return { variable, line: 1, table: table(variable), lineage: [] };
}

const medals = table("medals");
const FIRST = "How many gold medals in total?";
// a1 failed to be cited; a2 answered and left two tables, one of them named `result`.
const a1 = ranAttempt("a1", "scratch = df.head()\nprint(1)", "1\n", [produced("scratch")]);
const a2 = ranAttempt("a2", "by_nation = df\nprint(203)", "203\n", [
  produced("by_nation"),
  produced("result"),
  produced("medals"),
]);
const answered: Answer = { raw: "Final Answer: 203", final: "203", evidence: ["a2:out1"] };

/** A table_qa blackboard after its first question was answered and checked. */
function finished(more: Partial<TurnView> = {}): TurnView & Record<string, unknown> {
  return {
    question: FIRST,
    asked: FIRST,
    turns: [],
    tables: [medals],
    answer: answered,
    evidence: [...a1.evidence, ...a2.evidence],
    verdict: null,
    plan: ["Sum gold."],
    attempts: [a1.attempt, a2.attempt],
    reflections: [],
    checked: [],
    budget: { ...EMPTY_BUDGET, llmCalls: 4 },
    ...more,
  };
}

describe("opening a turn of a thread's conversation", () => {
  it("marks the first question as asked and leaves the rest alone", () => {
    const fresh = finished({ asked: null, answer: null, evidence: [] });
    expect(openTurn(fresh)).toEqual({ asked: FIRST });
  });

  it("changes nothing when the same question runs again (a resume)", () => {
    expect(openTurn(finished())).toEqual({});
  });

  it("archives the finished turn with the tables its answering code left, renamed where taken", () => {
    const update = openTurn(finished({ question: "And for silver?" }));
    const [turn] = update.turns as Turn[];
    expect(turn).toMatchObject({
      id: "turn1",
      question: FIRST,
      answer: "203",
      evidence: ["a2:out1"],
      passed: null,
    });
    // Only the cited attempt's tables; `result` is the sandbox's and `medals` a source table's name.
    expect(turn?.tables.map((t) => [t.id, t.name])).toEqual([
      ["turn1:by_nation", "by_nation"],
      ["turn1:turn1_result", "turn1_result"],
      ["turn1:turn1_medals", "turn1_medals"],
    ]);
    expect((update.tables as TableRef[]).map((t) => t.name)).toEqual([
      "medals",
      "by_nation",
      "turn1_result",
      "turn1_medals",
    ]);
    expect(update.asked).toBe("And for silver?");
  });

  it("clears what belonged to the earlier question, only the keys the graph's state has", () => {
    const update = openTurn(finished({ question: "And for silver?" }));
    expect(update.plan).toEqual([]);
    expect(update.answer).toBeNull();
    expect(update.verdict).toBeNull();
    for (const key of ["attempts", "evidence", "reflections", "checked"]) {
      expect(Overwrite.isInstance(update[key]), key).toBe(true);
      expect((update[key] as Overwrite<unknown[]>).value).toEqual([]);
    }
    expect((update.budget as Overwrite<unknown>).value).toEqual(EMPTY_BUDGET);
    // table_qa has no branches, tree or packets: nothing is written to them.
    expect(Object.keys(update)).not.toContain("branches");
    expect(Object.keys(update)).not.toContain("packets");
    expect(Object.keys(update)).not.toContain("memories");
    expect(Object.keys(update)).not.toContain("sources");
  });

  it("numbers turns on, and keeps whether the answer passed its check", () => {
    const earlier: Turn = {
      id: "turn1",
      question: "q1",
      answer: "1",
      evidence: [],
      passed: true,
      tables: [],
    };
    const verdict = { pass: false } as TurnView["verdict"];
    const update = openTurn(finished({ question: "q3", turns: [earlier], verdict }));
    expect(update.turns).toEqual([expect.objectContaining({ id: "turn2", passed: false })]);
  });

  it("takes the last attempt that left a table when the answer cites no code", () => {
    const cited = { ...answered, evidence: ["medals:r2:gold"] };
    const update = openTurn(finished({ question: "q2", answer: cited }));
    const [turn] = update.turns as Turn[];
    expect(turn?.tables.map((t) => t.name)).toEqual(["by_nation", "turn1_result", "turn1_medals"]);
  });

  it("archives no turn that gave no answer, but still clears it", () => {
    const update = openTurn(finished({ question: "q2", answer: null }));
    expect(update.turns).toBeUndefined();
    expect(update.tables).toBeUndefined();
    expect(Overwrite.isInstance(update.attempts)).toBe(true);
    expect(update.asked).toBe("q2");
  });
});

describe("the conversation as the planner and coder read it", () => {
  it("is empty on a first question", () => {
    expect(renderConversation([])).toBe("");
  });

  it("lists each earlier question, its answer and the DataFrames it left", () => {
    const text = renderConversation([
      {
        id: "turn1",
        question: FIRST,
        answer: "203",
        evidence: [],
        passed: true,
        tables: [table("by_nation")],
      },
      {
        id: "turn2",
        question: "And silver?",
        answer: "7",
        evidence: [],
        passed: false,
        tables: [],
      },
    ]);
    expect(text).toContain(`1. Question: ${FIRST}\n   Answer: 203\n`);
    expect(text).toContain("DataFrames): `by_nation`");
    expect(text).toContain("2. Question: And silver?\n   Answer: 7 (it did not pass its check)");
    expect(text.split("\n")[0]).toMatch(/^Earlier in this conversation/);
  });
});
