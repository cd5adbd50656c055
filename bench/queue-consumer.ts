/**
 * A consumer process of the queue benchmark: `tableminds consume`'s loop (storage/queue/consumer.ts),
 * running bench/queue-processor.ts in its child processes.
 *
 *   npx tsx bench/queue-consumer.ts <redis-url> <concurrency>
 */
import { runQueueConsumer } from "../storage/queue/consumer.js";

const [url = "", concurrency = "1"] = process.argv.slice(2);
process.exitCode = await runQueueConsumer({
  url,
  processor: new URL("./queue-processor.ts", import.meta.url),
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
