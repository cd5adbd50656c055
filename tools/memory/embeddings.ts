import { createHash } from "node:crypto";
import { Embeddings } from "@langchain/core/embeddings";
import { OpenAIEmbeddings } from "@langchain/openai";
import { resolveModel } from "../models/config.js";

export const OFFLINE_DIMS = 256;

/** Numbers and quoted values say little about what kind of question it is: mask them. */
export function maskValues(text: string): string {
  return text
    .toLowerCase()
    .replace(/"[^"]*"|'[^']*'|“[^”]*”/g, " <value> ")
    .replace(/[-+]?\d[\d,]*(?:\.\d+)?%?/g, " <num> ");
}

function bucket(feature: string): { index: number; sign: number } {
  const digest = createHash("md5").update(feature).digest();
  return { index: digest.readUInt32LE(0) % OFFLINE_DIMS, sign: (digest[4] ?? 0) & 1 ? 1 : -1 };
}

/**
 * A deterministic embedding that needs no server: word unigrams and bigrams and character
 * trigrams of the masked text, hashed into a fixed number of signed buckets, L2-normalized.
 * Questions of the same shape about different values land close together.
 */
export function offlineEmbed(text: string): number[] {
  const vector = new Array<number>(OFFLINE_DIMS).fill(0);
  const words = maskValues(text).match(/<value>|<num>|[\p{L}\p{N}]+/gu) ?? [];
  const features: [string, number][] = [];
  words.forEach((word, i) => {
    features.push([`w:${word}`, 1]);
    if (i > 0) features.push([`b:${words[i - 1]} ${word}`, 1]);
    if (!word.startsWith("<")) {
      const padded = `#${word}#`;
      for (let j = 0; j + 3 <= padded.length; j++)
        features.push([`c:${padded.slice(j, j + 3)}`, 0.3]);
    }
  });
  for (const [feature, weight] of features) {
    const { index, sign } = bucket(feature);
    vector[index] = (vector[index] ?? 0) + sign * weight;
  }
  const norm = Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));
  return norm > 0 ? vector.map((v) => v / norm) : vector;
}

export class OfflineEmbeddings extends Embeddings {
  readonly id = `offline-hash-v1:${OFFLINE_DIMS}`;

  constructor() {
    super({});
  }

  async embedDocuments(documents: string[]): Promise<number[][]> {
    return documents.map(offlineEmbed);
  }

  async embedQuery(document: string): Promise<number[]> {
    return offlineEmbed(document);
  }
}

/** An embedder and the id stored beside its vectors, so vectors of different embedders never mix. */
export interface Embedder {
  id: string;
  embeddings: Embeddings;
}

/**
 * The configured embedder: the endpoint's `model` (OPENAI_BASE_URL / OPENAI_API_KEY, as for
 * chat) when one is named, else the offline embedding.
 */
export function createEmbedder(model: string | undefined, timeoutMs = 30_000): Embedder {
  if (!model) return { id: new OfflineEmbeddings().id, embeddings: new OfflineEmbeddings() };
  const endpoint = resolveModel("archiver", { model });
  return {
    id: `openai:${model}`,
    embeddings: new OpenAIEmbeddings({
      model,
      apiKey: endpoint.apiKey,
      timeout: timeoutMs,
      maxRetries: 2,
      configuration: endpoint.baseUrl ? { baseURL: endpoint.baseUrl } : undefined,
    }),
  };
}
