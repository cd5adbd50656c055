import path from "node:path";
import { type Command, Option } from "commander";
import { z } from "zod";
import { DATASETS } from "../evals/datasets/names.js";
import type { Selection } from "../evals/selection.js";
import { MINE_STAGES } from "../training/mining/records.js";
import { nonNegativeInt, positiveInt } from "./args.js";
import {
  configurationFromFlags,
  RUN_FLAGS,
  withConfigurationFlags,
} from "./configuration-flags.js";
import { evalProgress } from "./eval-progress.js";
import { QUEUE_FLAG_HELP, queueOfFlag } from "./queue-flags.js";

const MINE_HELP = `
Runs mcts in the stage's fixed-width preset (planner 8x4x1, coder 1x8x1, answerer 1x4x8) over
questions with gold answers and writes, in --out: mined.jsonl (each question's search),
results.jsonl and run.json (as eval does), trajectories.jsonl (MARTI turn records),
pseudo-gold.jsonl, sft/<role>.jsonl, verl/<role>/{train,test}.parquet and dpo/planner.jsonl.
The same command again resumes; a run killed mid-way loses and repeats nothing.

With --queue, the questions go to a queue on Redis and \`tableminds consume\` processes run
the searches (as \`eval run --queue\` does; see its help); this command writes every file
above as a mine here would. The endpoint, API key, models, sandbox and replay cache are each
consumer's own; TABLEMINDS_QUEUE_KEY seals the jobs.
  tableminds mine --dataset tablebench --stage coder --out mined/coder --queue redis://10.0.0.5:6379
`;

const MineFlagsSchema = z.object({
  dataset: z.enum(DATASETS),
  data: z.string().optional(),
  stage: z.enum(MINE_STAGES),
  out: z.string(),
  limit: z.number().optional(),
  concurrency: z.number(),
  heldOut: z.number(),
  seed: z.number(),
  timeout: z.number(),
  retries: z.number(),
  quiet: z.boolean(),
  queue: z.union([z.string(), z.literal(true)]).optional(),
});

/** The configuration flags of `eval run`, but the search mode: the stage sets it. */
const FLAGS = RUN_FLAGS.filter((key) => key !== "searchMode");

export function registerMineCommand(program: Command): void {
  withConfigurationFlags(
    program
      .command("mine")
      .description("mine training data: mcts rollouts over questions with gold answers, exported")
      .addOption(
        new Option("-d, --dataset <name>", "dataset").choices(DATASETS).makeOptionMandatory(),
      )
      .option("--data <path>", "the dataset's file or directory")
      .addOption(
        new Option("--stage <role>", "the agent whose data is mined")
          .choices(MINE_STAGES)
          .makeOptionMandatory(),
      )
      .requiredOption("-o, --out <dir>", "mining directory (resumed when it exists)")
      .option("-n, --limit <n>", "only the first n questions with a gold answer", positiveInt)
      .option("-c, --concurrency <k>", "questions in flight at once", positiveInt, 2)
      .option("--held-out <n>", "questions held out as the test split", nonNegativeInt, 50)
      .option("--seed <s>", "seed of the held-out split", nonNegativeInt, 0)
      .option("--timeout <ms>", "limit per question, retries included", positiveInt, 900_000)
      .option("--retries <n>", "tries again after a transient model failure", nonNegativeInt, 2)
      .option("-q, --quiet", "no progress on stderr", false)
      .option("--queue [redis-url]", QUEUE_FLAG_HELP),
    FLAGS,
  )
    .addHelpText("after", MINE_HELP)
    .action(async (flags: unknown, command: Command) => {
      const opts = MineFlagsSchema.parse(flags);
      const queue = opts.queue === undefined ? undefined : await queueOfFlag(opts.queue, command);
      const [{ loadDataset }, { getScorer }, { mine }, { closeSandboxes }] = await Promise.all([
        import("../evals/datasets/index.js"),
        import("../evals/metrics/index.js"),
        import("../training/mining/mine.js"),
        import("../sandbox/index.js"),
      ]);
      // Charts have no text answer to score a rollout against.
      const withGold = (await loadDataset(opts.dataset, { path: opts.data })).filter(
        (e) => e.gold.trim() !== "" && e.category !== "Visualization",
      );
      const examples = opts.limit === undefined ? withGold : withGold.slice(0, opts.limit);
      const selection: Selection =
        opts.limit === undefined ? { kind: "all" } : { kind: "first", n: opts.limit };
      const bar = evalProgress(opts.quiet, process.stderr, "mine");
      const controller = new AbortController();
      const onSigint = () => {
        bar.note(
          queue
            ? "mine: stopping; the queued questions go on, the same command collects them"
            : "mine: stopping; questions in flight are dropped and run next time",
        );
        controller.abort();
      };
      process.on("SIGINT", onSigint);
      try {
        const outcome = await mine({
          examples,
          scorer: getScorer(opts.dataset),
          stage: opts.stage,
          outDir: path.resolve(opts.out),
          concurrency: opts.concurrency,
          timeoutMs: opts.timeout,
          retries: opts.retries,
          context: configurationFromFlags(command),
          heldOut: opts.heldOut,
          seed: opts.seed,
          signal: controller.signal,
          selection,
          info: {
            command: process.argv.slice(2),
            data: opts.data ? path.resolve(opts.data) : undefined,
            limit: opts.limit,
          },
          remote: queue
            ? (await import("../training/mining/queue.js")).queuedMining({
                url: queue,
                stage: opts.stage,
                note: (line) => bar.note(line),
              })
            : undefined,
          onStart: ({ total, done }) => bar.start(total - done, done, total),
          onResult: (record) => bar.tick(record),
          onUnscored: (f) => bar.note(`mine: ${f.id} could not be scored (${f.error})`),
          onFailedToRun: (f) => bar.note(`mine: ${f.id} failed to run (${f.error})`),
        });
        bar.stop();
        const { exports: e } = outcome;
        process.stdout.write(
          `${e.questions} questions mined, ${e.turns} turn records; SFT planner/coder/answerer ${e.sft.planner}/${e.sft.coder}/${e.sft.answerer}; DPO pairs ${e.dpo}\n`,
        );
        if (controller.signal.aborted || outcome.run.stopped) process.exitCode = 1;
      } finally {
        process.off("SIGINT", onSigint);
        await closeSandboxes();
      }
    });
}
