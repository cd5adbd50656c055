import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { AsyncBatchedStore, type BaseStore, InMemoryStore } from "@langchain/langgraph";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { Configuration } from "../../blackboard/configuration.js";
import { EvidenceSchema, MemorySchema } from "../../blackboard/schemas.js";
import { archiver } from "../../nodes/archiver.js";
import { plannerPrompt } from "../../nodes/planner.js";
import { renderMemories } from "../../nodes/prompts.js";
import { recall } from "../../nodes/recall.js";
import type { NodeRuntime } from "../../nodes/runtime.js";
import { decodeVector, OFFLINE_ID, offlineEmbed } from "../../tools/memory/embeddings.js";
import { type Episode, EpisodeSchema, memoryNamespace } from "../../tools/memory/episodes.js";
import { cosine, SqliteStore } from "../../tools/memory/sqlite-store.js";
import { useStubEndpoint } from "../support/env.js";
import { attempt, solvedState, WORKING_CODE } from "../support/episodes.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";
import { answer, verdict } from "../support/verdicts.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-memory-"));
const opened: SqliteStore[] = [];
let files = 0;
let stub: StubServer | undefined;

/** A store handle on `file`, as a new process would open it. */
function open(file: string): SqliteStore {
  const store = new SqliteStore(file);
  opened.push(store);
  return store;
}

const freshFile = () => path.join(dir, `memory-${files++}.sqlite`);

function runtime(store: BaseStore | undefined, context: Partial<Configuration> = {}): NodeRuntime {
  return {
    store,
    context: { memoryNamespace: "medals", ...context },
    writer: () => {},
    interrupt: () => undefined,
    signal: new AbortController().signal,
  };
}

async function entries(store: BaseStore, namespace = "medals"): Promise<Episode[]> {
  const items = await store.search(memoryNamespace(namespace), { limit: 100 });
  return items.map((item) => EpisodeSchema.parse(item.value));
}

const SOLVED = solvedState();
const asked = (question: string) => solvedState({ question, answer: null, verdict: null });

afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

afterAll(() => {
  for (const store of opened) store.close();
});

describe("archive, then recall from the file in a fresh handle", () => {
  it("recalls the archived lesson for a similar question, as memories and evidence", async () => {
    const file = freshFile();
    const first = open(file);
    expect(await archiver(SOLVED, runtime(first))).toEqual({ budget: {} });
    first.close();

    const second = open(file);
    const similar = "How many silver medals did these 12 nations win in 2016?";
    const update = await recall(asked(similar), runtime(second));
    const memories = update.memories ?? [];
    expect(memories).toHaveLength(1);
    const [memory] = memories;
    expect(MemorySchema.parse(memory)).toEqual(memory);
    expect(memory).toMatchObject({
      namespace: ["tableminds", "memories", "medals"],
      question: SOLVED.question,
      pattern: "How many gold medals did these <num> nations win in <num>?",
      plan: SOLVED.plan,
      pitfalls: ["KeyError: 'golds'"],
      episodes: 1,
    });
    expect(memory?.lessons).toContain("the answer came from the columns nation, gold");
    expect(memory?.similarity).toBeGreaterThan(0.8);
    expect(memory?.similarity).toBeLessThan(1);

    const evidence = Array.isArray(update.evidence) ? update.evidence : [];
    expect(evidence).toHaveLength(1);
    const packet = EvidenceSchema.parse(evidence[0]);
    const text = [...(memory?.lessons ?? []), ...(memory?.pitfalls ?? [])].join("\n");
    expect(packet).toMatchObject({
      id: `memory:${memory?.key}`,
      modality: "memory",
      anchor: { kind: "text", source: `memory:${memory?.key}`, span: [0, text.length] },
      value: text,
    });

    // What the planner is shown.
    const prompt = plannerPrompt(similar, [], "", { memories: renderMemories(memories) });
    expect(prompt).toContain("Lessons from similar past questions");
    expect(prompt).toContain("Pitfall: KeyError: 'golds'");
  });

  it("merges a near-duplicate into its entry, and adds an unrelated question", async () => {
    const store = open(freshFile());
    await archiver(SOLVED, runtime(store));
    const again = solvedState({
      question: "How many gold medals did these 8 nations win in 2016?",
      plan: ["Filter the eight nations.", "Sum gold."],
      attempts: [attempt("b1", 'df["Gold"]', "KeyError: 'Gold'"), attempt("b2", WORKING_CODE)],
    });
    await archiver(again, runtime(store));
    const merged = await entries(store);
    expect(merged).toHaveLength(1);
    expect(merged[0]).toMatchObject({
      question: SOLVED.question,
      plan: ["Filter the eight nations.", "Sum gold."],
      episodes: 2,
      embedder: OFFLINE_ID,
    });
    expect(merged[0]?.pitfalls).toEqual(["KeyError: 'Gold'", "KeyError: 'golds'"]);

    await archiver(solvedState({ question: "Which nation has the lowest rank?" }), runtime(store));
    const after = await entries(store);
    expect(after).toHaveLength(2);
    expect(after.map((e) => e.question).sort()).toEqual(
      [SOLVED.question, "Which nation has the lowest rank?"].sort(),
    );
  });

  it("archives a resumed run's episode once: its thread, question and answer mark it", async () => {
    const store = open(freshFile());
    // LangGraph passes the thread in `configurable`, beside the run's settings.
    const inThread = (thread: string): NodeRuntime =>
      Object.assign(runtime(store), { configurable: { thread_id: thread } });
    // A run interrupted after its put but before its checkpoint archives again on resume.
    await archiver(SOLVED, inThread("t1"));
    await archiver(SOLVED, inThread("t1"));
    expect((await entries(store)).map((e) => e.episodes)).toEqual([1]);
    const again = solvedState({
      question: "How many gold medals did these 8 nations win in 2016?",
    });
    await archiver(again, inThread("t2"));
    await archiver(again, inThread("t2"));
    const [entry] = await entries(store);
    expect(entry?.episodes).toBe(2);
    expect(entry?.runs).toHaveLength(2);
    // Another thread asking the same is another episode; so is a run with no thread at all.
    await archiver(SOLVED, inThread("t3"));
    await archiver(SOLVED, runtime(store));
    expect((await entries(store)).map((e) => e.episodes)).toEqual([4]);
  });

  it("keeps only what went wrong when the best answer still failed its check", async () => {
    const store = open(freshFile());
    const failed = verdict("203", { grounding: 0 }, ["203 is contradicted by a2:out1"]);
    const failing = solvedState({
      verdict: failed,
      checked: [{ id: "c1", answer: answer("203"), verdict: failed }],
    });
    expect(failing.verdict?.pass).toBe(false);
    await archiver(failing, runtime(store));
    const [entry, ...more] = await entries(store);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({ plan: [], lessons: [], answer: "" });
    expect(entry?.pitfalls).toEqual([
      'the answer "203" was rejected: 203 is contradicted by a2:out1',
      "KeyError: 'golds'",
    ]);
  });

  it("archives nothing for an answer the verdict is not about, or a failed run", async () => {
    const store = open(freshFile());
    await archiver(solvedState({ verdict: verdict("210") }), runtime(store));
    const unchecked = solvedState({
      verdict: null,
      attempts: [attempt("x", "y", "KeyError: 'z'")],
    });
    await archiver(unchecked, runtime(store));
    await archiver(solvedState({ answer: null }), runtime(store));
    expect(await entries(store)).toEqual([]);
    // With checking off, an answer from code that ran is kept.
    await archiver(solvedState({ verdict: null }), runtime(store));
    expect(await entries(store)).toHaveLength(1);
  });

  it("does nothing without a store or with memory off", async () => {
    const store = open(freshFile());
    expect(await recall(asked(SOLVED.question), runtime(undefined))).toEqual({});
    expect(await archiver(SOLVED, runtime(undefined))).toEqual({});
    expect(await archiver(SOLVED, runtime(store, { memory: false }))).toEqual({});
    expect(await entries(store)).toEqual([]);
    await archiver(SOLVED, runtime(store));
    expect(await recall(asked(SOLVED.question), runtime(store, { memory: false }))).toEqual({});
  });

  it("recalls the k nearest of its own namespace, above the floor, best first", async () => {
    const store = open(freshFile());
    const questions = [
      "How many gold medals did these 10 nations win in 2020?",
      "How many silver medals did these 10 nations win in 2020?",
      "How many bronze medals did all the nations win?",
      "Which river has the largest drainage basin?",
    ];
    for (const question of questions)
      await archiver(solvedState({ question }), runtime(store, { memoryThreshold: 0.99 }));
    await archiver(SOLVED, runtime(store, { memoryNamespace: "elsewhere" }));
    expect(await entries(store)).toHaveLength(4);

    const ask = "How many gold medals did these 5 nations win in 1996?";
    const two = (await recall(asked(ask), runtime(store, { memoryK: 2 }))).memories ?? [];
    expect(two.map((m) => m.question)).toEqual(questions.slice(0, 2));
    expect(two[0]?.similarity).toBeCloseTo(1, 6);
    const all = (await recall(asked(ask), runtime(store, { memoryK: 10 }))).memories ?? [];
    // The river question is below the floor; the other namespace is never seen.
    expect(all.map((m) => m.question)).toEqual(questions.slice(0, 3));
    expect(all.every((m) => m.namespace.at(-1) === "medals")).toBe(true);
    const similarities = all.map((m) => m.similarity);
    expect(similarities).toEqual([...similarities].sort((a, b) => b - a));

    const empty = open(freshFile());
    expect(await recall(asked(ask), runtime(empty))).toEqual({ memories: [], evidence: [] });
  });
});

describe("inside a graph run", () => {
  it("ranks the same through the run's AsyncBatchedStore, reading only ranking fields from SQLite", async () => {
    const store = open(freshFile());
    for (const question of ["Which nation has the lowest rank?", SOLVED.question])
      await archiver(solvedState({ question }), runtime(store));
    const direct = await recall(asked(SOLVED.question), runtime(store));
    const fieldsOf = vi.spyOn(SqliteStore.prototype, "fieldsOf");
    const search = vi.spyOn(SqliteStore.prototype, "search");
    const wrapped = new AsyncBatchedStore(store);
    wrapped.start();
    try {
      const viaWrapper = await recall(asked(SOLVED.question), runtime(wrapped));
      expect(viaWrapper.memories).toEqual(direct.memories);
      expect(viaWrapper.memories?.map((m) => m.question)).toEqual([SOLVED.question]);
      expect(fieldsOf).toHaveBeenCalledTimes(1);
      expect(search).not.toHaveBeenCalled();
      // Any other store is ranked from a plain search.
      const other = new InMemoryStore();
      await archiver(SOLVED, runtime(other));
      const fromMemory = await recall(asked(SOLVED.question), runtime(other));
      expect(fromMemory.memories?.map((m) => [m.question, m.similarity])).toEqual(
        direct.memories?.map((m) => [m.question, m.similarity]),
      );
    } finally {
      await wrapped.stop();
      fieldsOf.mockRestore();
      search.mockRestore();
    }
  });
});

describe("the archiver model", () => {
  it("adds its notes before the run's own when asked, and its reply must say something", async () => {
    stub = await startStubOpenAI({
      script: {
        archiver: [
          'Here you go:\n```json\n{"lessons": ["Sum the medal column after filtering."], "pitfalls": ["A misspelt column name."]}\n```',
          "I have nothing to add.",
        ],
      },
    });
    useStubEndpoint(stub.url);
    const store = open(freshFile());
    const update = await archiver(SOLVED, runtime(store, { llmArchiver: true }));
    expect(update.budget).toMatchObject({ llmCalls: 1 });
    const request = stub.requests.find((r) => r.role === "archiver");
    expect(request?.messages[0]?.content.split("\n")[0]).toBe("# tableminds archiver");
    expect(request?.messages[1]?.content).toContain(`Question: ${SOLVED.question}`);
    const [entry] = await entries(store);
    expect(entry?.lessons[0]).toBe("Sum the medal column after filtering.");
    expect(entry?.lessons).toContain("the answer came from the columns nation, gold");
    expect(entry?.pitfalls).toEqual(["A misspelt column name.", "KeyError: 'golds'"]);

    // A reply with no notes: the summary built from the run is archived as it is.
    const other = open(freshFile());
    await archiver(SOLVED, runtime(other, { llmArchiver: true }));
    const [plain] = await entries(other);
    expect(plain?.lessons).toEqual([
      "the answer came from the columns nation, gold",
      "the answer is a number",
    ]);
    expect(plain?.pitfalls).toEqual(["KeyError: 'golds'"]);
  });
});

describe("endpoint embeddings", () => {
  // Not the offline embedding: the stored vectors must come from the endpoint.
  const endpointEmbed = (text: string) => offlineEmbed(`${text} (endpoint)`).map((v) => -v);

  it("embed with the configured model, and recall with it", async () => {
    stub = await startStubOpenAI({ embed: endpointEmbed });
    useStubEndpoint(stub.url);
    const store = open(freshFile());
    const context = { embeddingModel: "stub-embedder" };
    await archiver(SOLVED, runtime(store, context));
    const [entry] = await entries(store);
    expect(entry?.embedder).toBe("openai:stub-embedder");
    const pattern = "How many gold medals did these <num> nations win in <num>?";
    expect(stub.embeddingRequests.flat()).toContain(pattern);
    const stored = decodeVector(typeof entry?.embedding === "string" ? entry.embedding : "");
    expect(cosine(stored, endpointEmbed(pattern))).toBeCloseTo(1, 6);

    const recalled = await recall(asked(SOLVED.question), runtime(store, context));
    expect(recalled.memories?.map((m) => m.question)).toEqual([SOLVED.question]);
    expect(recalled.memories?.[0]?.similarity).toBeCloseTo(1, 6);
  });

  it("are set aside by the offline embedding, which embeds their patterns again", async () => {
    stub = await startStubOpenAI({ embed: endpointEmbed });
    useStubEndpoint(stub.url);
    const store = open(freshFile());
    await archiver(SOLVED, runtime(store, { embeddingModel: "stub-embedder" }));
    const offline = await recall(asked(SOLVED.question), runtime(store));
    expect(offline.memories?.[0]?.similarity).toBeCloseTo(1, 6);
    // Merging re-stores the entry under the offline embedding.
    await archiver(SOLVED, runtime(store));
    const [entry] = await entries(store);
    expect(entry).toMatchObject({ episodes: 2, embedder: OFFLINE_ID });
  });

  it("that fail leave the run without memory, not without its answer", async () => {
    stub = await startStubOpenAI({});
    useStubEndpoint(stub.url);
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    try {
      const store = open(freshFile());
      await archiver(SOLVED, runtime(store));
      const context = { embeddingModel: "missing-model" };
      expect(await recall(asked(SOLVED.question), runtime(store, context))).toEqual({
        memories: [],
      });
      expect(await archiver(SOLVED, runtime(store, context))).toEqual({ budget: {} });
      expect(await entries(store)).toHaveLength(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.some((w) => /openai:missing-model failed/.test(w))).toBe(true);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
