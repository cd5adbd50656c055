import type { RunnableGraph } from "../graphs/registry.js";
import { type Pool, tryThreadLock } from "../tools/postgres.js";
import type { Ledger, RunRecord, RunStatus } from "./ledger.js";

/*
 * Runs a dead replica left behind. A replica holds its thread's lock (a Postgres session lock)
 * for as long as it runs a thread; when it dies, its connections close and Postgres lets the
 * locks go. A run still marked `running` whose lock can be taken is therefore an orphan: this
 * replica takes the lock, reads the run again (it may have just ended), and goes on from the
 * thread's last checkpoint, with the settings the run was started with.
 */

/** How a run that stopped streaming ended: paused for review, or done. */
export async function finishedAs(graph: RunnableGraph, threadId: string): Promise<RunStatus> {
  const state = await graph.getState({ configurable: { thread_id: threadId } });
  const paused = (state.tasks ?? []).some(
    (task) => ((task as { interrupts?: unknown[] }).interrupts ?? []).length > 0,
  );
  return paused ? "interrupted" : "success";
}

export interface RecoveryOptions {
  pool: Pool;
  ledger: Ledger;
  graphs: Record<string, RunnableGraph>;
  replica: string;
  everyMs: number;
  /** Whether a run is streaming on this replica now. */
  inHand(runId: string): boolean;
}

/** Goes on with one orphaned run, to its end (or its next pause); false when it was not one. */
export async function recoverRun(run: RunRecord, options: RecoveryOptions): Promise<boolean> {
  if (options.inHand(run.run_id)) return false;
  const lock = await tryThreadLock(options.pool, run.thread_id);
  if (!lock) return false;
  try {
    const current = await options.ledger.run(run.run_id);
    if (current?.status !== "running") return false;
    const graph = options.graphs[run.assistant_id];
    if (!graph) {
      await options.ledger.endRun(run.run_id, "error", `no graph ${run.assistant_id} here`);
      return true;
    }
    await options.ledger.adoptRun(run.run_id, options.replica);
    const configurable = (run.kwargs.config as { configurable?: Record<string, unknown> } | null)
      ?.configurable;
    const config = {
      configurable: { ...configurable, thread_id: run.thread_id, run_id: run.run_id },
      ...(run.kwargs.context ? { context: run.kwargs.context } : {}),
    };
    const before = await graph.getState({ configurable: { thread_id: run.thread_id } });
    if (!before.next?.length) {
      // Nothing to go on with: the run ended before its last write reached the ledger, or
      // stopped before its first checkpoint.
      const started = Object.keys(before.values ?? {}).length > 0;
      await options.ledger.endRun(
        run.run_id,
        started ? "success" : "error",
        started ? undefined : "its replica stopped before the run's first checkpoint",
      );
      return true;
    }
    try {
      // A null input goes on from the last checkpoint: finished steps are not run again.
      for await (const _ of await graph.stream(null, { ...config, streamMode: "values" }));
      await options.ledger.endRun(run.run_id, await finishedAs(graph, run.thread_id));
    } catch (error) {
      await options.ledger.endRun(run.run_id, "error", (error as Error).message);
    }
    return true;
  } finally {
    await lock.release();
  }
}

/** Looks for orphaned runs every `everyMs` (one pass at a time) until stopped. */
export function startRecovery(options: RecoveryOptions): { stop(): Promise<void> } {
  let stopped = false;
  let pass: Promise<void> = Promise.resolve();
  const sweep = async () => {
    for (const run of await options.ledger.running()) {
      if (stopped) return;
      await recoverRun(run, options).catch((error: Error) => {
        process.emitWarning(`recovery of run ${run.run_id}: ${error.message}`, "TablemindsWarning");
      });
    }
  };
  const timer =
    options.everyMs > 0
      ? setInterval(() => {
          pass = pass.then(sweep).catch(() => {});
        }, options.everyMs)
      : undefined;
  timer?.unref();
  return {
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await pass;
    },
  };
}
