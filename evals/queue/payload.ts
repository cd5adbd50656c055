import { z } from "zod";
import {
  ConfigurationSchema,
  isModelField,
  OPERATOR_FIELDS,
  type OperatorField,
} from "../../settings/configuration.js";
import { DATASETS } from "../datasets/names.js";
import { ResultRecordSchema } from "../results-file.js";
import { EndpointFailed, NotRun, ScoringFailed } from "../runner.js";
import { EvalExampleSchema } from "../types.js";

/*
 * What travels on the queue for one question: the job's data (the question, its tables inline
 * or in the artifact store by digest, and the run's settings: graph, context, bounds), what a
 * consumer returns (the record), and how a consumer says it did not answer (the failure reason the
 * submitter reads back). No route travels: each consumer's endpoint, key and models are its own
 * environment's, and a job never names a file on the consumer.
 */

const OPERATOR_MASK = Object.fromEntries(OPERATOR_FIELDS.map((key) => [key, true])) as Record<
  OperatorField,
  true
>;
const CallerConfigurationSchema = ConfigurationSchema.omit(OPERATOR_MASK).partial().strict();

/**
 * A run's context as given (not filled with defaults), checked against the configuration:
 * the operator's fields (sandbox, replay cache, workers folder) and the models are each
 * consumer's own.
 */
export const JobContextSchema = z.record(z.string(), z.unknown()).superRefine((context, ctx) => {
  const checked = CallerConfigurationSchema.safeParse(context);
  for (const issue of checked.error?.issues ?? []) {
    ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
  }
  for (const key of Object.keys(context).filter(isModelField)) {
    ctx.addIssue({ code: "custom", message: "a consumer's models are its own", path: [key] });
  }
});

/** A question whose tables a consumer reads from the job itself or its artifact store, never a path. */
const JobExampleSchema = EvalExampleSchema.superRefine((example, ctx) => {
  example.tables.forEach((table, index) => {
    if ("path" in table) {
      ctx.addIssue({
        code: "custom",
        message: "a job's tables are inline or uploads, never paths",
        path: ["tables", index],
      });
    }
  });
});

/** One question of a run, as a consumer runs it; a key it does not know is refused, not dropped. */
export const QuestionJobSchema = z.strictObject({
  /** The run's id on the queue (storage/queue/connection.ts: runIdOf). */
  run: z.string().min(1),
  /** The invocation of the run that queued it; its record carries it. */
  invocation: z.number().int().positive(),
  /** A graph of langgraph.json. */
  graph: z.string().min(1),
  dataset: z.enum(DATASETS),
  example: JobExampleSchema,
  context: JobContextSchema,
  timeoutMs: z.number().int().positive(),
  retries: z.number().int().nonnegative(),
});
export type QuestionJob = z.infer<typeof QuestionJobSchema>;

/** A warning raised while the question ran, to be logged by the submitter as its own. */
export const JobWarningSchema = z.object({ name: z.string(), message: z.string() });
export type JobWarning = z.infer<typeof JobWarningSchema>;

/** What a consumer returns for an answered question. */
export const QuestionResultSchema = z.object({
  record: ResultRecordSchema,
  warnings: z.array(JobWarningSchema).default([]),
});
export type QuestionResult = z.infer<typeof QuestionResultSchema>;

/** Why a consumer did not answer a question (a failed job's reason, after FAILURE_PREFIX). */
const JobFailureSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("endpoint"), message: z.string(), host: z.string().optional() }),
  z.object({ kind: z.literal("unscored"), message: z.string() }),
]);

const FAILURE_PREFIX = "tableminds: not answered: ";

/**
 * The reason a consumer fails a job with when its question ended without a record: the model
 * endpoint failed, or the answer could not be scored. Anything else is not such a failure.
 */
export function failureReason(error: unknown): string | undefined {
  const failure =
    error instanceof EndpointFailed
      ? { kind: "endpoint" as const, message: error.message, host: error.host }
      : error instanceof ScoringFailed
        ? { kind: "unscored" as const, message: error.message }
        : undefined;
  return failure && `${FAILURE_PREFIX}${JSON.stringify(failure)}`;
}

/**
 * A failed job's reason as the runner's error: EndpointFailed and ScoringFailed as the
 * consumer met them; any other failure (a consumer lost the job too often, a crash) is NotRun.
 */
export function failureOf(reason: string): Error {
  if (reason.startsWith(FAILURE_PREFIX)) {
    try {
      const failure = JobFailureSchema.parse(JSON.parse(reason.slice(FAILURE_PREFIX.length)));
      return failure.kind === "endpoint"
        ? new EndpointFailed(failure.message, failure.host)
        : new ScoringFailed(failure.message);
    } catch {
      // Not ours after all: reported as it is.
    }
  }
  return new NotRun(`on a consumer: ${reason}`);
}
