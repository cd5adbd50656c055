import { statSync } from "node:fs";
import type { TableRef } from "../blackboard/schemas.js";
import { resolveModel } from "../models/config.js";
import type { Configuration } from "../settings/configuration.js";
import { modelsOf } from "./llm.js";

/*
 * What the coder writes: pandas, or (for a model too small to write Python) a query over the
 * table's own columns that compiles to pandas (models/query). With a query, the query is the plan:
 * the planner leaves the steps to it.
 */

/** Local model files smaller than this write queries when the dialect is `auto`. */
export const QUERY_DIALECT_MAX_BYTES = 500_000_000;

/** What the coder writes for this run: pandas, or a query compiled to pandas. */
export function coderDialect(
  config: Pick<Configuration, "coderDialect"> & Parameters<typeof modelsOf>[0],
  tables: readonly TableRef[],
): "python" | "query" {
  if (config.coderDialect !== "auto") return config.coderDialect;
  if (dataTables(tables).length !== 1) return "python";
  let local: ReturnType<typeof resolveModel>["local"];
  try {
    local = resolveModel("coder", modelsOf(config)).local;
  } catch {
    return "python"; // the call itself reports a model that cannot be resolved
  }
  if (!local) return "python";
  try {
    return statSync(local.path).size < QUERY_DIALECT_MAX_BYTES ? "query" : "python";
  } catch {
    return "python";
  }
}

/** The tables the user gave, without the totals tables the reader set beside them. */
export function dataTables<T extends Pick<TableRef, "name" | "reading">>(
  tables: readonly T[],
): T[] {
  const totals = new Set(tables.flatMap((t) => t.reading?.totals?.table ?? []));
  return tables.filter((t) => !totals.has(t.name));
}

/** The plan in the query dialect, until the coder's query gives its steps. */
export const QUERY_PLAN = "Write one query over the table's columns (the query dialect).";
