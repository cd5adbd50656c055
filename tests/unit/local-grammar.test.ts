import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { Verdict } from "../../blackboard/schemas.js";
import { JUDGE_SYSTEM, parseJudgement } from "../../graphs/mom/judge.js";
import { COMPOSER_SYSTEM } from "../../graphs/orchestrator/composer.js";
import {
  decomposerSystem,
  describeWorker,
  parseSubtasks,
  shapeOf,
} from "../../graphs/orchestrator/decomposer.js";
import calc, {
  CALC_SYSTEM,
  parseExpression,
} from "../../graphs/orchestrator/workers/builtin/calc.js";
import lookup from "../../graphs/orchestrator/workers/builtin/lookup.js";
import pandas from "../../graphs/orchestrator/workers/builtin/pandas.js";
import sql, { parseQuery, SQL_SYSTEM } from "../../graphs/orchestrator/workers/builtin/sql.js";
import { defineWorker, TaskInput } from "../../graphs/orchestrator/workers/contract.js";
import { evidenceIdsIn, grammarFor, subtasksGrammar } from "../../models/local-grammar.js";
import { lit, rep, sample, seq, textExcept, toGbnf } from "../../models/local-grammar-dsl.js";
import { localThreads } from "../../models/local-runtime.js";
import { ANSWERER_SYSTEM, parseAnswer } from "../../nodes/answerer.js";
import { ARCHIVER_SYSTEM, parseNotes } from "../../nodes/archiver.js";
import { CHECKER_SYSTEM, parseCheck } from "../../nodes/checker.js";
import { CODER_SYSTEM, parseCode } from "../../nodes/coder.js";
import { PLANNER_SYSTEM, parsePlan } from "../../nodes/planner.js";
import { parseReflection, REFLECTOR_SYSTEM } from "../../nodes/reflector.js";

/** The speaker a prompt's header names (`# tableminds <speaker>`), as the nodes name it when they ask. */
const roleOfSystem = (system: string) => /^\s*#\s*tableminds\s+([\w-]+)/.exec(system)?.[1];

/** A seeded generator (mulberry32), so a failing sample can be found again. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const USER = "Question: q\n\nResults:\n[a1:out1] printed line 3: 203\n[a1:by_nation] table\n";
const WORKERS = ["pandas", "sql", "calc", "lookup"];
const DECOMPOSER_SYSTEM = decomposerSystem([pandas, sql, calc, lookup], 6);
const DECOMPOSER_GRAMMAR = {
  grammar: subtasksGrammar([pandas, sql, calc, lookup].map(shapeOf), 6),
  maxTokens: 384,
};

/** The grammar of the speaker a prompt's header names, as a node asks for it. */
const grammarOf = (system: string, user: string) => {
  const speaker = roleOfSystem(system) ?? "";
  return grammarFor(speaker, user, speaker === "decomposer" ? DECOMPOSER_GRAMMAR : undefined);
};

const VERDICT = { scores: { type: 0, format: 0, grounding: 0 }, issues: [] } as unknown as Verdict;

/** Each role's system prompt and what its own parser must make of any reply the grammar allows. */
const ROLES: [string, string, (reply: string) => void][] = [
  [
    "planner",
    PLANNER_SYSTEM,
    (r) => {
      const steps = parsePlan(r);
      expect(steps.length).toBeGreaterThan(0);
      // Steps, not a guessed answer: each starts with what it does.
      for (const step of steps) expect(step).toMatch(/^[A-Z][a-z]+ \S/);
    },
  ],
  ["coder", CODER_SYSTEM, (r) => expect(parseCode(r).trim()).not.toBe("")],
  [
    "answerer",
    ANSWERER_SYSTEM,
    (r) => {
      const parsed = parseAnswer(r);
      expect(parsed.final).not.toBe("");
      expect(parsed.cited.length).toBeGreaterThan(0);
      for (const id of parsed.cited) expect(["a1:out1", "a1:by_nation"]).toContain(id);
    },
  ],
  ["composer", COMPOSER_SYSTEM, (r) => expect(parseAnswer(r).final).not.toBe("")],
  ["checker", CHECKER_SYSTEM, (r) => expect(parseCheck(r).scores).toBeDefined()],
  [
    "reflector",
    REFLECTOR_SYSTEM,
    (r) => {
      const parsed = parseReflection(r, VERDICT);
      expect(parsed?.diagnosis).toBeTruthy();
      expect(parsed?.improvement.length).toBeGreaterThan(0);
    },
  ],
  ["archiver", ARCHIVER_SYSTEM, (r) => expect(parseNotes(r)).not.toBeNull()],
  [
    "decomposer",
    DECOMPOSER_SYSTEM,
    (r) => {
      const subtasks = parseSubtasks(r, WORKERS, 6);
      expect(subtasks.length).toBeGreaterThan(0);
      for (const s of subtasks) for (const w of s.workers) expect(WORKERS).toContain(w);
    },
  ],
  ["sql", SQL_SYSTEM, (r) => expect(parseQuery(r).trim()).not.toBe("")],
  ["calc", CALC_SYSTEM, (r) => expect(parseExpression(r).trim()).not.toBe("")],
  ["judge", JUDGE_SYSTEM, (r) => expect(["A", "B"]).toContain(parseJudgement(r))],
];

describe("the local model's reply grammars", () => {
  it("reads the role from each prompt's header line", () => {
    for (const [role, system] of ROLES) expect(roleOfSystem(system)).toBe(role);
    expect(roleOfSystem("You are a table analyst.")).toBeUndefined();
    expect(grammarFor("somebody-new", "x")).toBeUndefined();
  });

  it.each(ROLES)(
    "every %s reply the grammar allows is one its parser reads",
    (role, system, check) => {
      const shape = grammarOf(system, USER);
      expect(shape?.role).toBe(role);
      const random = seeded(role.length * 7919);
      for (let i = 0; i < 300; i++) {
        const reply = sample(shape?.grammar ?? lit(""), random);
        try {
          check(reply);
        } catch (error) {
          throw new Error(`${role} sample ${i} ${JSON.stringify(reply)}: ${String(error)}`);
        }
      }
    },
  );

  it("caps each role's reply below the default 512 tokens, the judge's at a few", () => {
    for (const [, system] of ROLES) {
      const shape = grammarOf(system, USER);
      expect(shape?.maxTokens).toBeGreaterThan(0);
      expect(shape?.maxTokens).toBeLessThanOrEqual(512);
    }
    expect(grammarOf(JUDGE_SYSTEM, "")?.maxTokens).toBeLessThanOrEqual(8);
  });

  it("offers only the evidence ids the prompt shows", () => {
    expect(evidenceIdsIn(USER)).toEqual(["a1:out1", "a1:by_nation"]);
    const findings = "s1: task\n  pandas: 3 [s1.a1:out1, s1.a1:df]\nvalues [1, 2, 3] [note]";
    expect(evidenceIdsIn(findings)).toEqual(["s1.a1:out1", "s1.a1:df"]);
    const gbnf = grammarOf(ANSWERER_SYSTEM, USER)?.gbnf ?? "";
    expect(gbnf).toContain('"a1:out1"');
    expect(gbnf).toContain('"a1:by_nation"');
    // With no ids shown, the evidence line says so rather than inventing one.
    expect(grammarOf(ANSWERER_SYSTEM, "Question: q")?.gbnf).toContain('"none"');
  });

  it("limits the decomposer to its workers, with the args each one's input requires", () => {
    const rowcount = defineWorker({
      name: "rowcount",
      description: "Counts the rows of one table.",
      input: TaskInput.extend({ table: z.string().describe("the table to count") }),
      run: async () => ({ answer: null, evidence: [], trajectory: [], score: 0 }),
    });
    const top = defineWorker({
      name: "top",
      description: "The n largest values.",
      input: TaskInput.extend({
        n: z.number().int(),
        order: z.enum(["asc", "desc"]),
        note: z.string().optional(),
      }),
      run: async () => ({ answer: null, evidence: [], trajectory: [], score: 0 }),
    });
    const workers = [pandas, sql, rowcount, top];
    expect(describeWorker(rowcount)).toContain(
      "Required args: table (string: the table to count).",
    );
    expect(describeWorker(top)).toMatch(
      /Required args: n \(integer\); order \(string\)\. Optional args: note/,
    );
    expect(describeWorker(pandas)).not.toContain("args");
    const grammar = subtasksGrammar(workers.map(shapeOf), 3);
    const random = seeded(4242);
    const chosen = new Set<string>();
    for (let i = 0; i < 400; i++) {
      const reply = sample(grammar, random);
      const subtasks = parseSubtasks(
        reply,
        workers.map((w) => w.name),
        3,
      );
      for (const subtask of subtasks) {
        for (const name of subtask.workers) {
          chosen.add(name);
          const worker = workers.find((w) => w.name === name);
          const input = worker?.input.safeParse({ ...subtask.args, task: subtask.task });
          expect(input?.success, `${name} ${JSON.stringify(subtask.args)}`).toBe(true);
        }
      }
    }
    expect([...chosen].sort()).toEqual(["pandas", "rowcount", "sql", "top"]);
    expect(toGbnf(subtasksGrammar([sql].map(shapeOf), 2))).not.toContain('"pandas"');
  });

  it("writes GBNF that escapes what it must and leaves often-repeated runs open", () => {
    expect(toGbnf(seq(lit('say "hi"\n\\'), textExcept('"\n', 1, 3)))).toBe(
      'root ::= ("say \\"hi\\"\\n\\\\" [^\\"\\n\\x00-\\x1f]{1,3})\n',
    );
    // A run whose bound would make llama.cpp expand thousands of rules is left open.
    expect(toGbnf(rep(seq(textExcept("\n", 0, 120), lit("\n")), 0, 23))).toContain("{0,}");
    // The coder's 14 lines of up to 100 characters stay bounded, and close within its cap.
    const coder = grammarOf(CODER_SYSTEM, "");
    expect(coder?.gbnf).toMatch(/^root ::= \("```python\\n"/);
    expect(coder?.gbnf).toContain("{0,100}");
    expect(coder?.maxTokens).toBe(512);
    expect(grammarOf(PLANNER_SYSTEM, "")?.gbnf).toMatch(/"1\. "[\s\S]*"6\. "[\s\S]*"<\/plan>"/);
  });
});

describe("local model threads", () => {
  it("takes TABLEMINDS_LOCAL_THREADS, else the cores not busy, from 1 to 4", () => {
    expect(localThreads({ TABLEMINDS_LOCAL_THREADS: "3" }, 2, 0)).toBe(3);
    expect(localThreads({}, 2, 0)).toBe(2);
    expect(localThreads({}, 2, 1.2)).toBe(1);
    expect(localThreads({}, 2, 7.5)).toBe(1);
    expect(localThreads({}, 16, 0)).toBe(4);
    expect(() => localThreads({ TABLEMINDS_LOCAL_THREADS: "0" }, 2, 0)).toThrow();
  });
});
