import type { BaseStore } from "@langchain/langgraph";
import type { Evidence, Memory } from "../blackboard/schemas.js";
import { createEmbedder, type Embedder } from "../tools/memory/embeddings.js";
import {
  type Episode,
  EpisodeSchema,
  memoryNamespace,
  questionPattern,
  toMemory,
} from "../tools/memory/episodes.js";
import { cosine } from "../tools/memory/sqlite-store.js";
import { configurationOf, type TableQANode } from "./runtime.js";

/** Entries compared per recall: the most recently updated ones. */
export const SCAN_LIMIT = 5_000;
/** Below this similarity a past episode is about something else and is not shown. */
export const RECALL_FLOOR = 0.3;

export interface Scored {
  key: string;
  episode: Episode;
  similarity: number;
}

/**
 * The stored episodes of a namespace ranked by similarity to `text`. Similarity is computed
 * here rather than by the store, so any LangGraph store works (the dev server's too) and
 * vectors of another embedder are never compared.
 */
export async function nearestEpisodes(
  store: BaseStore,
  namespace: string[],
  embedder: Embedder,
  text: string,
): Promise<Scored[]> {
  const items = await store.search(namespace, { limit: SCAN_LIMIT });
  const query = await embedder.embeddings.embedQuery(text);
  return items
    .flatMap((item) => {
      const parsed = EpisodeSchema.safeParse(item.value);
      if (!parsed.success || parsed.data.embedder !== embedder.id) return [];
      return [
        { key: item.key, episode: parsed.data, similarity: cosine(query, parsed.data.embedding) },
      ];
    })
    .sort((a, b) => b.similarity - a.similarity);
}

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

/** Before planning: the k most similar past episodes, for the planner to learn from. */
export const recallNode: TableQANode = async (state, runtime) => {
  const config = configurationOf(runtime);
  const store = runtime?.store;
  if (!config.memory || !store) return {};
  const namespace = memoryNamespace(config.memoryNamespace);
  const embedder = createEmbedder(config.embeddingModel, config.llmTimeoutMs);
  const ranked = await nearestEpisodes(store, namespace, embedder, questionPattern(state.question));
  const memories = ranked
    .filter((r) => r.similarity >= RECALL_FLOOR)
    .slice(0, config.memoryK)
    .map((r) => toMemory(r.key, namespace, r.episode, r.similarity));
  const time = new Date().toISOString();
  return { memories, evidence: memories.map((m) => memoryEvidence(m, time)) };
};
