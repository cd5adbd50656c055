import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { tsvUnescape } from "../metrics/wikitq.js";
import type { EvalExample } from "../types.js";
import { DatasetFormatError, readCitedTable } from "./format.js";

/** The split papers report WikiTQ's test accuracy on. */
export const WIKITQ_TEST_SPLIT = "pristine-unseen-tables";

interface TsvFile {
  file: string;
  header: string[];
  /** Each data line's fields with its 1-based line number. */
  rows: { line: number; fields: string[] }[];
}

async function readTsv(file: string, wanted: string[]): Promise<TsvFile> {
  const lines = (await readFile(file, "utf8")).split("\n");
  const header = (lines[0] ?? "").replace(/\r$/, "").split("\t");
  for (const name of wanted) {
    if (!header.includes(name)) {
      throw new DatasetFormatError(
        file,
        1,
        `the header has no "${name}" column (WikiTableQuestions 1.0.2's header is id, utterance, context, targetValue)`,
      );
    }
  }
  const rows = lines.slice(1).flatMap((text, i) => {
    if (!text.trim()) return [];
    const fields = text.replace(/\r$/, "").split("\t");
    if (fields.length !== header.length) {
      throw new DatasetFormatError(
        file,
        i + 2,
        `${fields.length} tab-separated fields where the header has ${header.length}`,
      );
    }
    return [{ line: i + 2, fields }];
  });
  return { file, header, rows };
}

function field(tsv: TsvFile, fields: string[], name: string): string {
  return fields[tsv.header.indexOf(name)] ?? "";
}

/**
 * WikiTQ from the root of its repository (or release) layout: `data/<split>.tsv` (id,
 * utterance, context, targetValue), the tables under `csv/`, and when present
 * `tagged/data/<split>.tagged`, whose canonical targets the official evaluator compares with.
 *
 * `gold` keeps targetValue as written (`|`-separated, TSV escapes intact); the question and
 * the canonical targets are unescaped. Tables are read here, with WikiTQ's own CSV escaping,
 * and given inline; a table shared by several questions is read once.
 */
export async function loadWikiTQ(root: string, split = WIKITQ_TEST_SPLIT): Promise<EvalExample[]> {
  const file = path.join(root, "data", `${split}.tsv`);
  if (!existsSync(file)) {
    throw new Error(`${file}: no such file; is ${root} a WikiTableQuestions checkout or release?`);
  }
  const tsv = await readTsv(file, ["id", "utterance", "context", "targetValue"]);
  const canonical = await canonicalTargets(path.join(root, "tagged", "data", `${split}.tagged`));
  const tables = new Map<string, Promise<EvalExample["tables"][number]>>();
  const seen = new Set<string>();
  const examples: EvalExample[] = [];
  for (const { line, fields } of tsv.rows) {
    const id = field(tsv, fields, "id");
    const context = field(tsv, fields, "context");
    const gold = field(tsv, fields, "targetValue");
    if (!id) throw new DatasetFormatError(file, line, "the id is empty");
    if (seen.has(id)) throw new DatasetFormatError(file, line, `id ${id} appears twice`);
    seen.add(id);
    if (!/^csv\/[^/]+\/[^/]+\.csv$/.test(context)) {
      throw new DatasetFormatError(file, line, `context "${context}" is not a csv/…/….csv path`);
    }
    const canon = canonical.get(id);
    if (canon && canon.length !== gold.split("|").length) {
      throw new DatasetFormatError(
        file,
        line,
        `${gold.split("|").length} targets but ${canon.length} canonical targets in the tagged file`,
      );
    }
    let table = tables.get(context);
    if (!table) {
      table = readWikiTQTable(path.join(root, context), `${file}:${line}`);
      tables.set(context, table);
    }
    examples.push({
      id,
      dataset: "wikitq",
      question: tsvUnescape(field(tsv, fields, "utterance")),
      tables: [await table],
      gold,
      ...(canon ? { goldCanonical: canon } : {}),
    });
  }
  if (examples.length === 0) throw new DatasetFormatError(file, null, "no questions in the file");
  return examples;
}

async function readWikiTQTable(
  file: string,
  citedAt: string,
): Promise<EvalExample["tables"][number]> {
  const text = await readCitedTable(file, citedAt);
  try {
    return { name: "table", ...parseWikiTQCsv(text) };
  } catch (error) {
    throw new DatasetFormatError(file, null, (error as Error).message);
  }
}

/** id -> the unescaped `targetCanon` values of a tagged file, if there is one. */
async function canonicalTargets(file: string): Promise<Map<string, string[]>> {
  const map = new Map<string, string[]>();
  if (!existsSync(file)) return map;
  const tsv = await readTsv(file, ["id", "targetCanon"]);
  for (const { fields } of tsv.rows) {
    map.set(
      field(tsv, fields, "id"),
      field(tsv, fields, "targetCanon").split("|").map(tsvUnescape),
    );
  }
  return map;
}

/**
 * WikiTQ's CSV tables quote every field and escape with backslashes (`\"` and `\\`), not by
 * doubling quotes, and keep raw newlines inside quotes; read them into columns and rows.
 */
export function parseWikiTQCsv(text: string): { columns: string[]; data: string[][] } {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === "\\" && i + 1 < text.length) field += text[++i];
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else if (c !== "\r") field += c;
  }
  if (quoted) throw new Error("a quoted field is not closed before the end of the file");
  if (field || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  const [columns = [], ...data] = rows;
  if (columns.length === 0) throw new Error("the table is empty");
  return { columns, data };
}
