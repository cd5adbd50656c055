import path from "node:path";
import { type Command, InvalidArgumentError, Option } from "commander";
import { z } from "zod";
import { type Configuration, ConfigurationSchema } from "../settings/configuration.js";
import { adoptOperatorFields } from "../settings/operator.js";

type Key = keyof Configuration;

/**
 * Flags not spelled as their field in kebab case: a shorter name, a short alias or a clearer
 * value name. Every other flag is derived: `--max-code-attempts <n>`, `--no-check` (a switch
 * that is on by default), `--llm-checker`.
 */
const SPELLED: Record<string, Key> = {
  "-m, --model <name>": "model",
  "--sandbox <backend>": "sandbox",
  "--exec-timeout <ms>": "execTimeoutMs",
  "--llm-timeout <ms>": "llmTimeoutMs",
  "--llm-retries <n>": "llmMaxRetries",
  "--stream": "streaming",
  "--replay-cache <file>": "replayCache",
  "--run-timeout <ms>": "runTimeoutMs",
  "--local-budget <ms>": "localBudgetMs",
  "--sampling-seed <n>": "seed",
  "--workers-dir <dir>": "workersDir",
  "--raw": "rawTables",
  "--sheet <name>": "sheet",
  "--locale <locale>": "locale",
};

/** The configuration `ask` and `eval run` take as flags. */
export const RUN_FLAGS = [
  "model",
  "temperature",
  "maxCodeAttempts",
  "sandbox",
  "execTimeoutMs",
  "llmTimeoutMs",
  "llmMaxRetries",
  "check",
  "llmChecker",
  "minConfidence",
  "maxReflections",
  "replayCache",
  "plannerTemperature",
  "coderTemperature",
  "coderDialect",
  "answererTemperature",
  "seed",
  "plans",
  "codesPerPlan",
  "answersPerCode",
  "judge",
  "searchBudget",
  "exploration",
  "searchWidth",
  "searchMode",
  "maxConcurrency",
  "contextTokens",
  "privacy",
  "maxSubtasks",
  "maxDispatchRounds",
  "maxModelCalls",
  "workersDir",
  "rawTables",
  "headerRows",
  "skipRows",
  "sheet",
  "locale",
] as const satisfies readonly Key[];

/** `ask` also streams and keeps long-term memory; an evaluation never lets questions teach each other. */
export const ASK_FLAGS = [
  ...RUN_FLAGS,
  "streaming",
  "review",
  "memory",
  "memoryNamespace",
  "runTimeoutMs",
  "localBudgetMs",
] as const satisfies readonly Key[];

/** What the CLI reads of a field's JSON Schema; every field with a flag must be described. */
const FieldSchema = z.object({
  type: z.enum(["string", "number", "integer", "boolean"]),
  enum: z.array(z.string()).optional(),
  default: z.union([z.string(), z.number(), z.boolean()]).optional(),
  description: z.string().min(1),
});
type Field = z.infer<typeof FieldSchema>;

let properties: Record<string, unknown> | undefined;

function fieldOf(key: Key): Field {
  properties ??= z.toJSONSchema(ConfigurationSchema, { io: "input" }).properties ?? {};
  const field = FieldSchema.safeParse(properties[key]);
  if (!field.success) {
    throw new Error(`configuration field ${key} cannot be a flag: ${z.prettifyError(field.error)}`);
  }
  return field.data;
}

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const lowerFirst = (text: string) =>
  /^[A-Z][a-z]/.test(text) ? text[0]?.toLowerCase() + text.slice(1) : text;

function flagOf(key: Key, field: Field): string {
  const spelled = Object.entries(SPELLED).find(([, k]) => k === key)?.[0];
  if (spelled) return spelled;
  const name = kebab(key);
  if (field.type === "boolean") return field.default === true ? `--no-${name}` : `--${name}`;
  if (field.type === "string") return `--${name} <${field.enum ? "choice" : "name"}>`;
  if (field.type === "number") return `--${name} <number>`;
  return `--${name} <${key.endsWith("Ms") ? "ms" : "n"}>`;
}

function helpOf(field: Field): string {
  const text = lowerFirst(field.description);
  if (field.type === "boolean") return field.default === true ? `do not ${text}` : text;
  return field.default === undefined ? text : `${text} (default: ${JSON.stringify(field.default)})`;
}

/** Options made here, and the field each sets. */
const FIELD_OF_OPTION = new WeakMap<Option, Key>();

/** A configuration field as a flag; its value is checked by the field's schema. */
function configurationOption(key: Key): Option {
  const field = fieldOf(key);
  const option = new Option(flagOf(key, field), helpOf(field));
  if (field.enum) option.choices(field.enum);
  if (field.type !== "boolean") {
    const schema = ConfigurationSchema.shape[key];
    const numeric = field.type === "number" || field.type === "integer";
    // After choices(), which would check the value itself; the choices still show in --help.
    option.argParser((raw: string) => {
      const value = numeric ? Number(raw.trim() || Number.NaN) : raw;
      if (Number.isNaN(value)) throw new InvalidArgumentError("expected a number");
      const parsed = schema.safeParse(value);
      if (!parsed.success) {
        throw new InvalidArgumentError(parsed.error.issues[0]?.message ?? "invalid value");
      }
      return parsed.data;
    });
  }
  FIELD_OF_OPTION.set(option, key);
  return option;
}

/** Adds flags for these configuration fields, help and checks taken from the schema. */
export function withConfigurationFlags(
  command: Command,
  keys: readonly Key[] = RUN_FLAGS,
): Command {
  for (const key of keys) command.addOption(configurationOption(key));
  return command;
}

/**
 * The configuration given on the command line; the rest is left to the defaults. The operator's
 * fields among the flags (where code runs, the replay cache, the workers folder) are set for the
 * process instead (settings/operator.ts): a run's context never carries them.
 */
export function configurationFromFlags(command: Command): Partial<Configuration> {
  const given: Record<string, unknown> = {};
  for (const option of command.options) {
    const key = FIELD_OF_OPTION.get(option);
    const name = option.attributeName();
    if (key && command.getOptionValueSource(name) === "cli") {
      given[key] = command.getOptionValue(name);
    }
  }
  if (typeof given.replayCache === "string") given.replayCache = path.resolve(given.replayCache);
  // Parsing fills in every default; only what was given is kept.
  const parsed = ConfigurationSchema.partial().parse(given);
  const context: Partial<Configuration> = {};
  for (const key of Object.keys(given) as Key[]) Object.assign(context, { [key]: parsed[key] });
  return adoptOperatorFields(context);
}
