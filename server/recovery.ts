import { Command } from "@langchain/langgraph";
import type { RunnableGraph } from "../graphs/registry.js";
import { LeaseLostError, type Leases } from "./leases.js";
import type { Ledger, RunRecord, RunStatus } from "./ledger.js";

/*
 * Runs a dead replica left behind. A replica renews its thread's lease (server/leases.ts) for as
 * long as it runs the thread; when it dies, the lease expires. A run still marked `running`
 * whose thread's lease can be claimed is therefore an orphan: this replica claims the lease,
 * reads the run again (it may have just ended), and goes on from the thread's last checkpoint,
 * with the settings the run was started with, under the new token. Orphans are taken up several
 * at a time.
 */

/** The id of a checkpoint (a tuple or a state snapshot); null for none. */
export function checkpointIdOf(saved: unknown): string | null {
  const id = (saved as { config?: { configurable?: { checkpoint_id?: unknown } } } | undefined)
    ?.config?.configurable?.checkpoint_id;
  return typeof id === "string" ? id : null;
}

/** How a run that stopped ended: paused for review, done, or stopped short (an error). */
export async function finishedAs(graph: RunnableGraph, threadId: string): Promise<RunStatus> {
  const state = await graph.getState({ configurable: { thread_id: threadId } });
  const tasks = (state.tasks ?? []) as unknown as readonly { interrupts?: unknown[] }[];
  if (tasks.some((task) => (task.interrupts ?? []).length > 0)) return "interrupted";
  return state.next.length === 0 && tasks.length === 0 ? "success" : "error";
}

export interface RecoveryOptions {
  leases: Leases;
  ledger: Ledger;
  graphs: Record<string, RunnableGraph>;
  replica: string;
  everyMs: number;
  /** Orphans taken up at once (default 4). */
  parallel?: number;
  /** Whether a run is streaming on this replica now. */
  inHand(runId: string): boolean;
}

/** Goes on with one orphaned run, to its end (or its next pause); false when it was not one. */
export async function recoverRun(run: RunRecord, options: RecoveryOptions): Promise<boolean> {
  if (options.inHand(run.run_id)) return false;
  const lease = await options.leases.claim(run.thread_id, run.run_id);
  if (!lease) return false;
  const { fence } = lease;
  try {
    const current = await options.ledger.run(run.run_id);
    if (current?.status !== "running") return false;
    const graph = options.graphs[run.assistant_id];
    if (!graph) {
      await options.ledger.endRun(run.run_id, fence, "error", `no graph ${run.assistant_id} here`);
      return true;
    }
    await options.ledger.adoptRun(run.run_id, options.replica, fence);
    const configurable = (run.kwargs.config as { configurable?: Record<string, unknown> } | null)
      ?.configurable;
    const config = {
      configurable: { ...configurable, thread_id: run.thread_id, run_id: run.run_id },
      ...(run.kwargs.context ? { context: run.kwargs.context } : {}),
    };
    const before = await graph.getState({ configurable: { thread_id: run.thread_id } });
    // A checkpoint after the run's base: its input landed, and it goes on from the last one
    // (finished steps are not run again). None: it is started again as it was asked.
    const landed =
      checkpointIdOf(before) !== null && checkpointIdOf(before) !== (run.kwargs.base ?? null);
    const input = landed
      ? null
      : run.kwargs.command
        ? new Command(run.kwargs.command as ConstructorParameters<typeof Command>[0])
        : run.kwargs.input;
    try {
      for await (const _ of await graph.stream(input as Record<string, unknown> | null, {
        ...config,
        streamMode: "values",
      }));
      const status = await finishedAs(graph, run.thread_id);
      await options.ledger.endRun(
        run.run_id,
        fence,
        status,
        status === "error" ? "stopped before its end when taken over" : undefined,
      );
    } catch (error) {
      // Taken over again: the new owner records how it ends.
      if (error instanceof LeaseLostError || lease.signal.aborted) return true;
      await options.ledger.endRun(run.run_id, fence, "error", (error as Error).message);
    }
    return true;
  } finally {
    await lease.release();
  }
}

/** Looks for orphaned runs every `everyMs` (one pass at a time) until stopped. */
export function startRecovery(options: RecoveryOptions): { stop(): Promise<void> } {
  let stopped = false;
  let pass: Promise<void> = Promise.resolve();
  const sweep = async () => {
    const queue = await options.ledger.running();
    const one = async (): Promise<void> => {
      for (let run = queue.shift(); run && !stopped; run = queue.shift()) {
        const id = run.run_id;
        await recoverRun(run, options).catch((error: Error) => {
          process.emitWarning(`recovery of run ${id}: ${error.message}`, "TablemindsWarning");
        });
      }
    };
    await Promise.all(Array.from({ length: options.parallel ?? 4 }, one));
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
