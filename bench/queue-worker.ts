/**
 * A worker process of the queue benchmark: `tableminds worker`'s loop (storage/queue/worker.ts),
 * running bench/queue-processor.ts in its child processes.
 *
 *   npx tsx bench/queue-worker.ts <redis-url> <concurrency>
 */
import { runQueueWorker } from "../storage/queue/worker.js";

const [url = "", concurrency = "1"] = process.argv.slice(2);
process.exitCode = await runQueueWorker({
  url,
  processor: new URL("./queue-processor.ts", import.meta.url),
  concurrency: Number(concurrency),
  lockMs: 30_000,
  describe: (job) => `${job.name} ${job.id}`,
  // The benchmark waits for the line that says the worker takes jobs; the rest would be noise.
  log: (line) => {
    if (line.startsWith("worker: taking jobs") || !/ (started|done in [\d.]+ s)$/.test(line)) {
      process.stderr.write(`${line}\n`);
    }
  },
});
