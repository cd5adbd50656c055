/**
 * Long-term memory at scale: the latency of `recall` (embed the question, rank every stored
 * episode of the namespace, keep k) and of `archive` (the same ranking, then a put) with
 * 10,000 stored episodes, SqliteStore against InMemoryStore, measured alternately in one
 * process. Then the stores' own vector search (`search({query})` with an index) on the same
 * episodes. Prints medians side by side and the SQLite / in-memory ratio.
 *
 *   npx tsx bench/memory.ts [episodes=10000] [runs=30]
 */
import { mkdtempSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type BaseStore, InMemoryStore } from "@langchain/langgraph";
import { archiver } from "../nodes/archiver.js";
import { recall } from "../nodes/recall.js";
import type { NodeRuntime } from "../nodes/runtime.js";
import type { Configuration } from "../settings/configuration.js";
import {
  encodeVector,
  OFFLINE_ID,
  OfflineEmbeddings,
  offlineEmbed,
} from "../storage/memory/embeddings.js";
import {
  EPISODE_VERSION,
  type Episode,
  memoryNamespace,
  questionPattern,
} from "../storage/memory/episodes.js";
import { SqliteStore } from "../storage/memory/sqlite-store.js";
import { tableSchema } from "../storage/memory/table-schema.js";
import { MEDALS_TABLE, solvedState } from "../tests/support/episodes.js";

const EPISODES = Number(process.argv[2] ?? 10_000);
const RUNS = Number(process.argv[3] ?? 30);
const NAMESPACE = memoryNamespace("bench");
const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-memory-"));

const WHAT = ["gold medals", "goals", "points", "votes", "seats", "wins", "titles", "sales"];
const WHO = ["Japan", "the home team", "Liverpool", "each party", "the club", "Brazil", "Ohio"];
const HOW = [
  "How many {what} did {who} get in {year}?",
  "Which season had the most {what} for {who}?",
  "What is the average number of {what} of {who} since {year}?",
  "Did {who} have more {what} in {year} than in {year2}?",
  "Rank the {what} of {who} from {year} to {year2}.",
  "What share of all {what} went to {who} in {year}?",
];

/** The i-th generated question: templates, subjects and years mixed, no two alike. */
function question(n: number): string {
  const i = Math.abs(n);
  const pick = <T>(list: T[], n: number) => list[n % list.length] as T;
  return pick(HOW, i)
    .replace("{what}", pick(WHAT, Math.floor(i / 6)))
    .replace("{who}", `${pick(WHO, Math.floor(i / 48))} group ${Math.floor(i / 336)}`)
    .replace("{year}", String(1900 + (i % 120)))
    .replace("{year2}", String(1950 + (i % 70)));
}

function episode(i: number): Episode {
  const q = question(i);
  const pattern = questionPattern(q);
  return {
    version: EPISODE_VERSION,
    columns: tableSchema([MEDALS_TABLE]),
    verified: ["derived"],
    question: q,
    pattern,
    plan: ["Filter the rows of the subject.", "Aggregate the column.", "Print the value."],
    lessons: ["the answer came from the columns season, total", "the answer is a number"],
    pitfalls: ["KeyError: 'Total'", 'the answer "12" was rejected: not in the evidence'],
    answer: String(i),
    episodes: 1,
    embedding: encodeVector(offlineEmbed(pattern)),
    embedder: OFFLINE_ID,
  };
}

async function fill(store: BaseStore, episodes: Episode[]): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < episodes.length; i += 500) {
    await store.batch(
      episodes.slice(i, i + 500).map((value, j) => ({
        namespace: NAMESPACE,
        key: `e${i + j}`,
        value,
      })),
    );
  }
  return performance.now() - started;
}

function runtime(store: BaseStore, context: Partial<Configuration> = {}): NodeRuntime {
  return {
    store,
    context: { memoryNamespace: "bench", memoryK: 2, ...context },
    writer: () => {},
    interrupt: () => undefined,
    signal: new AbortController().signal,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function time(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/** Runs `measure` on both stores in turn, RUNS times, after two unmeasured warm-ups. */
async function alternate(
  stores: Record<"sqlite" | "memory", BaseStore>,
  measure: (store: BaseStore, run: number) => Promise<unknown>,
): Promise<Record<"sqlite" | "memory", number>> {
  const ms = { sqlite: [] as number[], memory: [] as number[] };
  for (let run = -2; run < RUNS; run++) {
    for (const name of ["sqlite", "memory"] as const) {
      const elapsed = await time(() => measure(stores[name], run));
      if (run >= 0) ms[name].push(elapsed);
    }
  }
  return { sqlite: median(ms.sqlite), memory: median(ms.memory) };
}

function row(label: string, m: Record<"sqlite" | "memory", number>): string {
  const ratio = m.sqlite / m.memory;
  return `${label.padEnd(34)} ${m.sqlite.toFixed(2).padStart(10)} ${m.memory.toFixed(2).padStart(12)} ${ratio.toFixed(2).padStart(8)}x`;
}

async function main() {
  const episodes = Array.from({ length: EPISODES }, (_, i) => episode(i));
  const file = path.join(dir, "memory.sqlite");
  const sqlite = new SqliteStore(file);
  const memory = new InMemoryStore();
  const fillMs = { sqlite: await fill(sqlite, episodes), memory: await fill(memory, episodes) };
  const stores = { sqlite, memory };
  const asked = (run: number) =>
    solvedState({ question: question(run * 7919 + 13), answer: null, verdict: null });

  const recallMs = await alternate(stores, (store, run) => recall(asked(run), runtime(store)));
  let recalled = 0;
  for (const store of [sqlite, memory])
    recalled += (await recall(asked(0), runtime(store))).memories?.length ?? 0;
  // Each archive merges into a near neighbour or adds one; both stores get the same sequence.
  const archive = await alternate(stores, (store, run) =>
    archiver(solvedState({ question: question(run * 104_729 + 7) }), runtime(store)),
  );

  // What a new CLI process pays: open the file, then recall once.
  const cold: number[] = [];
  for (let run = 0; run < Math.min(RUNS, 10); run++) {
    cold.push(
      await time(async () => {
        const fresh = new SqliteStore(file);
        await recall(asked(run), runtime(fresh));
        fresh.close();
      }),
    );
  }

  // The stores' own vector search, each with an index over the pattern.
  const index = { dims: 256, embeddings: new OfflineEmbeddings(), fields: ["pattern"] };
  const indexedSqlite = new SqliteStore(path.join(dir, "indexed.sqlite"), { index });
  const indexedMemory = new InMemoryStore({ index });
  const indexedFillMs = {
    sqlite: await fill(indexedSqlite, episodes),
    memory: await fill(indexedMemory, episodes),
  };
  const search = await alternate({ sqlite: indexedSqlite, memory: indexedMemory }, (store, run) =>
    store.search(NAMESPACE, { query: questionPattern(question(run * 7919 + 13)), limit: 2 }),
  );
  const filtered = await alternate({ sqlite: indexedSqlite, memory: indexedMemory }, (store, run) =>
    store.search(NAMESPACE, {
      query: questionPattern(question(run * 7919 + 13)),
      filter: { embedder: OFFLINE_ID },
      limit: 2,
    }),
  );

  console.log(
    `long-term memory with ${EPISODES} episodes (median of ${RUNS} runs, ms; file ${(statSync(file).size / 1e6).toFixed(1)} MB)`,
  );
  console.log(
    `${"".padEnd(34)} ${"SqliteStore".padStart(10)} ${"InMemoryStore".padStart(12)} ${"ratio".padStart(9)}`,
  );
  console.log(row("fill (batches of 500)", fillMs));
  console.log(row("recall (k=2)", recallMs));
  console.log(row("archive (rank + put)", archive));
  console.log(row("fill, indexed (embeds on put)", indexedFillMs));
  console.log(row("store search({query}), limit 2", search));
  console.log(row("  with a filter", filtered));
  console.log(`recall in a new process (open file + recall): ${median(cold).toFixed(2)} ms`);
  if (recalled !== 4) throw new Error(`recall found ${recalled} memories in two stores, not 4`);
  for (const store of [sqlite, indexedSqlite]) store.close();
}

await main();
