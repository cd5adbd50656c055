import { readFile } from "node:fs/promises";
import { z } from "zod";
import type { EvalExample } from "../types.js";
import { DatasetFormatError, zodProblem } from "./format.js";

const CellSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** One line of upstream's TableBench_DP.jsonl; `instruction` and other fields are not read. */
const RowSchema = z.object({
  id: z.string().min(1),
  qtype: z.string().min(1),
  qsubtype: z.string().min(1),
  table: z.object({
    columns: z.array(z.string()).min(1),
    data: z.array(z.array(CellSchema)),
  }),
  question: z.string().min(1),
  answer: z.string(),
  chart_type: z.string().nullish(),
});

/**
 * TableBench's JSONL: one question per line, its table inline as {columns, data}.
 *
 * Upstream's test set has one id on two lines (the same question filed under two subtypes);
 * a repeated id gets `#2`, `#3`... so that every question keeps an id of its own.
 */
export async function loadTableBench(file: string): Promise<EvalExample[]> {
  const lines = (await readFile(file, "utf8")).replace(/^\uFEFF/, "").split("\n");
  const examples: EvalExample[] = [];
  const seen = new Map<string, number>();
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      throw new DatasetFormatError(file, i + 1, `not JSON (${(error as Error).message})`);
    }
    const row = RowSchema.safeParse(json);
    if (!row.success) throw new DatasetFormatError(file, i + 1, zodProblem(row.error));
    const r = row.data;
    const width = r.table.columns.length;
    const ragged = r.table.data.findIndex((cells) => cells.length !== width);
    if (ragged >= 0) {
      throw new DatasetFormatError(
        file,
        i + 1,
        `table.data.${ragged} has ${r.table.data[ragged]?.length} cells for ${width} columns`,
      );
    }
    const count = (seen.get(r.id) ?? 0) + 1;
    seen.set(r.id, count);
    examples.push({
      id: count === 1 ? r.id : `${r.id}#${count}`,
      dataset: "tablebench",
      question: r.question,
      tables: [{ name: "table", columns: r.table.columns, data: r.table.data }],
      gold: r.answer,
      category: r.qtype,
      subcategory: r.qsubtype,
      ...(r.chart_type ? { chartType: r.chart_type } : {}),
    });
  });
  if (examples.length === 0) throw new DatasetFormatError(file, null, "no questions in the file");
  return examples;
}
