import { createHash, randomUUID } from "node:crypto";
import type { TableQAStateValue } from "../blackboard/state.js";
import { createEmbedder, encodeVector } from "../tools/memory/embeddings.js";
import {
  addOrMerge,
  type Episode,
  type EpisodeSummary,
  memoryNamespace,
  mergeEpisode,
  type Notes,
  summarizeEpisode,
  withNotes,
} from "../tools/memory/episodes.js";
import { ask, askOrFallBack } from "./llm.js";
import { renderPlan } from "./prompts.js";
import { embedText, nearestEpisodes } from "./recall.js";
import { configurationOf, type TableQANode } from "./runtime.js";

/** Neighbours looked at when archiving: enough to count how many are near. */
const NEIGHBOURS = 5;
/** How many entries may already lie within the threshold for a new one still to be added. */
export const FEW_NEIGHBOURS = 0;

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
  // Checked: the verdict must be a pass, and about the answer being returned.
  if (state.verdict) return state.verdict.pass && state.verdict.answer === state.answer.final;
  // Checking off: the answer must come from code that ran.
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

function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  return Array.isArray(value) ? value.filter((s): s is string => typeof s === "string") : [];
}

/** The first JSON object in `text` with lessons or pitfalls, fenced or bare. */
function notesFromJson(text: string): Notes | null {
  for (let start = text.indexOf("{"); start >= 0; start = text.indexOf("{", start + 1)) {
    for (let end = text.lastIndexOf("}"); end > start; end = text.lastIndexOf("}", end - 1)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text.slice(start, end + 1));
      } catch {
        continue;
      }
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) break;
      const fields = Object.fromEntries(
        Object.entries(parsed).map(([k, v]) => [k.toLowerCase().replace(/s$/, ""), v]),
      );
      return { lessons: strings(fields.lesson), pitfalls: strings(fields.pitfall) };
    }
  }
  return null;
}

/** "Lessons:" and "Pitfalls:" headings, each followed by bulleted or numbered lines. */
function notesFromHeadings(text: string): Notes {
  const notes: Notes = { lessons: [], pitfalls: [] };
  let into: string[] | null = null;
  for (const line of text.split("\n")) {
    const heading = /^[#*\s]*(lessons?|pitfalls?)\b[*:\s]*(.*)$/i.exec(line);
    if (heading) {
      into = heading[1]?.toLowerCase().startsWith("lesson") ? notes.lessons : notes.pitfalls;
      if (heading[2]?.trim()) into.push(heading[2].trim());
      continue;
    }
    const item = /^\s*(?:[-*•]|\d+[.)])\s+(.+)$/.exec(line);
    if (item?.[1] && into) into.push(item[1].trim());
  }
  return notes;
}

/** The notes of an archiver reply, or null when it has none. */
export function parseNotes(reply: string): Notes | null {
  const notes = notesFromJson(reply) ?? notesFromHeadings(reply);
  return notes.lessons.length + notes.pitfalls.length > 0 ? notes : null;
}

/**
 * What identifies this run's episode across a resume: its thread, question and answer. A run
 * without a thread cannot be resumed, so it needs none.
 */
function runKey(state: TableQAStateValue, configurable: unknown): string | null {
  const thread = (configurable as { thread_id?: unknown } | undefined)?.thread_id;
  if (typeof thread !== "string" || !thread) return null;
  return createHash("sha256")
    .update(JSON.stringify([thread, state.question, state.answer?.final ?? ""]))
    .digest("hex")
    .slice(0, 32);
}

/**
 * After a checked answer: remember the episode. A new entry is added only when few stored
 * ones lie within `memoryThreshold`; otherwise the nearest entry evolves with this episode.
 */
export const archiveNode: TableQANode = async (state, runtime) => {
  const config = configurationOf(runtime);
  const store = runtime?.store;
  if (!config.memory || !store || !worthArchiving(state)) return {};
  const embedder = createEmbedder(config.embeddingModel, config.llmTimeoutMs);
  let summary = summarizeEpisode(state);
  let budget = {};
  if (config.llmArchiver) {
    const reply = await askOrFallBack(() =>
      ask("archiver", ARCHIVER_SYSTEM, archiverPrompt(state, summary), config, runtime?.signal),
    );
    budget = reply?.budget ?? {};
    // A reply without notes leaves the summary built from the run.
    const notes = reply ? parseNotes(reply.text) : null;
    if (notes) summary = withNotes(summary, notes);
  }
  const vector = await embedText(embedder, summary.pattern);
  if (!vector) return { budget };
  const namespace = memoryNamespace(config.memoryNamespace);
  const neighbours = await nearestEpisodes(store, namespace, embedder, vector, NEIGHBOURS);
  const run = runKey(state, runtime?.configurable);
  // A run resumed after its put but before its checkpoint comes here again.
  if (run && neighbours.some((n) => n.episode.runs?.includes(run))) return { budget };
  const decision = addOrMerge(neighbours, config.memoryThreshold, FEW_NEIGHBOURS);
  const nearest = neighbours.find((n) => decision.action === "merge" && n.key === decision.key);
  if (nearest) {
    const merged: Episode = {
      ...mergeEpisode(nearest.episode, summary, run ?? undefined),
      // Stored again under the current embedder, which may have re-embedded an old entry.
      embedding: encodeVector(nearest.vector),
      embedder: embedder.id,
    };
    await store.put(namespace, nearest.key, merged);
  } else {
    const episode: Episode = {
      ...summary,
      embedding: encodeVector(vector),
      embedder: embedder.id,
      ...(run ? { runs: [run] } : {}),
    };
    await store.put(namespace, run ?? randomUUID(), episode);
  }
  return { budget };
};
