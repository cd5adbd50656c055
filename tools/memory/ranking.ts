import { BaseStore } from "@langchain/langgraph";
import { type Embedder, offlineEmbed } from "./embeddings.js";
import { type Episode, EpisodeSchema, episodeVector } from "./episodes.js";
import { cosine, SqliteStore } from "./sqlite-store.js";

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
  /** The entry's vector under the current embedder. */
  vector: ArrayLike<number>;
}

/** What ranking needs of each entry; the rest is read only for the best ones. */
const RANKED_FIELDS = ["embedding", "embedder", "pattern"];

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
 * The `limit` stored episodes of a namespace most similar to `query`, best first. The
 * similarity is computed here rather than by the store, so any LangGraph store works (the
 * dev server's too, with or without an index). An entry made by another embedder is
 * embedded again from its pattern when the embedding is the offline one, and skipped
 * otherwise: vectors of different embedders are never compared.
 */
export async function nearestEpisodes(
  store: BaseStore,
  namespace: string[],
  embedder: Embedder,
  query: ArrayLike<number>,
  limit = 10,
): Promise<Scored[]> {
  const ranked = (await candidates(store, namespace))
    .flatMap((candidate) => {
      const vector = storedVector(candidate.fields, embedder);
      return vector ? [{ candidate, vector, similarity: cosine(query, vector) }] : [];
    })
    .sort((a, b) => b.similarity - a.similarity);
  // Only the best are read and validated in full.
  const out: Scored[] = [];
  for (const { candidate, vector, similarity } of ranked) {
    if (out.length >= limit) break;
    const value = candidate.value ?? (await unwrap(store).get(namespace, candidate.key))?.value;
    const parsed = EpisodeSchema.safeParse(value);
    if (parsed.success) out.push({ key: candidate.key, episode: parsed.data, similarity, vector });
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
