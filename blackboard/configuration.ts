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
  sampleRows: z.number().int().min(0).max(50).default(5).describe("Sample rows shown per table"),
});

export type Configuration = z.infer<typeof ConfigurationSchema>;

/** What a caller may pass: any subset; the defaults fill the rest (and show in Studio's form). */
export const ContextSchema = ConfigurationSchema.partial();

/** Fills defaults into whatever the caller passed (Studio form, CLI, SDK context). */
export function ensureConfiguration(context: unknown): Configuration {
  return ConfigurationSchema.parse(context ?? {});
}
