import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { TableQAStateValue } from "../../blackboard/state.js";
import { graphFromModule } from "../../graphs/registry.js";
import * as tableQa from "../../graphs/table_qa.js";
import { offlineEmbed } from "../../tools/memory/embeddings.js";
import { EpisodeSchema, memoryNamespace } from "../../tools/memory/episodes.js";
import { SqliteStore } from "../../tools/memory/sqlite-store.js";
import { closeSandboxes } from "../../tools/sandbox/index.js";
import { EXAMPLES, useStubEndpoint, useTempHome, withContext } from "../support/env.js";
import { lastMessage, MEDALS_CODE, MEDALS_QUESTION, medalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const BROKEN = '```python\ntotal = df["golds"].sum()\nprint(total)\n```';
const SIMILAR = "How many silver medals did these ten nations win in total?";
const UNRELATED = "Which nation has the lowest rank?";
const home = useTempHome();
const file = path.join(home, "memory.sqlite");
const namespace = memoryNamespace("medals");

describe("long-term memory across runs", () => {
  let stub: StubServer | undefined;
  afterEach(async () => {
    await stub?.close();
  });
  afterAll(async () => {
    await closeSandboxes();
  });

  /** One run with its own store handle on the shared file, as two CLI processes would have. */
  async function run(question: string, team = medalsTeam(), context = {}) {
    stub = await startStubOpenAI({ respond: team, embed: offlineEmbed });
    useStubEndpoint(stub.url);
    const store = new SqliteStore(file);
    try {
      const withMemory = graphFromModule(tableQa, { store });
      const state = (await withMemory.invoke(
        { question, sources: [{ path: `${EXAMPLES}/olympics_2020_medals.csv` }] },
        withContext({ memoryNamespace: "medals", ...context }),
      )) as TableQAStateValue;
      const entries = await store.search(namespace, { limit: 100 });
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
    expect(first.state.verdict?.pass).toBe(true);
    expect(first.state.memories).toEqual([]);
    expect(first.entries).toHaveLength(1);
    expect(first.entries[0]).toMatchObject({
      question: MEDALS_QUESTION,
      plan: ["Keep the nation and gold columns.", "Sum the gold column and print it."],
      episodes: 1,
    });
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

  it("adds an unrelated question as a new entry", async () => {
    const third = await run(UNRELATED);
    expect(third.state.memories.every((m) => m.similarity < 0.85)).toBe(true);
    expect(third.entries).toHaveLength(2);
  });

  it("keeps only what went wrong when the answer still failed its check at the end", async () => {
    const failing = medalsTeam();
    const before = (await run(UNRELATED)).entries;
    const question = "Which nation won the fewest bronze medals in Tokyo?";
    const after = await run(
      question,
      (req) => (req.role === "answerer" ? "Final Answer: Atlantis" : failing(req)),
      { maxReflections: 0, memoryThreshold: 0.999 },
    );
    expect(after.state.verdict?.pass).toBe(false);
    const added = after.entries.filter((e) => !before.some((b) => b.question === e.question));
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({ question, plan: [], lessons: [], answer: "", episodes: 1 });
    expect(added[0]?.pitfalls.join("\n")).toMatch(/the answer "Atlantis" was rejected/);
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
