import { OpenAIEmbeddings } from "@langchain/openai";
import { type Embedder, OFFLINE_ID, OfflineEmbeddings } from "../storage/memory/embeddings.js";
import { resolveModel } from "./config.js";
import { guardedFetch } from "./fetch.js";

/**
 * The configured embedder: the endpoint's `model` (OPENAI_BASE_URL / OPENAI_API_KEY, as for
 * chat) when one is named, else the offline embedding.
 */
export function createEmbedder(model: string | undefined, timeoutMs = 30_000): Embedder {
  if (!model) return { id: OFFLINE_ID, offline: true, embeddings: new OfflineEmbeddings() };
  const endpoint = resolveModel("archiver", { model });
  return {
    id: `openai:${model}`,
    offline: false,
    embeddings: new OpenAIEmbeddings({
      model,
      apiKey: endpoint.apiKey,
      timeout: timeoutMs,
      maxRetries: 2,
      // The guarded fetch writes each request to the audit log, as for chat.
      configuration: {
        ...(endpoint.baseUrl ? { baseURL: endpoint.baseUrl } : {}),
        fetch: guardedFetch(timeoutMs),
      },
    }),
  };
}
