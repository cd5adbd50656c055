/**
 * The cell index of a large table, computed by the sandbox from the DataFrame it loads for the
 * table's code: one pandas parse serves the sandbox and the index, and the worker keeps the
 * frame for the run that follows (its pool sends that run where the table is loaded). Node
 * then never holds the table: no DuckDB copy of it, no second parse. The sandbox side is
 * sandbox/frame-indexer.ts.
 */
import type { z } from "zod";
import type { TableRef } from "../blackboard/schemas.js";
import { TableIndexSchema } from "./cell-index.js";

export const FrameIndexSchema = TableIndexSchema.omit({ firstRows: true });
/** A table's index as the sandbox computes it: everything but the first rows. */
export type FrameIndex = z.infer<typeof FrameIndexSchema>;

/** Indexes a stored table from the DataFrame the sandbox loads, or says why it could not. */
export interface FrameIndexer {
  index(table: TableRef): Promise<{ index: FrameIndex } | { problem: string }>;
}
