import { readFile } from "node:fs/promises";
import { z } from "zod";
import type { EvalExample } from "../types.js";
import { DatasetFormatError } from "./tablebench.js";

const RecordSchema = z.object({
  id: z.string().min(1),
  pre_text: z.array(z.string()),
  post_text: z.array(z.string()),
  table: z.array(z.array(z.string())).min(1),
  qa: z.object({
    question: z.string(),
    exe_ans: z.union([z.number(), z.string()]).optional(),
    answer: z.union([z.number(), z.string()]).optional(),
  }),
});

/** Repeated header cells (FinQA tables often have empty or equal ones) get a suffix. */
function uniqueColumns(header: string[]): string[] {
  const seen = new Map<string, number>();
  return header.map((cell, i) => {
    const name = cell.trim() || `column ${i + 1}`;
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return n === 1 ? name : `${name} (${n})`;
  });
}

/**
 * FinQA's test.json: a report page's text before and after a table, the table as rows (the
 * first is the header), and a question whose gold answer is the executed program's result
 * (`exe_ans`). The text goes into the question as context.
 */
export async function loadFinQA(file: string): Promise<EvalExample[]> {
  const parsed = z.array(RecordSchema).safeParse(JSON.parse(await readFile(file, "utf8")));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DatasetFormatError(file, 1, `${issue?.path.join(".")}: ${issue?.message}`);
  }
  return parsed.data.map((record) => {
    const [header = [], ...rows] = record.table;
    const context = [...record.pre_text, ...record.post_text].join(" ");
    return {
      id: record.id,
      dataset: "finqa",
      question: `${record.qa.question}\n\nFrom the report around the table: ${context}`,
      tables: [{ name: "table", columns: uniqueColumns(header), data: rows }],
      gold: String(record.qa.exe_ans ?? record.qa.answer ?? ""),
    };
  });
}
