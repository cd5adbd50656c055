import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { EvalExample } from "../types.js";
import { DatasetFormatError } from "./tablebench.js";

/** The columns of a WikiTQ TSV, by name from its header line. */
function columns(
  file: string,
  header: string | undefined,
  wanted: string[],
): Record<string, number> {
  const names = (header ?? "").split("\t");
  const at: Record<string, number> = {};
  for (const name of wanted) {
    const index = names.indexOf(name);
    if (index < 0) throw new DatasetFormatError(file, 1, `the header has no "${name}" column`);
    at[name] = index;
  }
  return at;
}

/**
 * WikiTQ from the root of its repository layout: `data/<split>.tsv` (id, utterance, context,
 * targetValue), the tables under `csv/`, and when present `tagged/data/<split>.tagged` for the
 * canonical targets the official evaluator compares with.
 */
export async function loadWikiTQ(
  root: string,
  split = "pristine-unseen-tables",
): Promise<EvalExample[]> {
  const file = path.join(root, "data", `${split}.tsv`);
  if (!existsSync(file))
    throw new Error(`${file}: no such file; is ${root} a WikiTableQuestions checkout?`);
  const lines = (await readFile(file, "utf8")).split("\n");
  const at = columns(file, lines[0], ["id", "utterance", "context", "targetValue"]);
  const canonical = await canonicalTargets(path.join(root, "tagged", "data", `${split}.tagged`));
  const examples = lines.slice(1).flatMap((line, i) => {
    if (!line.trim()) return [];
    const fields = line.split("\t");
    const get = (name: string) => fields[at[name] ?? -1];
    const [id, question, context, target] = [
      get("id"),
      get("utterance"),
      get("context"),
      get("targetValue"),
    ];
    if (!id || question === undefined || !context || target === undefined) {
      throw new DatasetFormatError(
        file,
        i + 2,
        `expected ${lines[0]?.split("\t").length} tab-separated fields`,
      );
    }
    const canon = canonical.get(id);
    return [
      {
        id,
        dataset: "wikitq",
        question,
        tables: [{ path: path.join(root, context), name: "table" }] as EvalExample["tables"],
        gold: target,
        ...(canon ? { goldCanonical: canon } : {}),
      },
    ];
  });
  // The tables are read here, with WikiTQ's own escaping, and given inline.
  const tables = new Map<string, EvalExample["tables"][number]>();
  for (const example of examples) {
    const source = example.tables[0];
    if (!source || !("path" in source)) continue;
    let table = tables.get(source.path);
    if (!table) {
      const { columns, data } = parseWikiTQCsv(await readFile(source.path, "utf8"));
      table = { name: "table", columns, data };
      tables.set(source.path, table);
    }
    example.tables = [table];
  }
  return examples;
}

async function canonicalTargets(file: string): Promise<Map<string, string[]>> {
  const map = new Map<string, string[]>();
  if (!existsSync(file)) return map;
  const lines = (await readFile(file, "utf8")).split("\n");
  const at = columns(file, lines[0], ["id", "targetCanon"]);
  for (const line of lines.slice(1)) {
    if (!line.trim()) continue;
    const fields = line.split("\t");
    const id = fields[at.id ?? -1];
    const canon = fields[at.targetCanon ?? -1];
    if (id && canon !== undefined) map.set(id, canon.split("|"));
  }
  return map;
}

/**
 * WikiTQ's CSV tables quote every field and escape with backslashes (\" and \\), not by
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
  if (field || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  const [columns = [], ...data] = rows;
  return { columns, data };
}
