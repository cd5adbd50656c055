import type { GraphNode } from "@langchain/langgraph";
import type { Evidence, Memory } from "../blackboard/schemas.js";
import type { SolveState } from "../blackboard/state.js";
import { createEmbedder } from "../models/embeddings.js";
import { memoryNamespace, questionPattern, toMemory } from "../storage/memory/episodes.js";
import { embedText, nearestEpisodes } from "../storage/memory/ranking.js";
import { tableSchema } from "../storage/memory/table-schema.js";
import { atLeastAsStrict } from "../tables/privacy.js";
import { configurationOf, type NodeContext } from "./runtime.js";

function memoryEvidence(memory: Memory, time: string): Evidence {
  const text = [...memory.lessons, ...memory.pitfalls].join("\n");
  return {
    id: `memory:${memory.key}`,
    modality: "memory",
    source: "recall",
    anchor: { kind: "text", source: `memory:${memory.key}`, span: [0, text.length] },
    value: text,
    time,
    provenance: { attempt: "memory", parents: [] },
    confidence: Math.max(0, Math.min(1, memory.similarity)),
  };
}

/**
 * Before planning: the k past episodes most similar to the question, for the planner to learn
 * from. Only episodes over tables of a similar schema (`memorySchemaSimilarity`) and at least
 * `memoryRecallSimilarity` alike in question are shown: below that, a lesson is about
 * something else. Under a privacy mode only episodes archived under one at least as strict are
 * recalled: their notes were scrubbed of their tables' cells, an `off` run's were not.
 */
export const recall = (async (state, runtime) => {
  const config = configurationOf(runtime);
  const store = runtime?.store;
  if (!config.memory || !store) return {};
  const embedder = createEmbedder(config.embeddingModel, config.llmTimeoutMs);
  const query = await embedText(embedder, questionPattern(state.question));
  if (!query) return { memories: [] };
  const namespace = memoryNamespace(config.memoryNamespace);
  const mode = config.privacy;
  // Entries from runs without privacy are passed over, so more are looked at.
  const wanted = mode === "off" ? config.memoryK : config.memoryK * 4;
  const ranked = await nearestEpisodes(store, namespace, embedder, query, wanted, {
    columns: tableSchema(state.tables),
    minSimilarity: config.memorySchemaSimilarity,
  });
  const memories = ranked
    .filter((r) => mode === "off" || atLeastAsStrict(r.episode.privacy ?? "off", mode))
    .slice(0, config.memoryK)
    .filter((r) => r.similarity >= config.memoryRecallSimilarity)
    .map((r) => toMemory(r.key, namespace, r.episode, r.similarity));
  const time = new Date().toISOString();
  return { memories, evidence: memories.map((m) => memoryEvidence(m, time)) };
}) satisfies GraphNode<typeof SolveState, NodeContext>;
