import { z } from "zod";
import { RawLabelSchema } from "./label.js";

/** A list, or one value (sent by clients scoring a single sample) taken as a list of one. */
const listOf = <T extends z.ZodType>(item: T) =>
  z.union([z.array(item), item.transform((value) => [value])]);

/**
 * OpenRLHF's remote reward request: `query` is prompt + response as the trainer decoded it,
 * `prompts` the prompts, `labels` one label per sample. Lists must have equal lengths.
 */
export const RewardRequestSchema = z.object({
  query: listOf(z.string()),
  prompts: listOf(z.string()).optional(),
  labels: listOf(RawLabelSchema),
});
export type RewardRequest = z.output<typeof RewardRequestSchema>;

/**
 * The reply: `rewards` for training, `scores` the same values, `extra_logs` the parts, and,
 * only when some sample was refused for its tables, `errors`: per sample, why, or null.
 */
export interface RewardResponse {
  rewards: number[];
  scores: number[];
  extra_logs: Record<string, number[]>;
  errors?: (string | null)[];
}

/** What to do with a query that does not start with its prompt. */
export type PrefixMismatch = "reject" | "whole";

/**
 * The response of sample `index`: the query after its prompt. Without prompts the whole query
 * is the response. A query not starting with its prompt is rejected, or taken whole.
 */
export function responseOf(
  query: string,
  prompt: string | undefined,
  index: number,
  mismatch: PrefixMismatch,
): string {
  if (prompt === undefined) return query;
  if (query.startsWith(prompt)) return query.slice(prompt.length);
  if (mismatch === "whole") return query;
  throw new Error(`query[${index}] does not start with prompts[${index}]`);
}

/** Equal lengths, or a one-line reason. */
export function lengthMismatch(request: RewardRequest): string | null {
  const n = request.query.length;
  if (request.labels.length !== n) {
    return `labels has ${request.labels.length} items but query has ${n}`;
  }
  if (request.prompts && request.prompts.length !== n) {
    return `prompts has ${request.prompts.length} items but query has ${n}`;
  }
  return null;
}
