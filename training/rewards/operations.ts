import { readFileSync } from "node:fs";
import { z } from "zod";
import type { Sandbox } from "../../sandbox/index.js";
import { WorkCache } from "../../storage/bounded-cache.js";

/*
 * The pandas operations of a piece of code, read by Python's own `ast` module (operations.py)
 * run in the sandbox, and the F1 of two such sets. The labels are the 28 of the released
 * Mixture-of-Minds code reward (`extract_operations`), named and assigned as it does
 * (operations.py says which syntax gives each, quirks included):
 *   building       create_dataframe, assign_column_names
 *   cleaning       convert_to_numeric, handle_nulls, change_dtype, replace_values,
 *                  string_cleanup, convert_to_float, convert_to_int, convert_to_str
 *   selecting      select_column, select_columns, select_top_row, select_bottom_row
 *   filtering      filter_row_by_value, filter_row_by_condition, compare_columns
 *   ordering       sort_by_column, groupby
 *   computing      aggregate_sum, aggregate_mean, aggregate_count, compute_correlation,
 *                  compute_difference, add_columns
 *   output         print_result, format_output, assign_answer_text
 * As the release reads code, select_columns and select_bottom_row never occur (a list key and
 * a negative index are not literals to it). Code that does not parse has no operations.
 */
export const OPERATION_LABELS = [
  "create_dataframe",
  "assign_column_names",
  "convert_to_numeric",
  "handle_nulls",
  "change_dtype",
  "replace_values",
  "string_cleanup",
  "convert_to_float",
  "convert_to_int",
  "convert_to_str",
  "select_column",
  "select_columns",
  "select_top_row",
  "select_bottom_row",
  "filter_row_by_value",
  "filter_row_by_condition",
  "compare_columns",
  "sort_by_column",
  "groupby",
  "aggregate_sum",
  "aggregate_mean",
  "aggregate_count",
  "compute_correlation",
  "compute_difference",
  "add_columns",
  "print_result",
  "format_output",
  "assign_answer_text",
] as const;
export type OperationLabel = (typeof OPERATION_LABELS)[number];

const LabelsSchema = z.array(z.enum(OPERATION_LABELS));

let extractor: string | undefined;
const cache = new WorkCache<OperationLabel[]>(2048);

async function extract(code: string, sandbox: Sandbox): Promise<OperationLabel[]> {
  extractor ??= readFileSync(new URL("./operations.py", import.meta.url), "utf8");
  const encoded = Buffer.from(code, "utf8").toString("base64");
  const result = await sandbox.execute({
    code: extractor.replace("CODE_B64", encoded),
    tables: [],
  });
  const last = result.stdout.trim().split("\n").at(-1) ?? "";
  if (!result.ok || !last) {
    throw new Error(`the operation extractor failed: ${result.error?.message ?? "no output"}`);
  }
  return LabelsSchema.parse(JSON.parse(last));
}

/** The sorted operation labels of `code`; cached per code string (failures are not kept). */
export function operationLabels(code: string, sandbox: Sandbox): Promise<OperationLabel[]> {
  return cache.obtain(code, () => extract(code, sandbox));
}

/** F1 of two label sets; 0 when they share nothing (so also when both are empty). */
export function operationF1(predicted: readonly string[], reference: readonly string[]): number {
  const pred = new Set(predicted);
  const ref = new Set(reference);
  const shared = [...pred].filter((label) => ref.has(label)).length;
  if (shared === 0) return 0;
  const precision = shared / pred.size;
  const recall = shared / ref.size;
  return (2 * precision * recall) / (precision + recall);
}
