import type { GraphNode } from "@langchain/langgraph";
import type { Evidence, Memory } from "../blackboard/schemas.js";
import type { SolveState } from "../blackboard/state.js";
import { createEmbedder } from "../tools/memory/embeddings.js";
import { memoryNamespace, questionPattern, toMemory } from "../tools/memory/episodes.js";
import { embedText, nearestEpisodes } from "../tools/memory/ranking.js";
import { configurationOf, type NodeContext } from "./runtime.js";

/** Below this similarity a past episode is about something else and is not shown. */
export const RECALL_FLOOR = 0.3;

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
export const recall = (async (state, runtime) => {
  const config = configurationOf(runtime);
  const store = runtime?.store;
  if (!config.memory || !store) return {};
  const embedder = createEmbedder(config.embeddingModel, config.llmTimeoutMs);
  const query = await embedText(embedder, questionPattern(state.question));
  if (!query) return { memories: [] };
  const namespace = memoryNamespace(config.memoryNamespace);
  const ranked = await nearestEpisodes(store, namespace, embedder, query, config.memoryK);
  const memories = ranked
    .filter((r) => r.similarity >= RECALL_FLOOR)
    .map((r) => toMemory(r.key, namespace, r.episode, r.similarity));
  const time = new Date().toISOString();
  return { memories, evidence: memories.map((m) => memoryEvidence(m, time)) };
}) satisfies GraphNode<typeof SolveState, NodeContext>;
