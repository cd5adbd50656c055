import { createHash } from "node:crypto";
import type { CodeResult } from "../blackboard/schemas.js";
import { BoundedCache } from "../storage/bounded-cache.js";

/*
 * Derivations and lineages traced before, by the code and the tables it ran on: a table_qa
 * attempt that writes the same code again, mom's plans and mcts's rollouts that reach the same
 * code. Tracing re-runs the code many times on perturbed copies of its tables (lineage.py); for
 * the same code on the same tables, with the same result, it finds the same thing. The sandbox
 * still runs the code once and hands the entry over with the request; the interpreter takes it
 * only when the run's result has the key the entry was made for (runner.py's `known`). Only a
 * tracing that finished is kept: one cut short by its time budget is tried again next time.
 */

export interface KnownTrace {
  /** lineage.py's result_key of the result it was traced for. */
  key: string;
  derived: CodeResult["derived"];
  derivation: string;
  lineage: CodeResult["lineage"];
}

export interface TracedRun {
  code: string;
  tables: readonly { name: string; sha256: string; dates?: readonly string[] }[];
}

const MAX_ENTRIES = 512;

export class TraceCache {
  private readonly entries = new BoundedCache<KnownTrace>(MAX_ENTRIES);
  private reusedRuns = 0;

  /** What identifies a run for its trace: its code, and its tables by name, content and dates. */
  static keyOf(run: TracedRun): string {
    const tables = run.tables.map((t) => [t.name, t.sha256, t.dates ?? []]);
    return createHash("sha256")
      .update(JSON.stringify([run.code, tables]))
      .digest("hex");
  }

  /** Runs whose result was the one the trace handed to them was made for. */
  get reused(): number {
    return this.reusedRuns;
  }

  /** The trace kept for the run of key `run` (keyOf), if any. */
  known(run: string): KnownTrace | undefined {
    return this.entries.get(run);
  }

  /**
   * After the run of key `run`, handed `known`: counted when it took that trace, and its own
   * trace kept when its tracing finished (`trace.complete`; a trace taken is not complete).
   */
  settle(
    run: string,
    known: KnownTrace | undefined,
    trace: { key: string; complete: boolean } | undefined,
    result: CodeResult | null,
  ): void {
    if (known && trace?.key === known.key) this.reusedRuns += 1;
    if (!trace?.complete || !result) return;
    const { derived, derivation, lineage } = result;
    this.entries.set(run, { key: trace.key, derived, derivation, lineage });
  }
}
