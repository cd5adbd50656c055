import { createHash } from "node:crypto";
import type { CodeResult } from "../blackboard/schemas.js";

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
  private readonly entries = new Map<string, KnownTrace>();
  hits = 0;

  constructor(private readonly maxEntries = MAX_ENTRIES) {}

  /** What identifies a run for its trace: its code, and its tables by name, content and dates. */
  static keyOf(run: TracedRun): string {
    const tables = run.tables.map((t) => [t.name, t.sha256, t.dates ?? []]);
    return createHash("sha256")
      .update(JSON.stringify([run.code, tables]))
      .digest("hex");
  }

  get(run: TracedRun): KnownTrace | undefined {
    const key = TraceCache.keyOf(run);
    const entry = this.entries.get(key);
    if (entry) {
      // The most recently used is kept longest.
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  /** Keeps the trace of `result` when its tracing finished (`trace.complete`). */
  remember(
    run: TracedRun,
    trace: { key: string; complete: boolean } | undefined,
    result: CodeResult | null,
  ): void {
    if (!trace?.complete || !result) return;
    const key = TraceCache.keyOf(run);
    this.entries.delete(key);
    this.entries.set(key, {
      key: trace.key,
      derived: result.derived,
      derivation: result.derivation,
      lineage: result.lineage,
    });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(oldest);
    }
  }

  /** Counts a run whose result was the one `known` was traced for (it was not traced again). */
  count(known: KnownTrace | undefined, trace: { key: string } | undefined): void {
    if (known && trace?.key === known.key) this.hits += 1;
  }
}
