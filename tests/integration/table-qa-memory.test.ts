import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { TableQAStateValue } from "../../blackboard/state.js";
import { graphFromModule } from "../../graphs/registry.js";
import * as tableQa from "../../graphs/table_qa/graph.js";
import { closeSandboxes } from "../../sandbox/index.js";
import type { Configuration } from "../../settings/configuration.js";
import { offlineEmbed } from "../../storage/memory/embeddings.js";
import { EpisodeSchema, memoryNamespace } from "../../storage/memory/episodes.js";
import { SqliteStore } from "../../storage/memory/sqlite-store.js";
import { EXAMPLES, useStubEndpoint, useTempHome, withContext } from "../support/env.js";
import {
  answerFromOutput,
  lastMessage,
  MEDALS_CODE,
  MEDALS_QUESTION,
  medalsTeam,
} from "../support/scripts.js";
import {
  type StubReply,
  type StubRequest,
  type StubServer,
  startStubOpenAI,
} from "../support/stub-openai.js";

const BROKEN = '```python\ntotal = df["golds"].sum()\nprint(total)\n```';
const OLYMPICS = `${EXAMPLES}/olympics_2020_medals.csv`;
const SIMILAR = "How many silver medals did these ten nations win in total?";
const UNRELATED = "Which nation has the lowest rank?";
const home = useTempHome();
const file = path.join(home, "memory.sqlite");

describe("long-term memory across runs", () => {
  let stub: StubServer | undefined;
  afterEach(async () => {
    await stub?.close();
  });
  afterAll(async () => {
    await closeSandboxes();
  });

  /** One run with its own store handle on the shared file, as two CLI processes would have. */
  async function run(
    question: string,
    team = medalsTeam(),
    context: Partial<Configuration> = {},
    table = OLYMPICS,
    gold?: string,
  ) {
    stub = await startStubOpenAI({ respond: team, embed: offlineEmbed });
    useStubEndpoint(stub.url);
    const store = new SqliteStore(file);
    try {
      const withMemory = graphFromModule(tableQa, { store });
      const state = (await withMemory.invoke(
        { question, sources: [{ path: table }], ...(gold === undefined ? {} : { gold }) },
        withContext({ memoryNamespace: "medals", ...context }),
      )) as TableQAStateValue;
      const where = memoryNamespace(context.memoryNamespace ?? "medals");
      const entries = await store.search(where, { limit: 100 });
      return { state, entries: entries.map((e) => EpisodeSchema.parse(e.value)) };
    } finally {
      store.close();
    }
  }

  it("archives a checked episode, and a later similar question recalls its lesson", async () => {
    const first = await run(
      MEDALS_QUESTION,
      medalsTeam((n) => (n === 0 ? BROKEN : MEDALS_CODE)),
    );
    expect(first.state.verdict).toMatchObject({ pass: true, support: "derived" });
    expect(first.state.memories).toEqual([]);
    expect(first.entries).toHaveLength(1);
    expect(first.entries[0]).toMatchObject({
      question: MEDALS_QUESTION,
      plan: ["Keep the nation and gold columns.", "Sum the gold column and print it."],
      episodes: 1,
      verified: ["derived"],
    });
    expect(first.entries[0]?.columns.map((c) => c.name)).toEqual([
      "rank",
      "nation",
      "gold",
      "silver",
      "bronze",
      "total",
    ]);
    expect(first.entries[0]?.pitfalls.join("\n")).toMatch(/KeyError.*golds/);
    expect(first.entries[0]?.lessons).toContain("the answer came from the columns nation, gold");

    const second = await run(SIMILAR);
    expect(second.state.memories).toHaveLength(1);
    expect(second.state.memories[0]?.question).toBe(MEDALS_QUESTION);
    expect(second.state.memories[0]?.similarity).toBeGreaterThan(0.85);
    expect(second.state.evidence.some((e) => e.modality === "memory")).toBe(true);
    const planner = stub?.requests.find((r) => r.role === "planner");
    const prompt = planner ? lastMessage(planner) : "";
    expect(prompt).toContain("Lessons from similar past questions");
    expect(prompt).toContain("Pitfall: KeyError");
    // So close a question evolves the entry instead of adding one.
    expect(second.entries).toHaveLength(1);
    expect(second.entries[0]?.episodes).toBe(2);
  });

  it("recalls nothing for an unrelated question, and keeps its failure only as what went wrong", async () => {
    // The team sums gold whatever it is asked: 203 is no answer to "which nation". The check
    // finds that the computation answers another question (it does not depend on `nation`), a
    // concrete conflict: the episode is kept, with no plan and no lesson, only its pitfalls.
    const third = await run(UNRELATED, medalsTeam(), { maxReflections: 0 });
    expect(third.state.memories).toEqual([]);
    expect(third.state.verdict?.pass).toBe(false);
    expect(third.state.verdict?.alignment?.status).toBe("conflicted");
    expect(third.entries.map((e) => e.question).sort()).toEqual(
      [MEDALS_QUESTION, UNRELATED].sort(),
    );
    const kept = third.entries.find((e) => e.question === UNRELATED);
    expect(kept).toMatchObject({ plan: [], lessons: [] });
  });

  it("never recalls the medal table's lesson for an unrelated table, however alike the question", async () => {
    const elements = (req: StubRequest): StubReply => {
      if (req.role === "planner") return "<plan>\n1. Sum the atomic_number column.\n</plan>";
      if (req.role === "coder") return '```python\nprint(df["atomic_number"].sum())\n```';
      if (req.role === "answerer") return answerFromOutput(req);
      return { status: 500, content: `no reply scripted for role ${req.role}` };
    };
    // 0.56 alike in question, above the floor: only the tables tell them apart.
    const question = "How many protons did these ten elements have in total?";
    const other = await run(question, elements, {}, `${EXAMPLES}/elements.tsv`);
    expect(other.state.memories).toEqual([]);
    const planner = stub?.requests.find((r) => r.role === "planner");
    expect(planner ? lastMessage(planner) : "").not.toContain(
      "Lessons from similar past questions",
    );
    // Its own verified episode is an entry of its own, over its own columns.
    expect(other.state.verdict).toMatchObject({ pass: true, support: "derived" });
    const own = other.entries.find((e) => e.question === question);
    expect(own?.columns.map((c) => c.name)).toContain("atomic number");
    expect(own?.episodes).toBe(1);
  });

  it("keeps only what went wrong when the answer failed its check on a contradiction", async () => {
    const failing = medalsTeam();
    const before = (await run(UNRELATED, medalsTeam(), { maxReflections: 0 })).entries;
    // Merely unsupported ("Atlantis" is in no evidence): not known to be wrong, not archived.
    const question = "Which nation won the fewest bronze medals in Tokyo?";
    const unknown = await run(
      question,
      (req) => (req.role === "answerer" ? "Final Answer: Atlantis" : failing(req)),
      { maxReflections: 0, memoryThreshold: 0.999 },
    );
    expect(unknown.state.verdict?.pass).toBe(false);
    expect(unknown.entries).toEqual(before);
    // Contradicted by what the code printed (203): known to be wrong, its pitfalls are kept.
    const total = "How many gold medals did these ten nations win altogether?";
    const after = await run(
      total,
      (req) => (req.role === "answerer" ? "Final Answer: 205" : failing(req)),
      { maxReflections: 0, memoryThreshold: 0.999 },
    );
    expect(after.state.verdict?.pass).toBe(false);
    const added = after.entries.filter((e) => !before.some((b) => b.question === e.question));
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({
      question: total,
      plan: [],
      lessons: [],
      answer: "",
      episodes: 1,
      verified: ["conflict"],
    });
    expect(added[0]?.pitfalls.join("\n")).toMatch(/the answer "205" was rejected/);
  });

  it("learns by the gold answer given with the question, checked or not", async () => {
    const unchecked = { check: false, memoryNamespace: "gold" };
    // Nobody checked the answer, and no gold: nothing is known, nothing archived.
    expect((await run(MEDALS_QUESTION, medalsTeam(), unchecked)).entries).toEqual([]);
    const matched = await run(MEDALS_QUESTION, medalsTeam(), unchecked, OLYMPICS, "203");
    expect(matched.entries.map((e) => [e.verified, e.answer])).toEqual([[["matched-gold"], "203"]]);
    // The check passed by derivation, but the gold answer says otherwise.
    const context = { memoryNamespace: "gold-missed" };
    const missed = await run(MEDALS_QUESTION, medalsTeam(), context, OLYMPICS, "204");
    expect(missed.state.verdict).toMatchObject({ pass: true, support: "derived" });
    expect(missed.entries).toHaveLength(1);
    expect(missed.entries[0]).toMatchObject({ plan: [], answer: "", verified: ["missed-gold"] });
    expect(missed.entries[0]?.pitfalls[0]).toBe('the answer "203" did not match the known answer');
  });

  it("uses the endpoint's embeddings when an embedding model is configured", async () => {
    const viaEndpoint = await run(MEDALS_QUESTION, medalsTeam(), {
      embeddingModel: "stub-embedder",
      memoryNamespace: "endpoint",
    });
    expect(stub?.embeddingRequests.length).toBeGreaterThan(0);
    expect(viaEndpoint.state.verdict?.pass).toBe(true);
    const store = new SqliteStore(file);
    const stored = await store.search(memoryNamespace("endpoint"), { limit: 10 });
    store.close();
    expect(stored.map((s) => EpisodeSchema.parse(s.value).embedder)).toEqual([
      "openai:stub-embedder",
    ]);
  });
});
