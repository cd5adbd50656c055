import type { GraphNode } from "@langchain/langgraph";
import { operatorSettings } from "../blackboard/operator.js";
import type { IngestState } from "../blackboard/state.js";
import { loadTables } from "../tools/tables/load.js";
import { allowedSource, assertStoredTable } from "../tools/tables/sources.js";
import type { NodeContext } from "./runtime.js";

/**
 * Turns the run's `sources` (file paths, uploads or inline rows) into table references: one per
 * CSV/TSV/JSON/Parquet file or inline table, one per sheet of a workbook.
 * Tables passed in directly are kept; a run with neither, or with no question, fails here,
 * clearly, before any model is asked anything. A path must be under the operator's table roots
 * and a ready-made table must be in the artifact store (tools/tables/sources.ts).
 */
export const ingest = (async (state) => {
  // A caller of the API server may send no question at all.
  if (!state.question?.trim()) {
    throw new Error("the question is empty: ask something about the table");
  }
  for (const table of state.tables) assertStoredTable(table);
  if (state.sources.length === 0) {
    if (state.tables.length === 0) {
      throw new Error(
        "no tables: give `sources` (file paths or inline {columns, data}) or `tables`",
      );
    }
    return {};
  }
  const policy = operatorSettings();
  // Every source is checked before any is read.
  const allowed = state.sources.map((source) => allowedSource(source, policy));
  const loaded = [];
  for (const source of allowed) loaded.push(...(await loadTables(source)));
  const known = new Set(state.tables.map((t) => t.sha256 + t.name));
  const fresh = loaded.map((l) => l.table).filter((t) => !known.has(t.sha256 + t.name));
  for (const warning of loaded.flatMap((l) => l.warnings)) {
    process.emitWarning(warning, "TablemindsWarning");
  }
  return { tables: [...state.tables, ...fresh] };
}) satisfies GraphNode<typeof IngestState, NodeContext>;
