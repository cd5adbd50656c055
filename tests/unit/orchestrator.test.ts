import path from "node:path";
import { Send } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { namespaced } from "../../blackboard/namespaces.js";
import type { Attempt, CodeResult, Evidence, Packet, Subtask } from "../../blackboard/schemas.js";
import { finalSubtasks, inputsOf, readySubtasks } from "../../blackboard/subtasks.js";
import { parseSubtasks, planOf } from "../../graphs/orchestrator/decomposer.js";
import { routeDispatch } from "../../graphs/orchestrator/graph.js";
import {
  calcProgram,
  calcResult,
  inputsUsed,
  parseExpression,
} from "../../graphs/orchestrator/workers/builtin/calc.js";
import { parseQuery } from "../../graphs/orchestrator/workers/builtin/sql.js";
import { answerOfRows } from "../../graphs/orchestrator/workers/findings.js";
import {
  loadWorkers,
  WorkerRegistryError,
  workerDirs,
} from "../../graphs/orchestrator/workers/registry.js";
import { evidenceGraph } from "../../grounding/evidence-graph.js";
import { selectPackets } from "../../grounding/evidence-selection.js";
import { answerDerived } from "../../grounding/verify.js";
import { ReplyParseError } from "../../nodes/llm.js";
import { execResult } from "../support/exec-result.js";

const WORKERS = ["pandas", "sql", "calc"];

function subtask(id: string, over: Partial<Subtask> = {}): Subtask {
  return { id, task: `task ${id}`, workers: ["sql"], dependsOn: [], args: {}, ...over };
}

function packet(
  subtask: string,
  worker: string,
  answer: string | null,
  over: Partial<Packet> = {},
): Packet {
  return {
    id: `${subtask}.${worker}`,
    subtask,
    worker,
    answer,
    evidence: answer === null ? [] : [`${subtask}.${worker}.q1:sql1`],
    trajectory: [],
    score: answer === null ? 0 : 0.9,
    cost: { llmCalls: 1, ms: 10 },
    error: answer === null ? "the worker found no answer" : null,
    ...over,
  };
}

describe("parseSubtasks", () => {
  it("reads a plan: ids kept, workers checked, dependencies only on earlier subtasks", () => {
    const reply = `Here is the split:
\`\`\`json
{"subtasks": [
  {"id": "a", "task": "Find the total", "workers": ["SQL", "nobody"]},
  {"id": "b", "task": "Convert it", "worker": "calc", "dependsOn": ["a", "b", "c"], "args": {"expression": "a * 2"}},
  {"id": "c", "task": "Double-check", "workers": ["pandas", "sql"], "depends_on": ["b"]}
]}
\`\`\``;
    expect(parseSubtasks(reply, WORKERS, 6)).toEqual([
      { id: "a", task: "Find the total", workers: ["sql"], dependsOn: [], args: {} },
      {
        id: "b",
        task: "Convert it",
        workers: ["calc"],
        dependsOn: ["a"],
        args: { expression: "a * 2" },
      },
      { id: "c", task: "Double-check", workers: ["pandas", "sql"], dependsOn: ["b"], args: {} },
    ]);
  });

  it("numbers subtasks without usable ids, gives unknown workers to pandas, and caps the count", () => {
    const reply = JSON.stringify([
      { task: "one", workers: ["oracle"] },
      { id: 7, task: "two" },
      { id: "7", task: "three", dependsOn: [7] },
      { task: "four" },
    ]);
    const parsed = parseSubtasks(reply, WORKERS, 3);
    expect(parsed.map((s) => [s.id, s.workers, s.dependsOn])).toEqual([
      ["s1", ["pandas"], []],
      ["7", ["pandas"], []],
      ["s3", ["pandas"], ["7"]],
    ]);
    expect(planOf(parsed)).toEqual([
      "s1 [pandas] one",
      "7 [pandas] two",
      "s3 [pandas] three (after 7)",
    ]);
  });

  it("fails with a ReplyParseError on a reply without subtasks", () => {
    expect(() => parseSubtasks("Let me think about it.", WORKERS, 6)).toThrow(ReplyParseError);
    expect(() => parseSubtasks('{"subtasks": []}', WORKERS, 6)).toThrow(ReplyParseError);
    expect(() => parseSubtasks('{"subtasks": [{"task": ""}]}', WORKERS, 6)).toThrow(
      ReplyParseError,
    );
  });
});

describe("reading subtasks and packets", () => {
  const subtasks = [
    subtask("s1"),
    subtask("s2", { workers: ["pandas", "sql"] }),
    subtask("s3", { dependsOn: ["s1", "s2"], workers: ["calc"] }),
  ];

  it("is ready when its dependencies are done, with their answers as inputs", () => {
    expect(readySubtasks(subtasks, []).map((s) => s.id)).toEqual(["s1", "s2"]);
    const halfway = [packet("s1", "sql", "10", { derived: "yes" }), packet("s2", "pandas", "4")];
    // s2 waits for its second worker.
    expect(readySubtasks(subtasks, halfway).map((s) => s.id)).toEqual(["s2"]);
    const done = [...halfway, packet("s2", "sql", null)];
    expect(readySubtasks(subtasks, done).map((s) => s.id)).toEqual(["s3"]);
    // Each answer says whether it is derived from the tables, as its packet found.
    expect(inputsOf(subtasks[2] as Subtask, subtasks, done)).toEqual([
      { id: "s1", task: "task s1", answer: "10", derived: "yes" },
      { id: "s2", task: "task s2", answer: "4", derived: "unknown" },
    ]);
    expect(finalSubtasks(subtasks).map((s) => s.id)).toEqual(["s3"]);
  });

  it("routes each of the round's workers with its subtask and inputs, or on to the evidence graph", () => {
    const state = {
      question: "q",
      tables: [],
      subtasks,
      packets: [packet("s1", "sql", "10"), packet("s2", "pandas", "4"), packet("s2", "sql", "4")],
      dispatching: [{ subtask: "s3", worker: "calc" }],
    };
    const routed = routeDispatch(state);
    expect(routed).toEqual([
      new Send("worker", {
        question: "q",
        tables: [],
        turns: [],
        subtask: subtasks[2],
        worker: "calc",
        inputs: [
          { id: "s1", task: "task s1", answer: "10", derived: "unknown" },
          { id: "s2", task: "task s2", answer: "4", derived: "unknown" },
        ],
      }),
    ]);
    expect(routeDispatch({ ...state, dispatching: [] })).toBe("weigher");
  });
});

describe("the evidence graph and the selection", () => {
  const subtasks = [
    subtask("s1", { workers: ["pandas", "sql"] }),
    subtask("s2", { dependsOn: ["s1"], workers: ["calc"] }),
  ];

  it("makes claims that support, align, conflict and depend", () => {
    const packets = [
      packet("s1", "pandas", "1,062"),
      packet("s1", "sql", "1062"),
      packet("s2", "calc", "2124"),
    ];
    const { claims, edges } = evidenceGraph(subtasks, packets);
    expect(claims.map((c) => [c.id, c.status])).toEqual([
      ["claim:s1.pandas", "supported"],
      ["claim:s1.sql", "supported"],
      ["claim:s2.calc", "supported"],
    ]);
    expect(edges).toContainEqual({ from: "s1.sql.q1:sql1", to: "claim:s1.sql", kind: "supports" });
    expect(edges).toContainEqual({ from: "claim:s1.pandas", to: "claim:s1.sql", kind: "aligns" });
    expect(edges).toContainEqual({ from: "claim:s2.calc", to: "claim:s1.pandas", kind: "depends" });
    expect(edges.some((e) => e.kind === "conflicts")).toBe(false);
  });

  it("keeps the better of two conflicting answers, reports the conflict, and covers every subtask", () => {
    const packets = [
      packet("s1", "pandas", "430", { score: 0.6, cost: { llmCalls: 3, ms: 1 } }),
      packet("s1", "sql", "750", { score: 0.9 }),
      packet("s2", "calc", "1500", { cost: { llmCalls: 0, ms: 1 } }),
    ];
    const { edges } = evidenceGraph(subtasks, packets);
    const selection = selectPackets(subtasks, packets, edges);
    expect(selection.packets.sort()).toEqual(["s1.sql", "s2.calc"]);
    expect(selection.conflict).toBe(0);
    expect(selection.coverage).toBe(1);
    expect(selection.uncovered).toEqual([]);
    expect(selection.conflicts).toEqual([
      { subtask: "s1", packets: ["s1.pandas", "s1.sql"], answers: ["430", "750"], kept: "s1.sql" },
    ]);
  });

  it("adds an agreeing second worker as corroboration, and nothing for a subtask with no answer", () => {
    const packets = [
      packet("s1", "pandas", "4"),
      packet("s1", "sql", "4.0"),
      packet("s2", "calc", null),
    ];
    const selection = selectPackets(subtasks, packets, evidenceGraph(subtasks, packets).edges);
    expect(selection.packets.sort()).toEqual(["s1.pandas", "s1.sql"]);
    expect(selection.uncovered).toEqual(["s2"]);
    // s2 answers the question and counts double: one of three parts covered.
    expect(selection.coverage).toBeCloseTo(1 / 3);
  });
});

describe("namespaced", () => {
  it("renames a worker's attempts and their evidence, and leaves source cells alone", () => {
    const attempt = {
      id: "a1",
      code: "print(1)",
      raw: "",
      result: null,
      parseError: null,
    } satisfies Attempt;
    const base = { modality: "code", source: "executor", time: "t", confidence: 1 } as const;
    const evidence: Evidence[] = [
      {
        ...base,
        id: "a1:out1",
        anchor: { kind: "code", attempt: "a1", lines: [1, 1], stdout: [0, 1] },
        value: 1,
        provenance: { attempt: "a1", parents: ["medals:r0:gold"] },
      },
      {
        ...base,
        modality: "table",
        id: "medals:r0:gold",
        anchor: { kind: "cells", table: "medals", rows: [0], columns: ["gold"] },
        value: 39,
        provenance: { attempt: "a1", parents: [] },
      },
    ];
    const renamed = namespaced("s1.pandas", { attempts: [attempt], evidence });
    expect(renamed.attempts[0]?.id).toBe("s1.pandas.a1");
    expect(renamed.evidence.map((e) => e.id)).toEqual(["s1.pandas.a1:out1", "medals:r0:gold"]);
    expect(renamed.evidence[0]?.anchor).toMatchObject({ attempt: "s1.pandas.a1" });
    expect(renamed.evidence[0]?.provenance).toEqual({
      attempt: "s1.pandas.a1",
      parents: ["medals:r0:gold"],
    });
    expect(renamed.evidenceId("a1:df")).toBe("s1.pandas.a1:df");
    expect(renamed.evidenceId("other:out1")).toBe("other:out1");
  });
});

describe("the worker registry", () => {
  const broken = (name: string) =>
    path.resolve(import.meta.dirname, "../fixtures/workers-broken", name);

  it("finds the built-in workers with no list to edit", async () => {
    const workers = await loadWorkers(workerDirs({}));
    expect([...workers.keys()].sort()).toEqual(["calc", "lookup", "pandas", "sql"]);
  });

  it.each([
    ["noexport", /helper\.ts: exports no worker/],
    [
      "badname",
      /shout\.ts: not a worker: name: lower-case letters.*description: say what the worker is good for/,
    ],
    ["twice", /twice\/sql\.ts: a worker named "sql" is already declared in .*builtin\/sql\.ts/],
  ])("rejects a folder with a bad worker file (%s), naming the file", async (name, message) => {
    await expect(loadWorkers(workerDirs({ workersDir: broken(name) }))).rejects.toThrow(message);
  });

  it("says so when the workers folder does not exist", async () => {
    await expect(loadWorkers(workerDirs({ workersDir: broken("missing") }))).rejects.toThrow(
      WorkerRegistryError,
    );
  });
});

describe("the built-in workers' parsers", () => {
  it("reads a SQL query from a fence or a bare SELECT, and nothing else", () => {
    expect(parseQuery("```sql\nSELECT 1\n```")).toBe("SELECT 1");
    expect(parseQuery("  with t as (select 1) select * from t ")).toBe(
      "with t as (select 1) select * from t",
    );
    expect(() => parseQuery("The answer is 4.")).toThrow(ReplyParseError);
  });

  it("states a result's answer: one row whole, several rows by their last column", () => {
    const result = (rows: (string | number | null)[][]) => ({
      columns: [],
      rows,
      rowIds: null,
      truncated: false,
      durationMs: 1,
      table: null,
      tables: [],
    });
    expect(answerOfRows(result([[750]]))).toBe("750");
    expect(answerOfRows(result([["Lyon", 250]]))).toBe("Lyon, 250");
    expect(
      answerOfRows(
        result([
          ["Lyon", 250],
          ["Graz", null],
        ]),
      ),
    ).toBe("250, ");
    expect(answerOfRows(result([]))).toBeNull();
  });

  it("reads a calc expression and binds earlier answers as exact numbers", () => {
    expect(parseExpression('```python\nconvert(s1, "km", "mi")\n```')).toBe(
      'convert(s1, "km", "mi")',
    );
    expect(parseExpression("Expression: s1 / s2")).toBe("s1 / s2");
    expect(parseExpression("s1 * 2")).toBe("s1 * 2");
    expect(() => parseExpression("I would divide\nthe two numbers")).toThrow(ReplyParseError);
    const program = calcProgram("s1 / 3", [{ id: "s1", task: "t", answer: "1,062" }]);
    expect(program).toContain('s1 = _exact("1,062")');
    // The exact value is printed; `result` is left a plain number the checker can compare.
    expect(program.trimEnd().split("\n").slice(-3)).toEqual([
      "result = (s1 / 3)",
      "print(_show(result))",
      "result = _plain(result)",
    ]);
  });

  it("names the inputs an expression uses, as Python names", () => {
    const inputs = ["s1", "s2", "s10"].map((id) => ({ id, task: id, answer: "1" }));
    const used = (expression: string) => inputsUsed(expression, inputs).map((i) => i.id);
    expect(used('convert(s1, "km", "mi")')).toEqual(["s1"]);
    expect(used("s10 - s2")).toEqual(["s2", "s10"]);
    expect(used("x.s1 + 2")).toEqual([]);
    expect(used("750 / 1.609344")).toEqual([]);
  });
});

describe("the calc worker's derivation", () => {
  const STABLE =
    "unchanged when the table's values were perturbed: a literal or metadata, not a computation over the table";
  const ran = (over: Partial<CodeResult> = {}): CodeResult => ({
    from: "declared",
    kind: "scalar",
    values: [466.0283941890459],
    labels: [],
    text: "466.0283941890459",
    line: 52,
    derived: "no",
    derivation: STABLE,
    lineage: [{ table: "cities", rows: [], columns: [] }],
    ...over,
  });
  const input = (id: string, derived?: "yes" | "no" | "unknown") => ({
    id,
    task: `task ${id}`,
    answer: "750",
    ...(derived ? { derived } : {}),
  });

  it("is derived when every input it uses is, overriding the sandbox's 'reads no table'", () => {
    const result = calcResult(ran(), "466.0283942", [input("s1", "yes"), input("s2", "yes")]);
    expect(result).toMatchObject({ derived: "yes", values: [466.0283941890459], line: 52 });
    expect(result?.derivation).toBe(
      `arithmetic over s1, s2, answers derived from the tables by earlier steps' code: it changes when they do (the sandbox found that the program itself reads no table: ${STABLE})`,
    );
  });

  it("is not derived over a literal input, and unknown over an input not known to be", () => {
    const literal = calcResult(ran(), "1", [input("s1", "yes"), input("s2", "no")]);
    expect(literal?.derived).toBe("no");
    expect(literal?.derivation).toMatch(
      /^arithmetic over s1, s2; s2 is not derived from the tables/,
    );
    const lookedUp = calcResult(ran(), "1", [input("s1", "yes"), input("s2")]);
    expect(lookedUp?.derived).toBe("unknown");
    expect(lookedUp?.derivation).toMatch(/whether s2 is derived from the tables is not known/);
    const none = calcResult(ran(), "1", []);
    expect(none).toMatchObject({ derived: "no" });
    expect(none?.derivation).toMatch(/the expression uses none of the earlier answers$/);
  });

  it("leaves what the sandbox found otherwise as it is", () => {
    const inputs = [input("s1", "yes")];
    const reads = ran({ derived: "yes", derivation: "changed when ..." });
    expect(calcResult(reads, "1", inputs)).toBe(reads);
    const unsure = ran({ derived: "unknown", derivation: "not re-run: out of time" });
    expect(calcResult(unsure, "1", inputs)).toBe(unsure);
    const random = ran({ derivation: "not deterministic: a re-run on the unchanged tables ..." });
    expect(calcResult(random, "1", inputs)).toBe(random);
  });

  it("makes a result from the output when the sandbox returned none", () => {
    expect(calcResult(null, "466.0283942", [input("s1", "yes")])).toMatchObject({
      from: "printed",
      kind: "scalar",
      values: [466.0283942],
      derived: "yes",
    });
    expect(calcResult(null, "", [input("s1", "yes")])).toBeNull();
  });
});

describe("whether a worker's answer is derived", () => {
  const attempt = (result: CodeResult | null, ok = true): Attempt => ({
    id: "s1.sql.q1",
    code: "SELECT ...",
    raw: "",
    result: execResult({ ok, result }),
    parseError: null,
  });
  const computed = (derived: CodeResult["derived"]): CodeResult => ({
    from: "declared",
    kind: "scalar",
    values: [750],
    labels: [],
    text: "750",
    line: null,
    derived,
    derivation: "...",
    lineage: [],
  });

  it("is its last successful run's derived result, or says why not", async () => {
    const task = "Total km to the sea of European cities";
    expect(await answerDerived("750", [attempt(computed("yes"))], task)).toBe("yes");
    expect(await answerDerived("750 km", [attempt(computed("yes"))], task)).toBe("yes");
    // Derived, but not the answer given.
    expect(await answerDerived("430", [attempt(computed("yes"))], task)).toBe("no");
    expect(await answerDerived("750", [attempt(computed("no"))], task)).toBe("no");
    expect(await answerDerived("750", [attempt(computed("unknown"))], task)).toBe("unknown");
    expect(await answerDerived("750", [attempt(null)], task)).toBe("unknown");
    expect(await answerDerived("750", [attempt(computed("yes"), false)], task)).toBe("unknown");
    expect(await answerDerived("750", [], task)).toBe("unknown");
    expect(await answerDerived(null, [attempt(computed("yes"))], task)).toBe("unknown");
  });
});
