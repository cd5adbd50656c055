import { z } from "zod";
import { ColumnSchema } from "../../blackboard/schemas.js";
import { PRESETS, ROLES } from "../rewards/index.js";

const Sha256Schema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, { error: "must be 64 lowercase hex digits" });

/**
 * A table of the reward server's own artifact store, named by the sha256 of its bytes. `uri` is
 * accepted for the exports' TableRefs but never opened: it must end in `<sha256>.csv` or
 * `<sha256>.parquet` (the store's name for the table), and the server reads its own store's
 * file of that name, once its content is verified against the digest.
 */
const StoredTableSchema = z.object({
  kind: z.literal("stored"),
  name: z.string().min(1),
  sha256: Sha256Schema,
  uri: z.string().optional(),
  id: z.string().optional(),
  rows: z.number().int().nonnegative().optional(),
  columns: z.array(ColumnSchema).optional(),
});

/** Inline data names no file: a `uri` beside it is a mistake worth saying. */
const NoUriSchema = z.never({ error: "an inline table takes no uri" }).optional();

/** A table sent in the label as CSV text; the server writes it into its store. */
const CsvTableSchema = z.object({
  kind: z.literal("csv"),
  name: z.string().min(1),
  csv: z.string().min(1, { error: "is empty" }),
  /** When given, must be the sha256 of the CSV text's UTF-8 bytes. */
  sha256: Sha256Schema.optional(),
  uri: NoUriSchema,
  id: z.string().optional(),
});

const CellSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** A table sent in the label as rows of flat values; the server writes it as CSV. */
const RecordsTableSchema = z.object({
  kind: z.literal("records"),
  name: z.string().min(1),
  records: z.array(z.record(z.string(), CellSchema)).min(1, { error: "is empty" }),
  uri: NoUriSchema,
  id: z.string().optional(),
});

/** Which kind of table an entry is: inline when it carries `csv` or `records`, else stored. */
function withKind(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const kind = "csv" in value ? "csv" : "records" in value ? "records" : "stored";
  return { ...value, kind };
}

export const LabelTableSchema = z.preprocess(
  withKind,
  z.discriminatedUnion("kind", [StoredTableSchema, CsvTableSchema, RecordsTableSchema]),
);
export type LabelTable = z.output<typeof LabelTableSchema>;
export type StoredTable = Extract<LabelTable, { kind: "stored" }>;
export type InlineTable = Exclude<LabelTable, StoredTable>;

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
  /**
   * The question's tables (read by code rewards only): stored tables named by sha256, or inline
   * CSV text or records. A JSON string of them is accepted too, as the exports keep it in
   * extra_info.
   */
  tables: z.preprocess(
    (value) => (typeof value === "string" ? safeJson(value) : value),
    z.array(LabelTableSchema).default([]),
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
