import { existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { EvalExample } from "../types.js";
import {
  DatasetFormatError,
  entryLines,
  readCitedTable,
  readJsonFile,
  zodProblem,
} from "./format.js";

/** The statements file papers report TabFact's test accuracy on (12,779 statements). */
export const TABFACT_TEST_FILE = "test_examples.json";

/** table id -> [statements, labels (1 entailed, 0 refuted), caption], as upstream ships it. */
const EntrySchema = z
  .tuple([z.array(z.string().min(1)), z.array(z.union([z.literal(0), z.literal(1)])), z.string()])
  .refine(([statements, labels]) => statements.length === labels.length, {
    message: "as many labels as statements expected",
  });
const TableIdSchema = z.string().regex(/^[\w.-]+\.csv$/, "a table id is a file name ending .csv");

/** TabFact's tables: `#`-separated, the first non-blank line the header. */
export function parseTabFactCsv(
  text: string,
  file = "table",
): { columns: string[]; data: string[][] } {
  let columns: string[] | undefined;
  const data: string[][] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    const cells = line.split("#");
    if (!columns) columns = cells;
    else if (cells.length !== columns.length) {
      throw new DatasetFormatError(
        file,
        i + 1,
        `${cells.length} cells for ${columns.length} columns`,
      );
    } else data.push(cells);
  });
  if (!columns) throw new DatasetFormatError(file, null, "the table is empty");
  return { columns, data };
}

export function tabfactQuestion(statement: string, caption: string): string {
  return `Is this statement about the table "${caption}" entailed by the table? Statement: ${statement}. Answer yes or no.`;
}

/**
 * TabFact from the root of its repository layout: `tokenized_data/test_examples.json` (or
 * another `*_examples.json` there) and the tables in `data/all_csv/`. Each statement becomes
 * a yes/no question whose id is `<table id>#<index>` and whose gold is its label, "1" or "0".
 */
export async function loadTabFact(
  root: string,
  statementsFile = TABFACT_TEST_FILE,
): Promise<EvalExample[]> {
  const file = path.join(root, "tokenized_data", statementsFile);
  if (!existsSync(file)) {
    throw new Error(`${file}: no such file; is ${root} a Table-Fact-Checking checkout?`);
  }
  const { text, json } = await readJsonFile(file);
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw new DatasetFormatError(
      file,
      1,
      "expected an object of table id -> [statements, labels, caption]",
    );
  }
  const lineOf = entryLines(text);
  const examples: EvalExample[] = [];
  for (const [index, [tableId, entry]] of Object.entries(json).entries()) {
    const line = lineOf(index);
    const id = TableIdSchema.safeParse(tableId);
    if (!id.success)
      throw new DatasetFormatError(file, line, `${tableId}: ${zodProblem(id.error)}`);
    const parsed = EntrySchema.safeParse(entry);
    if (!parsed.success) {
      throw new DatasetFormatError(file, line, `${tableId}: ${zodProblem(parsed.error)}`);
    }
    const [statements, labels, caption] = parsed.data;
    const table = await readTabFactTable(
      path.join(root, "data", "all_csv", tableId),
      `${file}:${line}`,
    );
    statements.forEach((statement, i) => {
      examples.push({
        id: `${tableId}#${i}`,
        dataset: "tabfact",
        question: tabfactQuestion(statement, caption),
        tables: [table],
        gold: String(labels[i]),
      });
    });
  }
  if (examples.length === 0) throw new DatasetFormatError(file, null, "no statements in the file");
  return examples;
}

async function readTabFactTable(
  file: string,
  citedAt: string,
): Promise<EvalExample["tables"][number]> {
  return { name: "table", ...parseTabFactCsv(await readCitedTable(file, citedAt), file) };
}
