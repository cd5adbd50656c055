import { readFile } from "node:fs/promises";
import { z } from "zod";
import type { EvalExample } from "../types.js";

const RowSchema = z.object({
  id: z.string().min(1),
  qtype: z.string(),
  qsubtype: z.string(),
  table: z.object({ columns: z.array(z.string()), data: z.array(z.array(z.unknown())) }),
  question: z.string(),
  answer: z.string(),
  chart_type: z.string().nullish(),
});

export class DatasetFormatError extends Error {
  constructor(file: string, line: number, problem: string) {
    super(`${file}:${line}: ${problem}`);
    this.name = "DatasetFormatError";
  }
}

/** TableBench's JSONL (one question per line, its table inline as {columns, data}). */
export async function loadTableBench(file: string): Promise<EvalExample[]> {
  const text = await readFile(file, "utf8");
  const examples: EvalExample[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      throw new DatasetFormatError(file, i + 1, `not JSON (${(error as Error).message})`);
    }
    const row = RowSchema.safeParse(json);
    if (!row.success) {
      const issue = row.error.issues[0];
      throw new DatasetFormatError(
        file,
        i + 1,
        `${issue?.path.join(".") || "row"}: ${issue?.message}`,
      );
    }
    const r = row.data;
    examples.push({
      id: r.id,
      dataset: "tablebench",
      question: r.question,
      tables: [{ name: "table", columns: r.table.columns, data: r.table.data }],
      gold: r.answer,
      category: r.qtype,
      subcategory: r.qsubtype,
      ...(r.chart_type ? { chartType: r.chart_type } : {}),
    });
  });
  return examples;
}
