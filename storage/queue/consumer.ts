import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Job, Worker } from "bullmq";
import { checkQueue, QUEUE_NAME, redisOptions, shownUrl } from "./connection.js";
import { keptResults } from "./kept-results.js";

/*
 * A consumer process of the queue: BullMQ's Worker takes jobs and holds their locks in this
 * process's event loop, and runs each job in a child process of its own (a sandboxed
 * processor), so no graph's CPU work ever delays a lock's renewal.
 */

export interface QueueConsumerOptions {
  url: string;
  /** The processor's module (its default export runs one job), as TypeScript or JavaScript. */
  processor: URL;
  /** Jobs at once, each in its own child process. */
  concurrency: number;
  /**
   * How long a job's lock lasts without renewal: a consumer that dies (kill -9, a lost machine)
   * has its jobs taken by another within about twice this.
   */
  lockMs: number;
  /** What a job is, in a log line. */
  describe: (job: Job) => string;
  log: (line: string) => void;
}

/** A job's consumer may die this many times before the job fails (the default 1 is too strict). */
const MAX_STALLED = 2;

/**
 * The file of a processor module: the TypeScript source in a checkout, else the JavaScript
 * the build put beside it (the npm package has no sources).
 */
export function processorFile(source: URL): string {
  const file = fileURLToPath(source);
  const compiled = file.replace(/\.ts$/, ".js");
  return !existsSync(file) && existsSync(compiled) ? compiled : file;
}

/** Node's flags for the child processes: those of this process, and a TypeScript loader for sources. */
function childExecArgv(file: string): string[] {
  const own = process.execArgv;
  if (!file.endsWith(".ts") || own.some((flag) => flag.includes("tsx"))) return own;
  // The CLI registers tsx in-process (cli/bin.js): its children need it on the command line.
  // Only a checkout runs sources; the package's children are compiled, so tsx (a
  // devDependency) is never resolved there.
  return [...own, "--import", import.meta.resolve(CHECKOUT_LOADER)];
}

const CHECKOUT_LOADER = "tsx";

/**
 * Runs a consumer until SIGINT or SIGTERM: the first lets the jobs in hand finish and takes no
 * more; a second gives them back to the queue at once (another consumer takes them); a third
 * exits. Resolves with the exit code: 130 after Ctrl-C, 0 after SIGTERM.
 */
export async function runQueueConsumer(options: QueueConsumerOptions): Promise<number> {
  await checkQueue(options.url);
  const kept = keptResults();
  const pruned = kept.prune();
  if (pruned > 0) options.log(`consumer: ${pruned} kept results older than a week removed`);
  const file = processorFile(options.processor);
  const consumer = new Worker(QUEUE_NAME, file, {
    connection: redisOptions(options.url),
    concurrency: options.concurrency,
    lockDuration: options.lockMs,
    stalledInterval: options.lockMs,
    maxStalledCount: MAX_STALLED,
    useWorkerThreads: false,
    // Children in a session of their own: a Ctrl-C at the terminal reaches this process only,
    // which decides what becomes of their jobs (BullMQ's children would exit on it, and one
    // still starting would leave its job hanging).
    workerForkOptions: { execArgv: childExecArgv(file), detached: true },
    autorun: false,
  });
  const { log, describe } = options;
  const started = new Map<string, number>();
  consumer.on("active", (job) => {
    started.set(job.id ?? "", performance.now());
    log(`consumer: ${describe(job)} started`);
  });
  const took = (job: Job) => {
    const since = started.get(job.id ?? "");
    started.delete(job.id ?? "");
    return since === undefined ? "" : ` in ${((performance.now() - since) / 1000).toFixed(1)} s`;
  };
  consumer.on("completed", (job) => {
    kept.drop(job.id ?? "");
    log(`consumer: ${describe(job)} done${took(job)}`);
  });
  consumer.on("failed", (job, error) => {
    if (job) log(`consumer: ${describe(job)} failed${took(job)}: ${error.message}`);
  });
  consumer.on("stalled", (id) =>
    log(`consumer: job ${id} of a consumer that stopped goes back to the queue`),
  );
  let lastError = "";
  consumer.on("error", (error) => {
    if (error.message === lastError) return;
    lastError = error.message;
    log(`consumer: ${error.message}`);
  });

  let signals = 0;
  let exitCode = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signal === "SIGINT") exitCode = 130;
    if (signals === 1) {
      log(
        "consumer: stopping: the jobs in hand finish first, no new one starts (again: give them back to the queue)",
      );
      void consumer.close();
    } else if (signals === 2) {
      log("consumer: giving the jobs in hand back to the queue");
      consumer.cancelAllJobs("the consumer is stopping");
    } else {
      process.exit(exitCode || 1);
    }
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const running = consumer.run();
    await consumer.waitUntilReady();
    log(
      `consumer: taking jobs from ${shownUrl(options.url)} (queue ${QUEUE_NAME}), ${options.concurrency} at a time; Ctrl-C stops`,
    );
    await running;
    await consumer.close();
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  return exitCode;
}
