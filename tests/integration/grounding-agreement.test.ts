import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableQAStateValue } from "../../blackboard/state.js";
import { graph } from "../../graphs/table_qa/graph.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { useStubEndpoint, useTempHome, withContext } from "../support/env.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

/*
 * The answerer and the checker ground answers with one engine: what the answerer cites as
 * support (the code's result, or the source cells of a lookup) is exactly what the checker
 * counts as support, under the same claim ids. Answers with thousands separators and dates are
 * where two engines used to disagree.
 */

const TOWNS = {
  name: "towns",
  columns: ["town", "population", "founded"],
  data: [
    ["Alder", "1,062", "March 3, 1999"],
    ["Birch", "2,500", "June 1, 1950"],
    ["Cedar", "1", "March 1999"],
  ],
};

interface Case {
  question: string;
  code: string;
  answer: string;
  supports: string[];
}

const CASES: Case[] = [
  {
    question: "What is the population of Alder?",
    code: 'print(df.loc[df["town"] == "Alder", "population"].iloc[0])',
    answer: "1,062",
    supports: ["a1:result"],
  },
  {
    question: "When was Alder founded?",
    code: 'result = df.loc[df["town"] == "Alder", "founded"].iloc[0]',
    answer: "March 3, 1999",
    supports: ["a1:result"],
  },
  {
    question: "Which town has the largest population?",
    code: 'people = df["population"].str.replace(",", "").astype(int)\nresult = df.loc[people.idxmax(), "town"]',
    answer: "Birch",
    supports: ["a1:result"],
  },
  {
    // Code that prints the row: the cell the question points to, as the code read it.
    question: "What is the population of Cedar?",
    code: 'print(df[df["town"] == "Cedar"])',
    answer: "1",
    supports: ["towns:r2:population"],
  },
];

const isCell = (id: string) => /:(?:r\d+|col):/.test(id);

describe("one grounding engine for the answerer and the checker", () => {
  let stub: StubServer;
  const runs = new Map<string, TableQAStateValue>();

  beforeAll(async () => {
    useTempHome();
    let current: Case | undefined;
    stub = await startStubOpenAI({
      respond: (req) => {
        if (req.role === "planner") return "<plan>\n1. Look the value up and print it.\n</plan>";
        if (req.role === "coder") return `\`\`\`python\n${current?.code}\n\`\`\``;
        if (req.role === "answerer") return `Final Answer: ${current?.answer}`;
        return { status: 500, content: `no reply scripted for role ${req.role}` };
      },
    });
    useStubEndpoint(stub.url);
    for (const c of CASES) {
      current = c;
      const state = await graph.invoke(
        { question: c.question, sources: [TOWNS] },
        // Literally read: the cells keep their thousands separators and spelled dates.
        withContext({ memory: false, maxReflections: 0, rawTables: true }),
      );
      runs.set(c.answer, state as TableQAStateValue);
    }
  });

  afterAll(async () => {
    await closeSandboxes();
    await stub?.close();
  });

  it.each(CASES)("cites for $answer exactly what the checker accepts", ({ answer, supports }) => {
    const state = runs.get(answer);
    expect(state?.answer?.final).toBe(answer);
    const claims = new Set(state?.verdict?.claims ?? []);
    const accepted = (state?.edges ?? [])
      .filter((e) => e.kind === "supports" && claims.has(e.to))
      .map((e) => e.from);
    expect([...new Set(accepted)].sort()).toEqual(supports);
    expect(supports.every((id) => state?.answer?.evidence.includes(id))).toBe(true);
    const cells = (state?.answer?.evidence ?? []).filter(isCell);
    expect(cells).toEqual(supports.filter(isCell));
  });

  it.each(CASES)("speaks of $answer in one claim vocabulary", ({ answer }) => {
    const state = runs.get(answer);
    const ids = (state?.claims ?? []).map((c) => c.id);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.every((id) => /^claim:[0-9a-f]{8}:\d+$/.test(id))).toBe(true);
    expect(state?.verdict?.claims).toEqual(ids);
    expect(state?.verdict?.pass).toBe(true);
  });
});
