import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { AsyncBatchedStore, type BaseStore, InMemoryStore } from "@langchain/langgraph";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { EvidenceSchema, MemorySchema, type Verdict } from "../../blackboard/schemas.js";
import { archiver } from "../../nodes/archiver.js";
import { plannerPrompt } from "../../nodes/planner.js";
import { renderMemories } from "../../nodes/prompts.js";
import { recall } from "../../nodes/recall.js";
import type { NodeRuntime } from "../../nodes/runtime.js";
import type { Configuration } from "../../settings/configuration.js";
import {
  decodeVector,
  encodeVector,
  OFFLINE_ID,
  offlineEmbed,
} from "../../storage/memory/embeddings.js";
import {
  EPISODE_VERSION,
  type Episode,
  EpisodeSchema,
  memoryNamespace,
  questionPattern,
} from "../../storage/memory/episodes.js";
import { openMemoryStore, pruneMemory } from "../../storage/memory/index.js";
import { cosine, SqliteStore } from "../../storage/memory/sqlite-store.js";
import { runCli } from "../support/cli.js";
import { useStubEndpoint } from "../support/env.js";
import {
  attempt,
  contradictedState,
  OLYMPICS_TABLE,
  SALES_TABLE,
  solvedState,
  WORKING_CODE,
} from "../support/episodes.js";
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

  it("keeps only what went wrong when the best answer failed its check on a contradiction", async () => {
    const store = open(freshFile());
    const failing = contradictedState("203");
    expect(failing.verdict?.pass).toBe(false);
    await archiver(failing, runtime(store));
    const [entry, ...more] = await entries(store);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({ plan: [], lessons: [], answer: "", verified: ["conflict"] });
    expect(entry?.pitfalls).toEqual([
      'the answer "203" was rejected: 203 is contradicted by a2:out1',
      "KeyError: 'golds'",
    ]);
  });

  it("archives nothing for an answer the verdict is not about, or a run nobody verified", async () => {
    const store = open(freshFile());
    await archiver(solvedState({ verdict: verdict("210") }), runtime(store));
    const unchecked = solvedState({
      verdict: null,
      attempts: [attempt("x", "y", "KeyError: 'z'")],
    });
    await archiver(unchecked, runtime(store));
    await archiver(solvedState({ answer: null }), runtime(store));
    // With checking off, an answer from code that ran is not verified either.
    await archiver(solvedState({ verdict: null }), runtime(store));
    expect(await entries(store)).toEqual([]);
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
    // The bronze question (0.45) and the river one (-0.05) are below the floor of 0.5; the
    // other namespace is never seen.
    expect(all.map((m) => m.question)).toEqual(questions.slice(0, 2));
    const lower = { memoryK: 10, memoryRecallSimilarity: 0.4 };
    const more = (await recall(asked(ask), runtime(store, lower))).memories ?? [];
    expect(more.map((m) => m.question)).toEqual(questions.slice(0, 3));
    expect(more[2]?.similarity).toBeCloseTo(0.449, 3);
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

describe("memory learns only from verified runs (issue 21)", () => {
  /** The run of issue 21: its plan counted 10 gold medals, then 15, and 15 passed on a cell. */
  const WRONG_PLAN = [
    "[1] 10 gold medals for the first nation.",
    "[2] Add the gold medals of the next nation.",
    "[6] 15 gold medals in all.",
  ];
  const coincidental = (support: Verdict["support"], question = SOLVED.question) =>
    solvedState({
      question,
      plan: WRONG_PLAN,
      answer: answer("15"),
      verdict: { ...verdict("15"), support },
      checked: [{ id: "c1", answer: answer("15"), verdict: { ...verdict("15"), support } }],
    });

  it("does not archive a wrong answer that passed by coincidence, or any pass not derived", async () => {
    const store = open(freshFile());
    for (const support of ["coincidental", "none"] as const)
      expect(await archiver(coincidental(support), runtime(store))).toEqual({});
    // Looked up counts only for a plain lookup; a superlative needs derivation.
    const most = "Which nation won the most gold medals?";
    expect(await archiver(coincidental("looked-up", most), runtime(store))).toEqual({});
    expect(await entries(store)).toEqual([]);
    const recalled = await recall(asked(SOLVED.question), runtime(store));
    expect(recalled.memories).toEqual([]);
  });

  it("archives a run verified by derivation, marked so, with its tables' schema", async () => {
    const store = open(freshFile());
    await archiver(SOLVED, runtime(store));
    const [entry, ...more] = await entries(store);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      version: EPISODE_VERSION,
      verified: ["derived"],
      plan: SOLVED.plan,
      answer: "203",
      columns: [
        { name: "nation", type: "text" },
        { name: "gold", type: "number" },
        { name: "silver", type: "number" },
      ],
    });
    // A plain lookup looked up in its cell is verified too.
    const lookup = "How many gold medals did Japan win?";
    const lookedUp = { ...verdict("27"), support: "looked-up" as const };
    await archiver(
      solvedState({ question: lookup, answer: answer("27"), verdict: lookedUp }),
      runtime(store),
    );
    const stored = await entries(store);
    expect(stored.find((e) => e.question === lookup)?.verified).toEqual(["looked-up"]);
    const [memory] = (await recall(asked(SOLVED.question), runtime(store))).memories ?? [];
    expect(memory?.plan).toEqual(SOLVED.plan);
  });

  it("keeps a failure's pitfalls only when the failure is known, never a run that did not pass", async () => {
    const store = open(freshFile());
    const notPassed = verdict("15", { grounding: 1 }, ["nothing derives 15"]);
    await archiver(
      solvedState({ answer: answer("15"), verdict: notPassed, plan: WRONG_PLAN }),
      runtime(store),
    );
    expect(await entries(store)).toEqual([]);
    await archiver(contradictedState("15", { plan: WRONG_PLAN }), runtime(store));
    const [entry] = await entries(store);
    expect(entry).toMatchObject({ plan: [], answer: "", verified: ["conflict"] });
    expect(entry?.pitfalls[0]).toBe('the answer "15" was rejected: 15 is contradicted by a2:out1');
  });

  it("learns by the gold answer when the run has one: a match whole, a miss as a pitfall", async () => {
    const store = open(freshFile());
    // Unchecked, but it matched the gold answer.
    await archiver({ ...solvedState({ verdict: null }), gold: "203" }, runtime(store));
    expect((await entries(store)).map((e) => [e.verified, e.plan])).toEqual([
      [["matched-gold"], SOLVED.plan],
    ]);
    // Passed by derivation, yet wrong: gold says so.
    const other = open(freshFile());
    await archiver({ ...coincidental("derived"), gold: "203" }, runtime(other));
    const [missed] = await entries(other);
    expect(missed).toMatchObject({ plan: [], answer: "", verified: ["missed-gold"] });
    expect(missed?.pitfalls[0]).toBe('the answer "15" did not match the known answer');
  });

  it("recalls a medal table's lesson never for an unrelated CSV, however alike the question", async () => {
    const store = open(freshFile());
    await archiver(SOLVED, runtime(store));
    // Issue 21: lessons were recalled across tables at 0.32-0.43; this one is 0.61 alike.
    const orders = "How many orders did these 12 stores ship in 2019?";
    const onSales = solvedState({ question: orders, tables: [SALES_TABLE], answer: null });
    expect((await recall(onSales, runtime(store))).memories).toEqual([]);
    const anyTable = await recall(onSales, runtime(store, { memorySchemaSimilarity: 0 }));
    expect(anyTable.memories?.[0]?.similarity).toBeCloseTo(0.614, 3);
    // The example CSV has half the columns in common: similar enough at the default 0.5.
    const onOlympics = solvedState({ tables: [OLYMPICS_TABLE], answer: null });
    const similar = "How many silver medals did these 12 nations win in 2016?";
    const recalled = await recall({ ...onOlympics, question: similar }, runtime(store));
    expect(recalled.memories?.map((m) => m.question)).toEqual([SOLVED.question]);
    const stricter = runtime(store, { memorySchemaSimilarity: 0.6 });
    expect((await recall({ ...onOlympics, question: similar }, stricter)).memories).toEqual([]);
  });

  it("recalls nothing below the question-similarity floor, on the same table too", async () => {
    const store = open(freshFile());
    await archiver(SOLVED, runtime(store));
    for (const [question, similarity] of [
      ["How many nations are in the table?", 0.349],
      ["Which of these nations did not win in 2020?", 0.436],
    ] as const) {
      expect((await recall(asked(question), runtime(store))).memories).toEqual([]);
      const lower = await recall(asked(question), runtime(store, { memoryRecallSimilarity: 0.3 }));
      expect(lower.memories?.[0]?.similarity).toBeCloseTo(similarity, 3);
    }
  });

  it("merges an episode only into an entry over a similar table", async () => {
    const store = open(freshFile());
    await archiver(SOLVED, runtime(store));
    await archiver(solvedState({ tables: [SALES_TABLE] }), runtime(store));
    const stored = await entries(store);
    expect(stored.map((e) => [e.episodes, e.columns.map((c) => c.name).join(",")]).sort()).toEqual([
      [1, "nation,gold,silver"],
      [1, "store,orders,year"],
    ]);
    await archiver(solvedState({ tables: [OLYMPICS_TABLE] }), runtime(store));
    const merged = (await entries(store)).find((e) => e.episodes === 2);
    // The newer plan brings the columns it worked on.
    expect(merged?.columns.map((c) => c.name)).toEqual(OLYMPICS_TABLE.columns.map((c) => c.name));
  });
});

describe("entries archived by an older tableminds", () => {
  /** An entry as tableminds wrote it before EPISODE_VERSION: no schema, no verification. */
  function oldEntry(question: string): Record<string, unknown> {
    const pattern = questionPattern(question);
    return {
      question,
      pattern,
      plan: ["[1] 10 gold medals ...", "[6] 15 gold medals"],
      lessons: ["the answer came from the columns gold"],
      pitfalls: [],
      answer: "15",
      episodes: 1,
      embedding: encodeVector(offlineEmbed(pattern)),
      embedder: OFFLINE_ID,
    };
  }
  const namespace = memoryNamespace("medals");

  it("are never recalled, and are dropped once when the file opens, with a warning", async () => {
    const file = freshFile();
    const before = open(file);
    await before.put(namespace, "old", oldEntry(SOLVED.question));
    await before.put(memoryNamespace("elsewhere"), "old", oldEntry(SOLVED.question));
    await before.put(["tableminds", "other"], "kept", { note: "not a memory entry" });
    await archiver(SOLVED, runtime(before));
    // Even an identical question does not bring the old entry back.
    const [only, ...more] = (await recall(asked(SOLVED.question), runtime(before))).memories ?? [];
    expect(more).toEqual([]);
    expect(only?.key).not.toBe("old");
    before.close();

    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    try {
      const opened = openMemoryStore(file);
      expect(opened.retired).toBe(2);
      expect(await opened.get(namespace, "old")).toBeNull();
      expect(await entries(opened)).toHaveLength(1);
      expect((await opened.get(["tableminds", "other"], "kept"))?.value).toEqual({
        note: "not a memory entry",
      });
      // Once: the file remembers the version it was cleaned for.
      await opened.put(namespace, "older", oldEntry(SOLVED.question));
      opened.close();
      const again = openMemoryStore(file);
      expect(again.retired).toBe(0);
      again.close();
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([
        `memory: dropped 2 entries of ${file} archived by an older tableminds (no table schema or verification)`,
      ]);
    } finally {
      process.off("warning", onWarning);
    }

    // tableminds prune drops whatever is left, saying how many.
    expect(pruneMemory(true, file)).toBe(
      `memory: would drop 1 entry archived by an older tableminds (no table schema or verification) from ${file}; kept 1 entry`,
    );
    expect(pruneMemory(false, file)).toMatch(/^memory: dropped 1 entry .* kept 1 entry$/);
    expect(pruneMemory(false, file)).toMatch(/^memory: dropped 0 entries .* kept 1 entry$/);
    expect(pruneMemory(false, path.join(dir, "missing.sqlite"))).toBeNull();
  });

  it("are dropped by the tableminds prune command", async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), "tableminds-prune-"));
    const store = open(path.join(home, "memory.sqlite"));
    await store.put(namespace, "old", oldEntry(SOLVED.question));
    store.close();
    const env = { TABLEMINDS_HOME: home };
    const dry = await runCli(["prune", "--dry-run"], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^memory: would drop 1 entry archived by an older tableminds/m);
    const real = await runCli(["prune"], env);
    expect(real.stdout).toMatch(/^memory: dropped 1 entry .*; kept 0 entries$/m);
  });
});
