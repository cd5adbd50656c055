import { z } from "zod";
import { cellEvidence } from "../../../../grounding/evidence.js";
import { retrieve } from "../../../../tables/context-retrieval.js";
import { defineWorker, TaskInput, taskWithInputs } from "../contract.js";

const SHOWN_ROWS = 3;

/**
 * Retrieval without a model: the rows and cells of the tables that match the sub-question's
 * words, numbers and quoted phrases, found through each table's cell index (DuckDB for large
 * tables). Its answer is the best matching rows, each cell cited.
 */
export default defineWorker({
  name: "lookup",
  description:
    "Finds the rows and cells of the tables that match a sub-question's names, numbers and " +
    "quoted phrases (no model call, fast even on millions of rows) and returns the best rows " +
    "as `column=value` pairs, each cell cited. Good for reading one entity's values; not for " +
    "counting, sums or comparisons.",
  input: TaskInput.extend({
    k: z.number().int().min(1).max(20).optional().describe("rows to return (default 3)"),
  }),
  async run({ task, k }, kit) {
    const wanted = k ?? SHOWN_ROWS;
    const question = taskWithInputs(task, kit.inputs);
    const found = await Promise.all(
      kit.tables.map(async (table) => ({
        table,
        retrieval: await retrieve(table, question, { maxRows: wanted }),
      })),
    );
    const rows = found
      .flatMap(({ table, retrieval }) =>
        retrieval.rows.map((row) => ({
          table,
          row,
          hits: retrieval.hits.filter((h) => h.row === row.row),
        })),
      )
      .sort((a, b) => b.row.score - a.row.score)
      .slice(0, wanted);
    const time = new Date().toISOString();
    const evidence = rows.flatMap(({ table, row }) =>
      table.columns.map((column, c) =>
        cellEvidence(
          table.name,
          { row: row.row, value: row.cells[c] ?? "" },
          column.name,
          "lookup",
          time,
        ),
      ),
    );
    const answer = rows
      .map(({ table, row }) =>
        table.columns.map((column, c) => `${column.name}=${row.cells[c] ?? ""}`).join("; "),
      )
      .join(" | ");
    const exact = rows.some(({ hits }) => hits.some((h) => h.match === "exact"));
    return {
      answer: answer || null,
      evidence,
      trajectory: found.map(
        ({ table, retrieval }) =>
          `${table.name}: keywords ${retrieval.keywords.map((kw) => JSON.stringify(kw.text)).join(", ") || "(none)"}; ${retrieval.rows.length} rows matched`,
      ),
      score: rows.length === 0 ? 0 : exact ? 0.8 : 0.5,
    };
  },
});
