import { z } from "zod";
import { roleModelFields, roleTemperatureFields } from "./roles.js";

/** The confidence below which a run says it is not sure (see `minConfidence`). */
export const DEFAULT_MIN_CONFIDENCE = 0.5;

/**
 * The run configuration of every graph. Studio renders it as a form; the CLI
 * fills it from flags. Each field has a default so an empty object is valid.
 */
/** What every graph reads: the models and their sampling, where and how code runs, model calls, how tables are read and what prompts may show of them. */
const RUN = {
  model: z
    .string()
    .optional()
    .describe("Model for every role (else TABLEMINDS_MODEL, else gpt-4o-mini)"),
  ...roleModelFields(),
  temperature: z.number().min(0).max(2).default(0).describe("Sampling temperature"),
  ...roleTemperatureFields(),
  coderDialect: z
    .enum(["auto", "python", "query"])
    .default("auto")
    .describe(
      "What the coder writes: pandas, or a query over the table's own columns compiled to pandas (for models too small to write Python); auto: a query for a local model file under 500 MB over one table (besides its totals), else pandas",
    ),
  seed: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Sampling seed sent to the model; each branch of mom or mcts adds its own number"),
  maxCodeAttempts: z
    .number()
    .int()
    .min(1)
    .max(10)
    .default(3)
    .describe("Code attempts before answering with what is known (retries see the errors)"),
  sandbox: z
    .enum(["local", "e2b"])
    .default("local")
    .describe(
      "Where generated code runs: local Python pool, or E2B cloud sandboxes (E2B_API_KEY); the operator's setting",
    ),
  execTimeoutMs: z
    .number()
    .int()
    .positive()
    .max(600_000)
    .default(15_000)
    .describe("Wall-clock limit per run"),
  execMemoryMb: z
    .number()
    .int()
    .min(64)
    .max(65_536)
    .default(2048)
    .describe("Address-space limit per run, in MB"),
  outputBytes: z
    .number()
    .int()
    .positive()
    .max(16 * 1024 * 1024)
    .default(64 * 1024)
    .describe("Cap on captured stdout"),
  llmTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(60_000)
    .describe(
      "Timeout per model request, and for a reply that stops mid-way; 60 s fits a long reply from a local model: raise it for slow hardware",
    ),
  llmMaxRetries: z
    .number()
    .int()
    .min(0)
    .max(10)
    .default(2)
    .describe(
      "Retries per model call after a timeout, 429 or 5xx (never after a refused connection, 4xx or 501)",
    ),
  streaming: z
    .boolean()
    .default(false)
    .describe("Stream tokens from the model (the answerer's show on stderr when it is a terminal)"),
  review: z
    .enum(["off", "code", "answer", "both"])
    .default("off")
    .describe(
      "Pause for a person: before generated code runs, before the answer is final, or both (resume with approve, edit or reject)",
    ),
  replayCache: z
    .string()
    .optional()
    .describe("File of recorded model replies: a repeated call is answered from it, for free"),
  rawTables: z
    .boolean()
    .default(false)
    .describe(
      "Read tables literally: the first row is the header and every cell stays as written (no titles, header paths, totals, notes or number and date reading)",
    ),
  headerRows: z
    .number()
    .int()
    .min(1)
    .max(10)
    .optional()
    .describe("Rows each table's header takes (else found: merged and repeated header cells)"),
  skipRows: z
    .number()
    .int()
    .min(0)
    .max(1000)
    .optional()
    .describe("Rows skipped above each table, titles included (else titles are found)"),
  sheet: z
    .string()
    .min(1)
    .optional()
    .describe("The one sheet of a workbook to load, a hidden one too (else every visible sheet)"),
  locale: z
    .string()
    .regex(/^[A-Za-z]{2,3}(?:[-_][A-Za-z]{2})?$/, "a locale such as de, fr-FR or en-US")
    .optional()
    .describe(
      "Locale of the tables' numbers and dates (de: 1.234,5 and day first; en-US: month first); else decided per column from its values",
    ),
  privacy: z
    .enum(["off", "values", "schema"])
    .default("off")
    .describe(
      "What of the tables leaves this machine in prompts: everything (off); column names, types and aggregates, the code's output only as a numeric result (values); names and types only (schema). TABLEMINDS_PRIVACY sets the operator's floor; a run may only be stricter (docs/privacy.md)",
    ),
  sampleRows: z
    .number()
    .int()
    .min(0)
    .max(50)
    .default(5)
    .describe("Rows from the top shown per table when it is too large to show whole"),
  contextTokens: z
    .number()
    .int()
    .min(200)
    .max(100_000)
    .default(3000)
    .describe(
      "Tokens of table context per prompt: a table that fits is shown whole, a larger one as statistics and the rows the question names",
    ),
};

/** What only `tableminds ask` reads: the run's deadlines. */
const COMMAND = {
  runTimeoutMs: z
    .number()
    .int()
    .min(0)
    .default(600_000)
    .describe(
      "Deadline for a whole `tableminds ask` run, model waits and retries included (0: none)",
    ),
  localBudgetMs: z
    .number()
    .int()
    .min(0)
    .default(120_000)
    .describe(
      "Wall-clock budget of a `tableminds ask` run whose models are local: when it runs out the run ends not sure, with its best candidate (0: none)",
    ),
};

/** How an answer is checked: table_qa, mom, mcts and the orchestrator check. */
const CHECK = {
  check: z
    .boolean()
    .default(true)
    .describe("Check the answer: format, type and grounding in the evidence (no model needed)"),
  llmChecker: z
    .boolean()
    .default(false)
    .describe("Also ask a model to score answer type, format and grounding 0-2 each"),
  minConfidence: z
    .number()
    .min(0)
    .max(1)
    .default(DEFAULT_MIN_CONFIDENCE)
    .describe(
      "Below this confidence (0-1) the run says it is not sure, with its reasons and best candidate, instead of asserting the answer",
    ),
};

/** How often a failed check is reflected on (table_qa). */
const REFLECTION = {
  maxReflections: z
    .number()
    .int()
    .min(0)
    .max(5)
    .default(2)
    .describe("Reflect on a failed check and try again, at most this many times (0: never)"),
};

/** Long-term memory (table_qa). */
const MEMORY = {
  memory: z
    .boolean()
    .default(true)
    .describe("Recall lessons of similar past questions and archive this one (needs a store)"),
  memoryNamespace: z
    .string()
    .min(1)
    .default("default")
    .describe("Whose memory: a user or dataset name; episodes never cross namespaces"),
  memoryK: z.number().int().min(1).max(10).default(2).describe("Past episodes recalled"),
  memoryThreshold: z
    .number()
    .min(0)
    .max(1)
    .default(0.85)
    .describe("Similarity above which a new episode merges into its neighbour instead"),
  memoryRecallSimilarity: z
    .number()
    .min(0)
    .max(1)
    .default(0.5)
    .describe(
      "Question similarity (cosine of the questions with their values masked) a past episode needs to be recalled; below it, lessons are about something else",
    ),
  memorySchemaSimilarity: z
    .number()
    .min(0)
    .max(1)
    .default(0.5)
    .describe(
      "Table similarity (Jaccard of the normalized column names; a name whose type differs counts half) a past episode needs to be recalled or merged with",
    ),
  llmArchiver: z
    .boolean()
    .default(false)
    .describe("Let a model summarize each episode for memory (else a summary built from the run)"),
  embeddingModel: z
    .string()
    .optional()
    .describe("Embedding model on the endpoint; unset: a deterministic offline embedding"),
};

/** mom's branches and vote. */
const VOTE = {
  plans: z
    .number()
    .int()
    .min(1)
    .max(32)
    .default(8)
    .describe("mom: plans sampled side by side, each solved and voted on"),
  codesPerPlan: z
    .number()
    .int()
    .min(1)
    .max(16)
    .default(1)
    .describe("mom: codes sampled for each plan"),
  answersPerCode: z
    .number()
    .int()
    .min(1)
    .max(16)
    .default(1)
    .describe("mom: answers sampled from each code's run"),
  judge: z
    .enum(["off", "text", "always"])
    .default("off")
    .describe(
      "mom: settle different answers by a model's pairwise knockout instead of the majority: never, for questions that want a sentence, or always",
    ),
};

/** How many branches or workers run at once (mom, mcts, orchestrator). */
const CONCURRENCY = {
  maxConcurrency: z
    .number()
    .int()
    .min(1)
    .max(64)
    .default(8)
    .describe(
      "Branches of mom or mcts (or orchestrator workers) that run at once; LangGraph is given at least 2",
    ),
};

/** mcts's search. */
const SEARCH = {
  searchBudget: z
    .number()
    .int()
    .min(3)
    .max(512)
    .default(64)
    .describe("mcts: model calls the whole search may make"),
  exploration: z
    .number()
    .min(0)
    .max(10)
    .default(1)
    .describe("mcts: UCT's exploration constant (0: always the best branch so far)"),
  searchWidth: z
    .number()
    .int()
    .min(1)
    .max(16)
    .default(4)
    .describe("mcts: children a plan, a code or the root may have"),
  searchMode: z
    .enum(["uct", "planner", "coder", "answerer"])
    .default("uct")
    .describe(
      "mcts: UCT search, or Mixture-of-Minds' fixed-width rollouts for one stage (planner 8/4/1, coder 1/8/1, answerer 1/4/8)",
    ),
};

/** The orchestrator's subtasks, rounds and workers. */
const ORCHESTRATION = {
  maxSubtasks: z
    .number()
    .int()
    .min(1)
    .max(16)
    .default(6)
    .describe("orchestrator: subtasks the planner may split a question into"),
  maxDispatchRounds: z
    .number()
    .int()
    .min(1)
    .max(16)
    .default(4)
    .describe(
      "orchestrator: rounds of dispatch (subtasks that wait for others run in a later round)",
    ),
  maxModelCalls: z
    .number()
    .int()
    .min(1)
    .max(512)
    .default(40)
    .describe("orchestrator: model calls the whole run may make (checked before each round)"),
  workersDir: z
    .string()
    .optional()
    .describe(
      "orchestrator: a folder of extra workers, one file each (see docs/adding-a-worker.md)",
    ),
};

/** The configuration's fields by group: a graph's form shows the groups it reads. */
export const FIELD_GROUPS = {
  run: RUN,
  command: COMMAND,
  check: CHECK,
  reflection: REFLECTION,
  memory: MEMORY,
  vote: VOTE,
  concurrency: CONCURRENCY,
  search: SEARCH,
  orchestration: ORCHESTRATION,
};
export type FieldGroup = keyof typeof FIELD_GROUPS;

/**
 * The run configuration of every graph. Studio renders a graph's groups of it as a form; the
 * CLI fills it from flags. Each field has a default so an empty object is valid.
 */
export const ConfigurationSchema = z.object({
  ...RUN,
  ...COMMAND,
  ...CHECK,
  ...REFLECTION,
  ...MEMORY,
  ...VOTE,
  ...CONCURRENCY,
  ...SEARCH,
  ...ORCHESTRATION,
});

export type Configuration = z.infer<typeof ConfigurationSchema>;

/**
 * Fields that pick files to read or code to load: the operator's (environment, CLI flags; see
 * settings/operator.ts), never a run's context, which on a server is any caller's.
 */
export const OPERATOR_FIELDS = [
  "sandbox",
  "replayCache",
  "workersDir",
] as const satisfies readonly (keyof Configuration)[];

export type OperatorField = (typeof OPERATOR_FIELDS)[number];

/** A field that names a model (`model`, `coderModel`, `embeddingModel`, ...). */
export const isModelField = (key: string): boolean => key === "model" || key.endsWith("Model");

const isOperatorField = (key: string): key is OperatorField =>
  (OPERATOR_FIELDS as readonly string[]).includes(key);

/** A configuration split into what a run's context may carry and the operator's fields. */
export function splitOperatorFields(config: Partial<Configuration>): {
  caller: Partial<Configuration>;
  operator: Partial<Pick<Configuration, OperatorField>>;
} {
  const entries = Object.entries(config).filter(([, value]) => value !== undefined);
  return {
    caller: Object.fromEntries(entries.filter(([key]) => !isOperatorField(key))),
    operator: Object.fromEntries(entries.filter(([key]) => isOperatorField(key))),
  };
}

/** A configuration as a context to hand on (to a branch, a subgraph): the operator's fields left out. */
export function callerFields(config: Partial<Configuration>): Partial<Configuration> {
  return splitOperatorFields(config).caller;
}

/** The environment variable (or flag) that sets each operator field instead. */
export const OPERATOR_SOURCE: Record<OperatorField, string> = {
  sandbox: "TABLEMINDS_SANDBOX or --sandbox",
  replayCache: "TABLEMINDS_REPLAY_CACHE or --replay-cache",
  workersDir: "TABLEMINDS_WORKERS or --workers-dir",
};

/**
 * Each field of `schema`, failing on no value; its JSON Schema (and default) unchanged. Keys
 * of other groups pass through untouched: a graph hands its whole context on to the subgraphs
 * and branches it runs.
 */
function lenient<T extends z.ZodRawShape>(schema: z.ZodObject<T>) {
  const shown = z.toJSONSchema(schema, { io: "input" }).properties ?? {};
  const fields = Object.entries(schema.shape).map(([key, field]) => {
    const fallback = (shown[key] as { default?: unknown } | undefined)?.default;
    const meta = fallback === undefined ? {} : { default: fallback };
    return [key, (field as z.ZodType).catch(undefined).meta(meta)];
  });
  return z.looseObject(Object.fromEntries(fields));
}

const isOperator = (key: string) => (OPERATOR_FIELDS as readonly string[]).includes(key);

/**
 * What a caller may pass to a graph that reads `groups`: any subset; the defaults fill the
 * rest (and show in Studio's form, which lists only these groups' fields). LangGraph checks a
 * run's context against this schema before the first node and would throw zod's issue list as
 * JSON, so no value fails here: `configurationOf` (nodes/runtime.ts) reports a bad one in one
 * line instead. The operator's fields are left out.
 */
export function contextSchemaOf(...groups: FieldGroup[]) {
  const shape = Object.fromEntries(
    groups
      .flatMap((group) => Object.entries(FIELD_GROUPS[group]))
      .filter(([key]) => !isOperator(key)),
  ) as z.ZodRawShape;
  return lenient(z.object(shape).partial());
}

/**
 * The largest value the form allows of each knob a graph's step limit depends on: Studio and
 * SDK runs get a step limit (`RECURSION_LIMIT`) that fits any configuration they may pass.
 */
export const LARGEST_BOUNDS = {
  maxCodeAttempts: RUN.maxCodeAttempts.unwrap().maxValue ?? 0,
  maxReflections: REFLECTION.maxReflections.unwrap().maxValue ?? 0,
  maxDispatchRounds: ORCHESTRATION.maxDispatchRounds.unwrap().maxValue ?? 0,
};

/** How many branches or workers run at once unless the configuration says. */
export const DEFAULT_CONCURRENCY = CONCURRENCY.maxConcurrency.parse(undefined);

/** Fills defaults into whatever the caller passed (Studio form, CLI, SDK context). */
export function ensureConfiguration(context: unknown): Configuration {
  return ConfigurationSchema.parse(context ?? {});
}
