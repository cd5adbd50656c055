import { createReadStream } from "node:fs";
import type { z } from "zod";
import type { TableSource } from "../../blackboard/schemas.js";
import {
  isModelField,
  OPERATOR_SOURCE,
  splitOperatorFields,
} from "../../settings/configuration.js";
import { JobBatch } from "../../storage/queue/batch.js";
import { jobIdOf, runIdOf, shownUrl } from "../../storage/queue/connection.js";
import {
  jobLabel,
  QueueSealError,
  queueKey,
  resultLabel,
  seal,
  unseal,
} from "../../storage/queue/seal.js";
import { storeUpload } from "../../tables/sources.js";
import {
  type Answerer,
  type AnswererFactory,
  Cancelled,
  NotRun,
  type RunStart,
} from "../runner.js";
import type { EvalExample } from "../types.js";
import { failureOf, type QuestionJob, QuestionJobSchema, type QuestionResult } from "./payload.js";

/*
 * `eval --queue` (and `mine --queue`): the run's questions go to the queue as jobs instead of
 * to a graph here; the runner around them stays the same (results file, resume, progress,
 * endpoint stop). Each question's job id comes from the run's id and the question's id, so a
 * second submission adds only what is not queued yet and collects what finished meanwhile.
 */

export interface QueuedOptions<R extends QuestionResult> {
  /** The queue's Redis URL. */
  url: string;
  /** The jobs' kind, which the consumer runs them by: "eval" or "mine". */
  kind: string;
  /** Reads a consumer's return value. */
  result: z.ZodType<R>;
  /** More of the job's data than an evaluation's question (mining's stage). */
  extra?: Record<string, unknown>;
  /** Checks a job's data before it is queued (default: an evaluation's question). */
  schema?: z.ZodType<unknown>;
  /** Keeps what a result holds besides the record; called before the record is written. */
  keep?: (result: R) => void;
  /** A line for the user: what was found on the queue, what was withdrawn. */
  note?: (line: string) => void;
}

/** The job of one question of the run. */
export function questionJob(example: EvalExample, run: RunStart, runId: string): QuestionJob {
  const { options } = run;
  return {
    run: runId,
    invocation: run.invocation,
    graph: options.graph,
    dataset: QuestionJobSchema.shape.dataset.parse(options.scorer.dataset),
    example,
    context: options.context,
    timeoutMs: options.timeoutMs,
    retries: options.retries,
  };
}

/**
 * The operator's fields and the models are each consumer's own: a run that sets one is refused,
 * not ignored.
 */
function refuseConsumersFields(run: RunStart): void {
  const [field] = Object.keys(splitOperatorFields(run.options.context).operator);
  if (field) {
    const source = OPERATOR_SOURCE[field as keyof typeof OPERATOR_SOURCE];
    throw new Error(
      `with --queue, ${field} is each consumer's own setting: set ${source.split(" or ")[0]} where the consumers run`,
    );
  }
  const model = Object.keys(run.options.context).find(isModelField);
  if (model) {
    throw new Error(
      `with --queue, ${model} is each consumer's own setting: set TABLEMINDS_MODEL (or TABLEMINDS_<ROLE>_MODEL) where the consumers run`,
    );
  }
}

/**
 * The question with its path tables put into the artifact store, so a consumer reads them by
 * digest (from the shared store on another machine) and never opens a path a job names.
 */
export function uploadedTables(): (example: EvalExample) => Promise<EvalExample> {
  const stored = new Map<string, Promise<{ upload: string; name: string }>>();
  const upload = async (table: Extract<TableSource, { path: string }>) => {
    let file = stored.get(table.path);
    if (!file) {
      file = storeUpload(createReadStream(table.path), table.path, Number.POSITIVE_INFINITY);
      stored.set(table.path, file);
    }
    const { upload, name } = await file;
    return {
      upload,
      name: table.name ?? name,
      ...(table.encoding ? { encoding: table.encoding } : {}),
    };
  };
  return async (example) => ({
    ...example,
    tables: await Promise.all(
      example.tables.map((table) => ("path" in table ? upload(table) : table)),
    ),
  });
}

const stops = new WeakMap<AbortSignal, Promise<never>>();

/**
 * Rejects with Cancelled once `stop` aborts. One promise per signal: every question of a run
 * waits on the same signal at once, and a listener each would be hundreds.
 */
function stoppedBy(stop: AbortSignal): Promise<never> {
  let stopped = stops.get(stop);
  if (!stopped) {
    stopped = new Promise<never>((_, reject) => {
      if (stop.aborted) reject(new Cancelled());
      else stop.addEventListener("abort", () => reject(new Cancelled()), { once: true });
    });
    // Awaited only by the questions still waiting when it comes.
    stopped.catch(() => {});
    stops.set(stop, stopped);
  }
  return stopped;
}

/** An answerer that queues the run's questions and waits for the consumers' results. */
export function queuedAnswerer<R extends QuestionResult>(
  options: QueuedOptions<R>,
): AnswererFactory {
  const note = options.note ?? (() => {});
  const schema = options.schema ?? QuestionJobSchema;
  return async (run): Promise<Answerer> => {
    refuseConsumersFields(run);
    const key = queueKey();
    const runId = runIdOf(run.outDir, run.started);
    const ids = new Map(run.todo.map((e) => [e.id, jobIdOf(options.kind, runId, e.id)]));
    const jobOf = (example: EvalExample) => {
      const id = ids.get(example.id);
      if (id === undefined) throw new Error(`${example.id} is not a question of this run`);
      return id;
    };
    const withTables = uploadedTables();
    const specs = await Promise.all(
      run.todo.map(async (example) => {
        const id = jobOf(example);
        const job = { ...questionJob(await withTables(example), run, runId), ...options.extra };
        return {
          id,
          name: options.kind,
          data: seal(key, jobLabel(options.kind, id), schema.parse(job)),
        };
      }),
    );
    let lastError = "";
    const batch = await JobBatch.open(options.url, {
      onError: (error) => {
        // Redis going away shows once, not at every reconnection attempt.
        if (error.message === lastError) return;
        lastError = error.message;
        note(`${options.kind}: the queue at ${shownUrl(options.url)}: ${error.message}`);
      },
    });
    try {
      // A submitter killed between writing a record and releasing its job left the job behind.
      const todo = new Set(run.todo.map((e) => e.id));
      await batch.discard(
        run.options.examples
          .filter((e) => !todo.has(e.id))
          .map((e) => jobIdOf(options.kind, runId, e.id)),
      );
      const found = await batch.submit(specs);
      if (run.todo.length > 0) {
        const earlier = [
          found.pending > 0 ? `${found.pending} queued already` : "",
          found.finished > 0 ? `${found.finished} finished while no one waited` : "",
        ].filter(Boolean);
        note(
          `${options.kind}: ${found.added} questions queued on ${shownUrl(options.url)}${earlier.length ? ` (${earlier.join(", ")})` : ""}; \`tableminds consume\` processes run them`,
        );
      }
    } catch (error) {
      await batch.close();
      throw error;
    }
    return {
      // Every question is in flight: the consumers decide how many run at once.
      width: Math.max(1, run.todo.length),
      async answer(example, stop) {
        const id = jobOf(example);
        const outcome = await Promise.race([batch.outcome(id), stoppedBy(stop)]);
        if (outcome.kind === "failed") {
          await batch.release(id);
          throw failureOf(outcome.reason);
        }
        let value: unknown;
        try {
          value = unseal(key, resultLabel(id), outcome.value);
        } catch (error) {
          if (!(error instanceof QueueSealError)) throw error;
          await batch.release(id);
          throw new NotRun(`on a consumer: its result was refused: ${error.message}`);
        }
        const parsed = options.result.safeParse(value);
        if (!parsed.success) {
          await batch.release(id);
          const [issue] = parsed.error.issues;
          throw new NotRun(
            `on a consumer: its result is not a record (${issue?.path.join(".")}: ${issue?.message})`,
          );
        }
        // The consumer's warnings go where this run's go (the CLI: the run's warnings.log).
        for (const warning of parsed.data.warnings) {
          process.emitWarning(warning.message, warning.name);
        }
        options.keep?.(parsed.data);
        return { record: parsed.data.record, state: null };
      },
      // Written to the results file: the job's result is no longer needed on the queue.
      recorded: (example) => batch.release(jobOf(example)),
      async close({ stopped }) {
        try {
          if (stopped) {
            // A dead endpoint would fail every remaining question: the next submission queues them.
            const removed = await batch.withdraw();
            if (removed > 0) {
              note(
                `${options.kind}: ${removed} questions not started were taken off the queue; the same command queues them again`,
              );
            }
          }
        } finally {
          await batch.close();
        }
      },
    };
  };
}
