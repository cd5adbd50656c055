import { Readable } from "node:stream";
import { z } from "zod";
import { type TableSource, TableSourceSchema } from "../blackboard/schemas.js";
import { ConfigurationError, callerProblems, configurationOf } from "../nodes/runtime.js";
import {
  type Configuration,
  ConfigurationSchema,
  OPERATOR_FIELDS,
} from "../settings/configuration.js";
import { operatorSettings } from "../settings/operator.js";
import { TableLoadError } from "../tables/errors.js";
import { allowedSource, storeUpload } from "../tables/sources.js";

/*
 * What the MCP tools take, and the input policy they keep before anything runs: the tables a
 * caller names (the graphs' `sources` shapes, a bare path, or CSV text) and the run settings a
 * caller may choose. The graph's own ingest checks the sources again.
 */

const CsvTextSchema = z.object({
  csv: z.string().min(1).describe("the table as CSV text, header line first"),
  name: z.string().min(1).optional().describe("the table's name (default: table)"),
});

/** One table: a file path, inline rows, CSV text, or an upload of the API server. */
export const TableInputSchema = z.union([
  z.string().min(1).describe("a table file (CSV, TSV, JSON, Excel, Parquet)"),
  ...TableSourceSchema.options,
  CsvTextSchema,
]);
export type TableInput = z.infer<typeof TableInputSchema>;

type Key = keyof Configuration;

/** A configuration field as a caller gives it: optional, with no default filled in. */
function givenField(field: z.ZodType): z.ZodType {
  const inner = field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType) : field;
  const description = field.description ?? inner.description;
  return (description ? inner.describe(description) : inner).optional();
}

const CALLER_KEYS = (Object.keys(ConfigurationSchema.shape) as Key[]).filter(
  (key) => !(OPERATOR_FIELDS as readonly string[]).includes(key),
);

type Given<K extends Key> = { [P in K]: z.ZodOptional<z.ZodType<Configuration[P]>> };

function givenFields<K extends Key>(keys: readonly K[]): Given<K> {
  const shape = ConfigurationSchema.shape;
  return Object.fromEntries(keys.map((key) => [key, givenField(shape[key])])) as Given<K>;
}

/**
 * The run settings a caller may choose. Loose, so that a field the caller may not set (the
 * operator's) reaches callerProblems and is refused by name rather than dropped unseen.
 */
export const RunSettingsSchema = z.looseObject(givenFields(CALLER_KEYS));

/** How a table file is read: inspect_table's options (a subset of the run settings). */
export const ReadingSchema = z.object(
  givenFields(["rawTables", "headerRows", "skipRows", "sheet", "locale"] as const),
);

/** An input the policy refuses; the tool answers it as an error, in one line. */
export class InputRefused extends Error {
  override name = "InputRefused";
}

const KNOWN = new Set(Object.keys(ConfigurationSchema.shape));

/**
 * The caller's settings as a run's context: every field checked (operator fields and, when
 * served, local model paths refused; values against the schema), review pauses refused since
 * nobody could answer them here.
 */
export function callerSettings(given: Record<string, unknown> = {}): Partial<Configuration> {
  const unknown = Object.keys(given).filter((key) => !KNOWN.has(key));
  const problems = [
    ...unknown.map((key) => `${key}: not a setting (see docs/configuration.md)`),
    ...callerProblems(given),
  ];
  if (given.review !== undefined && given.review !== "off") {
    problems.push("review: pauses for a person are not served over MCP; leave it off");
  }
  if (problems.length) throw new InputRefused(`invalid run configuration: ${problems.join("; ")}`);
  try {
    configurationOf({ context: given });
  } catch (error) {
    if (error instanceof ConfigurationError) throw new InputRefused(error.message);
    throw error;
  }
  return given as Partial<Configuration>;
}

/**
 * The sources a run reads, each checked against the table roots before any is read. CSV text
 * goes into the artifact store as an upload, so it is read as a file would be.
 */
export async function tableSources(inputs: readonly TableInput[]): Promise<TableSource[]> {
  const sources: TableSource[] = [];
  for (const input of inputs) {
    if (typeof input === "string") sources.push({ path: input });
    else if ("csv" in input) {
      const file = `${input.name ?? "table"}.csv`;
      sources.push(await storeUpload(Readable.from([input.csv]), file));
    } else sources.push(input);
  }
  const policy = operatorSettings();
  for (const source of sources) {
    try {
      allowedSource(source, policy);
    } catch (error) {
      if (!(error instanceof TableLoadError)) throw error;
      // The loader's hint names the API server's upload route; an MCP caller has its own ways.
      const why = error.problem.split(";")[0];
      throw new InputRefused(
        `cannot load table ${error.file}: ${why}; give its rows inline ({columns, data}) or as CSV text ({csv}), or have the operator add its folder (--table-root, TABLEMINDS_TABLE_ROOTS)`,
      );
    }
  }
  return sources;
}
