import { describe, expect, it } from "vitest";
import type { Verdict } from "../../blackboard/schemas.js";
import { JUDGE_SYSTEM, parseJudgement } from "../../graphs/mom/judge.js";
import { COMPOSER_SYSTEM } from "../../graphs/orchestrator/composer.js";
import { decomposerSystem, parseSubtasks } from "../../graphs/orchestrator/decomposer.js";
import calc, {
  CALC_SYSTEM,
  parseExpression,
} from "../../graphs/orchestrator/workers/builtin/calc.js";
import lookup from "../../graphs/orchestrator/workers/builtin/lookup.js";
import pandas from "../../graphs/orchestrator/workers/builtin/pandas.js";
import sql, { parseQuery, SQL_SYSTEM } from "../../graphs/orchestrator/workers/builtin/sql.js";
import { evidenceIdsIn, grammarFor, roleOfSystem } from "../../models/local-grammar.js";
import { lit, rep, sample, seq, textExcept, toGbnf } from "../../models/local-grammar-dsl.js";
import { localThreads } from "../../models/local-runtime.js";
import { ANSWERER_SYSTEM, parseAnswer } from "../../nodes/answerer.js";
import { ARCHIVER_SYSTEM, parseNotes } from "../../nodes/archiver.js";
import { CHECKER_SYSTEM, parseCheck } from "../../nodes/checker.js";
import { CODER_SYSTEM, parseCode } from "../../nodes/coder.js";
import { PLANNER_SYSTEM, parsePlan } from "../../nodes/planner.js";
import { parseReflection, REFLECTOR_SYSTEM } from "../../nodes/reflector.js";

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
    expect(grammarFor("You are a table analyst.", "Question: x")).toBeUndefined();
    expect(grammarFor("# tableminds somebody-new\nDo things.", "x")).toBeUndefined();
  });

  it.each(ROLES)(
    "every %s reply the grammar allows is one its parser reads",
    (role, system, check) => {
      const shape = grammarFor(system, USER);
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
      const shape = grammarFor(system, USER);
      expect(shape?.maxTokens).toBeGreaterThan(0);
      expect(shape?.maxTokens).toBeLessThanOrEqual(512);
    }
    expect(grammarFor(JUDGE_SYSTEM, "")?.maxTokens).toBeLessThanOrEqual(8);
  });

  it("offers only the evidence ids the prompt shows", () => {
    expect(evidenceIdsIn(USER)).toEqual(["a1:out1", "a1:by_nation"]);
    const findings = "s1: task\n  pandas: 3 [s1.a1:out1, s1.a1:df]\nvalues [1, 2, 3] [note]";
    expect(evidenceIdsIn(findings)).toEqual(["s1.a1:out1", "s1.a1:df"]);
    const gbnf = grammarFor(ANSWERER_SYSTEM, USER)?.gbnf ?? "";
    expect(gbnf).toContain('"a1:out1"');
    expect(gbnf).toContain('"a1:by_nation"');
    // With no ids shown, the evidence line says so rather than inventing one.
    expect(grammarFor(ANSWERER_SYSTEM, "Question: q")?.gbnf).toContain('"none"');
  });

  it("limits the decomposer to the workers its prompt lists", () => {
    const gbnf = grammarFor(DECOMPOSER_SYSTEM, "")?.gbnf ?? "";
    for (const worker of WORKERS) expect(gbnf).toContain(`"${worker}"`);
    expect(
      grammarFor("# tableminds decomposer\n- sql: x\nAt most 2 subtasks.", "")?.gbnf,
    ).not.toContain('"pandas"');
  });

  it("writes GBNF that escapes what it must and leaves often-repeated runs open", () => {
    expect(toGbnf(seq(lit('say "hi"\n\\'), textExcept('"\n', 1, 3)))).toBe(
      'root ::= ("say \\"hi\\"\\n\\\\" [^\\"\\n\\x00-\\x1f]{1,3})\n',
    );
    // A run whose bound would make llama.cpp expand thousands of rules is left open.
    expect(toGbnf(rep(seq(textExcept("\n", 0, 120), lit("\n")), 0, 23))).toContain("{0,}");
    // The coder's 14 lines of up to 100 characters stay bounded, and close within its cap.
    const coder = grammarFor(CODER_SYSTEM, "");
    expect(coder?.gbnf).toMatch(/^root ::= \("```python\\n"/);
    expect(coder?.gbnf).toContain("{0,100}");
    expect(coder?.maxTokens).toBe(512);
    expect(grammarFor(PLANNER_SYSTEM, "")?.gbnf).toMatch(/"1\. "[\s\S]*"6\. "[\s\S]*"<\/plan>"/);
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
