/**
 * The process a `tableminds consume` runs its jobs in (a BullMQ sandboxed processor): the
 * consumer's own event loop only holds the jobs' locks, and the graphs, tables and scoring run
 * here, one job at a time. Both kinds of job: an evaluation's question and a mined one.
 */
import { type SandboxedJob, UnrecoverableError, WaitingError } from "bullmq";
import type { z } from "zod";
import { failureReason, type JobWarning, QuestionJobSchema } from "../evals/queue/payload.js";
import { type GraphSource, runEvalJob } from "../evals/queue/run-job.js";
import { Cancelled } from "../evals/runner.js";
import { setOperatorSettings } from "../settings/operator.js";
import { type KeptResults, keptResults } from "../storage/queue/kept-results.js";
import {
  jobLabel,
  QueueSealError,
  queueKey,
  resultLabel,
  seal,
  unseal,
} from "../storage/queue/seal.js";
import { MineJobSchema, runMineJob } from "../training/mining/queue.js";

// A job names no file here: its tables are inline or in the artifact store, and a local
// model only by its name in the models folder.
setOperatorSettings({ tableRoots: [], tableFiles: [], localModelPaths: false });

let collected: JobWarning[] | undefined;

// Warnings raised by a job go back with its result, so the submitter logs them as a local
// run does (its warnings.log); others are printed.
process.removeAllListeners("warning");
process.on("warning", (warning) => {
  if (collected) collected.push({ name: warning.name, message: warning.message });
  else process.stderr.write(`(consumer) ${warning.name}: ${warning.message}\n`);
});
// The consumer that forked this process holds its job's lock; without it, the work is lost
// anyway (the job goes to another consumer), so stop at once.
process.on("disconnect", () => process.exit(1));

function parsed<T>(schema: z.ZodType<T>, data: unknown, kind: string): T {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => `${i.path.join(".") || "(data)"}: ${i.message}`);
  throw new Error(`the job's data is not ${kind} question: ${issues.join("; ")}`);
}

/** The job's data, when its seal is the queue key's for a job of its kind and id. */
function opened(job: SandboxedJob, key: string): unknown {
  try {
    return unseal(key, jobLabel(job.name, job.id ?? ""), job.data);
  } catch (error) {
    if (!(error instanceof QueueSealError)) throw error;
    // Never retried: no attempt makes a forged job genuine.
    throw new UnrecoverableError(`refused: ${error.message}`);
  }
}

/** The processor: runs the job, or gives it back to the queue when its consumer is told to. */
export function jobProcessor(graphs?: GraphSource, kept: KeptResults = keptResults()) {
  return async (job: SandboxedJob, token?: string, signal?: AbortSignal) => {
    const stop = signal ?? new AbortController().signal;
    const key = queueKey();
    const data = opened(job, key);
    const jobId = job.id ?? "";
    // Computed here before, and never handed over (Redis went away): handed over now.
    const earlier = kept.get(jobId, job.data);
    if (earlier !== undefined) return earlier;
    collected = [];
    try {
      let result: object;
      if (job.name === "eval") {
        result = await runEvalJob(parsed(QuestionJobSchema, data, "an evaluation's"), stop, graphs);
      } else if (job.name === "mine") {
        result = await runMineJob(parsed(MineJobSchema, data, "a mining"), stop, graphs);
      } else {
        throw new Error(
          `unknown kind of job "${job.name}" (this consumer runs eval and mine jobs)`,
        );
      }
      const sealed = seal(key, resultLabel(jobId), { ...result, warnings: collected });
      await kept.put(jobId, job.data, sealed);
      return sealed;
    } catch (error) {
      if (error instanceof Cancelled && stop.aborted) {
        // The consumer is stopping and gives its jobs back: another consumer takes this one.
        await job.moveToWait(token);
        throw new WaitingError();
      }
      // A question left without a record says why, in a reason the submitter reads back.
      const reason = failureReason(error);
      throw reason === undefined ? error : new Error(reason);
    } finally {
      collected = undefined;
    }
  };
}

export default jobProcessor();
