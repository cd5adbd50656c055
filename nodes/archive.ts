import { randomUUID } from "node:crypto";
import { renderPlan } from "../blackboard/render.js";
import type { TableQAStateValue } from "../blackboard/state.js";
import { createEmbedder } from "../tools/memory/embeddings.js";
import {
  addOrMerge,
  type Episode,
  type EpisodeSummary,
  memoryNamespace,
  mergeEpisode,
  summarizeEpisode,
} from "../tools/memory/episodes.js";
import { ask, askOrFallBack } from "./llm.js";
import { nearestEpisodes } from "./recall.js";
import { configurationOf, type TableQANode } from "./runtime.js";

export const ARCHIVER_SYSTEM = `# tableminds archiver
You keep the notebook of a team that answers questions about tables. From one solved
question, write down what would help with a similar question later: lessons (what worked,
which columns or cleaning mattered) and pitfalls (what went wrong on the way). Each note is
one short sentence that does not depend on this table's particular values.

Reply with one JSON object and nothing else:
{"lessons": ["..."], "pitfalls": ["..."]}`;

/** Only answers that held up are worth remembering. */
export function worthArchiving(state: TableQAStateValue): boolean {
  if (!state.answer) return false;
  if (state.verdict) return state.verdict.pass;
  return Boolean(state.attempts.at(-1)?.result?.ok);
}

export function archiverPrompt(state: TableQAStateValue, summary: EpisodeSummary): string {
  const sections = [`Question: ${state.question}`, `Plan that worked:\n${renderPlan(state.plan)}`];
  sections.push(`Answer: ${summary.answer}`);
  if (summary.pitfalls.length > 0)
    sections.push(
      `What went wrong on the way:\n${summary.pitfalls.map((p) => `- ${p}`).join("\n")}`,
    );
  if (summary.lessons.length > 0)
    sections.push(`Noted so far:\n${summary.lessons.map((l) => `- ${l}`).join("\n")}`);
  return sections.join("\n\n");
}

/** The notes of an archiver reply, or null when it has none. */
export function parseNotes(reply: string): { lessons: string[]; pitfalls: string[] } | null {
  const json = /\{[\s\S]*\}/.exec(reply)?.[0];
  if (!json) return null;
  try {
    const parsed = JSON.parse(json) as Record<string, unknown>;
    const strings = (v: unknown) =>
      Array.isArray(v) ? v.filter((s) => typeof s === "string") : [];
    const notes = { lessons: strings(parsed.lessons), pitfalls: strings(parsed.pitfalls) };
    return notes.lessons.length + notes.pitfalls.length > 0 ? notes : null;
  } catch {
    return null;
  }
}

/**
 * After a checked answer: remember the episode. A new entry is added only when no stored
 * one is within `memoryThreshold`; otherwise the nearest entry evolves with this episode.
 */
export const archiveNode: TableQANode = async (state, runtime) => {
  const config = configurationOf(runtime);
  const store = runtime?.store;
  if (!config.memory || !store || !worthArchiving(state)) return {};
  let summary = summarizeEpisode(state);
  let budget = {};
  if (config.llmArchiver) {
    const reply = await askOrFallBack(() =>
      ask("archiver", ARCHIVER_SYSTEM, archiverPrompt(state, summary), config, runtime?.signal),
    );
    budget = reply?.budget ?? {};
    const notes = reply ? parseNotes(reply.text) : null;
    // A reply without notes keeps the summary built from the run.
    if (notes)
      summary = {
        ...summary,
        lessons: notes.lessons,
        pitfalls: [...notes.pitfalls, ...summary.pitfalls],
      };
  }
  const namespace = memoryNamespace(config.memoryNamespace);
  const embedder = createEmbedder(config.embeddingModel, config.llmTimeoutMs);
  const neighbours = await nearestEpisodes(store, namespace, embedder, summary.pattern);
  const decision = addOrMerge(neighbours, config.memoryThreshold);
  if (decision.action === "merge") {
    const existing = neighbours.find((n) => n.key === decision.key)?.episode as Episode;
    await store.put(namespace, decision.key, mergeEpisode(existing, summary));
  } else {
    const [embedding = []] = await embedder.embeddings.embedDocuments([summary.pattern]);
    const episode: Episode = { ...summary, embedding, embedder: embedder.id };
    await store.put(namespace, randomUUID(), episode);
  }
  return { budget };
};
