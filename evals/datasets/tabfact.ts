import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { EvalExample } from "../types.js";
import { DatasetFormatError } from "./tablebench.js";

/** table id -> [statements, labels (1 entailed, 0 refuted), caption], as upstream ships it. */
const ExamplesSchema = z.record(
  z.string(),
  z.tuple([z.array(z.string()), z.array(z.union([z.literal(0), z.literal(1)])), z.string()]),
);

/** TabFact's tables: `#`-separated, the first line the header. */
export function parseTabFactCsv(text: string): { columns: string[]; data: string[][] } {
  const [header = "", ...lines] = text.split(/\r?\n/).filter((line) => line.trim());
  return { columns: header.split("#"), data: lines.map((line) => line.split("#")) };
}

export function tabfactQuestion(statement: string, caption: string): string {
  return `Is this statement about the table "${caption}" entailed by the table? Statement: ${statement}. Answer yes or no.`;
}

/**
 * TabFact from the root of its repository layout: `tokenized_data/test_examples.json` (the
 * test split as most papers score it) and the tables in `data/all_csv/`.
 */
export async function loadTabFact(root: string): Promise<EvalExample[]> {
  const file = path.join(root, "tokenized_data", "test_examples.json");
  if (!existsSync(file))
    throw new Error(`${file}: no such file; is ${root} a Table-Fact-Checking checkout?`);
  const parsed = ExamplesSchema.safeParse(JSON.parse(await readFile(file, "utf8")));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DatasetFormatError(file, 1, `${issue?.path.join(".")}: ${issue?.message}`);
  }
  const examples: EvalExample[] = [];
  for (const [tableId, [statements, labels, caption]] of Object.entries(parsed.data)) {
    if (statements.length !== labels.length) {
      throw new DatasetFormatError(
        file,
        1,
        `${tableId}: ${statements.length} statements but ${labels.length} labels`,
      );
    }
    const table = parseTabFactCsv(
      await readFile(path.join(root, "data", "all_csv", tableId), "utf8"),
    );
    statements.forEach((statement, i) => {
      examples.push({
        id: `${tableId}#${i}`,
        dataset: "tabfact",
        question: tabfactQuestion(statement, caption),
        tables: [{ name: "table", ...table }],
        gold: String(labels[i]),
      });
    });
  }
  return examples;
}
