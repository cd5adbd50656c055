import { z } from "zod";
import { TableRefSchema } from "../../blackboard/schemas.js";
import { PRESETS, ROLES } from "../rewards/index.js";

/**
 * What one sample is scored against, written by a training-data export as a JSON string
 * (OpenRLHF's label column, verl's reward_model.ground_truth). Unknown keys are ignored so an
 * export may carry more (split, index, ...). `role` may be left out when the route names it.
 */
export const RewardLabelSchema = z.object({
  role: z.enum(ROLES).optional(),
  reference: z.string(),
  qtype: z.string().optional(),
  qsubtype: z.string().optional(),
  /** TableRef[], or its JSON as the exports keep it in extra_info. */
  tables: z.preprocess(
    (value) => (typeof value === "string" ? safeJson(value) : value),
    z.array(TableRefSchema).default([]),
  ),
  /** Overrides the server's preset for this sample. */
  preset: z.enum(PRESETS).optional(),
  /** The release preset's plan format check. */
  planFormat: z.enum(["strict", "loose"]).optional(),
});
export type RewardLabel = z.output<typeof RewardLabelSchema>;

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A label as sent: the JSON string, or (from clients that do not stringify) the object. */
export const RawLabelSchema = z.union([z.string(), z.record(z.string(), z.unknown())]);
export type RawLabel = z.infer<typeof RawLabelSchema>;

/** Reads one label; throws an Error with a one-line reason when it is malformed. */
export function parseLabel(raw: RawLabel, index: number): RewardLabel {
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new Error(`labels[${index}] is not a JSON object string`);
    }
  }
  const parsed = RewardLabelSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `.${issue.path.join(".")}` : "";
    throw new Error(`labels[${index}]${where}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}
