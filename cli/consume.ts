import type { Command } from "commander";
import { z } from "zod";
import { positiveInt } from "./args.js";

const CONSUMER_HELP = `
Runs the questions that \`eval run --queue\` and \`mine --queue\` put on the queue, from any
number of machines at once; each job runs in a child process of its own (--concurrency of
them). Each job carries a question, its tables (inline, or uploads in the artifact store by
digest) and the run's settings; it is sealed with TABLEMINDS_QUEUE_KEY, which submitters
and consumers must share, and a job without that seal is refused. The model endpoint, key
and models are the consumer's own (OPENAI_BASE_URL, OPENAI_API_KEY, TABLEMINDS_MODEL), and
so TABLEMINDS_SANDBOX and TABLEMINDS_REPLAY_CACHE. Consumers on other machines than the
submitter need the shared artifact store (TABLEMINDS_ARTIFACT_STORE) for tables given as
paths.

Ctrl-C or SIGTERM: the jobs in hand finish, no new one starts; a second Ctrl-C gives them
back to the queue at once. A consumer killed outright loses nothing: after --lock-duration
(twice at most) another consumer takes its jobs.

Examples:
  tableminds consume --queue redis://10.0.0.5:6379 --concurrency 4
  TABLEMINDS_QUEUE_URL=redis://10.0.0.5:6379 TABLEMINDS_QUEUE_KEY=... OPENAI_API_KEY=sk-... tableminds consume
`;

const ConsumerFlagsSchema = z.object({
  queue: z.string().optional(),
  concurrency: z.number().int().positive(),
  lockDuration: z.number().int().positive(),
});

/** The child's module: TypeScript in a checkout, the compiled JavaScript in the package. */
const PROCESSOR = new URL("./consume-jobs.ts", import.meta.url);

/** The command's name before it was renamed, when "worker" also named the orchestrator's workers. */
const FORMER_NAME = "worker";

export function registerConsumeCommand(program: Command): void {
  defineConsume(program.command("consume"));
  // Kept out of the help; it says once what it is now called and runs the same loop.
  defineConsume(program.command(FORMER_NAME, { hidden: true }), () =>
    process.stderr.write(`tableminds: \`${FORMER_NAME}\` is now \`tableminds consume\`\n`),
  );
}

function defineConsume(command: Command, before?: () => void): void {
  command
    .description("run the questions that eval and mine put on a queue (Redis), until stopped")
    .option("--queue <redis-url>", "the queue's Redis (default: $TABLEMINDS_QUEUE_URL)")
    .option("-c, --concurrency <n>", "jobs at once, each in a process of its own", positiveInt, 2)
    .option(
      "--lock-duration <ms>",
      "a job whose consumer stops renewing its lock this long goes to another consumer",
      positiveInt,
      30_000,
    )
    .addHelpText("after", CONSUMER_HELP)
    .action(async (flags: unknown) => {
      before?.();
      const opts = ConsumerFlagsSchema.parse(flags);
      const [{ queueUrl }, { runQueueConsumer }, { peek, queueKey }] = await Promise.all([
        import("../storage/queue/connection.js"),
        import("../storage/queue/consumer.js"),
        import("../storage/queue/seal.js"),
      ]);
      const JobNameSchema = z.object({ example: z.object({ id: z.string() }) });
      const url = queueUrl(opts.queue);
      queueKey();
      process.exitCode = await runQueueConsumer({
        url,
        processor: PROCESSOR,
        concurrency: opts.concurrency,
        lockMs: opts.lockDuration,
        describe: (job) => {
          const data = JobNameSchema.safeParse(peek(job.data));
          return `${job.name} ${data.success ? data.data.example.id : `job ${job.id}`}`;
        },
        log: (line) => process.stderr.write(`${line}\n`),
      });
    });
}
