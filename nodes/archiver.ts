import { createHash, randomUUID } from "node:crypto";
import type { GraphNode } from "@langchain/langgraph";
import type { ReviewState, ReviewStateValue, TableQAGraphStateValue } from "../blackboard/state.js";
import { sameAnswer } from "../grounding/agreement.js";
import { focusQuestion } from "../grounding/answer-type.js";
import { createEmbedder } from "../models/embeddings.js";
import { encodeVector } from "../storage/memory/embeddings.js";
import {
  addOrMerge,
  EPISODE_VERSION,
  type Episode,
  type EpisodeSummary,
  isFailure,
  memoryNamespace,
  mergeEpisode,
  type Notes,
  summarizeEpisode,
  type Verification,
  withNotes,
} from "../storage/memory/episodes.js";
import { embedText, nearestEpisodes } from "../storage/memory/ranking.js";
import { OPEN_PRIVACY, type PromptPrivacy } from "../tables/privacy.js";
import { ask, askOrFallBack } from "./llm.js";
import { promptPrivacy, renderPlan } from "./prompts.js";
import { configurationOf, type NodeContext, type NodeRuntime } from "./runtime.js";

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

/**
 * The gold answer, which table_qa's graph state carries when its caller knows it (an
 * evaluation or mining over a dataset); absent in a state from before it existed.
 */
type Gold = Partial<Pick<TableQAGraphStateValue, "gold">>;

/*
 * Superlatives, aggregates, comparisons and arithmetic: a question with one of these asks for a
 * value computed over rows, which a looked-up cell does not verify. The checker decides what is
 * looked up (the cell in the row and column the question names); this only keeps a question
 * that evidently computes from counting as a lookup. "How many gold medals did Japan win?" is a
 * lookup of Japan's gold cell, so "how many" alone is no sign.
 */
const DERIVED_VALUE = new RegExp(
  [
    String.raw`\b(?:count|total|sum|average|mean|median|mode|combined|altogether|overall)\b`,
    String.raw`\b(?:most|least|fewest|more|less|fewer|greater|smaller|larger|higher|lower|better|worse)\b`,
    String.raw`\b(?:maximum|minimum|max|min|top|bottom|first|last)\b`,
    String.raw`\b(?:difference|differ|ratio|percent(?:age)?|proportion|share|rate|increase|decrease|change|growth|trend|correlat\w*|compare[ds]?|than)\b`,
    String.raw`\b(?:each|every|all|any|both|either|none)\b`,
    String.raw`\b(?!(?:interest|west|test|rest|request|forest|contest|guest|quest|suggest|honest|modest|harvest|protest|digest|arrest|invest|manifest|chest|nest|pest|vest|crest|priest)\b)[a-z]{2,}est\b`,
  ].join("|"),
  "i",
);

/**
 * Whether a question is a plain lookup (one cell the question identifies), where a looked-up
 * answer is verified; anything computed over rows needs derivation.
 */
export function isPlainLookup(question: string): boolean {
  return !DERIVED_VALUE.test(focusQuestion(question));
}

/** Whether the verdict found a concrete contradiction: a claim of it the evidence conflicts with. */
function contradicted(state: Pick<ReviewStateValue, "verdict" | "claims">): boolean {
  const own = new Set(state.verdict?.claims ?? []);
  return state.claims.some((claim) => own.has(claim.id) && claim.status === "conflicted");
}

/**
 * How a finished run is known to have gone, or null when it is not known (then nothing is
 * archived). With a gold answer, by it: `matched-gold` or `missed-gold`. Otherwise by the
 * verdict about the answer given: a pass derived from the table (`derived`), or looked up for a
 * plain lookup (`looked-up`); a failure on a concrete contradiction (`conflict`). A pass that is
 * coincidental or unsupported, a failure without a contradiction, or an unchecked answer teach
 * nothing: memory learns only from verified runs.
 */
export function episodeOutcome(
  state: Pick<ReviewStateValue, "question" | "answer" | "verdict" | "claims"> & Gold,
): Verification | null {
  if (!state.answer) return null;
  if (state.gold?.trim())
    return sameAnswer(state.answer.final, state.gold) ? "matched-gold" : "missed-gold";
  const verdict = state.verdict;
  if (!verdict || verdict.answer !== state.answer.final) return null;
  if (verdict.pass) {
    if (verdict.support === "derived") return "derived";
    if (verdict.support === "looked-up" && isPlainLookup(state.question)) return "looked-up";
    return null;
  }
  return contradicted(state) ? "conflict" : null;
}

export function archiverPrompt(
  state: Pick<ReviewStateValue, "question" | "plan">,
  summary: EpisodeSummary,
  privacy = OPEN_PRIVACY,
): string {
  const sections = [`Question: ${state.question}`, `Plan that worked:\n${renderPlan(state.plan)}`];
  sections.push(
    `Answer: ${privacy.mode === "off" ? summary.answer : privacy.answer(summary.answer)}`,
  );
  const pitfalls = privacy.notes(summary.pitfalls);
  const lessons = privacy.notes(summary.lessons);
  if (pitfalls.length > 0)
    sections.push(`What went wrong on the way:\n${pitfalls.map((p) => `- ${p}`).join("\n")}`);
  if (lessons.length > 0)
    sections.push(`Noted so far:\n${lessons.map((l) => `- ${l}`).join("\n")}`);
  return sections.join("\n\n");
}

/**
 * Under a privacy mode an episode keeps its notes scrubbed of the run's cells and says which
 * mode it ran under: recall under a privacy mode shows only such entries.
 */
function privateSummary(summary: EpisodeSummary, privacy: PromptPrivacy): EpisodeSummary {
  if (privacy.mode === "off") return summary;
  return {
    ...summary,
    lessons: summary.lessons.map((note) => privacy.keptNote(note)),
    pitfalls: summary.pitfalls.map((note) => privacy.keptNote(note)),
    privacy: privacy.mode,
  };
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
function runKey(
  state: Pick<ReviewStateValue, "question" | "answer">,
  configurable: unknown,
): string | null {
  const thread = (configurable as { thread_id?: unknown } | undefined)?.thread_id;
  if (typeof thread !== "string" || !thread) return null;
  return createHash("sha256")
    .update(JSON.stringify([thread, state.question, state.answer?.final ?? ""]))
    .digest("hex")
    .slice(0, 32);
}

/**
 * At the end of a run: remember the episode, if the run is verified (episodeOutcome). A new
 * entry is added only when few stored ones over tables of a similar schema
 * (`memorySchemaSimilarity`) lie within `memoryThreshold`; otherwise the nearest entry evolves
 * with this episode.
 */
export const archiver = (async (state: ReviewStateValue & Gold, runtime?: NodeRuntime) => {
  const config = configurationOf(runtime);
  const store = runtime?.store;
  const outcome = config.memory && store ? episodeOutcome(state) : null;
  if (!store || !outcome) return {};
  let summary = summarizeEpisode(state, outcome);
  if (isFailure(outcome) && summary.pitfalls.length === 0) return {};
  const embedder = createEmbedder(config.embeddingModel, config.llmTimeoutMs);
  const privacy = await promptPrivacy(state, config);
  let budget = {};
  if (config.llmArchiver && !isFailure(outcome)) {
    const prompt = archiverPrompt(state, summary, privacy);
    const reply = await askOrFallBack(() =>
      ask("archiver", ARCHIVER_SYSTEM, prompt, config, runtime?.signal, { privacy }),
    );
    budget = reply?.budget ?? {};
    // A reply without notes leaves the summary built from the run.
    const notes = reply ? parseNotes(reply.text) : null;
    if (notes) summary = withNotes(summary, notes);
  }
  summary = privateSummary(summary, privacy);
  const vector = await embedText(embedder, summary.pattern);
  if (!vector) return { budget };
  const namespace = memoryNamespace(config.memoryNamespace);
  const neighbours = await nearestEpisodes(store, namespace, embedder, vector, NEIGHBOURS, {
    columns: summary.columns,
    minSimilarity: config.memorySchemaSimilarity,
  });
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
      version: EPISODE_VERSION,
      ...summary,
      embedding: encodeVector(vector),
      embedder: embedder.id,
      ...(run ? { runs: [run] } : {}),
    };
    await store.put(namespace, run ?? randomUUID(), episode);
  }
  return { budget };
}) satisfies GraphNode<typeof ReviewState, NodeContext>;
