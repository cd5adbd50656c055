import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { artifactDir, sha256, touchArtifact } from "../artifacts.js";
import type { TableSummary } from "./profile.js";

const ValueSummarySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("no-values") }),
  z.object({ kind: z.literal("range"), low: z.string(), high: z.string() }),
  z.object({ kind: z.literal("unranged") }),
  z.object({ kind: z.literal("booleans"), trueCount: z.number(), falseCount: z.number() }),
  z.object({ kind: z.literal("examples"), distinct: z.number(), examples: z.array(z.string()) }),
]);

const TableSummarySchema = z.object({
  rowCount: z.number().int().nonnegative(),
  columns: z.array(
    z.object({
      name: z.string(),
      dtype: z.string(),
      missing: z.number().int().nonnegative(),
      values: ValueSummarySchema,
    }),
  ),
  firstRows: z.array(z.array(z.string())),
});

/** Bump when a summary of the same table would come out otherwise. */
const SUMMARY_VERSION = 1;

function summaryFile(key: readonly unknown[]): string {
  const name = `${sha256(JSON.stringify([SUMMARY_VERSION, ...key]))}.summary.json`;
  return path.join(artifactDir(), "index", name);
}

/**
 * A summary DuckDB computed before, in any process, for this key (the table's hash and the
 * options); null when there is none or it does not parse.
 */
export async function readSummary(key: readonly unknown[]): Promise<TableSummary | null> {
  const file = summaryFile(key);
  try {
    const parsed = TableSummarySchema.safeParse(JSON.parse(await readFile(file, "utf8")));
    if (!parsed.success) return null;
    await touchArtifact(file);
    return parsed.data;
  } catch {
    return null;
  }
}

/** Keeps a summary for later processes; a failure to write only loses the reuse. */
export async function writeSummary(key: readonly unknown[], summary: TableSummary): Promise<void> {
  const file = summaryFile(key);
  try {
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${randomUUID()}.tmp`;
    await writeFile(tmp, JSON.stringify(summary));
    await rename(tmp, file);
  } catch {}
}
