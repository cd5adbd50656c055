import { BaseStore } from "@langchain/langgraph";
import { type Embedder, offlineEmbed } from "./embeddings.js";
import { EPISODE_VERSION, type Episode, EpisodeSchema, episodeVector } from "./episodes.js";
import { cosine, SqliteStore } from "./sqlite-store.js";
import { type SchemaColumn, SchemaColumnSchema, schemaSimilarity } from "./table-schema.js";

/*
 * Ranking stored episodes by similarity to a query, for recall (the nearest k) and for the
 * archiver (how many neighbours lie within the merge threshold).
 */

/** Entries compared per recall at most, except in a SqliteStore (which lists every one cheaply). */
export const SCAN_LIMIT = 50_000;

export interface Scored {
  key: string;
  episode: Episode;
  similarity: number;
  /** How alike the entry's tables are to the run's (schemaSimilarity), when asked. */
  schemaSimilarity?: number;
  /** The entry's vector under the current embedder. */
  vector: ArrayLike<number>;
}

/** Only entries over tables of a similar schema: at least `minSimilarity` to `columns`. */
export interface SchemaFilter {
  columns: readonly SchemaColumn[];
  minSimilarity: number;
}

/** What ranking needs of each entry; the rest is read only for the best ones. */
const RANKED_FIELDS = ["embedding", "embedder", "pattern", "version", "columns"];

const ColumnsSchema = SchemaColumnSchema.array();

/** The entry's schema similarity to the filter's, or null when it is out (or not current). */
function admitted(fields: Record<string, unknown>, schema?: SchemaFilter): number | null {
  // Entries of an older format are never ranked, in any store (see EPISODE_VERSION).
  if (fields.version !== EPISODE_VERSION) return null;
  if (!schema) return 1;
  const columns = ColumnsSchema.safeParse(fields.columns);
  if (!columns.success) return null;
  const similarity = schemaSimilarity(schema.columns, columns.data);
  return similarity >= schema.minSimilarity ? similarity : null;
}

interface Candidate {
  key: string;
  fields: Record<string, unknown>;
  /** The whole value, when the listing already holds it. */
  value?: Record<string, unknown>;
}

/** The store a graph run wraps in its AsyncBatchedStore (which queues single operations). */
function unwrap(store: BaseStore): BaseStore {
  const wrapper = store as BaseStore & { lg_name?: unknown; store?: unknown };
  return wrapper.lg_name === "AsyncBatchedStore" && wrapper.store instanceof BaseStore
    ? wrapper.store
    : store;
}

/** Every entry of exactly `namespace` (the prefix search also lists deeper ones). */
async function candidates(store: BaseStore, namespace: string[]): Promise<Candidate[]> {
  const inner = unwrap(store);
  if (inner instanceof SqliteStore) return inner.fieldsOf(namespace, RANKED_FIELDS);
  const items = await store.search(namespace, { limit: SCAN_LIMIT });
  return items
    .filter((item) => item.namespace.length === namespace.length)
    .map((item) => ({ key: item.key, fields: item.value, value: item.value }));
}

/**
 * The `limit` stored episodes of a namespace most similar to `query`, best first; with
 * `schema`, only those over tables of a similar schema. The similarity is computed here
 * rather than by the store, so any LangGraph store works (the dev server's too, with or
 * without an index). An entry made by another embedder is embedded again from its pattern
 * when the embedding is the offline one, and skipped otherwise: vectors of different
 * embedders are never compared. Entries of an older format are skipped.
 */
export async function nearestEpisodes(
  store: BaseStore,
  namespace: string[],
  embedder: Embedder,
  query: ArrayLike<number>,
  limit = 10,
  schema?: SchemaFilter,
): Promise<Scored[]> {
  const ranked = (await candidates(store, namespace))
    .flatMap((candidate) => {
      const tables = admitted(candidate.fields, schema);
      if (tables === null) return [];
      const vector = storedVector(candidate.fields, embedder);
      return vector ? [{ candidate, vector, tables, similarity: cosine(query, vector) }] : [];
    })
    .sort((a, b) => b.similarity - a.similarity);
  // Only the best are read and validated in full.
  const out: Scored[] = [];
  for (const { candidate, vector, tables, similarity } of ranked) {
    if (out.length >= limit) break;
    const value = candidate.value ?? (await unwrap(store).get(namespace, candidate.key))?.value;
    const parsed = EpisodeSchema.safeParse(value);
    if (parsed.success)
      out.push({
        key: candidate.key,
        episode: parsed.data,
        similarity,
        ...(schema ? { schemaSimilarity: tables } : {}),
        vector,
      });
  }
  return out;
}

function storedVector(
  value: Record<string, unknown>,
  embedder: Embedder,
): ArrayLike<number> | null {
  const { embedding, embedder: madeBy, pattern } = value;
  if (madeBy === embedder.id && (typeof embedding === "string" || Array.isArray(embedding))) {
    try {
      return episodeVector({ embedding: embedding as string | number[] });
    } catch {
      return null;
    }
  }
  return embedder.offline && typeof pattern === "string" ? offlineEmbed(pattern) : null;
}

/**
 * The vector of `text`, or null when the embedding endpoint kept failing: memory is
 * advisory, so a run goes on without it rather than failing (a warning says why).
 */
export async function embedText(embedder: Embedder, text: string): Promise<number[] | null> {
  try {
    return await embedder.embeddings.embedQuery(text);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    process.emitWarning(
      `memory: the embedding ${embedder.id} failed (${why}); going on without memory`,
      "TablemindsWarning",
    );
    return null;
  }
}
