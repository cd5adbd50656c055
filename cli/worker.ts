import type { Command } from "commander";
import { z } from "zod";
import { positiveInt } from "./args.js";

const WORKER_HELP = `
Runs the questions that \`eval run --queue\` and \`mine --queue\` put on the queue, from any
number of machines at once; each job runs in a child process of its own (--concurrency of
them). The run's configuration travels with each job (graph, settings, model endpoint and
model names); the API key does not: each worker reads OPENAI_API_KEY from its own
environment, and so TABLEMINDS_SANDBOX, TABLEMINDS_REPLAY_CACHE and TABLEMINDS_TABLE_ROOTS.
Tables given as paths must be readable at the same path where the workers run.

Ctrl-C or SIGTERM: the jobs in hand finish, no new one starts; a second Ctrl-C gives them
back to the queue at once. A worker killed outright loses nothing: after --lock-duration
(twice at most) another worker takes its jobs.

Examples:
  tableminds worker --queue redis://10.0.0.5:6379 --concurrency 4
  TABLEMINDS_QUEUE_URL=redis://10.0.0.5:6379 OPENAI_API_KEY=sk-... tableminds worker
`;

const WorkerFlagsSchema = z.object({
  queue: z.string().optional(),
  concurrency: z.number().int().positive(),
  lockDuration: z.number().int().positive(),
});

/** The child's module: TypeScript in a checkout, the compiled JavaScript in the package. */
const PROCESSOR = new URL("./worker-jobs.ts", import.meta.url);

export function registerWorkerCommand(program: Command): void {
  program
    .command("worker")
    .description("run the questions that eval and mine put on a queue (Redis), until stopped")
    .option("--queue <redis-url>", "the queue's Redis (default: $TABLEMINDS_QUEUE_URL)")
    .option("-c, --concurrency <n>", "jobs at once, each in a process of its own", positiveInt, 2)
    .option(
      "--lock-duration <ms>",
      "a job whose worker stops renewing its lock this long goes to another worker",
      positiveInt,
      30_000,
    )
    .addHelpText("after", WORKER_HELP)
    .action(async (flags: unknown) => {
      const opts = WorkerFlagsSchema.parse(flags);
      const [{ queueUrl }, { runQueueWorker }] = await Promise.all([
        import("../tools/queue/connection.js"),
        import("../tools/queue/worker.js"),
      ]);
      const JobNameSchema = z.object({ example: z.object({ id: z.string() }) });
      process.exitCode = await runQueueWorker({
        url: queueUrl(opts.queue),
        processor: PROCESSOR,
        concurrency: opts.concurrency,
        lockMs: opts.lockDuration,
        describe: (job) => {
          const data = JobNameSchema.safeParse(job.data);
          return `${job.name} ${data.success ? data.data.example.id : `job ${job.id}`}`;
        },
        log: (line) => process.stderr.write(`${line}\n`),
      });
    });
}
