import { z } from "zod";
import type { AnswerType, Memory } from "../../blackboard/schemas.js";
import type { ReviewStateValue } from "../../blackboard/state.js";
import { decodeVector, maskValues } from "./embeddings.js";
import { SchemaColumnSchema, tableSchema } from "./table-schema.js";

/** An entry keeps at most this many lessons and as many pitfalls, each at most NOTE_CHARS long. */
export const MAX_NOTES = 8;
const NOTE_CHARS = 240;

/**
 * The format of an entry. Version 2 added the table schema and the verification marks; entries
 * without them (archived from runs nobody verified, recalled for any table) are never ranked,
 * and are dropped when a memory file opens (`openMemoryStore`) and by `tableminds prune`.
 */
export const EPISODE_VERSION = 2;

/**
 * How an episode was known to be right or wrong: its answer passed the check derived from the
 * table (`derived`) or looked up in the cell a plain lookup names (`looked-up`), or matched the
 * gold answer (`matched-gold`); or it failed the check on a concrete contradiction
 * (`conflict`) or missed the gold answer (`missed-gold`). A run known neither way is not archived.
 */
export const VerificationSchema = z.enum([
  "derived",
  "looked-up",
  "matched-gold",
  "conflict",
  "missed-gold",
]);
export type Verification = z.infer<typeof VerificationSchema>;

/** The verifications of a run that went wrong: it teaches pitfalls, no plan or answer. */
export function isFailure(verified: Verification): boolean {
  return verified === "conflict" || verified === "missed-gold";
}

/** One entry of long-term memory: what a verified question taught. */
export const EpisodeSchema = z.object({
  version: z.literal(EPISODE_VERSION),
  question: z.string(),
  /** The question with its values masked: the shape other questions are matched on. */
  pattern: z.string(),
  /** The columns of the tables its plan worked on (see table-schema.ts): recall needs alike ones. */
  columns: z.array(SchemaColumnSchema),
  /** How its episodes were verified, each way once, oldest first; never empty. */
  verified: z.array(VerificationSchema).min(1),
  /** The plan that last led to a verified answer. */
  plan: z.array(z.string()),
  lessons: z.array(z.string()),
  pitfalls: z.array(z.string()),
  answer: z.string(),
  /** How many episodes were merged into this entry. */
  episodes: z.number().int().positive(),
  /** The pattern's vector: base64 float32 (see encodeVector), or plain numbers as first stored. */
  embedding: z.union([z.string(), z.array(z.number())]),
  /** Which embedder made `embedding`; entries of another embedder are not compared. */
  embedder: z.string(),
  /** The runs merged in (the latest few), so a resumed run does not archive itself twice. */
  runs: z.array(z.string()).optional(),
  /**
   * The privacy mode every episode merged in ran under, when none ran with `off`: its notes were
   * scrubbed of cells, and only such entries are recalled under a privacy mode.
   */
  privacy: z.enum(["values", "schema"]).optional(),
});
export type Episode = z.infer<typeof EpisodeSchema>;
export type EpisodeSummary = Omit<Episode, "embedding" | "embedder" | "version">;

/** Whether a stored value is an entry of the current format (older ones are dropped). */
export function isCurrentEpisode(value: unknown): boolean {
  return EpisodeSchema.safeParse(value).success;
}

/** The question with its numbers and quoted values masked: "... in <num>?". */
export function questionPattern(question: string): string {
  return maskValues(question).replace(/\s+/g, " ").trim();
}

export function episodeVector(episode: Pick<Episode, "embedding">): ArrayLike<number> {
  return typeof episode.embedding === "string"
    ? decodeVector(episode.embedding)
    : episode.embedding;
}

/** Notes without blanks or repeats, the first ones kept when there are too many. */
function unique(items: string[]): string[] {
  const notes = items.map((s) => {
    const note = s.replace(/\s+/g, " ").trim();
    return note.length > NOTE_CHARS ? `${note.slice(0, NOTE_CHARS - 3)}...` : note;
  });
  return [...new Set(notes.filter(Boolean))].slice(0, MAX_NOTES);
}

/** The columns of the run's tables that the working code names, as "use these" lessons. */
function columnsUsed(state: Pick<ReviewStateValue, "attempts" | "tables">): string[] {
  const code = state.attempts.findLast((a) => a.result?.ok)?.code ?? "";
  return state.tables.flatMap((table) =>
    table.columns
      .map((c) => c.name)
      .filter((name) => code.includes(`"${name}"`) || code.includes(`'${name}'`)),
  );
}

const ANSWER_KIND: Record<AnswerType, string> = {
  number: "a number",
  list: "a list",
  yesno: "yes or no",
  date: "a date",
  entity: "a name from the table",
  text: "short text",
};

/**
 * What a finished run teaches, built from the run itself with no model, as `verified` says it
 * went: a run that went wrong teaches only its pitfalls, with no plan, lessons or answer.
 */
export function summarizeEpisode(
  state: Pick<
    ReviewStateValue,
    "question" | "plan" | "attempts" | "tables" | "checked" | "reflections" | "verdict" | "answer"
  >,
  verified: Verification,
): EpisodeSummary {
  const failures = state.attempts.flatMap((a) => {
    if (a.parseError) return ["a reply had no runnable code"];
    const error = a.result?.ok === false ? a.result.error : null;
    return error ? [`${error.type}: ${error.message.split("\n")[0]?.slice(0, 160)}`] : [];
  });
  const rejected = state.checked
    .filter((c) => !c.verdict.pass)
    .map((c) => {
      const why = c.verdict.issues[0];
      return `the answer ${JSON.stringify(c.answer.final)} was rejected${why ? `: ${why}` : ""}`;
    });
  const final = state.answer?.final ?? "";
  const base = {
    question: state.question,
    pattern: questionPattern(state.question),
    columns: tableSchema(state.tables),
    verified: [verified],
    episodes: 1,
  };
  if (isFailure(verified)) {
    const wrong =
      verified === "missed-gold"
        ? [`the answer ${JSON.stringify(final)} did not match the known answer`]
        : [];
    return {
      ...base,
      plan: [],
      lessons: [],
      pitfalls: unique([
        ...wrong,
        ...state.reflections.map((r) => r.diagnosis),
        ...rejected,
        ...failures,
      ]),
      answer: "",
    };
  }
  const columns = columnsUsed(state);
  const lessons = [
    ...state.reflections.flatMap((r) => r.improvement),
    ...(columns.length > 0 ? [`the answer came from the columns ${columns.join(", ")}`] : []),
    ...(state.verdict ? [`the answer is ${ANSWER_KIND[state.verdict.expectedType]}`] : []),
  ];
  return {
    ...base,
    plan: state.plan,
    lessons: unique(lessons),
    pitfalls: unique([...state.reflections.map((r) => r.diagnosis), ...rejected, ...failures]),
    answer: final,
  };
}

/** Lessons and pitfalls, as an archiver model writes them. */
export interface Notes {
  lessons: string[];
  pitfalls: string[];
}

/** A summary with a model's notes first and the run's own after them. */
export function withNotes(summary: EpisodeSummary, notes: Notes): EpisodeSummary {
  return {
    ...summary,
    lessons: unique([...notes.lessons, ...summary.lessons]),
    pitfalls: unique([...notes.pitfalls, ...summary.pitfalls]),
  };
}

export const RUNS_KEPT = 32;

/**
 * Evolves an entry with a newer episode: its plan (and the columns that plan worked on)
 * replaces the old one, notes and verifications accumulate.
 */
export function mergeEpisode(existing: Episode, incoming: EpisodeSummary, run?: string): Episode {
  const planned = incoming.plan.length > 0;
  return {
    ...existing,
    ...(run ? { runs: [...(existing.runs ?? []), run].slice(-RUNS_KEPT) } : {}),
    plan: planned ? incoming.plan : existing.plan,
    columns: planned ? incoming.columns : existing.columns,
    verified: [...new Set([...existing.verified, ...incoming.verified])],
    lessons: unique([...incoming.lessons, ...existing.lessons]),
    pitfalls: unique([...incoming.pitfalls, ...existing.pitfalls]),
    answer: incoming.answer || existing.answer,
    episodes: existing.episodes + incoming.episodes,
    // Private only while every episode merged in was: the least strict mode of them.
    privacy:
      existing.privacy && incoming.privacy
        ? existing.privacy === "values" || incoming.privacy === "values"
          ? "values"
          : "schema"
        : undefined,
  };
}

export interface Neighbour {
  key: string;
  similarity: number;
}

/**
 * MAPLE's archiving rule: a new entry is added only when few stored ones (at most `few`)
 * lie within the similarity threshold; otherwise the nearest one evolves instead.
 */
export function addOrMerge(
  neighbours: Neighbour[],
  threshold: number,
  few = 0,
): { action: "add" } | { action: "merge"; key: string } {
  const near = neighbours.filter((n) => n.similarity >= threshold);
  if (near.length <= few) return { action: "add" };
  const nearest = near.reduce((best, n) => (n.similarity > best.similarity ? n : best));
  return { action: "merge", key: nearest.key };
}

/** A recalled entry as the blackboard holds it. */
export function toMemory(
  key: string,
  namespace: string[],
  episode: Episode,
  similarity: number,
): Memory {
  return {
    key,
    namespace,
    question: episode.question,
    pattern: episode.pattern,
    plan: episode.plan,
    lessons: episode.lessons,
    pitfalls: episode.pitfalls,
    episodes: episode.episodes,
    similarity,
  };
}

/** Where every memory namespace lives in the store. */
export const MEMORY_ROOT = ["tableminds", "memories"];

/**
 * The store namespace of one memory (a user's or a dataset's). The store keeps no "." or ":" in
 * a label: they are written `~d` and `~c`, and `~` itself `~~`, so that no two names share one
 * ("ann.lee" and "ann_lee" stay apart).
 */
export function memoryNamespace(name: string): string[] {
  const escaped = name.replace(/[~.:]/g, (c) => (c === "~" ? "~~" : c === "." ? "~d" : "~c"));
  return [...MEMORY_ROOT, escaped];
}

/**
 * The start of an authenticated user's memory names on a server: the user id, its "/" written
 * `~s` (and `~` as `~~`), then "/": one user's names never start another's ("ann/x" is not
 * under "ann").
 */
export function userMemoryPrefix(user: string): string {
  return `${user.replace(/[~/]/g, (c) => (c === "~" ? "~~" : "~s"))}/`;
}
