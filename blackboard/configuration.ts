import { z } from "zod";

/**
 * The run configuration of every graph. Studio renders it as a form; the CLI
 * fills it from flags. Each field has a default so an empty object is valid.
 */
export const ConfigurationSchema = z.object({
  model: z
    .string()
    .optional()
    .describe("Model for every role (else TABLEMINDS_MODEL, else gpt-4o-mini)"),
  plannerModel: z.string().optional().describe("Model for the planner only"),
  coderModel: z.string().optional().describe("Model for the coder only"),
  answererModel: z.string().optional().describe("Model for the answerer only"),
  checkerModel: z.string().optional().describe("Model for the LLM checker only"),
  reflectorModel: z.string().optional().describe("Model for the reflector only"),
  archiverModel: z.string().optional().describe("Model that summarizes episodes for memory"),
  temperature: z.number().min(0).max(2).default(0).describe("Sampling temperature"),
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
    .describe("Where generated code runs: local Python pool, or E2B cloud sandboxes (E2B_API_KEY)"),
  execTimeoutMs: z.number().int().positive().default(15_000).describe("Wall-clock limit per run"),
  execMemoryMb: z
    .number()
    .int()
    .min(64)
    .default(2048)
    .describe("Address-space limit per run, in MB"),
  outputBytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024)
    .describe("Cap on captured stdout"),
  llmTimeoutMs: z.number().int().positive().default(120_000).describe("Timeout per model call"),
  llmMaxRetries: z.number().int().min(0).max(10).default(3).describe("Retries per model call"),
  streaming: z.boolean().default(false).describe("Stream tokens from the model"),
  check: z
    .boolean()
    .default(true)
    .describe("Check the answer: format, type and grounding in the evidence (no model needed)"),
  llmChecker: z
    .boolean()
    .default(false)
    .describe("Also ask a model to score answer type, format and grounding 0-2 each"),
  maxReflections: z
    .number()
    .int()
    .min(0)
    .max(5)
    .default(2)
    .describe("Reflect on a failed check and try again, at most this many times (0: never)"),
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
  llmArchiver: z
    .boolean()
    .default(false)
    .describe("Let a model summarize each episode for memory (else a summary built from the run)"),
  embeddingModel: z
    .string()
    .optional()
    .describe("Embedding model on the endpoint; unset: a deterministic offline embedding"),
  replayCache: z
    .string()
    .optional()
    .describe("File of recorded model replies: a repeated call is answered from it, for free"),
  sampleRows: z.number().int().min(0).max(50).default(5).describe("Sample rows shown per table"),
});

export type Configuration = z.infer<typeof ConfigurationSchema>;

/** What a caller may pass: any subset; the defaults fill the rest (and show in Studio's form). */
export const ContextSchema = ConfigurationSchema.partial();

/** Fills defaults into whatever the caller passed (Studio form, CLI, SDK context). */
export function ensureConfiguration(context: unknown): Configuration {
  return ConfigurationSchema.parse(context ?? {});
}
