/**
 * A consumer process of the queue benchmark: `tableminds consume`'s loop (storage/queue/consumer.ts),
 * running bench/queue-processor.ts (three model calls) in its child processes, or with `real`
 * the processor `tableminds consume` runs (the graphs of langgraph.json, sandbox included).
 *
 *   npx tsx bench/queue-consumer.ts <redis-url> <concurrency> [three-call|real]
 */
import { runQueueConsumer } from "../storage/queue/consumer.js";

const [url = "", concurrency = "1", graph = "three-call"] = process.argv.slice(2);
process.exitCode = await runQueueConsumer({
  url,
  processor:
    graph === "real"
      ? new URL("../cli/consume-jobs.ts", import.meta.url)
      : new URL("./queue-processor.ts", import.meta.url),
  concurrency: Number(concurrency),
  lockMs: 30_000,
  describe: (job) => `${job.name} ${job.id}`,
  // The benchmark waits for the line that says the consumer takes jobs; the rest would be noise.
  log: (line) => {
    if (line.startsWith("consumer: taking jobs") || !/ (started|done in [\d.]+ s)$/.test(line)) {
      process.stderr.write(`${line}\n`);
    }
  },
});
