import { z } from "zod";
import type { EvalExample } from "../types.js";
import { DatasetFormatError, entryLines, readJsonFile, zodProblem } from "./format.js";

const AnswerSchema = z.union([z.number(), z.string()]);

/** One record of upstream's dataset/test.json; the fields not listed here are not read. */
const RecordSchema = z.object({
  id: z.string().min(1),
  pre_text: z.array(z.string()),
  post_text: z.array(z.string()),
  table: z.array(z.array(z.string())).min(1),
  qa: z
    .object({
      question: z.string().min(1),
      exe_ans: AnswerSchema.optional(),
      answer: AnswerSchema.optional(),
    })
    .refine((qa) => qa.exe_ans !== undefined || qa.answer !== undefined, {
      message: "neither exe_ans nor answer (private_test.json has no answers to score against)",
    }),
});

/** Header cells made usable as column names: empty or repeated ones get a name or a suffix. */
function uniqueColumns(header: string[]): string[] {
  const seen = new Map<string, number>();
  return header.map((cell, i) => {
    const name = cell.trim() || `column ${i + 1}`;
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return n === 1 ? name : `${name} (${n})`;
  });
}

export function finqaQuestion(question: string, preText: string[], postText: string[]): string {
  const before = preText.join(" ").trim();
  const after = postText.join(" ").trim();
  return [
    question,
    "",
    "The table comes from a page of a financial report.",
    ...(before ? [`Text before the table: ${before}`] : []),
    ...(after ? [`Text after the table: ${after}`] : []),
  ].join("\n");
}

/**
 * FinQA's test.json: a report page's text before and after a table, the table as rows, and a
 * question whose gold answer is the result of its annotated program (`exe_ans`, else the
 * `answer` text). The table's first row is its header (FinQA has no header flag, and some
 * tables start with data); short rows are padded. The text goes into the question.
 */
export async function loadFinQA(file: string): Promise<EvalExample[]> {
  const { text, json } = await readJsonFile(file);
  if (!Array.isArray(json)) throw new DatasetFormatError(file, 1, "expected an array of records");
  if (json.length === 0) throw new DatasetFormatError(file, 1, "no questions in the file");
  const lineOf = entryLines(text);
  const seen = new Set<string>();
  return json.map((raw, index) => {
    const line = lineOf(index);
    const parsed = RecordSchema.safeParse(raw);
    if (!parsed.success) {
      throw new DatasetFormatError(file, line, `record ${index}: ${zodProblem(parsed.error)}`);
    }
    const record = parsed.data;
    if (seen.has(record.id))
      throw new DatasetFormatError(file, line, `id ${record.id} appears twice`);
    seen.add(record.id);
    const [header = [], ...rows] = record.table;
    const width = Math.max(header.length, ...rows.map((row) => row.length));
    const pad = (row: string[]) => [...row, ...Array<string>(width - row.length).fill("")];
    return {
      id: record.id,
      dataset: "finqa",
      question: finqaQuestion(record.qa.question, record.pre_text, record.post_text),
      tables: [{ name: "table", columns: uniqueColumns(pad(header)), data: rows.map(pad) }],
      gold: String(record.qa.exe_ans ?? record.qa.answer),
    };
  });
}
